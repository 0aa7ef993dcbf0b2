// `attnplay attention --model DIR --image PATH [--format json|npy] [--out FILE]
//                    [--ablate L:H,...] [--ablation zero|mean] [--top-k K]`
// for a vision transformer's folder (ViT, DeiT, DINOv2 with or without
// registers): the picture (PNG, JPEG, BMP, GIF: image/decode.h) preprocessed
// as the folder's preprocessor_config.json says, and the attention among its
// tokens: JSON {"model_type", "image": {"width", "height", "seen": {"width",
// "height", "png"}, "grid": {"rows", "columns"}, "patch": {"height", "width"},
// "processor"}, "tokens": [{"token"} for CLS, distillation and registers,
// {"token", "row", "column"} for each patch], "attentions"
// [layer][head][query][key], "top_k": [{"ids", "labels", "probabilities"}]
// (a classifier's top 5 unless --top-k says otherwise; with --ablate also
// "top_k_before", the intact model's)}, or the attentions as float32 .npy
// [L, H, T, T]. "png" is the picture as the model saw it (resized and
// cropped), base64: the JSON is the widget's data mode for pictures
// (web/attention/attention-data-source.js), attention and picture in one file.
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli/image.h"
#include "cli/json_matrix.h"
#include "cli/npy.h"
#include "image/decode.h"
#include "json/json_text.h"
#include "pipeline/image_model.h"

namespace attnplay::cli {

int image_attention(const ModelFiles& files, ImageAttentionRequest request, std::ostream& out) {
  std::ifstream in(request.image_path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + request.image_path);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Picture picture = decode_picture(bytes);
  const ImageModel model = ImageModel::from_checkpoint(files.config_json, files.checkpoint,
                                                       files.preprocessor_config.value_or(""));
  ForwardRequest& forward = request.forward;
  if (!request.top_k_given && !model.model().weights().vision.classifier.empty()) forward.top_k = 5;
  const ImageRunResult run = model.run(picture, forward);
  const ForwardResult& result = run.forward;
  if (request.format == "npy") {
    write_npy(request.out_path, {result.layers, result.heads, result.tokens, result.tokens}, result.attentions);
    return 0;
  }
  const VisionConfig& v = model.model().config().vision;
  const ImageProcessorConfig& processor = model.processor();
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  const std::vector<std::string> labels = model.token_labels(run.grid_rows, run.grid_columns);
  for (int i = 0; i < result.tokens; ++i) {
    nlohmann::ordered_json token = {{"token", labels[static_cast<std::size_t>(i)]}};
    const int patch = i - v.prefix_tokens();
    if (patch >= 0) {
      token["row"] = patch / run.grid_columns;
      token["column"] = patch % run.grid_columns;
    }
    tokens.push_back(std::move(token));
  }
  nlohmann::ordered_json json = {
      {"model_type", model.model().config().model_type},
      {"image",
       {{"width", picture.width},
        {"height", picture.height},
        {"seen",
         {{"width", run.input.seen.width},
          {"height", run.input.seen.height},
          {"png", json_text::base64_encode(encode_png(run.input.seen))}}},
        {"grid", {{"rows", run.grid_rows}, {"columns", run.grid_columns}}},
        {"patch", {{"height", v.patch_height}, {"width", v.patch_width}}},
        {"processor", {{"type", processor.processor_type}, {"resample", resampling_name(processor.resample)}}}}},
      {"tokens", std::move(tokens)},
      {"attentions", nested_attentions(result.attentions, result.layers, result.heads, result.tokens, result.tokens)}};
  if (!forward.ablate.empty()) {
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (const ForwardRequest::Head& h : forward.ablate) heads.push_back({h.layer, h.head});
    json["ablate"] = std::move(heads);
    json["ablation"] = ablation_mode_name(forward.ablation);
  }
  const auto top_k_json = [](const ImageRunResult& r) {
    const TopK& top = r.forward.top_k.front();
    return nlohmann::ordered_json::array(
        {{{"ids", top.ids}, {"labels", r.top_k_labels}, {"probabilities", top.probabilities}}});
  };
  if (!result.top_k.empty()) {
    json["top_k"] = top_k_json(run);
    if (!forward.ablate.empty()) {  // the labels before the heads were knocked out, as the page shows them
      ForwardRequest intact = forward;
      intact.ablate.clear();
      json["top_k_before"] = top_k_json(model.run(picture, intact));
    }
  }
  out << json_text::write(json) << "\n";
  return 0;
}

}  // namespace attnplay::cli
