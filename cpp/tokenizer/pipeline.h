// Internal: what a loaded tokenizer holds (model, normalizer, pre-tokenizer,
// post-processor, decoder, added tokens), shared by the loader, the encoder
// and the trainer. Not part of the public API (tokenizer.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe_model.h"
#include "tokenizer/decoder.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unigram_model.h"
#include "tokenizer/wordpiece_model.h"

namespace attnplay::detail {

struct AddedToken {
  std::int32_t id = 0;
  std::string content;
  bool special = false;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
};

// One item of a template: a special token (by name) or sequence A (0) / B (1).
struct TemplateItem {
  bool is_special = false;
  std::string special;
  int sequence = 0;
  std::int32_t type_id = 0;
};

struct SpecialTokenEntry {
  std::vector<std::int32_t> ids;
  std::vector<std::string> tokens;
};

struct PostProcessor {
  enum class Kind { None, ByteLevel, Bert, Roberta, Template } kind = Kind::None;
  // Every kind that adds tokens is applied through its template form.
  std::vector<TemplateItem> single, pair;
  std::map<std::string, SpecialTokenEntry> special_tokens;
  ByteLevelOptions byte_level;                                 // Kind::ByteLevel, Kind::Roberta
  std::pair<std::string, std::int32_t> cls{"[CLS]", 0}, sep{"[SEP]", 0};  // Kind::Bert, Kind::Roberta
  // Set when the file's processor is a Sequence of a ByteLevel (offsets only)
  // and this one, as Llama 3's [ByteLevel, TemplateProcessing].
  std::optional<ByteLevelOptions> leading_byte_level;
};

struct TokenizerData {
  std::optional<BpeModel> bpe;
  std::optional<WordPieceModel> wordpiece;
  std::optional<UnigramModel> unigram;
  std::optional<Normalizer> normalizer;
  PreTokenizer pre_tokenizer;
  PostProcessor post;
  std::optional<Decoder> decoder;  // none: pieces joined by spaces
  std::vector<AddedToken> added;
  // A SentencePiece .model's control pieces (<s>, </s>, ...): special, but as
  // in SentencePiece never matched in the text.
  std::vector<std::int32_t> control_ids;
  bool from_sentencepiece = false;  // then there is no tokenizer.json form
  // Marian (marian_tokenizer.h): a text (or the part between added tokens)
  // that starts with ">>" and holds "<<" starts with a language code, one
  // token: its id, or this unknown id when the vocabulary lacks it.
  std::optional<std::int32_t> language_code_unk_id;

  // Filled by finish(): whether the model sees bytes (the pre-tokenizer ends
  // with ByteLevel), and whether the whole pipeline is GPT-2's shape (no
  // normalizer, a lone ByteLevel pre-tokenizer) and takes the fast path.
  bool byte_level_model = false;
  bool plain_byte_level = false;

  // Filled by finish(): every id's piece ("" for unused ids), special flags,
  // piece -> id over the model and added tokens, added tokens by first byte.
  std::vector<std::string> id_to_piece;
  std::vector<std::uint8_t> special;
  std::vector<std::int32_t> added_index_of_id;  // index into added, or -1
  std::unordered_map<std::string, std::int32_t> piece_to_id;
  std::vector<std::vector<std::size_t>> added_by_first_byte;  // matched in the original text
  // Added tokens with normalized: true when there is a normalizer: as in
  // Hugging Face, matched in the normalized text (their own normalized characters here).
  std::vector<std::pair<std::size_t, std::u32string>> normalized_added;

  // Checks consistency and builds the lookup tables above.
  void finish();
};

// Fills the template of a Bert or Roberta post-processor from its cls and sep.
void set_special_pair_template(PostProcessor& p);

}  // namespace attnplay::detail
