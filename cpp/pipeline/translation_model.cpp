// Implementation of pipeline/translation_model.h.
#include "pipeline/translation_model.h"

#include <stdexcept>
#include <utility>

namespace attnplay {

TranslationModel TranslationModel::from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint,
                                                   std::string_view tokenizer_file) {
  Seq2SeqModel model = Seq2SeqModel::from_checkpoint(config_json, checkpoint);
  if (tokenizer_file.empty()) return TranslationModel(std::move(model), std::nullopt, std::nullopt);
  Tokenizer tokenizer = Tokenizer::from_file_bytes(tokenizer_file);
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
    throw std::invalid_argument("this model has no tokenizer (tokenizer.json, or source.spm, target.spm and vocab.json), so it cannot read text");
  }
  return *tokenizer;
}

Encoding TranslationModel::encode_source(std::string_view text, int* input_tokens, bool* truncated) const {
  if (text.empty()) throw std::invalid_argument("the source text is empty");
  Encoding encoding = require(source_tokenizer_).encode(text);
  std::vector<Token>& tokens = encoding.tokens;
  if (input_tokens) *input_tokens = static_cast<int>(tokens.size());
  const auto positions = static_cast<std::size_t>(model_.config().positions);
  if (truncated) *truncated = tokens.size() > positions;
  if (tokens.size() > positions) {  // keep the first tokens and the closing special token
    const Token last = tokens.back();
    const bool keep_last = last.special;
    tokens.resize(keep_last ? positions - 1 : positions);
    if (keep_last) tokens.push_back(last);
  }
  return encoding;
}

std::vector<std::int32_t> TranslationModel::decoder_ids(std::string_view target) const {
  std::vector<std::int32_t> ids = {model_.config().decoder_start_token_id};
  EncodeOptions options;
  options.add_special_tokens = false;
  for (const std::int32_t id : require(target_tokenizer_).encode_ids(target, options)) ids.push_back(id);
  return ids;
}

Seq2SeqRun TranslationModel::run(std::string_view source, std::optional<std::string_view> target) const {
  Seq2SeqRun r;
  r.source = encode_source(source, &r.input_tokens, &r.truncated);
  r.decoder_ids = target ? decoder_ids(*target) : std::vector<std::int32_t>{model_.config().decoder_start_token_id};
  r.encoder = model_.encode(r.source.ids());
  r.decoder = model_.decode(r.encoder, r.decoder_ids);
  return r;
}

TranslationRun TranslationModel::translate(std::string_view source, const TranslateOptions& options,
                                           const std::function<bool(const TranslationStep&)>& on_step) const {
  TranslationRun r;
  r.source = encode_source(source, &r.input_tokens, &r.truncated);
  r.translation = attnplay::translate(model_, r.source.ids(), options, on_step);
  const std::vector<std::int32_t> target(r.translation.decoder_ids.begin() + 1, r.translation.decoder_ids.end());
  r.text = require(target_tokenizer_).decode(target, true);
  return r;
}

std::string TranslationModel::target_display(std::int32_t id) const {
  if (!target_tokenizer_) return std::to_string(id);
  return id >= 0 && id < target_tokenizer_->vocab_size() ? target_tokenizer_->display(id) : "<no token: id " + std::to_string(id) + ">";
}

bool TranslationModel::target_is_special(std::int32_t id) const {
  return target_tokenizer_ && id >= 0 && id < target_tokenizer_->vocab_size() && target_tokenizer_->is_special(id);
}

}  // namespace attnplay
