// The float32 matrix-multiplication kernel behind attnplay::matmul in the
// WebAssembly build: B packed into 8-column panels, a 4x8 register tile of
// f32x4 accumulators (wasm_simd128.h; GCC/Clang vector extensions natively,
// so the same packing, blocking and tails are tested by the native suites),
// cache blocking over k, rows and columns, and tails for every size.
// Work is split into independent output tiles that the thread pool (when the
// build has threads) runs in parallel.
// Not here: shape checks and Eigen types (tensor/ops.h is the API to call).
#pragma once

#include <cstddef>

namespace attnplay::gemm {

// How the right-hand operand is stored.
enum class RightOperand {
  k_by_n,  // B itself, [k, n] row-major: C = A·B
  n_by_k,  // Bᵀ stored as [n, k] row-major: C = A·Bᵀ (attention's Q·Kᵀ)
};

// Row-major view: element (r, c) is data[r * stride + c].
struct ConstView {
  const float* data;
  std::ptrdiff_t stride;
};

// C [m, n] = A [m, k] · op(B) (+ bias [n] added to every row, when bias is not
// null). C is overwritten; it must not alias A or B. Any size >= 0 works; with
// k == 0 the result is the bias (or zeros).
void multiply(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, ConstView a, ConstView b,
              RightOperand layout, const float* bias, float* c, std::ptrdiff_t ldc);

}  // namespace attnplay::gemm
