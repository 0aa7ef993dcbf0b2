// Conversion of a tokenizer Encoding to JS for the Embind bindings (used by
// the tokenizer and the model bindings): parallel typed arrays and string
// arrays, one entry per token. No logic beyond copying.
#pragma once

#include <emscripten/val.h>

#include <vector>

#include "tokenizer/tokenizer.h"

namespace attnplay::bindings {

template <class T>
emscripten::val typed_array(const char* type, const std::vector<T>& values) {
  return emscripten::val::global(type).new_(emscripten::typed_memory_view(values.size(), values.data()));
}

// -> { ids, typeIds, segments, offsets (byte [begin, end) pairs), utf16Offsets, special, pieces, displays }
inline emscripten::val encoding_to_js(const Encoding& e) {
  using emscripten::val;
  const std::size_t n = e.tokens.size();
  std::vector<std::int32_t> ids(n), type_ids(n), segments(n);
  std::vector<std::uint32_t> offsets(2 * n), utf16(2 * n);
  std::vector<std::uint8_t> special(n);
  val pieces = val::array();
  val displays = val::array();
  for (std::size_t i = 0; i < n; ++i) {
    const Token& k = e.tokens[i];
    ids[i] = k.id;
    type_ids[i] = k.type_id;
    segments[i] = k.segment;
    offsets[2 * i] = k.byte_begin;
    offsets[2 * i + 1] = k.byte_end;
    utf16[2 * i] = k.utf16_begin;
    utf16[2 * i + 1] = k.utf16_end;
    special[i] = k.special ? 1 : 0;
    pieces.call<void>("push", k.piece);
    displays.call<void>("push", k.display);
  }
  val out = val::object();
  out.set("ids", typed_array("Int32Array", ids));
  out.set("typeIds", typed_array("Int32Array", type_ids));
  out.set("segments", typed_array("Int32Array", segments));
  out.set("offsets", typed_array("Uint32Array", offsets));
  out.set("utf16Offsets", typed_array("Uint32Array", utf16));
  out.set("special", typed_array("Uint8Array", special));
  out.set("pieces", pieces);
  out.set("displays", displays);
  return out;
}

}  // namespace attnplay::bindings
