// Embind bindings of the vision transformers (pipeline/image_model.h): a
// table of loaded ImageModels, a picture (RGBA, a canvas's ImageData) or
// preprocessed pixels in, the run's tensors out. Conversion only; every
// entry point returns its result or { error } (marshal.h).
#include "bindings/image_bindings.h"

#include <emscripten/bind.h>

#include <memory>

#include "bindings/config_js.h"
#include "bindings/marshal.h"
#include "bindings/request_js.h"
#include "bindings/top_k_js.h"
#include "pipeline/image_model.h"

namespace attnplay::bindings {
namespace {

HandleTable<ImageModel>& image_models() {
  static HandleTable<ImageModel> table;
  return table;
}

val vision_to_js(const ImageModel& model) {
  const VisionConfig& v = model.model().config().vision;
  const ImageProcessorConfig& p = model.processor();
  val out = val::object();
  out.set("imageHeight", v.image_height);
  out.set("imageWidth", v.image_width);
  out.set("patchHeight", v.patch_height);
  out.set("patchWidth", v.patch_width);
  out.set("channels", v.channels);
  out.set("distillationToken", v.distillation_token);
  out.set("registers", v.registers);
  out.set("prefixTokens", v.prefix_tokens());
  out.set("labels", strings_to_js(v.labels));
  out.set("hasClassifier", !model.model().weights().vision.classifier.empty());
  val processor = val::object();
  processor.set("type", p.processor_type);
  processor.set("resample", std::string(resampling_name(p.resample)));
  processor.set("resize", p.do_resize ? (p.shortest_edge > 0 ? val(p.shortest_edge) : shape_to_js({p.resize_height, p.resize_width}))
                                      : val::null());
  processor.set("crop", p.do_center_crop ? shape_to_js({p.crop_height, p.crop_width}) : val::null());
  out.set("processor", processor);
  return out;
}

// The response of a run over `tokens` tokens: forward's tensors, the token
// names, the grid and the top-k labels.
val response_to_js(const ImageModel& model, const ForwardRequest& asked, const ForwardResult& r, int grid_rows,
                   int grid_columns) {
  val out = val::object();
  out.set("attentions", tensor_to_js(r.attentions.data(), r.attentions.size(), {r.layers, r.heads, r.tokens, r.keys}));
  if (r.trace) out.set("trace", trace_to_js(*asked.trace, *r.trace));
  if (asked.hidden_states) out.set("hiddenStates", hidden_states_to_js(r.hidden_states, r.tokens, model.model().config().width));
  if (asked.logits && r.logits.size() > 0) out.set("logits", matrix_to_js(r.logits));
  if (!r.top_k.empty()) {
    val top = top_k_to_js(r.top_k, nullptr);
    std::vector<std::string> labels;
    for (const TopK& row : r.top_k) {
      for (const std::int32_t id : row.ids) labels.push_back(model.label(id));
    }
    top.set("labels", strings_to_js(labels));
    out.set("topK", top);
  }
  out.set("tokens", strings_to_js(model.token_labels(grid_rows, grid_columns)));
  val grid = val::object();
  grid.set("rows", grid_rows);
  grid.set("columns", grid_columns);
  out.set("grid", grid);
  return out;
}

// spec: request_from_js's fields (trace, hiddenStates, logits, topK, ablate,
// ablation) and picture: { data: RGBA bytes, width, height } -> response_to_js +
// seen: { data: Uint8Array RGBA, width, height } (the picture as the model saw it)
val image_run(int handle, const val& spec) {
  return guarded([&] {
    const ImageModel& model = image_models().get(handle);
    if (!has(spec, "picture")) throw std::invalid_argument("run: give a picture { data (RGBA), width, height }");
    const val picture = spec["picture"];
    const std::vector<std::uint8_t> rgba = bytes_from_js(picture["data"]);
    const ForwardRequest asked = request_from_js(spec);
    const ImageRunResult r = model.run(
        picture_from_rgba(rgba.data(), rgba.size(), picture["width"].as<int>(), picture["height"].as<int>()), asked);
    val out = response_to_js(model, asked, r.forward, r.grid_rows, r.grid_columns);
    const Picture& seen = r.input.seen;
    std::string seen_rgba(static_cast<std::size_t>(seen.width) * seen.height * 4, '\xff');
    for (std::size_t i = 0; i < static_cast<std::size_t>(seen.width) * seen.height; ++i) {
      for (int ch = 0; ch < 3; ++ch) seen_rgba[i * 4 + ch] = static_cast<char>(seen.rgb[i * 3 + ch]);
    }
    val seen_js = val::object();
    seen_js.set("data", bytes_to_js(seen_rgba));
    seen_js.set("width", seen.width);
    seen_js.set("height", seen.height);
    out.set("seen", seen_js);
    return out;
  });
}

// spec: request_from_js's fields with pixels: { data: Float32Array, shape: [C, H, W] } -> response_to_js
val image_forward(int handle, const val& spec) {
  return guarded([&] {
    const ImageModel& model = image_models().get(handle);
    const ForwardRequest asked = request_from_js(spec);
    const ForwardResult r = model.model().forward(asked);
    const VisionConfig& v = model.model().config().vision;
    return response_to_js(model, asked, r, v.grid_rows(asked.pixels.height), v.grid_columns(asked.pixels.width));
  });
}

void dispose_image_model(int handle) { image_models().erase(handle); }

}  // namespace

val load_image_model(const std::string& config_json, const Checkpoint& checkpoint, const std::string& preprocessor_json) {
  auto model = std::make_unique<ImageModel>(ImageModel::from_checkpoint(config_json, checkpoint, preprocessor_json));
  val config = config_to_js(model->model());
  config.set("imageModel", true);
  config.set("vision", vision_to_js(*model));
  val out = val::object();
  out.set("hasTokenizer", false);
  out.set("config", config);
  out.set("handle", image_models().add(std::move(model)));
  return out;
}

double loaded_image_models() { return static_cast<double>(image_models().size()); }

}  // namespace attnplay::bindings

EMSCRIPTEN_BINDINGS(attnplay_image) {
  using namespace attnplay::bindings;
  emscripten::function("imageRun", &image_run);
  emscripten::function("imageForward", &image_forward);
  emscripten::function("disposeImageModel", &dispose_image_model);
}
