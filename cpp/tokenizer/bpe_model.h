// Byte-level BPE model: a vocabulary of byte-level pieces and rank-ordered
// merges. A word (raw bytes) starts as one symbol per byte and the adjacent
// pair of lowest merge rank is merged, leftmost first, until no pair has a
// merge. Short words use a direct scan; long ones a priority queue, so the
// cost stays O(n log n) (100,000 letters without a space included).
// Not here: splitting text into words (pre_tokenizer.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnplay {

struct PieceToken {
  std::int32_t id;
  std::uint32_t begin, end;  // byte range in the word
};

class BpeModel {
 public:
  // vocab: byte-level piece -> id; merges in rank order. Every byte must have
  // its piece in the vocabulary, and every merge's parts and result too.
  BpeModel(std::unordered_map<std::string, std::int32_t> vocab, std::vector<std::pair<std::string, std::string>> merges);

  // Appends the tokens of one word of raw bytes, offsets shifted by `offset`.
  void encode_word(std::string_view word, std::uint32_t offset, std::vector<PieceToken>& out) const;

  const std::unordered_map<std::string, std::int32_t>& vocab() const { return vocab_; }
  const std::vector<std::pair<std::string, std::string>>& merges() const { return merges_; }

 private:
  struct Merge {
    std::int32_t rank, id;
  };
  static std::uint64_t key(std::int32_t a, std::int32_t b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
  }
  const Merge* find_merge(std::int32_t a, std::int32_t b) const {
    const auto it = merge_of_.find(key(a, b));
    return it == merge_of_.end() ? nullptr : &it->second;
  }
  void merge_short(std::vector<PieceToken>& symbols) const;
  void merge_long(std::vector<PieceToken>& symbols) const;

  std::unordered_map<std::string, std::int32_t> vocab_;
  std::vector<std::pair<std::string, std::string>> merges_;
  std::unordered_map<std::uint64_t, Merge> merge_of_;
  std::int32_t byte_id_[256];
};

}  // namespace attnplay
