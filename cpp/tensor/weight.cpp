// Implementation of tensor/weight.h.
//
// Products with half-precision weights run on the GEMM of tensor/gemm.h, which
// widens them while packing its panels; float32 weights go through
// tensor/ops.h (Eigen natively, the same GEMM in WebAssembly).
#include "tensor/weight.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tensor/gemm.h"
#include "tensor/gemv.h"
#include "tensor/ops.h"

namespace attnplay {
namespace {

gemm::Element element_of(DType dtype) {
  switch (dtype) {
    case DType::f16: return gemm::Element::f16;
    case DType::bf16: return gemm::Element::bf16;
    case DType::f32: break;
  }
  return gemm::Element::f32;
}

// The stored elements, as the kernel reads them.
gemm::WeightView stored_view(const WeightMatrix& w) {
  return gemm::WeightView(w.data(), static_cast<std::ptrdiff_t>(w.cols()), element_of(w.dtype()), w.known_finite());
}

// Natively Eigen (AVX) multiplies float32 weights by three rows or more,
// reading the stored matrix; every other product runs on tensor/gemm.h (one
// or two rows, a decoding step, on its threaded gemv.h).
#ifdef __wasm_simd128__
constexpr bool kEigenProducts = false;
#else
constexpr bool kEigenProducts = true;
#endif
bool eigen_multiplies(DType dtype) { return kEigenProducts && dtype == DType::f32; }

gemm::RightOperand right_operand(WeightLayout layout) {
  return layout == WeightLayout::in_by_out ? gemm::RightOperand::k_by_n : gemm::RightOperand::n_by_k;
}

void check_shape(std::int64_t rows, std::int64_t cols) {
  if (rows < 0 || cols < 0) throw std::invalid_argument("weight matrix: negative shape");
}

}  // namespace

std::size_t dtype_size(DType dtype) { return dtype == DType::f32 ? 4 : 2; }

WeightMatrix WeightMatrix::copy_of(DType dtype, const void* bytes, std::int64_t rows, std::int64_t cols,
                                   WeightLayout layout) {
  check_shape(rows, cols);
  const std::size_t size = static_cast<std::size_t>(rows * cols) * dtype_size(dtype);
  std::shared_ptr<unsigned char[]> data(new unsigned char[size + 1]);
  if (size != 0) std::memcpy(data.get(), bytes, size);
  const unsigned char* start = data.get();
  return view_of(dtype, std::move(data), start, rows, cols, layout);
}

WeightMatrix WeightMatrix::view_of(DType dtype, std::shared_ptr<const void> owner, const void* bytes,
                                   std::int64_t rows, std::int64_t cols, WeightLayout layout) {
  check_shape(rows, cols);
  WeightMatrix w;
  w.dtype_ = dtype;
  w.layout_ = layout;
  w.rows_ = rows;
  w.cols_ = cols;
  w.data_ = std::shared_ptr<const unsigned char[]>(std::move(owner), static_cast<const unsigned char*>(bytes));
  w.known_finite_ = gemm::holds_only_finite(element_of(dtype), bytes, rows * cols);
  return w;
}

WeightMatrix WeightMatrix::from_matrix(Matrix stored, WeightLayout layout) {
  return copy_of(DType::f32, stored.data(), stored.rows(), stored.cols(), layout);
}

void WeightMatrix::row_to_float(std::int64_t r, float* out) const {
  if (r < 0 || r >= rows_) throw std::out_of_range("weight matrix: row " + std::to_string(r) + " out of range");
  gemm::widen(element_of(dtype_), data_.get() + static_cast<std::size_t>(r * cols_) * dtype_size(dtype_), cols_, out);
}

Matrix WeightMatrix::to_matrix() const {
  Matrix m(rows_, cols_);
  if (elements() != 0) gemm::widen(element_of(dtype_), data_.get(), elements(), m.data());
  return m;
}

std::size_t WeightMatrix::packing_bytes() const {
  return packed_ || eigen_multiplies(dtype_) ? 0 : gemm::PackedOperand::bytes_for(out(), in());
}

void WeightMatrix::pack_for_products() {
  if (packing_bytes() == 0 || empty()) return;
  packed_ = std::make_shared<const gemm::PackedOperand>(out(), in(), stored_view(*this), right_operand(layout_));
}

namespace {

// Throws std::invalid_argument unless x [T, in] and bias (empty or [out]) fit w.
void check_linear(const ConstMatrixRef& x, const WeightMatrix& w, const RowVector& bias) {
  if (x.cols() != w.in()) {
    throw std::invalid_argument("linear: input width " + std::to_string(x.cols()) + " but the weight takes " +
                                std::to_string(w.in()));
  }
  if (bias.size() != 0 && bias.size() != w.out()) {
    throw std::invalid_argument("linear: bias has " + std::to_string(bias.size()) + " entries for " +
                                std::to_string(w.out()) + " outputs");
  }
}

}  // namespace

Matrix linear(const ConstMatrixRef& x, const WeightMatrix& w, const RowVector& bias) {
  check_linear(x, w, bias);
  if (eigen_multiplies(w.dtype()) && x.rows() > gemm::kVectorRows) {  // one or two rows: gemv.h, threaded
    const Eigen::Map<const Matrix> stored(static_cast<const float*>(w.data()), w.rows(), w.cols());
    if (w.layout() == WeightLayout::in_by_out) return bias.size() != 0 ? matmul_add_bias(x, stored, bias) : matmul(x, stored);
    Matrix y = matmul_transposed(x, stored);
    if (bias.size() != 0) y.rowwise() += bias;
    return y;
  }
  Matrix y(x.rows(), w.out());
  const float* bias_data = bias.size() != 0 ? bias.data() : nullptr;
  if (w.packed()) {
    gemm::multiply(x.rows(), {x.data(), x.outerStride()}, *w.packed(), bias_data, y.data(), y.outerStride());
  } else {
    gemm::multiply(x.rows(), w.out(), w.in(), {x.data(), x.outerStride()}, stored_view(w), right_operand(w.layout()),
                   bias_data, y.data(), y.outerStride());
  }
  return y;
}

void linear_together(const ConstMatrixRef& x, std::initializer_list<LinearOutput> layers) {
  const bool one_pass = x.rows() >= 1 && x.rows() <= gemm::kVectorRows && x.cols() >= 1 &&
                        std::none_of(layers.begin(), layers.end(), [](const LinearOutput& l) { return l.w->packed() || l.w->out() == 0; });
  if (!one_pass) {
    for (const LinearOutput& l : layers) *l.y = linear(x, *l.w, *l.bias);
    return;
  }
  std::array<gemm::VectorProduct, gemm::kTogetherProducts> products{};
  std::size_t count = 0;
  const auto run = [&] {
    gemm::multiply_vectors(x.rows(), x.cols(), {x.data(), x.outerStride()}, products.data(), count);
    count = 0;
  };
  for (const LinearOutput& l : layers) {
    check_linear(x, *l.w, *l.bias);
    l.y->resize(x.rows(), l.w->out());  // [T, out]
    products[count++] = {static_cast<std::ptrdiff_t>(l.w->out()), stored_view(*l.w), right_operand(l.w->layout()),
                         l.bias->size() != 0 ? l.bias->data() : nullptr, l.y->data(), l.y->outerStride()};
    if (count == products.size()) run();
  }
  if (count > 0) run();
}

}  // namespace attnplay
