// Conversions the model and the encoder-decoder bindings share: lists of
// top-k predictions (a run's rows, a logit lens's cells). No logic beyond
// copying and naming.
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "analysis/logit_lens.h"
#include "bindings/encoding_js.h"
#include "bindings/marshal.h"

namespace attnplay::bindings {

// Top-k rows -> { ids: Int32Array, probabilities: Float32Array, shape, displays?: one string per id (when `display`
// is given: the model has a tokenizer) }; shape: [rows, k] unless given.
inline emscripten::val top_k_to_js(const std::vector<TopK>& rows, const std::function<std::string(std::int32_t)>& display,
                                   std::initializer_list<int> shape = {}) {
  using emscripten::val;
  std::vector<std::int32_t> ids;
  std::vector<float> probabilities;
  val displays = val::array();
  for (const TopK& row : rows) {
    ids.insert(ids.end(), row.ids.begin(), row.ids.end());
    probabilities.insert(probabilities.end(), row.probabilities.begin(), row.probabilities.end());
    if (display) {
      for (const std::int32_t id : row.ids) displays.call<void>("push", display(id));
    }
  }
  val out = val::object();
  out.set("ids", typed_array("Int32Array", ids));
  out.set("probabilities", typed_array("Float32Array", probabilities));
  const int k = rows.empty() ? 0 : static_cast<int>(rows.front().ids.size());
  out.set("shape", shape.size() ? shape_to_js(shape) : shape_to_js({static_cast<int>(rows.size()), k}));
  if (display) out.set("displays", displays);
  return out;
}

// A logit lens -> top_k_to_js of its cells, shape [rows, T, k].
inline emscripten::val lens_to_js(const LogitLens& lens, const std::function<std::string(std::int32_t)>& display) {
  return top_k_to_js(lens.cells, display, {lens.rows, lens.tokens, lens.k});
}

}  // namespace attnplay::bindings
