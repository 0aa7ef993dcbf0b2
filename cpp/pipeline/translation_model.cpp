// Implementation of pipeline/translation_model.h.
#include "pipeline/translation_model.h"

#include <stdexcept>
#include <utility>

namespace attnplay {

TranslationModel TranslationModel::from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint,
                                                   std::string_view tokenizer_file) {
  Seq2SeqModel model = Seq2SeqModel::from_checkpoint(config_json, checkpoint);
  if (tokenizer_file.empty()) return TranslationModel(std::move(model), std::nullopt, std::nullopt);
  Tokenizer tokenizer = model_tokenizer(tokenizer_file, model.config().model_type);
  return TranslationModel(std::move(model), tokenizer, tokenizer);
}

TranslationModel TranslationModel::from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint,
                                                   const MarianTokenizers& tokenizers) {
  return TranslationModel(Seq2SeqModel::from_checkpoint(config_json, checkpoint), tokenizers.source, tokenizers.target);
}

TranslationModel::TranslationModel(Seq2SeqModel model, std::optional<Tokenizer> source, std::optional<Tokenizer> target)
    : model_(std::move(model)), source_tokenizer_(std::move(source)), target_tokenizer_(std::move(target)) {
  if (source_tokenizer_.has_value() != target_tokenizer_.has_value()) {
    throw std::invalid_argument("a translation model needs both a source and a target tokenizer, or neither");
  }
  if (source_tokenizer_) model_.check_vocabulary(source_tokenizer_->vocab_size());
  if (target_tokenizer_) model_.check_vocabulary(target_tokenizer_->vocab_size());
}

const Tokenizer& TranslationModel::require(const std::optional<Tokenizer>& tokenizer) const {
  if (!tokenizer) {
    throw std::invalid_argument("this model has no tokenizer (tokenizer.json, a SentencePiece model such as spiece.model, or source.spm, target.spm and vocab.json), so it cannot read text");
  }
  return *tokenizer;
}

Encoding TranslationModel::encode_source(std::string_view text, int* input_tokens, bool* truncated) const {
  if (text.empty()) throw std::invalid_argument("the source text is empty");
  Encoding encoding = require(source_tokenizer_).encode(text);
  if (input_tokens) *input_tokens = static_cast<int>(encoding.tokens.size());
  // The first tokens and the closing special token.
  const bool dropped = truncate_encoding(encoding, static_cast<std::size_t>(model_.config().positions), true);
  if (truncated) *truncated = dropped;
  return encoding;
}

Encoding TranslationModel::decoder_tokens(std::string_view target) const {
  EncodeOptions options;
  options.add_special_tokens = false;
  Encoding tokens = id_tokens({model_.config().decoder_start_token_id});
  for (Token& token : require(target_tokenizer_).encode(target, std::nullopt, options).tokens) tokens.tokens.push_back(std::move(token));
  return tokens;
}

std::vector<std::int32_t> TranslationModel::decoder_ids(std::string_view target) const { return decoder_tokens(target).ids(); }

Decoding TranslationModel::target_tokens(const std::vector<std::int32_t>& decoder_ids) const {
  Decoding target = decode_with_offsets(
      require(target_tokenizer_), std::vector<std::int32_t>(decoder_ids.begin() + 1, decoder_ids.end()), true);
  std::vector<Token>& tokens = target.encoding.tokens;
  tokens.insert(tokens.begin(), id_tokens({decoder_ids.front()}).tokens.front());
  return target;
}

Encoding TranslationModel::id_tokens(const std::vector<std::int32_t>& ids) const {
  Encoding out;
  for (const std::int32_t id : ids) {
    Token token;
    token.id = id;
    token.display = target_display(id);
    token.special = target_is_special(id);
    token.segment = -1;  // no text of its own
    out.tokens.push_back(std::move(token));
  }
  return out;
}

Seq2SeqRun TranslationModel::run(std::string_view source, std::optional<std::string_view> target) const {
  Seq2SeqRun r;
  r.source = encode_source(source, &r.input_tokens, &r.truncated);
  r.decoder_tokens = target ? decoder_tokens(*target) : id_tokens({model_.config().decoder_start_token_id});
  r.encoder = model_.encode(r.source.ids());
  r.decoder = model_.decode(r.encoder, r.decoder_tokens.ids());
  return r;
}

TranslationRun TranslationModel::translate(std::string_view source, const TranslateOptions& options,
                                           const std::function<bool(const TranslationStep&)>& on_step) const {
  TranslationRun r;
  r.source = encode_source(source, &r.input_tokens, &r.truncated);
  search(r, options, on_step);
  return r;
}

TranslationRun TranslationModel::translate_ids(const std::vector<std::int32_t>& source_ids, const TranslateOptions& options,
                                               const std::function<bool(const TranslationStep&)>& on_step) const {
  TranslationRun r;
  r.source = id_tokens(source_ids);
  r.input_tokens = static_cast<int>(source_ids.size());
  search(r, options, on_step);
  return r;
}

void TranslationModel::search(TranslationRun& r, const TranslateOptions& options,
                              const std::function<bool(const TranslationStep&)>& on_step) const {
  r.translation = attnplay::translate(model_, r.source.ids(), options, on_step);
  if (!has_tokenizer()) {
    r.target = id_tokens(r.translation.decoder_ids);
    return;
  }
  Decoding target = target_tokens(r.translation.decoder_ids);
  r.text = std::move(target.text);
  r.target = std::move(target.encoding);
}

std::string TranslationModel::target_display(std::int32_t id) const {
  return target_tokenizer_ ? display_of(*target_tokenizer_, id) : std::to_string(id);
}

bool TranslationModel::target_is_special(std::int32_t id) const {
  return target_tokenizer_ && id >= 0 && id < target_tokenizer_->vocab_size() && target_tokenizer_->is_special(id);
}

}  // namespace attnplay
