// A weight matrix kept resident in the precision its checkpoint stored it in
// (float32, IEEE half or bfloat16), with its orientation relative to
// y = x·W, and the products the runtime takes with it. Half-precision weights
// are widened to float32 inside the matrix kernel, one packed block at a
// time, unless the weight was packed ahead (pack_for_products: a float32 copy
// in the kernel's panel layout, which small models afford and which saves
// the packing on every product).
// Not here: reading checkpoints (safetensors/, model/weights.h), activations
// (plain float32 Matrix, tensor/tensor.h), the kernel itself (tensor/gemm.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>

#include "tensor/tensor.h"

namespace attnplay {

namespace gemm {
class PackedOperand;
}

// Element type of stored weights.
enum class DType { f32, f16, bf16 };

// Bytes per element of a dtype (4 or 2).
std::size_t dtype_size(DType dtype);

// How the stored rows relate to y = x·W.
enum class WeightLayout {
  in_by_out,  // stored [in, out] (GPT-2's Conv1D): y = x·W
  out_by_in,  // stored [out, in] (nn.Linear, embedding tables): y = x·Wᵀ
};

class WeightMatrix {
 public:
  WeightMatrix() = default;

  // A copy of rows × cols elements of `dtype`, row-major as stored
  // (little-endian bytes; `bytes` need not be aligned).
  static WeightMatrix copy_of(DType dtype, const void* bytes, std::int64_t rows, std::int64_t cols,
                              WeightLayout layout);
  // A view of rows × cols elements at `bytes` (no copy), which `owner` keeps
  // alive (e.g. the checkpoint buffer the bytes lie in): the weight shares
  // ownership of it.
  static WeightMatrix view_of(DType dtype, std::shared_ptr<const void> owner, const void* bytes, std::int64_t rows,
                              std::int64_t cols, WeightLayout layout);
  // A float32 matrix, as stored.
  static WeightMatrix from_matrix(Matrix stored, WeightLayout layout);

  DType dtype() const { return dtype_; }
  WeightLayout layout() const { return layout_; }
  std::int64_t rows() const { return rows_; }  // as stored
  std::int64_t cols() const { return cols_; }  // as stored
  std::int64_t in() const { return layout_ == WeightLayout::in_by_out ? rows_ : cols_; }
  std::int64_t out() const { return layout_ == WeightLayout::in_by_out ? cols_ : rows_; }
  std::int64_t elements() const { return rows_ * cols_; }
  std::size_t bytes() const { return static_cast<std::size_t>(elements()) * dtype_size(dtype_); }
  bool empty() const { return elements() == 0; }
  const void* data() const { return data_.get(); }
  // IEEE half weights: no element is an infinity or a NaN (checked when the
  // weight is made; gemm::WeightView::known_finite). True for other dtypes.
  bool known_finite() const { return known_finite_; }

  // Stored row r widened to float32 into out[0, cols) (embedding lookup).
  void row_to_float(std::int64_t r, float* out) const;
  // The whole matrix widened to float32, as stored [rows, cols] (tests and
  // small tensors only).
  Matrix to_matrix() const;

  // Packs the weight once for linear() (gemm::PackedOperand; copies of this
  // WeightMatrix share it): a float32 copy of 4·in·out bytes that saves the
  // packing of every product. Natively float32 weights are multiplied by
  // Eigen, which reads the stored matrix, so they are not packed.
  void pack_for_products();
  // The bytes pack_for_products() would allocate (0 when it would not pack).
  std::size_t packing_bytes() const;
  const gemm::PackedOperand* packed() const { return packed_.get(); }

 private:
  DType dtype_ = DType::f32;
  WeightLayout layout_ = WeightLayout::in_by_out;
  std::int64_t rows_ = 0, cols_ = 0;
  std::shared_ptr<const unsigned char[]> data_;  // rows_ × cols_ elements of dtype_
  bool known_finite_ = true;
  std::shared_ptr<const gemm::PackedOperand> packed_;  // op(W) for linear(), or null
};

// y = x·W + bias. x [T, in] -> [T, out]; bias is empty or [out].
Matrix linear(const ConstMatrixRef& x, const WeightMatrix& w, const RowVector& bias = RowVector());

// One layer of linear_together: *y = x·w + bias.
struct LinearOutput {
  const WeightMatrix* w;
  const RowVector* bias;  // empty or [out]
  Matrix* y;
};
// Several linear layers of the same x, each *y = linear(x, *w, *bias): one or
// two rows of x (a decoding step) read the weights gemm::kTogetherProducts at a
// time in one pass of the thread pool (gemm::multiply_vectors' list: one
// dispatch, x split once), which is how a layer's q, k and v, and its gate and
// up, are taken.
void linear_together(const ConstMatrixRef& x, std::initializer_list<LinearOutput> layers);

}  // namespace attnplay
