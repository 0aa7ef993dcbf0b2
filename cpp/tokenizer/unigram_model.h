// Unigram model (SentencePiece's, as Hugging Face `tokenizers` runs it): a
// vocabulary of pieces with log-probability scores; a word is split by Viterbi
// into the pieces of highest total score. A character no piece starts with
// becomes the unknown piece (score: the lowest score minus 10), consecutive
// unknowns fused into one; with byte_fallback an unknown run becomes its
// <0xNN> byte pieces instead when they all exist.
// sentencepiece(): the same search as SentencePiece's own encoder runs it
// (unigram_model.cc, EncodeOptimized): only normal and user-defined pieces
// are matched in the text (a user-defined piece scores its bytes × the highest
// normal score − 0.1), path scores are kept as floats (a piece's score is
// added to them in double and compared before rounding, the unknown score in
// float), the unknown score is the lowest normal score minus 10, and an
// unknown run is never looked up as a piece.
// sentencepiece() with an outside vocabulary (Marian's vocab.json, whose ids
// are not the SentencePiece model's): the search runs on the model's pieces,
// then each token takes its piece's id in that vocabulary, as Hugging Face's
// MarianTokenizer converts pieces: a piece absent there, and an unknown run
// whose text is absent there, become the vocabulary's unknown id.
// Not here: splitting text into words (pre_tokenizer.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/bpe_model.h"

namespace attnplay {

class UnigramModel {
 public:
  // pieces[id] = (piece, score); unk_id indexes pieces.
  UnigramModel(std::vector<std::pair<std::string, double>> pieces, std::int32_t unk_id, bool byte_fallback);
  // How SentencePiece matches each piece in text: control, unknown, byte and
  // unused pieces never; user-defined ones with their own score.
  enum class Match : std::uint8_t { Never, Normal, UserDefined };
  // pieces[id].second: the proto's score (user-defined: replaced as above).
  static UnigramModel sentencepiece(std::vector<std::pair<std::string, double>> pieces, std::int32_t unk_id,
                                    bool byte_fallback, const std::vector<Match>& match);
  static UnigramModel sentencepiece(std::vector<std::pair<std::string, double>> pieces, std::int32_t unk_id,
                                    bool byte_fallback, const std::vector<Match>& match,
                                    std::unordered_map<std::string, std::int32_t> vocabulary, std::int32_t vocabulary_unk_id);

  // Appends the tokens of one word (UTF-8; invalid sequences are characters
  // no piece matches), offsets in bytes shifted by `offset`.
  void encode_word(std::string_view word, std::uint32_t offset, std::vector<PieceToken>& out) const;

  const std::vector<std::pair<std::string, double>>& pieces() const { return pieces_; }
  // piece -> id of the tokens produced (the outside vocabulary when there is one).
  std::unordered_map<std::string, std::int32_t> vocab() const;
  std::int32_t unk_id() const { return unk_id_; }
  bool byte_fallback() const { return byte_fallback_; }

 private:
  // A byte trie of the pieces: node 0 is the root.
  struct Node {
    std::vector<std::pair<unsigned char, std::int32_t>> children;  // sorted by byte
    std::int32_t piece = -1;
  };
  std::int32_t child(std::int32_t node, unsigned char byte) const;
  UnigramModel(std::vector<std::pair<std::string, double>> pieces, std::int32_t unk_id, bool byte_fallback,
               const std::vector<Match>* match);

  std::vector<std::pair<std::string, double>> pieces_;
  std::unordered_map<std::string, std::int32_t> id_of_;
  std::vector<Node> trie_;
  std::int32_t unk_id_;
  bool byte_fallback_;
  double unk_score_ = 0;
  bool sentencepiece_ = false;  // float path scores, no lookup of unknown text
  // Outside vocabulary (empty: none): the id each model piece produces, and
  // the vocabulary itself for unknown runs.
  std::vector<std::int32_t> output_id_;
  std::unordered_map<std::string, std::int32_t> vocabulary_;
  std::int32_t vocabulary_unk_id_ = -1;
};

}  // namespace attnplay
