// Tensor types of the attnplay core: dense float32, row-major Eigen matrices.
// A sequence of T vectors of width d is a Matrix of shape [T, d] (one row per
// token). This file only names types; operations live in ops.h.
#pragma once

#include <Eigen/Core>

namespace attnplay {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixRef = Eigen::Ref<Matrix>;
using ConstMatrixRef = Eigen::Ref<const Matrix>;

}  // namespace attnplay
