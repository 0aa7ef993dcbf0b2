// Products of one or two rows with a weight read in place: C [m, n] =
// A [m, k] · op(B) (+ bias) for m ≤ kVectorRows, the products of a decoding
// step (one new token; the query row against a KV cache). Each element of B
// is read once per call, straight from where it is stored: float32, IEEE half
// or bfloat16, widened in registers (bfloat16 by a shift or a mask, IEEE half
// by a shift, a mask and an exact power-of-two rescale when the weight is
// known to be finite, the exact general conversion otherwise). The output is
// split across the thread pool by whole groups of rows (Bᵀ) or columns (B);
// each output is summed in the same order whatever the split.
// Not here: products of more rows (tensor/gemm.cpp packs B for those; it
// calls this for m ≤ kVectorRows); shape checks (tensor/weight.h, ops.h).
#pragma once

#include <cstddef>

#include "tensor/gemm.h"

namespace attnplay::gemm {

// The most rows of A multiply_vectors takes.
constexpr std::ptrdiff_t kVectorRows = 2;

// C [m, n] = A [m, k] · op(B) (+ bias [n]) for 1 ≤ m ≤ kVectorRows, n ≥ 1, k ≥ 1.
void multiply_vectors(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, ConstView a, WeightView b,
                      RightOperand layout, const float* bias, float* c, std::ptrdiff_t ldc);

}  // namespace attnplay::gemm
