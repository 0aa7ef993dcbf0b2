// An encoder-decoder with its tokenizers: source text in, the three kinds of
// attention and translations out. The source is tokenized with the
// tokenizer's post-processor (Marian: pieces + </s>; BART: <s> pieces </s>)
// and truncated explicitly to the model's positions (the closing special
// token kept); a target text is tokenized without special tokens and
// follows the decoder's start token. One tokenizer.json serves both sides
// (the shared vocabulary of Marian and BART checkpoints), or Marian's
// source.spm / target.spm with vocab.json (tokenizer/marian_tokenizer.h) give
// the source's and the target's tokenizer.
// Not here: the tokenizer (tokenizer/), the forward pass (model/seq2seq.h),
// the search (model/translate.h), bindings.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/seq2seq.h"
#include "model/translate.h"
#include "pipeline/tokens.h"
#include "tokenizer/marian_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace attnplay {

struct Seq2SeqRun {
  Encoding source;                          // the source tokens the encoder saw (after truncation)
  Encoding decoder_tokens;                  // the decoder's input: decoder_tokens(target), or the start token
  int input_tokens = 0;                     // source tokens before truncation
  bool truncated = false;
  EncoderOutput encoder;                    // encoder attentions [L_enc, H, S, S]
  DecoderOutput decoder;                    // decoder [L_dec, H, T, T] and cross [L_dec, H, T, S] attentions, logits
};

struct TranslationRun {
  Encoding source;
  int input_tokens = 0;
  bool truncated = false;
  Translation translation;   // decoder ids: start, target tokens, </s> when produced
  std::string text;          // the target tokens decoded to text (special tokens skipped)
  Encoding target;           // the decoder ids as tokens, each with the bytes of `text` it wrote (target_tokens)
};

class TranslationModel {
 public:
  // tokenizer_file: the bytes of tokenizer.json or a SentencePiece .model; may
  // be empty: then only ids work.
  static TranslationModel from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint,
                                          std::string_view tokenizer_file);
  // Marian's source.spm, target.spm and vocab.json.
  static TranslationModel from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint,
                                          const MarianTokenizers& tokenizers);
  // source and target: both present or both absent (the same tokenizer for a tokenizer.json).
  TranslationModel(Seq2SeqModel model, std::optional<Tokenizer> source, std::optional<Tokenizer> target);

  const Seq2SeqModel& model() const { return model_; }
  bool has_tokenizer() const { return source_tokenizer_.has_value(); }
  // Source text and encoder tokens; target text, decoder tokens and the translation's text.
  const std::optional<Tokenizer>& source_tokenizer() const { return source_tokenizer_; }
  const std::optional<Tokenizer>& target_tokenizer() const { return target_tokenizer_; }

  // The target side's name of vocabulary id `id` (as tokens are named; the
  // id itself without a tokenizer) and whether it is a special token.
  std::string target_display(std::int32_t id) const;
  bool target_is_special(std::int32_t id) const;

  // Source tokens of a text (post-processor applied, truncated to the positions).
  // Throws std::invalid_argument without a tokenizer or for an empty text.
  Encoding encode_source(std::string_view text, int* input_tokens = nullptr, bool* truncated = nullptr) const;
  // The decoder's input for a target text: the start token, then the
  // target's tokens with their offsets into the target text; and their ids.
  Encoding decoder_tokens(std::string_view target) const;
  std::vector<std::int32_t> decoder_ids(std::string_view target) const;
  // Decoder ids (the start token first) as the translation's text and its
  // tokens: the start token, then each token with the bytes and UTF-16 units
  // of the text it wrote (special tokens are left out of the text). Needs a
  // tokenizer.
  Decoding target_tokens(const std::vector<std::int32_t>& decoder_ids) const;
  // Tokens of ids without their text: each id's display string, no offsets
  // (a model without a tokenizer, or ids given as they are).
  Encoding id_tokens(const std::vector<std::int32_t>& ids) const;

  // Encoder and decoder over source text and an optional target text (absent:
  // the decoder reads its start token only).
  Seq2SeqRun run(std::string_view source, std::optional<std::string_view> target) const;
  // Translates a source text (greedy or beam search); on_step as in translate().
  TranslationRun translate(std::string_view source, const TranslateOptions& options,
                           const std::function<bool(const TranslationStep&)>& on_step = {}) const;
  // The same from source ids as they are (no truncation; their tokens are
  // id_tokens()); without a tokenizer the text is empty and the target's
  // tokens are id_tokens() too.
  TranslationRun translate_ids(const std::vector<std::int32_t>& source_ids, const TranslateOptions& options,
                               const std::function<bool(const TranslationStep&)>& on_step = {}) const;

 private:
  const Tokenizer& require(const std::optional<Tokenizer>& tokenizer) const;
  // The search from r.source's ids: r.translation, and r.text and r.target from its decoder ids.
  void search(TranslationRun& r, const TranslateOptions& options,
              const std::function<bool(const TranslationStep&)>& on_step) const;
  Seq2SeqModel model_;
  std::optional<Tokenizer> source_tokenizer_, target_tokenizer_;
};

}  // namespace attnplay
