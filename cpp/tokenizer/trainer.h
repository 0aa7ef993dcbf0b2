// BPE training: learns merges from a text corpus up to a vocabulary size.
// Byte-level (GPT-2 pre-tokenization, 256 byte symbols) gives a BPE
// tokenizer; the WordPiece variant (BERT normalization and pre-tokenization,
// characters, "##" on symbols after a word's first) learns the vocabulary of a
// WordPiece tokenizer. Both come back as a Tokenizer (to_json() writes a
// tokenizer.json that Hugging Face reads too).
// Not here: the models' encoding (bpe_model.h, wordpiece_model.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace attnplay {

struct BpeTrainerOptions {
  std::int32_t vocab_size = 4096;  // special tokens and the 256 bytes included
  std::uint64_t min_frequency = 2;  // pairs seen fewer times are not merged
  std::vector<std::string> special_tokens{"<|endoftext|>"};
};

struct WordPieceTrainerOptions {
  std::int32_t vocab_size = 4096;  // special tokens and the alphabet included
  std::uint64_t min_frequency = 2;
  std::vector<std::string> special_tokens{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  bool lowercase = true;
  std::string continuing_subword_prefix = "##";
};

Tokenizer train_byte_level_bpe(std::string_view corpus, const BpeTrainerOptions& options);
Tokenizer train_wordpiece(std::string_view corpus, const WordPieceTrainerOptions& options);

}  // namespace attnplay
