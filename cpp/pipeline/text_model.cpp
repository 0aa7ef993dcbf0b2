// Implementation of pipeline/text_model.h.
#include "pipeline/text_model.h"

#include <stdexcept>
#include <utility>

namespace attnplay {
namespace {

std::optional<Tokenizer> tokenizer_from(std::string_view tokenizer_file, const Model& model) {
  if (tokenizer_file.empty()) return std::nullopt;
  return model_tokenizer(tokenizer_file, model.config().model_type);
}

}  // namespace

TextModel TextModel::from_buffers(std::string_view config_json, std::string_view safetensors,
                                  std::string_view tokenizer_file) {
  Model model = Model::from_buffers(config_json, safetensors);
  std::optional<Tokenizer> tokenizer = tokenizer_from(tokenizer_file, model);
  return TextModel(std::move(model), std::move(tokenizer));
}

TextModel TextModel::from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint,
                                     std::string_view tokenizer_file) {
  Model model = Model::from_checkpoint(config_json, checkpoint);
  std::optional<Tokenizer> tokenizer = tokenizer_from(tokenizer_file, model);
  return TextModel(std::move(model), std::move(tokenizer));
}

TextModel::TextModel(Model model, std::optional<Tokenizer> tokenizer)
    : model_(std::move(model)), tokenizer_(std::move(tokenizer)) {
  if (tokenizer_) model_.check_vocabulary(tokenizer_->vocab_size());
}

std::optional<std::string> TextModel::mask_token() const {
  if (!tokenizer_ || model_.config().causal()) return std::nullopt;
  for (const char* token : {"[MASK]", "<mask>"}) {
    if (tokenizer_->token_to_id(token)) return token;
  }
  return std::nullopt;
}

std::vector<int> TextModel::mask_positions(const std::vector<std::int32_t>& ids) const {
  const std::optional<std::string> token = mask_token();
  if (!token) throw std::invalid_argument("this model's tokenizer has no [MASK] or <mask> token to predict");
  const std::int32_t mask = *tokenizer_->token_to_id(*token);
  std::vector<int> positions;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == mask) positions.push_back(static_cast<int>(i));
  }
  return positions;
}

void TextModel::set_text_inputs(const Encoding& encoding, ForwardRequest& request) const {
  const ModelConfig& c = model_.config();
  request.ids = encoding.ids();
  if (c.segment_input) request.type_ids = encoding.type_ids();
  if (!c.causal() && (request.top_k > 0 || request.token_loss) && model_.has_mlm_head()) {
    request.mask_positions = mask_token() ? mask_positions(request.ids) : std::vector<int>{};
    if (request.mask_positions.empty()) request.top_k = 0;  // nothing to fill
  }
}

RunResult TextModel::run(std::string_view text, std::optional<std::string_view> text_b,
                         ForwardRequest request) const {
  const ModelConfig& c = model_.config();
  if (!tokenizer_) throw std::invalid_argument("this model has no tokenizer (tokenizer.json or a SentencePiece model), so it cannot read text");
  if (text.empty() && (!text_b || text_b->empty())) throw std::invalid_argument("the text is empty");
  if (text_b && c.causal()) throw std::invalid_argument(c.family_name + " models take one text, not a pair");
  if (text_b && c.segment_input && c.type_vocab_size < 2) {
    throw std::invalid_argument("this model has one segment embedding: no second text");
  }
  if (!request.ids.empty() || !request.type_ids.empty() || !request.attention_mask.empty() || !request.mask_positions.empty()) {
    throw std::invalid_argument("a run on text takes its ids, type ids, attention mask and mask positions from the text");
  }

  RunResult result;
  result.encoding = tokenizer_->encode(text, text_b);
  result.input_tokens = static_cast<int>(result.encoding.tokens.size());
  if (result.encoding.tokens.empty()) throw std::invalid_argument("the text has no tokens");
  // The first tokens; an encoder keeps its closing separator as the last one.
  result.truncated = truncate_encoding(result.encoding, static_cast<std::size_t>(c.positions), !c.causal());
  set_text_inputs(result.encoding, request);
  result.mask_positions = request.mask_positions;
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
