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

// Products of fewer multiply-adds run on the calling thread alone: sharing
// them out costs more than it saves (a head's q·Kᵀ over a short cache).
constexpr std::ptrdiff_t kSharedWork = std::ptrdiff_t{1} << 16;

// C [m, n] = A [m, k] · op(B) (+ bias [n]) for 1 ≤ m ≤ kVectorRows, n ≥ 1, k ≥ 1.
void multiply_vectors(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, ConstView a, WeightView b,
                      RightOperand layout, const float* bias, float* c, std::ptrdiff_t ldc);

// multiply_vectors on the calling thread alone: for a parallel_for body that
// shares out bigger pieces of work (attention's heads in a decoding step).
void multiply_vectors_on_this_thread(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, ConstView a, WeightView b,
                                     RightOperand layout, const float* bias, float* c, std::ptrdiff_t ldc);

// One product of a list that multiply_vectors runs together: C [m, n] = A · op(B) (+ bias [n]).
struct VectorProduct {
  std::ptrdiff_t n;
  WeightView b;
  RightOperand layout;
  const float* bias;  // [n] or null
  float* c;
  std::ptrdiff_t ldc;
};

// The most products one pass of the thread pool takes.
constexpr std::size_t kTogetherProducts = 4;

// Products of the same A [m, k] (1 ≤ m ≤ kVectorRows, k ≥ 1, each n ≥ 1; 1 ≤
// count ≤ kTogetherProducts) in one pass of the thread pool, their outputs
// shared out together: a layer's q, k and v (or its gate and up) cost one
// dispatch and one split of A (linear_together in tensor/weight.h hands more
// over kTogetherProducts at a time). Each output is what multiply_vectors
// alone gives.
void multiply_vectors(std::ptrdiff_t m, std::ptrdiff_t k, ConstView a, const VectorProduct* products, std::size_t count);

}  // namespace attnplay::gemm
