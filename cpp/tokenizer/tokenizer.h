// The public tokenizer API: load a Hugging Face tokenizer.json (models BPE,
// byte-level or with byte fallback, WordPiece and Unigram behind the
// normalizers, pre-tokenizers, post-processors and decoders of GPT-2, BERT,
// Llama 2/3, Mistral, Qwen2/3, SmolLM2, Pythia, T5: see pipeline.h and the
// component headers), GPT-2's vocab.json + merges.txt or BERT's vocab.txt,
// then encode text (one text or a pair) into tokens that carry ids, pieces,
// readable display strings and byte/UTF-16 offsets; decode ids.
//
// Invalid UTF-8 never throws: byte-level BPE keeps the bytes as byte tokens
// (decode gives them back exactly); WordPiece turns a word holding them into
// the unknown token. Offsets of a token that covers part of a character (a
// byte-level piece of an emoji) are exact in bytes; in UTF-16 they widen to
// the whole characters touched. Special tokens added by the post-processor
// have empty offsets [0, 0).
// Not here: training (trainer.h); the pipeline internals (pipeline.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnplay {

// Token ids are below this (2^22, 16 times the largest vocabulary of a
// released model): the tables from id to piece are dense, so a larger id in a
// tokenizer file is refused with a message instead of allocated.
inline constexpr std::int32_t kTokenIdLimit = 1 << 22;

struct Token {
  std::int32_t id = 0;
  std::string piece;    // vocabulary string, e.g. "Ġthe", "##ing", "[CLS]"
  std::string display;  // readable: "␣the", "##ing", "[CLS]"; partial bytes as <0xF0>
  std::uint32_t byte_begin = 0, byte_end = 0;    // offsets into the UTF-8 text of its segment
  std::uint32_t utf16_begin = 0, utf16_end = 0;  // same in UTF-16 code units (for JS highlighting)
  std::int32_t type_id = 0;                      // 0 = first text, 1 = second text of a pair
  bool special = false;                          // [CLS], [SEP], <|endoftext|>, ...
  std::int32_t segment = 0;  // which text the offsets refer to: 0 = text, 1 = text_b; -1 for post-processor tokens
};

struct Encoding {
  std::vector<Token> tokens;
  std::vector<std::int32_t> ids() const;
  std::vector<std::int32_t> type_ids() const;
};

struct EncodeOptions {
  bool add_special_tokens = true;    // apply the post-processor ([CLS] A [SEP], ...)
  bool match_special_tokens = true;  // find added tokens such as <|endoftext|> in the text; else treat them as text
};

namespace detail {
struct TokenizerData;
}

// How a model's tokenizer class wraps a SentencePiece model (what
// transformers' slow tokenizer and its converter to tokenizer.json do):
// - plain: the model's own ids; "<s> $A" when the model has a <s> control
//   piece (LlamaTokenizer, and sentencepiece's own add_bos);
// - t5: the model's ids, "$A </s>" (pair "$A </s> $B </s>"), and the sentinel
//   tokens <extra_id_0>..<extra_id_99> after the pieces, <extra_id_0> last
//   (T5Tokenizer's extra_ids = 100), unless the model already has them;
// - xlm_roberta: fairseq's ids (<s> 0, <pad> 1, </s> 2, <unk> 3, every other
//   piece its SentencePiece id + 1, <mask> after them), "<s> $A </s>" (pair
//   "<s> $A </s> </s> $B </s>"), as XLMRobertaTokenizer.
enum class SentencePieceConvention { plain, t5, xlm_roberta };

// How a model's tokenizer class wraps GPT-2's original files (vocab.json and
// merges.txt, byte-level BPE), as transformers' converters to tokenizer.json do:
// - gpt2: <|endoftext|> a special token, nothing added around the text (GPT2Converter);
// - opt: GPT2Tokenizer with add_bos_token (OPT's): "</s> $A" (pair "</s> $A $B"),
//   </s> and <pad> special tokens;
// - roberta: "<s> $A </s>" (pair "<s> $A </s> </s> $B </s>", RobertaConverter's
//   trimmed offsets), <s>, <pad>, </s>, <unk> and <mask> (taking the space before it) special.
enum class Gpt2FilesConvention { gpt2, opt, roberta };

class Tokenizer {
 public:
  // Hugging Face tokenizer.json. Throws std::invalid_argument naming the
  // section for anything malformed or unsupported.
  static Tokenizer from_json(std::string_view tokenizer_json);
  // GPT-2's original files: encoder.json / vocab.json and vocab.bpe / merges.txt,
  // with the special tokens and post-processor of `convention`.
  static Tokenizer from_gpt2_files(std::string_view vocab_json, std::string_view merges_txt,
                                   Gpt2FilesConvention convention = Gpt2FilesConvention::gpt2);
  // BERT's vocab.txt (one piece per line, id = line number).
  static Tokenizer from_bert_vocab(std::string_view vocab_txt, bool lowercase = true);
  // SentencePiece's .model (a ModelProto protobuf: Llama 2's, Mistral's and
  // TinyLlama's tokenizer.model, T5's spiece.model, XLM-R's
  // sentencepiece.bpe.model, Marian's source.spm and target.spm), encoding and
  // decoding exactly as Google's sentencepiece library does, its ids and
  // special tokens as the convention's transformers tokenizer class gives them
  // (SentencePieceConvention; add_special_tokens: false leaves out what the
  // convention adds around the text). Throws std::invalid_argument for a
  // malformed file and, by name, for what is not supported (sentencepiece_model.cpp).
  static Tokenizer from_sentencepiece(std::string_view model_proto,
                                      SentencePieceConvention convention = SentencePieceConvention::plain);
  // A tokenizer file of either kind: tokenizer.json when its first
  // non-blank byte is '{', else a SentencePiece .model read with `convention`.
  static Tokenizer from_file_bytes(std::string_view bytes,
                                   SentencePieceConvention convention = SentencePieceConvention::plain);
  // Whether from_file_bytes reads `bytes` as tokenizer.json.
  static bool is_tokenizer_json(std::string_view bytes);

  // Hugging Face tokenizer.json of this tokenizer (what from_json reads back);
  // throws std::invalid_argument for one read from a SentencePiece .model.
  std::string to_json() const;

  Encoding encode(std::string_view text, std::optional<std::string_view> text_b = std::nullopt,
                  bool add_special_tokens = true) const;
  Encoding encode(std::string_view text, std::optional<std::string_view> text_b, const EncodeOptions& options) const;
  // Ids only (the fast path: no pieces, display strings or UTF-16 offsets).
  std::vector<std::int32_t> encode_ids(std::string_view text, const EncodeOptions& options = {}) const;

  // Bytes of the text the ids stand for (byte-level: exactly the encoded
  // bytes, even invalid UTF-8; WordPiece: pieces joined as BERT's decoder does).
  std::string decode(const std::vector<std::int32_t>& ids, bool skip_special_tokens = false) const;
  std::string display(std::int32_t id) const;  // display string of one vocabulary entry
  std::optional<std::int32_t> token_to_id(std::string_view piece) const;
  std::optional<std::string> id_to_token(std::int32_t id) const;
  std::int32_t vocab_size() const;
  bool is_special(std::int32_t id) const;
  // "BPE", "WordPiece" or "Unigram".
  std::string model_type() const;

  // Wraps loaded data (used by the loader and the trainer).
  explicit Tokenizer(std::shared_ptr<const detail::TokenizerData> data);

 private:
  std::shared_ptr<const detail::TokenizerData> data_;
};

}  // namespace attnplay
