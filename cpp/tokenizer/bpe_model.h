// BPE model: a vocabulary and rank-ordered merges. A word starts as one
// symbol per byte (byte-level: GPT-2's alphabet, encode_word) or per character
// (encode_chars: a character missing from the vocabulary becomes its <0xNN>
// byte pieces with byte_fallback, else the unknown token, fused when fuse_unk),
// and the adjacent pair of lowest merge rank is merged, leftmost first, until
// no pair has a merge; with ignore_merges a word that is itself in the
// vocabulary is one token (Hugging Face `tokenizers` semantics). Short words
// use a direct scan; long ones a priority queue, so the cost stays
// O(n log n) (100,000 letters without a space included).
// Not here: splitting text into words (pre_tokenizer.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/prefix_matcher.h"

namespace attnplay {

struct PieceToken {
  std::int32_t id;
  std::uint32_t begin, end;  // byte range in the word
};

struct BpeOptions {
  bool byte_fallback = false;
  bool ignore_merges = false;
  bool fuse_unk = false;
  std::optional<std::string> unk_token;  // must be in the vocabulary
  // encode_chars: these pieces (SentencePiece's user-defined symbols) start
  // as one symbol where they occur, longest first; no merge involves them.
  std::vector<std::string> whole_pieces;
};

class BpeModel {
 public:
  // vocab: piece -> id; merges in rank order. Every merge's parts and result
  // must be in the vocabulary.
  BpeModel(std::unordered_map<std::string, std::int32_t> vocab, std::vector<std::pair<std::string, std::string>> merges,
           BpeOptions options = {});
  // Merges with explicit ranks, equal ranks allowed (then the leftmost pair
  // merges first): SentencePiece's BPE, where a pair's rank is its merged
  // piece's score.
  BpeModel(std::unordered_map<std::string, std::int32_t> vocab, std::vector<std::pair<std::string, std::string>> merges,
           const std::vector<std::int32_t>& ranks, BpeOptions options);

  // Whether the vocabulary has GPT-2's 256 byte-level pieces (needed by encode_word).
  bool has_byte_alphabet() const { return has_byte_alphabet_; }

  // Appends the tokens of one word of raw bytes, offsets shifted by `offset`.
  void encode_word(std::string_view word, std::uint32_t offset, std::vector<PieceToken>& out) const;
  // Appends the tokens of one word of UTF-8 characters (invalid sequences are
  // characters outside the vocabulary), offsets in bytes shifted by `offset`.
  void encode_chars(std::string_view word, std::uint32_t offset, std::vector<PieceToken>& out) const;

  const std::unordered_map<std::string, std::int32_t>& vocab() const { return vocab_; }
  const std::vector<std::pair<std::string, std::string>>& merges() const { return merges_; }
  const BpeOptions& options() const { return options_; }

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
  void merge(std::vector<PieceToken>& symbols) const;

  std::unordered_map<std::string, std::int32_t> vocab_;
  std::vector<std::pair<std::string, std::string>> merges_;
  std::unordered_map<std::uint64_t, Merge> merge_of_;
  BpeOptions options_;
  std::int32_t unk_id_ = -1;
  std::int32_t fallback_id_[256];  // id of "<0xNN>", or -1
  bool has_byte_alphabet_ = true;
  std::int32_t byte_id_[256];      // id of the byte-level piece, or -1
  PrefixMatcher whole_pieces_;
};

}  // namespace attnplay
