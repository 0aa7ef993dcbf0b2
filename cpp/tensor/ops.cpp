// Implementation of tensor/ops.h: products on the SIMD kernel (WebAssembly)
// or Eigen (native), softmax as plain loops that vectorize.
#include "tensor/ops.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "tensor/fast_exp.h"
#ifdef __wasm_simd128__
#include "tensor/gemm.h"
#endif

namespace attnplay {
namespace {

void require_inner(const char* what, const ConstMatrixRef& a, const ConstMatrixRef& b) {
  if (a.cols() != b.rows()) {
    throw std::invalid_argument(std::string(what) + ": inner dimensions differ (" + std::to_string(a.rows()) +
                                "x" + std::to_string(a.cols()) + " · " + std::to_string(b.rows()) + "x" +
                                std::to_string(b.cols()) + ")");
  }
}

#ifdef __wasm_simd128__
gemm::ConstView view(const ConstMatrixRef& m) { return {m.data(), m.outerStride()}; }
#endif

}  // namespace

Matrix matmul(const ConstMatrixRef& a, const ConstMatrixRef& b) {
  require_inner("matmul", a, b);
  Matrix c(a.rows(), b.cols());
#ifdef __wasm_simd128__
  gemm::multiply(a.rows(), b.cols(), a.cols(), view(a), view(b), gemm::RightOperand::k_by_n, nullptr, c.data(),
                 c.cols());
#else
  c.noalias() = a * b;
#endif
  return c;
}

Matrix matmul_transposed(const ConstMatrixRef& a, const ConstMatrixRef& b) {
  if (a.cols() != b.cols()) {
    throw std::invalid_argument("matmul_transposed: widths differ (" + std::to_string(a.cols()) + " vs " +
                                std::to_string(b.cols()) + ")");
  }
  Matrix c(a.rows(), b.rows());
#ifdef __wasm_simd128__
  gemm::multiply(a.rows(), b.rows(), a.cols(), view(a), view(b), gemm::RightOperand::n_by_k, nullptr, c.data(),
                 c.cols());
#else
  c.noalias() = a * b.transpose();
#endif
  return c;
}

Matrix matmul_add_bias(const ConstMatrixRef& a, const ConstMatrixRef& b, const RowVector& bias) {
  require_inner("matmul_add_bias", a, b);
  if (bias.size() != b.cols()) {
    throw std::invalid_argument("matmul_add_bias: bias has " + std::to_string(bias.size()) + " entries for " +
                                std::to_string(b.cols()) + " outputs");
  }
  Matrix c(a.rows(), b.cols());
#ifdef __wasm_simd128__
  gemm::multiply(a.rows(), b.cols(), a.cols(), view(a), view(b), gemm::RightOperand::k_by_n, bias.data(),
                 c.data(), c.cols());
#else
  c.noalias() = a * b;
  c.rowwise() += bias;
#endif
  return c;
}

void softmax_rows(MatrixRef x) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    float* row = x.row(r).data();
    const Eigen::Index n = x.cols();
    float row_max = neg_inf;
    for (Eigen::Index j = 0; j < n; ++j) row_max = row[j] > row_max ? row[j] : row_max;
    if (row_max == neg_inf) {  // fully masked row
      for (Eigen::Index j = 0; j < n; ++j) row[j] = 0.0f;
      continue;
    }
    for (Eigen::Index j = 0; j < n; ++j) {  // vectorizes (fast_exp: within 2 ulp of std::exp)
      const float shifted = row[j] - row_max;
      row[j] = shifted == neg_inf ? 0.0f : fast_exp(shifted);  // a masked score weighs exactly 0
    }
    float partial[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // four running sums: no chain of n dependent additions
    Eigen::Index j = 0;
    for (; j + 4 <= n; j += 4)
      for (int q = 0; q < 4; ++q) partial[q] += row[j + q];
    for (; j < n; ++j) partial[0] += row[j];
    const float inv = 1.0f / ((partial[0] + partial[1]) + (partial[2] + partial[3]));
    for (Eigen::Index j = 0; j < n; ++j) row[j] *= inv;
  }
}

void require_shape(const ConstMatrixRef& a, Eigen::Index rows, Eigen::Index cols, const char* what) {
  if (a.rows() != rows || a.cols() != cols) {
    throw std::invalid_argument(std::string(what) + ": expected shape [" + std::to_string(rows) + ", " +
                                std::to_string(cols) + "], got [" + std::to_string(a.rows()) + ", " +
                                std::to_string(a.cols()) + "]");
  }
}

}  // namespace attnplay
