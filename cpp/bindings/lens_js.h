// Conversion of a logit lens (analysis/logit_lens.h) to JS for the Embind
// bindings (used by the model and the encoder-decoder bindings). No logic
// beyond copying.
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/logit_lens.h"
#include "bindings/encoding_js.h"
#include "bindings/marshal.h"

namespace attnplay::bindings {

// -> { ids: Int32Array, probabilities: Float32Array, shape: [rows, T, k],
// displays?: rows·T·k strings (when `display` is given: the model has a tokenizer) }.
inline emscripten::val lens_to_js(const LogitLens& lens, const std::function<std::string(std::int32_t)>& display) {
  using emscripten::val;
  std::vector<std::int32_t> ids;
  std::vector<float> probabilities;
  val displays = val::array();
  for (const TopK& cell : lens.cells) {
    ids.insert(ids.end(), cell.ids.begin(), cell.ids.end());
    probabilities.insert(probabilities.end(), cell.probabilities.begin(), cell.probabilities.end());
    if (display) {
      for (const std::int32_t id : cell.ids) displays.call<void>("push", display(id));
    }
  }
  val out = val::object();
  out.set("ids", typed_array("Int32Array", ids));
  out.set("probabilities", typed_array("Float32Array", probabilities));
  out.set("shape", shape_to_js({lens.rows, lens.tokens, lens.k}));
  if (display) out.set("displays", displays);
  return out;
}

}  // namespace attnplay::bindings
