// WordPiece model (BERT): each word is split greedily into the longest
// vocabulary pieces from the left, pieces after the first carrying the
// continuation prefix ("##ing"). A word with a part that matches nothing, or
// longer than max_input_chars_per_word characters, becomes the unknown token.
// Not here: normalization and splitting into words.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnplay {

struct WordPieceOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
};

class WordPieceModel {
 public:
  WordPieceModel(std::unordered_map<std::string, std::int32_t> vocab, WordPieceOptions options);

  struct Piece {
    std::int32_t id;
    std::uint32_t first_char, last_char;  // character range [first, last) within the word
  };
  // word: UTF-8; char_starts: byte offset of each character in word.
  // valid: false when the word holds an invalid UTF-8 sequence (-> unknown token).
  void encode_word(std::string_view word, const std::vector<std::uint32_t>& char_starts, bool valid,
                   std::vector<Piece>& out) const;

  const std::unordered_map<std::string, std::int32_t>& vocab() const { return vocab_; }
  const WordPieceOptions& options() const { return options_; }

 private:
  std::unordered_map<std::string, std::int32_t> vocab_;
  WordPieceOptions options_;
  std::int32_t unk_id_;
};

}  // namespace attnplay
