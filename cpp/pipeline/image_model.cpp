// Implementation of pipeline/image_model.h.
#include "pipeline/image_model.h"

#include <stdexcept>
#include <utility>

namespace attnplay {

ImageProcessorConfig image_processor_of(const ModelConfig& config, std::string_view preprocessor_json) {
  if (!config.is_vision()) {
    throw std::invalid_argument(config.family_name + " reads text, not pictures");
  }
  return parse_image_processor_config(preprocessor_json.empty() ? std::string_view("{}") : preprocessor_json,
                                      config.vision.processor_type);
}

ImageModel ImageModel::from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint,
                                       std::string_view preprocessor_json) {
  Model model = Model::from_checkpoint(config_json, checkpoint);
  ImageProcessorConfig processor = image_processor_of(model.config(), preprocessor_json);
  return ImageModel(std::move(model), std::move(processor));
}

ImageModel::ImageModel(Model model, ImageProcessorConfig processor)
    : model_(std::move(model)), processor_(std::move(processor)) {
  if (!model_.config().is_vision()) throw std::invalid_argument(model_.config().family_name + " reads text, not pictures");
}

std::vector<std::string> ImageModel::token_labels(int grid_rows, int grid_columns) const {
  const VisionConfig& v = model_.config().vision;
  std::vector<std::string> labels = {"[CLS]"};
  if (v.distillation_token) labels.push_back("[DIST]");
  for (int r = 1; r <= v.registers; ++r) labels.push_back("[REG" + std::to_string(r) + "]");
  for (int row = 0; row < grid_rows; ++row) {
    for (int column = 0; column < grid_columns; ++column) {
      labels.push_back("(" + std::to_string(row) + ", " + std::to_string(column) + ")");
    }
  }
  return labels;
}

const std::string& ImageModel::label(int id) const {
  const std::vector<std::string>& labels = model_.config().vision.labels;
  if (id < 0 || id >= static_cast<int>(labels.size())) throw std::invalid_argument("no label " + std::to_string(id));
  return labels[static_cast<std::size_t>(id)];
}

ImageRunResult ImageModel::run(const Picture& picture, ForwardRequest request) const {
  ImageRunResult out;
  out.input = preprocess_picture(picture, processor_);
  request.pixels = out.input.pixels;
  const VisionConfig& v = model_.config().vision;
  out.grid_rows = v.grid_rows(request.pixels.height);
  out.grid_columns = v.grid_columns(request.pixels.width);
  out.forward = model_.forward(request);
  for (const TopK& row : out.forward.top_k) {
    for (const std::int32_t id : row.ids) out.top_k_labels.push_back(label(id));
  }
  return out;
}

}  // namespace attnplay
