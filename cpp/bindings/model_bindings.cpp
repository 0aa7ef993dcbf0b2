// Embind bindings of the model runtime. Thin: convert JS <-> C++ and keep
// loaded models in a table of integer handles; no math here. Every entry point
// returns its result or { error: message } (see marshal.h); web/engine/engine.js is
// the only caller. The weights (one model.safetensors or the shards of a
// sharded checkpoint) reach C++ through buffers that engine.js allocates here
// and fills directly in the WASM heap (no extra JS copy); loadModel takes
// ownership of them.
#include <emscripten/bind.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "analysis/head_ablation.h"
#include "analysis/head_analysis.h"
#include "bindings/config_js.h"
#include "bindings/encoding_js.h"
#include "bindings/image_bindings.h"
#include "bindings/top_k_js.h"
#include "bindings/marshal.h"
#include "bindings/request_js.h"
#include "bindings/seq2seq_bindings.h"
#include "model/generate.h"
#include "pipeline/text_model.h"
#include "safetensors/checkpoint.h"

namespace attnplay::bindings {
namespace {

HandleTable<TextModel>& models() {
  static HandleTable<TextModel> table;
  return table;
}

const TextModel& model_of(int handle) { return models().get(handle); }

// -> { address } of `size` fresh bytes in the WASM heap, for the caller to fill.
val allocate_bytes(double size) {
  return guarded([&] {
    if (!(size >= 0 && size <= 4.0 * (1u << 30))) throw std::invalid_argument("cannot allocate " + std::to_string(size) + " bytes");
    void* p = std::malloc(static_cast<std::size_t>(size) + 1);
    if (p == nullptr) throw std::bad_alloc();
    val out = val::object();
    out.set("address", static_cast<double>(reinterpret_cast<std::uintptr_t>(p)));
    return out;
  });
}

void free_bytes(double address) { std::free(reinterpret_cast<void*>(static_cast<std::uintptr_t>(address))); }

// model.safetensors.index.json text -> the shard file names it lists, sorted.
val shard_files(const std::string& index_json) {
  return guarded([&] { return strings_to_js(Checkpoint::shard_files(index_json)); });
}

// config.json text; files: [{ name, address, size }], buffers from
// allocateBytes, owned from here on (freed with the model, or at once on
// failure); index: model.safetensors.index.json text when files are shards,
// else null (then files is one model.safetensors); the Tokenizer read from
// tokenizer.json or tokenizer.model (tokenizerFromFileBytes; copied, the
// caller deletes its own), or Marian's { sourceSpm, targetSpm, vocab }
// (Uint8Arrays), or null -> { handle, config }
// (encoder-decoders: seq2seq_bindings.h's, config.encoderDecoder true); preprocessor:
// preprocessor_config.json's text or null (vision transformers: image_bindings.h's, config.imageModel true)
val load_model(const std::string& config_json, const val& files, const val& index_json, const val& tokenizer_file,
               const val& preprocessor) {
  std::vector<CheckpointFile> buffers;
  const int count = files["length"].as<int>();
  for (int i = 0; i < count; ++i) {  // ownership first, so that nothing leaks whatever fails below
    void* p = reinterpret_cast<void*>(static_cast<std::uintptr_t>(files[i]["address"].as<double>()));
    const std::shared_ptr<const void> owner(p, std::free);
    buffers.push_back({files[i]["name"].as<std::string>(),
                       std::string_view(static_cast<const char*>(p), static_cast<std::size_t>(files[i]["size"].as<double>())),
                       owner});
  }
  return guarded([&] {
    std::optional<Tokenizer> tokenizer;
    std::optional<MarianTokenizerFiles> marian;
    auto bytes_of = [](const val& v) {
      const std::vector<std::uint8_t> bytes = bytes_from_js(v);
      return std::string(bytes.begin(), bytes.end());
    };
    if (has(tokenizer_file, "sourceSpm")) {
      marian = MarianTokenizerFiles{bytes_of(tokenizer_file["sourceSpm"]), bytes_of(tokenizer_file["targetSpm"]),
                                    bytes_of(tokenizer_file["vocab"])};
    } else if (!tokenizer_file.isNull() && !tokenizer_file.isUndefined()) {
      tokenizer = *tokenizer_file.as<std::shared_ptr<Tokenizer>>();  // read before the weights (engine.js), copied
    }
    const bool sharded = !index_json.isNull() && !index_json.isUndefined();
    if (!sharded && buffers.size() != 1) throw std::invalid_argument("loadModel: one weights file without an index");
    const Checkpoint checkpoint = sharded ? Checkpoint::sharded(index_json.as<std::string>(), std::move(buffers))
                                          : Checkpoint::single(std::move(buffers.front()));
    if (is_encoder_decoder_config(config_json)) return load_seq2seq_model(config_json, checkpoint, tokenizer, marian);
    if (parse_config(config_json).is_vision()) {
      return load_image_model(config_json, checkpoint, !preprocessor.isNull() && !preprocessor.isUndefined() ? preprocessor.as<std::string>() : "");
    }
    if (marian) throw std::invalid_argument("source.spm, target.spm and vocab.json serve encoder-decoder (Marian) models only");
    auto model = std::make_unique<TextModel>(Model::from_checkpoint(config_json, checkpoint), std::move(tokenizer));
    val out = val::object();
    out.set("hasTokenizer", model->tokenizer().has_value());
    val config = config_to_js(model->model());
    const std::optional<std::string> mask_token = model->mask_token();
    config.set("maskToken", mask_token ? val(*mask_token) : val::null());
    out.set("config", config);
    out.set("handle", models().add(std::move(model)));
    return out;
  });
}

// The parts of a forward result that JS asked for ->
// { attentions [L, H, T, T], trace? (with rotary? for RoPE models), hiddenStates? [L+1, T, d], logits? [N, V], topK?,
//   predictionPositions? Int32Array [N] (causal: the positions of the logits' and topK's rows),
//   tokenLoss? Float32Array [T - 1] (causal) or [M] (BERT) }
val forward_to_js(const Model& model, const ForwardRequest& req, const ForwardResult& r) {
  val out = val::object();
  out.set("attentions", tensor_to_js(r.attentions.data(), r.attentions.size(), {r.layers, r.heads, r.tokens, r.keys}));
  if (r.trace) {
    val t = trace_to_js(*req.trace, *r.trace);
    if (r.rotary) {  // { q, k [T, d_k] before RoPE, inverseFrequencies [r/2], firstPosition, attentionFactor }
      val rotary = val::object();
      rotary.set("q", matrix_to_js(r.rotary->q));
      rotary.set("k", matrix_to_js(r.rotary->k));
      rotary.set("inverseFrequencies", typed_array("Float64Array", r.rotary->inverse_frequencies));
      rotary.set("firstPosition", r.rotary->first_position);
      rotary.set("attentionFactor", r.rotary->attention_factor);
      t.set("rotary", rotary);
    }
    out.set("trace", t);
  }
  if (req.hidden_states) out.set("hiddenStates", hidden_states_to_js(r.hidden_states, r.tokens, model.config().width));
  if (req.logits) out.set("logits", matrix_to_js(r.logits));
  if (!r.top_k.empty()) out.set("topK", top_k_to_js(r.top_k, nullptr));
  if (!r.prediction_positions.empty()) out.set("predictionPositions", typed_array("Int32Array", r.prediction_positions));
  if (req.token_loss) out.set("tokenLoss", typed_array("Float32Array", r.token_loss));
  return out;
}

// The logit lens of a run's hidden states -> lens_to_js (top_k_js.h), token displays when the model has a tokenizer.
val lens_of(const TextModel& model, const std::vector<Matrix>& hidden_states, int k) {
  std::function<std::string(std::int32_t)> display;
  if (model.tokenizer()) display = [&model](std::int32_t id) { return model.display(id); };
  return lens_to_js(logit_lens(model.model(), hidden_states, k), display);
}

// forward_to_js of what JS asked, with the logit lens (lens_k > 0) and the
// top-k rows' display strings ([rows * k]; none without a tokenizer).
val response_to_js(const TextModel& text_model, const ForwardRequest& asked, const ForwardResult& result, int lens_k,
                   const std::vector<std::string>& top_k_displays) {
  val out = forward_to_js(text_model.model(), asked, result);
  if (lens_k > 0) out.set("lens", lens_of(text_model, result.hidden_states, lens_k));
  if (!top_k_displays.empty()) out["topK"].set("displays", strings_to_js(top_k_displays));  // (forward_to_js set topK)
  return out;
}

// spec: request_from_js's fields (request_js.h) with ids, and lens?: k -> response_to_js
val forward(int handle, const val& spec) {
  return guarded([&] {
    const TextModel& text_model = model_of(handle);
    const ForwardRequest asked = request_from_js(spec);
    const int lens_k = lens_k_from_js(spec);
    const ForwardResult result = text_model.model().forward(with_lens_inputs(asked, lens_k));
    return response_to_js(text_model, asked, result, lens_k,
                          text_model.tokenizer() ? text_model.top_k_displays(result.top_k) : std::vector<std::string>());
  });
}

// spec: { text, textB? } with request_from_js's fields but the ones the text
// gives (ids, typeIds, attentionMask, maskPositions), and lens?: k
// -> response_to_js + { tokens: encoding_to_js, maskPositions, truncated, inputTokens }
val run(int handle, const val& spec) {
  return guarded([&] {
    const TextModel& model = model_of(handle);
    const std::string text = has(spec, "text") ? spec["text"].as<std::string>() : std::string();
    std::optional<std::string> text_b;
    if (has(spec, "textB")) text_b = spec["textB"].as<std::string>();
    const ForwardRequest asked = request_from_js(spec);
    const int lens_k = lens_k_from_js(spec);
    const RunResult r = model.run(text, text_b ? std::optional<std::string_view>(*text_b) : std::nullopt, with_lens_inputs(asked, lens_k));
    val out = response_to_js(model, asked, r.forward, lens_k, r.top_k_displays);  // named by run() already
    out.set("tokens", encoding_to_js(r.encoding));
    out.set("maskPositions", typed_array("Int32Array", r.mask_positions));
    out.set("truncated", r.truncated);
    out.set("inputTokens", r.input_tokens);
    return out;
  });
}

// Generations in progress: a generator with the handle of the model it reads
// (disposing the model ends its generations).
struct Generation {
  int model;
  std::unique_ptr<Generator> generator;
};
std::map<int, Generation>& generations() {
  static std::map<int, Generation> table;
  return table;
}
int next_generation = 1;

Generation& generation_of(int id) {
  const auto it = generations().find(id);
  if (it == generations().end()) throw std::invalid_argument("this generation was disposed (or its model was)");
  return it->second;
}

// spec: { ids: Int32Array, maxNewTokens?, greedy?, temperature?, topK?, topP?, seed?, rivals? } -> { handle }
val start_generation(int handle, const val& spec) {
  return guarded([&] {
    const Model& model = model_of(handle).model();
    GenerationOptions options;
    if (has(spec, "maxNewTokens")) options.max_new_tokens = spec["maxNewTokens"].as<int>();
    if (has(spec, "rivals")) options.rivals = spec["rivals"].as<int>();
    SamplingOptions& s = options.sampling;
    s.greedy = !has(spec, "greedy") || spec["greedy"].as<bool>();
    if (has(spec, "temperature")) s.temperature = spec["temperature"].as<float>();
    if (has(spec, "topK")) s.top_k = spec["topK"].as<int>();
    if (has(spec, "topP")) s.top_p = spec["topP"].as<float>();
    if (has(spec, "seed")) s.seed = static_cast<std::uint64_t>(spec["seed"].as<double>());
    auto generator = std::make_unique<Generator>(model, numbers<std::int32_t>(spec, "ids"), options);
    const int id = next_generation++;
    generations()[id] = Generation{handle, std::move(generator)};
    val out = val::object();
    out.set("handle", id);
    return out;
  });
}

// -> null when the generation is done, else { token, display, position, attention: { data, shape [L, H, position + 1] },
//    probability, samplingProbability, top: { ids: Int32Array, probabilities: Float32Array, displays } }
//    (display strings: null without a tokenizer)
val generation_step(int id) {
  return guarded([&] {
    Generation& generation = generation_of(id);
    const TextModel& text_model = model_of(generation.model);
    const std::optional<GenerationStep> step = generation.generator->step();
    if (!step) return val::null();
    const ModelConfig& c = text_model.model().config();
    const auto display = [&](std::int32_t token) { return text_model.tokenizer() ? val(text_model.display(token)) : val::null(); };
    val js = val::object();
    js.set("token", step->token);
    js.set("display", display(step->token));
    js.set("position", step->position);
    js.set("attention", tensor_to_js(step->attention.data(), step->attention.size(), {c.layers, c.heads, step->keys}));
    js.set("probability", step->probability);
    js.set("samplingProbability", step->sampling_probability);
    val top = val::object();
    top.set("ids", typed_array("Int32Array", step->top_ids));
    top.set("probabilities", typed_array("Float32Array", step->top_probabilities));
    val displays = val::array();
    for (const std::int32_t token : step->top_ids) displays.call<void>("push", display(token));
    top.set("displays", displays);
    js.set("top", top);
    return js;
  });
}

// The prompt and generated ids so far (Int32Array).
val generation_ids(int id) {
  return guarded([&] {
    return typed_array("Int32Array", generation_of(id).generator->ids());
  });
}

void dispose_generation(int id) { generations().erase(id); }

// -> [{ layer, head, previousToken, nextToken, induction, sink, self, local, broad, labels }]
val analyze(int handle) {
  return guarded([&] {
    val out = val::array();
    for (const HeadReport& report : analyze_heads(model_of(handle))) {
      val item = val::object();
      item.set("layer", report.layer);
      item.set("head", report.head);
      item.set("previousToken", report.scores.previous_token);
      item.set("nextToken", report.scores.next_token);
      item.set("induction", report.scores.induction);
      item.set("sink", report.scores.sink);
      item.set("self", report.scores.self);
      item.set("local", report.scores.local);
      item.set("broad", report.scores.broad);
      item.set("labels", strings_to_js(report.labels));
      out.call<void>("push", item);
    }
    return out;
  });
}

// spec: request_from_js's { ids, typeIds?, maskPositions?, maskLabels?, ablation? } ->
// { baseLoss, heads: [{ layer, head, loss, delta }] largest delta first, maskLabels: Int32Array }
val rank_heads(int handle, const val& spec) {
  return guarded([&] {
    const ForwardRequest text = request_from_js(spec);
    const HeadAblationRanking ranking = rank_heads_by_ablation(model_of(handle).model(), text, text.ablation);
    val heads = val::array();
    for (const HeadAblationEffect& e : ranking.heads) heads.call<void>("push", ranked_head_to_js({e.layer, e.head}, e.loss, e.delta));
    val out = val::object();
    out.set("baseLoss", ranking.base_loss);
    out.set("heads", heads);
    out.set("maskLabels", typed_array("Int32Array", ranking.mask_labels));
    return out;
  });
}

void dispose_model(int handle) {
  for (auto it = generations().begin(); it != generations().end();) {  // its generations end with it
    it = it->second.model == handle ? generations().erase(it) : std::next(it);
  }
  models().erase(handle);
}

std::string pickle_message(const std::string& file) { return pickle_checkpoint_message(file); }

double loaded_models() {
  return static_cast<double>(models().size()) + loaded_seq2seq_models() + loaded_image_models();
}

}  // namespace
}  // namespace attnplay::bindings

EMSCRIPTEN_BINDINGS(attnplay_model) {
  using namespace attnplay::bindings;
  emscripten::function("allocateBytes", &allocate_bytes);
  emscripten::function("freeBytes", &free_bytes);
  emscripten::function("loadModel", &load_model);
  emscripten::function("shardFiles", &shard_files);
  emscripten::function("modelForward", &forward);
  emscripten::function("modelRun", &run);
  emscripten::function("modelAnalyzeHeads", &analyze);
  emscripten::function("startGeneration", &start_generation);
  emscripten::function("generationStep", &generation_step);
  emscripten::function("generationIds", &generation_ids);
  emscripten::function("disposeGeneration", &dispose_generation);
  emscripten::function("modelRankHeads", &rank_heads);
  emscripten::function("disposeModel", &dispose_model);
  emscripten::function("loadedModels", &loaded_models);
  emscripten::function("pickleCheckpointMessage", &pickle_message);
}
