// Implementation of tensor/weight.h.
//
// linear() here widens the whole weight to float32 and multiplies; the
// in-kernel widening (half weights packed straight into the GEMM's float
// panels) replaces it.
#include "tensor/weight.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "safetensors/safetensors.h"
#include "tensor/ops.h"

namespace attnplay {
namespace {

std::uint16_t read_u16(const unsigned char* p) { return static_cast<std::uint16_t>(p[0] | (p[1] << 8)); }

void widen(DType dtype, const unsigned char* p, std::int64_t n, float* out) {
  switch (dtype) {
    case DType::f32:
      std::memcpy(out, p, static_cast<std::size_t>(n) * 4);
      return;
    case DType::f16:
      for (std::int64_t i = 0; i < n; ++i) out[i] = half_to_float(read_u16(p + 2 * i));
      return;
    case DType::bf16:
      for (std::int64_t i = 0; i < n; ++i) out[i] = bfloat16_to_float(read_u16(p + 2 * i));
      return;
  }
}

}  // namespace

std::size_t dtype_size(DType dtype) { return dtype == DType::f32 ? 4 : 2; }

WeightMatrix WeightMatrix::copy_of(DType dtype, const void* bytes, std::int64_t rows, std::int64_t cols,
                                   WeightLayout layout) {
  if (rows < 0 || cols < 0) throw std::invalid_argument("weight matrix: negative shape");
  WeightMatrix w;
  w.dtype_ = dtype;
  w.layout_ = layout;
  w.rows_ = rows;
  w.cols_ = cols;
  std::shared_ptr<unsigned char[]> data(new unsigned char[w.bytes() + 1]);
  if (w.bytes() != 0) std::memcpy(data.get(), bytes, w.bytes());
  w.data_ = std::move(data);
  return w;
}

WeightMatrix WeightMatrix::from_matrix(Matrix stored, WeightLayout layout) {
  return copy_of(DType::f32, stored.data(), stored.rows(), stored.cols(), layout);
}

void WeightMatrix::row_to_float(std::int64_t r, float* out) const {
  if (r < 0 || r >= rows_) throw std::out_of_range("weight matrix: row " + std::to_string(r) + " out of range");
  widen(dtype_, data_.get() + static_cast<std::size_t>(r * cols_) * dtype_size(dtype_), cols_, out);
}

Matrix WeightMatrix::to_matrix() const {
  Matrix m(rows_, cols_);
  if (elements() != 0) widen(dtype_, data_.get(), elements(), m.data());
  return m;
}

Matrix linear(const ConstMatrixRef& x, const WeightMatrix& w, const RowVector& bias) {
  if (x.cols() != w.in()) {
    throw std::invalid_argument("linear: input width " + std::to_string(x.cols()) + " but the weight takes " +
                                std::to_string(w.in()));
  }
  if (bias.size() != 0 && bias.size() != w.out()) {
    throw std::invalid_argument("linear: bias has " + std::to_string(bias.size()) + " entries for " +
                                std::to_string(w.out()) + " outputs");
  }
  const Matrix stored = w.to_matrix();
  Matrix y = w.layout() == WeightLayout::in_by_out ? matmul(x, stored) : matmul_transposed(x, stored);
  if (bias.size() != 0) y.rowwise() += bias;
  return y;
}

}  // namespace attnplay
