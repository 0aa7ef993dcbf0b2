// A loaded model's config.json as JS reads it (Engine.loadModel's model.config),
// shared by the text and vision models' bindings. Copying and naming only.
#pragma once

#include <emscripten/val.h>

#include "model/model.h"

namespace attnplay::bindings {

using emscripten::val;

// { modelType, layers, heads, kvHeads, width, headWidth, inner, positions, vocabSize, typeVocabSize, segmentInput,
//   causal, slidingWindow, slidingLayers, hasMlmHead, parameters }
inline val config_to_js(const Model& m) {
  const ModelConfig& c = m.config();
  val out = val::object();
  out.set("modelType", c.model_type);
  out.set("layers", c.layers);
  out.set("heads", c.heads);
  out.set("kvHeads", c.kv_heads);
  out.set("width", c.width);
  out.set("headWidth", c.head_width());
  out.set("inner", c.inner);
  out.set("positions", c.positions);
  out.set("vocabSize", c.vocab_size);
  out.set("typeVocabSize", c.type_vocab_size);
  out.set("segmentInput", c.segment_input);
  out.set("causal", c.causal());
  out.set("slidingWindow", c.sliding_window);
  val sliding = val::null();  // which layers have the window; null: every layer
  if (!c.sliding_layers.empty()) {
    sliding = val::array();
    for (const bool layer : c.sliding_layers) sliding.call<void>("push", layer);
  }
  out.set("slidingLayers", sliding);
  out.set("hasMlmHead", m.has_mlm_head());
  out.set("parameters", static_cast<double>(m.parameter_count()));
  return out;
}

}  // namespace attnplay::bindings
