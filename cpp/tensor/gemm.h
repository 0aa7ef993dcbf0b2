// The matrix-multiplication kernel behind attnplay::matmul in the WebAssembly
// build and behind every product with a half-precision weight (linear() in
// tensor/weight.h) in both builds: B packed into 8-column panels, a 4x8
// register tile of f32x4 accumulators (wasm_simd128.h; GCC/Clang vector
// extensions natively, so the same packing, blocking and tails are tested by
// the native suites), cache blocking over k, rows and columns, and tails for
// every size. The right-hand operand may be stored as float32, IEEE half or
// bfloat16: half elements are widened to float32 while B's panels are packed
// (integer SIMD: bfloat16 is a 16-bit shift, half a rebias of the exponent
// with subnormals, infinities and NaNs exact), so no float32 copy of a weight
// ever exists beyond one cache block.
// Work is split into independent output tiles that the thread pool (when the
// build has threads) runs in parallel; the result does not depend on how many.
// One or two rows of A (a decoding step) are not packed: multiply() hands
// them to tensor/gemv.h, which reads B in place.
// Not here: shape checks and Eigen types (tensor/ops.h, tensor/weight.h are
// the APIs to call).
#pragma once

#include <cstddef>
#include <memory>

namespace attnplay::gemm {

// How the right-hand operand is stored.
enum class RightOperand {
  k_by_n,  // B itself, [k, n] row-major: C = A·B
  n_by_k,  // Bᵀ stored as [n, k] row-major: C = A·Bᵀ (attention's Q·Kᵀ, nn.Linear weights)
};

// Element type of the right-hand operand (little-endian, any alignment).
enum class Element { f32, f16, bf16 };

// Row-major float32 view: element (r, c) is data[r * stride + c].
struct ConstView {
  const float* data;
  std::ptrdiff_t stride;
};

// Row-major view of elements of any Element type: element (r, c) starts at
// byte (r * stride + c) * (4 or 2) of data.
struct WeightView {
  WeightView() = default;
  WeightView(const void* data, std::ptrdiff_t stride, Element element, bool known_finite = false)
      : data(data), stride(stride), element(element), known_finite(known_finite) {}
  const void* data = nullptr;
  std::ptrdiff_t stride = 0;  // in elements
  Element element = Element::f32;
  // IEEE half elements known to hold no infinity or NaN (holds_only_finite,
  // checked once when the weight is loaded): products of one or two rows
  // then widen them by a cheaper route, exact for every finite half.
  bool known_finite = false;
};

// C [m, n] = A [m, k] · op(B) (+ bias [n] added to every row, when bias is not
// null). C is overwritten; it must not alias A or B. Any size >= 0 works; with
// k == 0 the result is the bias (or zeros).
void multiply(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, ConstView a, WeightView b,
              RightOperand layout, const float* bias, float* c, std::ptrdiff_t ldc);

// The same with a float32 right-hand operand.
inline void multiply(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, ConstView a, ConstView b,
                     RightOperand layout, const float* bias, float* c, std::ptrdiff_t ldc) {
  multiply(m, n, k, a, WeightView{b.data, b.stride, Element::f32}, layout, bias, c, ldc);
}

// op(B) packed once, ahead of the products that use it: the float32 panels
// multiply() otherwise packs (and widens) on every call. For a weight that
// many products use: with tens of rows the packing costs a large part of a
// product. It costs 4·k·n bytes (n rounded up to 8), and it refers to B,
// which must outlive it: products of one or two rows read B in place, as
// multiply() does. Results equal multiply()'s with the unpacked B, bit for bit.
class PackedOperand {
 public:
  PackedOperand(std::ptrdiff_t n, std::ptrdiff_t k, WeightView b, RightOperand layout);
  std::ptrdiff_t n() const { return n_; }
  std::ptrdiff_t k() const { return k_; }
  std::size_t bytes() const { return bytes_for(n_, k_); }
  // The panels' size for op(B) of [k, n].
  static std::size_t bytes_for(std::ptrdiff_t n, std::ptrdiff_t k);

 private:
  friend void multiply(std::ptrdiff_t m, ConstView a, const PackedOperand& b, const float* bias, float* c,
                       std::ptrdiff_t ldc);
  std::ptrdiff_t n_, k_;
  WeightView b_;
  RightOperand layout_;
  std::unique_ptr<float[]> panels_;
};

// C [m, n] = A [m, k] · op(B) (+ bias), with op(B) packed ahead.
void multiply(std::ptrdiff_t m, ConstView a, const PackedOperand& b, const float* bias, float* c, std::ptrdiff_t ldc);

// out[0, count) = the count elements at data widened to float32, exactly (the
// packing's conversion; embedding rows and tests use it directly).
void widen(Element element, const void* data, std::ptrdiff_t count, float* out);

// Whether none of the count elements at data is an infinity or a NaN (always
// true for bfloat16 and float32, whose one-row widening is exact anyway).
bool holds_only_finite(Element element, const void* data, std::ptrdiff_t count);

}  // namespace attnplay::gemm
