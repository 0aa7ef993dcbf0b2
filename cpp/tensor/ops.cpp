// Implementation of tensor/ops.h on Eigen.
#include "tensor/ops.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace attnplay {

Matrix matmul(const ConstMatrixRef& a, const ConstMatrixRef& b) {
  if (a.cols() != b.rows()) {
    throw std::invalid_argument("matmul: inner dimensions differ (" + std::to_string(a.rows()) + "x" +
                                std::to_string(a.cols()) + " · " + std::to_string(b.rows()) + "x" +
                                std::to_string(b.cols()) + ")");
  }
  Matrix c(a.rows(), b.cols());
  c.noalias() = a * b;
  return c;
}

Matrix matmul_transposed(const ConstMatrixRef& a, const ConstMatrixRef& b) {
  if (a.cols() != b.cols()) {
    throw std::invalid_argument("matmul_transposed: widths differ (" + std::to_string(a.cols()) + " vs " +
                                std::to_string(b.cols()) + ")");
  }
  Matrix c(a.rows(), b.rows());
  c.noalias() = a * b.transpose();
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
    float sum = 0.0f;
    for (Eigen::Index j = 0; j < n; ++j) {
      row[j] = std::exp(row[j] - row_max);  // exp(-inf) == 0 exactly
      sum += row[j];
    }
    const float inv = 1.0f / sum;
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
