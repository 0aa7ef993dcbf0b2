// Embind bindings of the model runtime. Thin: convert JS <-> C++ and keep
// loaded models in a table of integer handles; no math here. Every entry point
// returns its result or { error: message } (see marshal.h); web/engine.js is
// the only caller. The weights reach C++ through a buffer that engine.js
// allocates here and fills directly in the WASM heap (no extra JS copy).
#include <emscripten/bind.h>

#include <cstdlib>
#include <map>
#include <memory>

#include "bindings/marshal.h"
#include "model/model.h"

namespace attnplay::bindings {
namespace {

std::map<int, std::unique_ptr<Model>>& models() {
  static std::map<int, std::unique_ptr<Model>> table;
  return table;
}

const Model& model_of(int handle) {
  const auto it = models().find(handle);
  if (it == models().end()) throw std::invalid_argument("model " + std::to_string(handle) + " is not loaded (disposed?)");
  return *it->second;
}

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

val config_to_js(const Model& m) {
  const ModelConfig& c = m.config();
  val out = val::object();
  out.set("modelType", c.model_type);
  out.set("layers", c.layers);
  out.set("heads", c.heads);
  out.set("width", c.width);
  out.set("headWidth", c.head_width());
  out.set("inner", c.inner);
  out.set("positions", c.positions);
  out.set("vocabSize", c.vocab_size);
  out.set("typeVocabSize", c.type_vocab_size);
  out.set("causal", c.causal());
  out.set("hasMlmHead", m.has_mlm_head());
  out.set("parameters", static_cast<double>(m.parameter_count()));
  return out;
}

// config.json text and the model.safetensors bytes at [address, address + size)
// -> { handle, config }
val load_model(const std::string& config_json, double address, double size) {
  return guarded([&] {
    const std::string_view weights(reinterpret_cast<const char*>(static_cast<std::uintptr_t>(address)),
                                   static_cast<std::size_t>(size));
    auto model = std::make_unique<Model>(Model::from_buffers(config_json, weights));
    static int next_handle = 1;
    const int handle = next_handle++;
    val out = val::object();
    out.set("handle", handle);
    out.set("config", config_to_js(*model));
    models()[handle] = std::move(model);
    return out;
  });
}

void dispose_model(int handle) { models().erase(handle); }

template <class T>
std::vector<T> numbers(const val& spec, const char* key) {
  return has(spec, key) ? emscripten::convertJSArrayToNumberVector<T>(spec[key]) : std::vector<T>();
}

// spec: { ids: Int32Array, typeIds?, attentionMask?: Uint8Array, trace?: { layer, head },
//         hiddenStates?, logits?, topK?, maskPositions?: Int32Array }
// -> { attentions [L, H, T, T], trace?, hiddenStates? [L+1, T, d], logits? [N, V], topK? }
val forward(int handle, const val& spec) {
  return guarded([&] {
    const Model& model = model_of(handle);
    ForwardRequest req;
    req.ids = numbers<std::int32_t>(spec, "ids");
    req.type_ids = numbers<std::int32_t>(spec, "typeIds");
    req.attention_mask = numbers<std::uint8_t>(spec, "attentionMask");
    req.mask_positions = numbers<int>(spec, "maskPositions");
    if (has(spec, "trace")) req.trace = ForwardRequest::Head{spec["trace"]["layer"].as<int>(), spec["trace"]["head"].as<int>()};
    req.hidden_states = has(spec, "hiddenStates") && spec["hiddenStates"].as<bool>();
    req.logits = has(spec, "logits") && spec["logits"].as<bool>();
    req.top_k = has(spec, "topK") ? spec["topK"].as<int>() : 0;
    const ForwardResult r = model.forward(req);

    val out = val::object();
    out.set("attentions", tensor_to_js(r.attentions.data(), r.attentions.size(), {r.layers, r.heads, r.tokens, r.tokens}));
    if (r.trace) {
      val t = val::object();
      t.set("layer", req.trace->layer);
      t.set("head", req.trace->head);
      t.set("q", matrix_to_js(r.trace->q));
      t.set("k", matrix_to_js(r.trace->k));
      t.set("v", matrix_to_js(r.trace->v));
      t.set("scores", matrix_to_js(r.trace->scores));
      t.set("scaled", matrix_to_js(r.trace->scaled));
      t.set("masked", matrix_to_js(r.trace->masked));
      t.set("weights", matrix_to_js(r.trace->weights));
      t.set("divisor", r.trace->divisor);
      out.set("trace", t);
    }
    if (req.hidden_states) {
      const int d = model.config().width;
      std::vector<float> hidden;
      hidden.reserve(r.hidden_states.size() * static_cast<std::size_t>(r.tokens) * d);
      for (const Matrix& h : r.hidden_states) hidden.insert(hidden.end(), h.data(), h.data() + h.size());
      out.set("hiddenStates", tensor_to_js(hidden.data(), hidden.size(), {static_cast<int>(r.hidden_states.size()), r.tokens, d}));
    }
    if (req.logits) out.set("logits", matrix_to_js(r.logits));
    if (!r.top_k.empty()) {
      const int k = static_cast<int>(r.top_k.front().ids.size());
      std::vector<std::int32_t> ids;
      std::vector<float> probabilities;
      for (const TopK& t : r.top_k) {
        ids.insert(ids.end(), t.ids.begin(), t.ids.end());
        probabilities.insert(probabilities.end(), t.probabilities.begin(), t.probabilities.end());
      }
      val top = val::object();
      top.set("ids", val::global("Int32Array").new_(emscripten::typed_memory_view(ids.size(), ids.data())));
      top.set("probabilities",
              val::global("Float32Array").new_(emscripten::typed_memory_view(probabilities.size(), probabilities.data())));
      top.set("shape", shape_to_js({static_cast<int>(r.top_k.size()), k}));
      out.set("topK", top);
    }
    return out;
  });
}

std::string pickle_message(const std::string& file) { return pickle_checkpoint_message(file); }

double loaded_models() { return static_cast<double>(models().size()); }

}  // namespace
}  // namespace attnplay::bindings

EMSCRIPTEN_BINDINGS(attnplay_model) {
  using namespace attnplay::bindings;
  emscripten::function("allocateBytes", &allocate_bytes);
  emscripten::function("freeBytes", &free_bytes);
  emscripten::function("loadModel", &load_model);
  emscripten::function("modelForward", &forward);
  emscripten::function("disposeModel", &dispose_model);
  emscripten::function("loadedModels", &loaded_models);
  emscripten::function("pickleCheckpointMessage", &pickle_message);
}
