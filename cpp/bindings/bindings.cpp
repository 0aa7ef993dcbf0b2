// Embind bindings of the attnplay core. Thin by design: read JS arguments,
// call the core, copy results out (see marshal.h). No math here.
// Every entry point returns either its result or { error: message }; the JS
// `engine` module (web/engine/engine.js) is the only caller and raises the errors.
#include <emscripten/bind.h>
#include <malloc.h>

#include <utility>

#include "analysis/rollout.h"
#include "attention/attention.h"
#include "attention/positional.h"
#include "bindings/encoding_js.h"
#include "bindings/marshal.h"
#include "nn/layers.h"
#include "tensor/ops.h"
#include "tensor/thread_pool.h"
#include "tensor/weight.h"

namespace attnplay::bindings {
namespace {

AttentionOptions options_from_js(const val& spec) {
  AttentionOptions options;
  if (has(spec, "scale")) options.scale = spec["scale"].as<bool>();
  if (has(spec, "temperature")) options.temperature = spec["temperature"].as<float>();
  if (has(spec, "causal")) options.causal = spec["causal"].as<bool>();
  if (has(spec, "keyMask")) options.key_mask = bytes_from_js(spec["keyMask"]);
  return options;
}

// spec: { q, k, v, scale?, temperature?, causal?, keyMask? } -> HeadTrace
val attend_js(const val& spec) {
  return guarded([&] {
    return head_trace_to_js(attend(matrix_from_js(spec["q"], "q"), matrix_from_js(spec["k"], "k"),
                             matrix_from_js(spec["v"], "v"), options_from_js(spec)));
  });
}

// spec: { x, wq, wk, wv, wo?, heads?, scale?, temperature?, causal?, keyMask? }
// -> { q, k, v, heads: [HeadTrace...], concat, output }
val attention(const val& spec) {
  return guarded([&] {
    const Matrix x = matrix_from_js(spec["x"], "x");
    const Matrix wo = has(spec, "wo") ? matrix_from_js(spec["wo"], "wo") : Matrix();
    const int n_heads = has(spec, "heads") ? spec["heads"].as<int>() : 1;
    const MultiHeadTrace t =
        multi_head_attention(x, matrix_from_js(spec["wq"], "wq"), matrix_from_js(spec["wk"], "wk"),
                             matrix_from_js(spec["wv"], "wv"), wo, n_heads, options_from_js(spec));
    val out = val::object();
    out.set("q", matrix_to_js(t.q));
    out.set("k", matrix_to_js(t.k));
    out.set("v", matrix_to_js(t.v));
    val heads = val::array();
    for (const HeadTrace& h : t.heads) heads.call<void>("push", head_trace_to_js(h));
    out.set("heads", heads);
    out.set("concat", matrix_to_js(t.concat));
    out.set("output", matrix_to_js(t.output));
    return out;
  });
}

// spec: { x, scale?, temperature?, causal?, keyMask? } -> HeadTrace with Q = K = V = X.
val parameter_free_attention(const val& spec) {
  return guarded([&] {
    return head_trace_to_js(parameter_free_self_attention(matrix_from_js(spec["x"], "x"), options_from_js(spec)));
  });
}

val positional_encoding(int n_positions, int d) {
  return guarded([&] { return matrix_to_js(sinusoidal_positional_encoding(n_positions, d)); });
}

// spec: { x, gamma, beta, eps? }
val layer_norm_js(const val& spec) {
  return guarded([&] {
    const float eps = has(spec, "eps") ? spec["eps"].as<float>() : 1e-5f;
    return matrix_to_js(layer_norm(matrix_from_js(spec["x"], "x"), vector_from_js(spec["gamma"], "gamma"),
                                   vector_from_js(spec["beta"], "beta"), eps));
  });
}

// spec: { x, approximation: "erf" | "tanh" }
val gelu_js(const val& spec) {
  return guarded([&] {
    Matrix x = matrix_from_js(spec["x"], "x");
    const std::string kind = has(spec, "approximation") ? spec["approximation"].as<std::string>() : "erf";
    if (kind == "erf") {
      gelu_erf(x);
    } else if (kind == "tanh") {
      gelu_tanh(x);
    } else {
      throw std::invalid_argument("gelu: approximation must be \"erf\" or \"tanh\"");
    }
    return matrix_to_js(x);
  });
}

// A stored weight { dtype: "f16" | "bf16", bits: Uint16Array, shape: [rows, cols] }
// or a float32 matrix, as y = x·W (stored [in, out]) or, with transposeB,
// y = x·Wᵀ (stored [out, in]).
WeightMatrix weight_from_js(const val& b, bool transpose_b) {
  const WeightLayout layout = transpose_b ? WeightLayout::out_by_in : WeightLayout::in_by_out;
  if (!has(b, "dtype")) return WeightMatrix::from_matrix(matrix_from_js(b, "b"), layout);
  const std::string dtype = b["dtype"].as<std::string>();
  if (dtype != "f16" && dtype != "bf16") throw std::invalid_argument("b: dtype must be \"f16\" or \"bf16\"");
  if (!has(b, "bits") || !has(b, "shape") || b["shape"]["length"].as<int>() != 2) {
    throw std::invalid_argument("b: expected { dtype, bits: Uint16Array, shape: [rows, cols] }");
  }
  const int rows = b["shape"][0].as<int>(), cols = b["shape"][1].as<int>();
  const std::vector<std::uint16_t> bits = emscripten::convertJSArrayToNumberVector<std::uint16_t>(b["bits"]);
  if (rows < 0 || cols < 0 || bits.size() != static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols)) {
    throw std::invalid_argument("b: " + std::to_string(bits.size()) + " bit patterns for shape [" +
                                std::to_string(rows) + ", " + std::to_string(cols) + "]");
  }
  return WeightMatrix::copy_of(dtype == "f16" ? DType::f16 : DType::bf16, bits.data(), rows, cols, layout);
}

// { a, b, transposeB?, bias? } -> A·B, A·Bᵀ (transposeB) or either + bias.
// A float32 b goes through the float products of tensor/ops.h, a stored
// half-precision one through linear().
Matrix product(const Matrix& a, const val& b, bool transpose_b, const RowVector& bias, bool with_bias) {
  if (has(b, "dtype")) return linear(a, weight_from_js(b, transpose_b), bias);
  if (transpose_b && with_bias) throw std::invalid_argument("matmul: bias is not supported with transposeB");
  const Matrix right = matrix_from_js(b, "b");
  if (transpose_b) return matmul_transposed(a, right);
  return with_bias ? matmul_add_bias(a, right, bias) : matmul(a, right);
}

val matmul_js(const val& spec) {
  return guarded([&] {
    const bool with_bias = has(spec, "bias");
    return matrix_to_js(product(matrix_from_js(spec["a"], "a"), spec["b"],
                                has(spec, "transposeB") && spec["transposeB"].as<bool>(),
                                with_bias ? vector_from_js(spec["bias"], "bias") : RowVector(), with_bias));
  });
}

// { dtype, bits, shape } -> the stored weight widened to float32.
val widen_weights(const val& spec) {
  return guarded([&] { return matrix_to_js(weight_from_js(spec, false).to_matrix()); });
}

// A product whose operands stay in the WASM heap between runs, so repeated
// runs (benchmarks) time the kernel without copying, as tfjs-wasm tensors do.
class ResidentProduct {
 public:
  ResidentProduct(Matrix a, WeightMatrix b) : a_(std::move(a)), b_(std::move(b)) {}
  void run() { c_ = linear(a_, b_); }
  val result() const { return matrix_to_js(c_); }

 private:
  Matrix a_, c_;
  WeightMatrix b_;
};

// { a, b, transposeB? } -> ResidentProduct (checked by one run); b as in matmul.
val resident_product(const val& spec) {
  return guarded([&] {
    ResidentProduct p(matrix_from_js(spec["a"], "a"),
                      weight_from_js(spec["b"], has(spec, "transposeB") && spec["transposeB"].as<bool>()));
    p.run();
    return val(std::move(p));
  });
}

// { data: Float32Array [L·H·T·T], shape: [L, H, T, T] }, method "rollout" | "flow"
// -> { data: Float64Array [T·T], shape: [T, T] } (analysis/rollout.h)
val rollout_js(const val& attentions, const std::string& method) {
  return guarded([&] {
    const std::vector<int> shape = emscripten::convertJSArrayToNumberVector<int>(attentions["shape"]);
    if (shape.size() != 4 || shape[2] != shape[3]) {
      throw std::invalid_argument("rollout needs self-attention of shape [layers, heads, T, T]");
    }
    const std::vector<double> map = rolled_out(emscripten::convertJSArrayToNumberVector<float>(attentions["data"]),
                                               shape[0], shape[1], shape[2], parse_rollout_method(method));
    val out = val::object();
    out.set("data", typed_array("Float64Array", map));
    out.set("shape", shape_to_js({shape[2], shape[2]}));
    return out;
  });
}

int thread_count() { return threads::concurrency(); }
int set_thread_count(int n) { return threads::set_concurrency(n); }

bool simd_enabled() {
#ifdef __wasm_simd128__
  return true;
#else
  return false;
#endif
}

std::string version() { return ATTNPLAY_VERSION; }

// Bytes currently allocated by malloc in the WASM heap (for leak tests).
double heap_bytes_in_use() { return static_cast<double>(mallinfo().uordblks); }

}  // namespace
}  // namespace attnplay::bindings

EMSCRIPTEN_BINDINGS(attnplay) {
  using namespace attnplay::bindings;
  emscripten::function("attend", &attend_js);
  emscripten::function("attention", &attention);
  emscripten::function("parameterFreeAttention", &parameter_free_attention);
  emscripten::function("positionalEncoding", &positional_encoding);
  emscripten::function("layerNorm", &layer_norm_js);
  emscripten::function("gelu", &gelu_js);
  emscripten::function("matmul", &matmul_js);
  emscripten::function("rollout", &rollout_js);
  emscripten::function("widenWeights", &widen_weights);
  emscripten::class_<ResidentProduct>("ResidentProduct")
      .function("run", &ResidentProduct::run)
      .function("result", &ResidentProduct::result);
  emscripten::function("residentProduct", &resident_product);
  emscripten::function("threadCount", &thread_count);
  emscripten::function("setThreadCount", &set_thread_count);
  emscripten::function("simdEnabled", &simd_enabled);
  emscripten::function("version", &version);
  emscripten::function("heapBytesInUse", &heap_bytes_in_use);
}
