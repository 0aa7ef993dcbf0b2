// Basic tensor operations used by attention and the transformer runtime:
// matrix products in the forms attention needs and a numerically stable
// row softmax that understands -infinity (masked) entries. In WebAssembly the
// products run on the SIMD kernel of tensor/gemm.h; natively on Eigen (which
// uses AVX/AVX-512 there and is faster than a 128-bit kernel).
// Not here: anything attention-specific (see attention/) or layer math (nn/).
#pragma once

#include "tensor/tensor.h"

namespace attnplay {

// C = A·B. A [m, k], B [k, n] -> [m, n].
Matrix matmul(const ConstMatrixRef& a, const ConstMatrixRef& b);

// C = A·Bᵀ. A [m, k], B [n, k] -> [m, n] (scores = Q·Kᵀ).
Matrix matmul_transposed(const ConstMatrixRef& a, const ConstMatrixRef& b);

// C = A·B + bias on every row (a linear layer, bias-add fused into the
// product). A [m, k], B [k, n], bias [n] -> [m, n].
Matrix matmul_add_bias(const ConstMatrixRef& a, const ConstMatrixRef& b, const RowVector& bias);

// Softmax over each row, in place. Subtracts the row maximum first so large
// scores cannot overflow; exp is fast_exp (within 2 ulp of std::exp, and the
// loop vectorizes). Entries equal to -inf get weight exactly 0. A row in
// which every entry is -inf (nothing to attend to) becomes all zeros.
void softmax_rows(MatrixRef x);

// Throws std::invalid_argument naming `what` unless a has `rows` x `cols`.
void require_shape(const ConstMatrixRef& a, Eigen::Index rows, Eigen::Index cols, const char* what);

}  // namespace attnplay
