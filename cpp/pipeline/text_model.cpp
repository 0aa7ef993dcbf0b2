// Implementation of pipeline/text_model.h.
#include "pipeline/text_model.h"

#include <stdexcept>
#include <utility>

namespace attnplay {
namespace {

std::optional<Tokenizer> tokenizer_from(std::string_view tokenizer_file) {
  if (tokenizer_file.empty()) return std::nullopt;
  return Tokenizer::from_file_bytes(tokenizer_file);
}

}  // namespace

TextModel TextModel::from_buffers(std::string_view config_json, std::string_view safetensors,
                                  std::string_view tokenizer_file) {
  Model model = Model::from_buffers(config_json, safetensors);
  return TextModel(std::move(model), tokenizer_from(tokenizer_file));
}

TextModel TextModel::from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint,
                                     std::string_view tokenizer_file) {
  Model model = Model::from_checkpoint(config_json, checkpoint);
  return TextModel(std::move(model), tokenizer_from(tokenizer_file));
}

TextModel::TextModel(Model model, std::optional<Tokenizer> tokenizer)
    : model_(std::move(model)), tokenizer_(std::move(tokenizer)) {
  if (tokenizer_) model_.check_vocabulary(tokenizer_->vocab_size());
}

RunResult TextModel::run(std::string_view text, std::optional<std::string_view> text_b,
                         ForwardRequest request) const {
  if (!tokenizer_) throw std::invalid_argument("this model has no tokenizer.json or tokenizer.model, so it cannot read text");
  if (text.empty() && (!text_b || text_b->empty())) throw std::invalid_argument("the text is empty");
  if (text_b && !model_.config().causal() && model_.config().type_vocab_size == 1) {
    throw std::invalid_argument("this model has one segment embedding: no second text");
  }
  if (text_b && model_.config().causal()) throw std::invalid_argument("GPT-2 models take one text, not a pair");
  if (!request.ids.empty() || !request.type_ids.empty() || !request.attention_mask.empty() || !request.mask_positions.empty()) {
    throw std::invalid_argument("a run on text takes its ids, type ids, attention mask and [MASK] positions from the text");
  }

  RunResult result;
  result.encoding = tokenizer_->encode(text, text_b);
  const std::vector<Token>& tokens = result.encoding.tokens;
  result.input_tokens = static_cast<int>(tokens.size());
  if (tokens.empty()) throw std::invalid_argument("the text has no tokens");
  // The first tokens; BERT keeps its closing [SEP] as the last one.
  result.truncated = truncate_encoding(result.encoding, static_cast<std::size_t>(model_.config().positions), !model_.config().causal());

  request.ids = result.encoding.ids();
  // Segment ids where the model has segment embeddings (BERT); DistilBERT has none, a pair's [SEP] tells them apart.
  if (!model_.config().causal() && model_.config().type_vocab_size >= 2) request.type_ids = result.encoding.type_ids();
  if (!model_.config().causal() && (request.top_k > 0 || request.token_loss) && model_.has_mlm_head()) {
    if (const auto mask = tokenizer_->token_to_id("[MASK]")) {
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i].id == *mask) result.mask_positions.push_back(static_cast<int>(i));
      }
    }
    request.mask_positions = result.mask_positions;
    if (result.mask_positions.empty()) request.top_k = 0;  // nothing to fill
  }
  result.forward = model_.forward(request);
  result.top_k_displays = top_k_displays(result.forward.top_k);
  return result;
}

std::vector<std::string> TextModel::top_k_displays(const std::vector<TopK>& rows) const {
  std::vector<std::string> out;
  for (const TopK& row : rows) {
    for (const std::int32_t id : row.ids) out.push_back(display(id));
  }
  return out;
}

std::string TextModel::display(std::int32_t id) const {
  if (!tokenizer_) throw std::invalid_argument("this model has no tokenizer to name token ids");
  return display_of(*tokenizer_, id);
}

}  // namespace attnplay
