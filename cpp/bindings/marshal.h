// Conversions between JS values and core types for the Embind bindings.
// A matrix crosses the boundary as { data: Float32Array, shape: [rows, cols] };
// results are copied into fresh typed arrays, so JS never holds a view into the
// WASM heap that could detach when memory grows. No math here.
#pragma once

#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "tensor/tensor.h"

namespace attnplay::bindings {

using emscripten::val;

// Loaded models behind integer handles (JS holds the handle, C++ the model).
template <class T>
class HandleTable {
 public:
  int add(std::unique_ptr<T> item) {
    const int handle = next_++;
    items_[handle] = std::move(item);
    return handle;
  }
  const T& get(int handle) const {
    const auto it = items_.find(handle);
    if (it == items_.end()) throw std::invalid_argument("model " + std::to_string(handle) + " is not loaded (disposed?)");
    return *it->second;
  }
  void erase(int handle) { items_.erase(handle); }
  std::size_t size() const { return items_.size(); }

 private:
  std::map<int, std::unique_ptr<T>> items_;
  int next_ = 1;
};

inline bool has(const val& object, const char* key) {
  return !object.isUndefined() && !object.isNull() && !object[key].isUndefined() && !object[key].isNull();
}

// spec[key] as numbers of type T; empty when the key is absent.
template <class T>
std::vector<T> numbers(const val& spec, const char* key) {
  return has(spec, key) ? emscripten::convertJSArrayToNumberVector<T>(spec[key]) : std::vector<T>();
}

inline Matrix matrix_from_js(const val& m, const std::string& name) {
  if (m.isUndefined() || m.isNull() || !has(m, "data") || !has(m, "shape")) {
    throw std::invalid_argument(name + ": expected { data: Float32Array, shape: [rows, cols] }");
  }
  const val shape = m["shape"];
  if (shape["length"].as<int>() != 2) throw std::invalid_argument(name + ": shape must have 2 entries");
  const double rows_d = shape[0].as<double>();
  const double cols_d = shape[1].as<double>();
  if (!(rows_d >= 0 && cols_d >= 0 && rows_d == std::floor(rows_d) && cols_d == std::floor(cols_d) &&
        rows_d * cols_d <= 1 << 28)) {
    throw std::invalid_argument(name + ": shape must be two non-negative integers of modest size");
  }
  const auto rows = static_cast<Eigen::Index>(rows_d);
  const auto cols = static_cast<Eigen::Index>(cols_d);
  const std::vector<float> data = emscripten::convertJSArrayToNumberVector<float>(m["data"]);
  if (static_cast<Eigen::Index>(data.size()) != rows * cols) {
    throw std::invalid_argument(name + ": data has " + std::to_string(data.size()) + " values but shape is [" +
                                std::to_string(rows) + ", " + std::to_string(cols) + "]");
  }
  return Eigen::Map<const Matrix>(data.data(), rows, cols);
}

inline RowVector vector_from_js(const val& v, const std::string& name) {
  if (v.isUndefined() || v.isNull()) throw std::invalid_argument(name + ": missing");
  const std::vector<float> data = emscripten::convertJSArrayToNumberVector<float>(v);
  return Eigen::Map<const RowVector>(data.data(), static_cast<Eigen::Index>(data.size()));
}

inline std::vector<std::uint8_t> bytes_from_js(const val& v) {
  return emscripten::convertJSArrayToNumberVector<std::uint8_t>(v);
}

// Copies the bytes of a string (any bytes, not necessarily UTF-8) into a Uint8Array.
inline val bytes_to_js(const std::string& s) {
  return val::global("Uint8Array").new_(emscripten::typed_memory_view(s.size(), reinterpret_cast<const std::uint8_t*>(s.data())));
}

// Copies a matrix into { data: Float32Array, shape: [rows, cols] }.
inline val matrix_to_js(const Matrix& m) {
  val out = val::object();
  out.set("data", val::global("Float32Array")
                      .new_(emscripten::typed_memory_view(static_cast<std::size_t>(m.size()), m.data())));
  val shape = val::array();
  shape.call<void>("push", static_cast<double>(m.rows()), static_cast<double>(m.cols()));
  out.set("shape", shape);
  return out;
}

// One head's attention, every array of its trace -> { q, k, v, scores, scaled, capped? and softcap? (with a
// softcap), bias? (T5's position bias), masked, weights, output, divisor } (a full trace; a weights-only one has
// empty scores, scaled and masked).
inline val head_trace_to_js(const HeadTrace& t) {
  val out = val::object();
  out.set("q", matrix_to_js(t.q));
  out.set("k", matrix_to_js(t.k));
  out.set("v", matrix_to_js(t.v));
  out.set("scores", matrix_to_js(t.scores));
  out.set("scaled", matrix_to_js(t.scaled));
  if (t.softcap > 0) {  // Gemma 2: cap·tanh(scaled / cap), the step before the mask
    out.set("capped", matrix_to_js(t.capped));
    out.set("softcap", t.softcap);
  }
  if (t.bias.size() > 0) out.set("bias", matrix_to_js(t.bias));  // [Tq, Tk] added before the mask
  out.set("masked", matrix_to_js(t.masked));
  out.set("weights", matrix_to_js(t.weights));
  out.set("output", matrix_to_js(t.output));
  out.set("divisor", t.divisor);
  return out;
}

// A JS array of strings.
inline val strings_to_js(const std::vector<std::string>& strings) {
  val out = val::array();
  for (const std::string& s : strings) out.call<void>("push", s);
  return out;
}

inline val shape_to_js(std::initializer_list<int> shape) {
  val out = val::array();
  for (int d : shape) out.call<void>("push", d);
  return out;
}

// Copies n floats into { data: Float32Array, shape }.
inline val tensor_to_js(const float* data, std::size_t n, std::initializer_list<int> shape) {
  val out = val::object();
  out.set("data", val::global("Float32Array").new_(emscripten::typed_memory_view(n, data)));
  out.set("shape", shape_to_js(shape));
  return out;
}

inline val error_to_js(const std::exception& e) {
  val out = val::object();
  out.set("error", std::string(e.what()));
  return out;
}

// Runs body() and returns its value, or { error: message } if it throws:
// C++ exceptions end here, freed, and the JS engine turns them into Errors.
template <class Body>
val guarded(Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    val out = val::object();
    out.set("error", std::string("out of memory: the WebAssembly heap cannot grow further (4 GiB at most)"));
    return out;
  } catch (const std::exception& e) {
    return error_to_js(e);
  }
}

}  // namespace attnplay::bindings
