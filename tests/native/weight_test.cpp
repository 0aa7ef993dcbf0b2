// WeightMatrix (tensor/weight.h): weights resident as float32, IEEE half or
// bfloat16 in either orientation, copied or viewing a buffer someone else
// owns, and linear() on them against double loops over the values the stored
// bits encode (reference.h's formulas).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "reference.h"
#include "tensor/weight.h"

using attnplay::DType;
using attnplay::Matrix;
using attnplay::RowVector;
using attnplay::WeightLayout;
using attnplay::WeightMatrix;

namespace {

// rows x cols random elements of `dtype` as little-endian bytes, and their values.
struct Stored {
  std::vector<unsigned char> bytes;
  ref::Mat values;
};

Stored random_weight(DType dtype, int rows, int cols, std::mt19937& rng) {
  Stored s;
  s.values.assign(rows, std::vector<double>(cols));
  s.bytes.resize(static_cast<std::size_t>(rows) * cols * attnplay::dtype_size(dtype));
  ref::NormalDraws normal;
  std::uniform_int_distribution<unsigned> bits16(0, 0xffff);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * cols + c;
      if (dtype == DType::f32) {
        const float v = normal(rng);
        std::memcpy(&s.bytes[4 * i], &v, 4);
        s.values[r][c] = v;
        continue;
      }
      // Random finite patterns with the exponent field forced to about 1.
      std::uint16_t b = static_cast<std::uint16_t>(bits16(rng));
      b = dtype == DType::f16 ? static_cast<std::uint16_t>((b & 0x83ffu) | (((b >> 10) % 4 + 13) << 10))
                              : static_cast<std::uint16_t>((b & 0x807fu) | (((b >> 7) % 4 + 125) << 7));
      std::memcpy(&s.bytes[2 * i], &b, 2);
      s.values[r][c] = dtype == DType::f16 ? ref::half_value(b) : ref::bfloat16_value(b);
    }
  return s;
}

double max_error(const Matrix& got, const ref::Mat& want) {
  double worst = 0;
  for (Eigen::Index r = 0; r < got.rows(); ++r)
    for (Eigen::Index c = 0; c < got.cols(); ++c) worst = std::max(worst, std::abs(got(r, c) - want[r][c]));
  return worst;
}

}  // namespace

TEST_CASE("linear: x·W and x·Wᵀ for float32, half and bfloat16 weights, with and without bias") {
  std::mt19937 rng(31);
  struct Shape {
    int t, in, out;
  };
  for (DType dtype : {DType::f32, DType::f16, DType::bf16})
    for (WeightLayout layout : {WeightLayout::in_by_out, WeightLayout::out_by_in})
      for (const Shape s : {Shape{1, 7, 5}, Shape{5, 64, 9}, Shape{17, 300, 130}, Shape{64, 576, 192}}) {
        const bool in_by_out = layout == WeightLayout::in_by_out;
        const int rows = in_by_out ? s.in : s.out, cols = in_by_out ? s.out : s.in;
        const Stored w = random_weight(dtype, rows, cols, rng);
        const WeightMatrix weight = WeightMatrix::copy_of(dtype, w.bytes.data(), rows, cols, layout);
        CHECK(weight.in() == s.in);
        CHECK(weight.out() == s.out);
        CHECK(weight.bytes() == w.bytes.size());
        const Matrix x = ref::random_matrix(s.t, s.in, rng);
        const RowVector bias = ref::random_matrix(1, s.out, rng);
        const ref::Mat want = ref::matmul(ref::from(x), in_by_out ? w.values : ref::transpose(w.values));
        ref::Mat want_bias = want;
        for (auto& row : want_bias)
          for (int j = 0; j < s.out; ++j) row[j] += bias(j);
        const double tolerance = 1e-5 * (1 + 2 * std::sqrt(static_cast<double>(s.in)));
        CAPTURE(static_cast<int>(dtype));
        CAPTURE(in_by_out);
        CAPTURE(s.in);
        CHECK(max_error(attnplay::linear(x, weight), want) < tolerance);
        CHECK(max_error(attnplay::linear(x, weight, bias), want_bias) < tolerance);
        // A strided input (a block of a wider matrix).
        Matrix wide = Matrix::Zero(s.t, s.in + 3);
        wide.leftCols(s.in) = x;
        CHECK(max_error(attnplay::linear(wide.leftCols(s.in), weight, bias), want_bias) < tolerance);
      }
}

TEST_CASE("WeightMatrix: a view shares its owner's bytes; rows and the whole matrix widen exactly") {
  std::mt19937 rng(32);
  const Stored w = random_weight(DType::bf16, 6, 11, rng);
  auto owner = std::make_shared<std::vector<unsigned char>>(w.bytes);
  const unsigned char* bytes = owner->data();
  const WeightMatrix view =
      WeightMatrix::view_of(DType::bf16, owner, bytes, 6, 11, WeightLayout::out_by_in);
  CHECK(view.data() == bytes);  // no copy
  owner.reset();                // the view keeps the buffer alive
  const Matrix all = view.to_matrix();
  std::vector<float> row(11);
  for (int r = 0; r < 6; ++r) {
    view.row_to_float(r, row.data());
    for (int c = 0; c < 11; ++c) {
      CHECK(all(r, c) == w.values[r][c]);
      CHECK(row[c] == w.values[r][c]);
    }
  }
  CHECK_THROWS_WITH_AS(view.row_to_float(6, row.data()), "weight matrix: row 6 out of range", std::out_of_range);
  const WeightMatrix copy = WeightMatrix::copy_of(DType::bf16, w.bytes.data(), 6, 11, WeightLayout::out_by_in);
  CHECK(copy.data() != w.bytes.data());
  CHECK(copy.to_matrix() == all);
}

TEST_CASE("WeightMatrix: packed for products, linear() gives the same bits; copies share the packing") {
  std::mt19937 rng(33);
  for (DType dtype : {DType::f32, DType::f16, DType::bf16})
    for (WeightLayout layout : {WeightLayout::in_by_out, WeightLayout::out_by_in}) {
      const Stored w = random_weight(dtype, 130, 70, rng);
      WeightMatrix weight = WeightMatrix::copy_of(dtype, w.bytes.data(), 130, 70, layout);
      const RowVector bias = ref::random_matrix(1, weight.out(), rng);
      const Matrix x = ref::random_matrix(37, weight.in(), rng), one_row = x.topRows(1);
      const Matrix before = attnplay::linear(x, weight, bias), before_row = attnplay::linear(one_row, weight, bias);
      const WeightMatrix earlier_copy = weight;
      CAPTURE(static_cast<int>(dtype));
      if (dtype == DType::f32) {  // natively Eigen multiplies float32 weights in place: nothing to pack
        CHECK(weight.packing_bytes() == 0);
        weight.pack_for_products();
        CHECK(weight.packed() == nullptr);
        continue;
      }
      const std::int64_t padded_out = (weight.out() + 7) / 8 * 8;  // 70 -> 72, 130 -> 136
      CHECK(weight.packing_bytes() == static_cast<std::size_t>(weight.in() * padded_out) * sizeof(float));
      weight.pack_for_products();
      REQUIRE(weight.packed() != nullptr);
      CHECK(weight.packing_bytes() == 0);  // already packed
      CHECK(earlier_copy.packed() == nullptr);
      const WeightMatrix later_copy = weight;
      CHECK(later_copy.packed() == weight.packed());
      CHECK(attnplay::linear(x, weight, bias) == before);
      CHECK(attnplay::linear(one_row, later_copy, bias) == before_row);
    }
}

TEST_CASE("WeightMatrix: IEEE half weights holding an infinity or a NaN are known; one-row products keep them") {
  std::mt19937 rng(34);
  Stored w = random_weight(DType::f16, 9, 16, rng);  // [out 9, in 16]
  CHECK(WeightMatrix::copy_of(DType::f16, w.bytes.data(), 9, 16, WeightLayout::out_by_in).known_finite());
  const std::uint16_t infinity = 0x7c00, nan = 0x7e00;
  std::memcpy(&w.bytes[2 * (2 * 16 + 5)], &infinity, 2);  // output 2 reads +inf
  std::memcpy(&w.bytes[2 * (6 * 16 + 9)], &nan, 2);       // output 6 reads a NaN
  const WeightMatrix weight = WeightMatrix::copy_of(DType::f16, w.bytes.data(), 9, 16, WeightLayout::out_by_in);
  CHECK_FALSE(weight.known_finite());
  CHECK(WeightMatrix::copy_of(DType::bf16, w.bytes.data(), 9, 16, WeightLayout::out_by_in).known_finite());
  for (int rows : {1, 2, 5}) {  // read in place (1, 2) and packed (5)
    CAPTURE(rows);
    const Matrix y = attnplay::linear(Matrix::Ones(rows, 16), weight);  // [rows, 9]
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < 9; ++j) {
        CAPTURE(j);
        if (j == 2) {
          CHECK((std::isinf(y(r, j)) && y(r, j) > 0));
        } else if (j == 6) {
          CHECK(std::isnan(y(r, j)));
        } else {
          double want = 0;
          for (int p = 0; p < 16; ++p) want += w.values[j][p];
          CHECK(std::abs(y(r, j) - want) < 1e-4);
        }
      }
  }
}

// A layer's q, k and v (or gate and up) in one pass: each output what linear() alone gives, bit for bit, for one and two
// rows (one pass of the thread pool, past kTogetherProducts weights) and for more (each in turn); mixed element types,
// layouts, widths and biases; shapes checked as linear() checks them.
TEST_CASE("linear_together: every output equals linear() alone, bit for bit") {
  std::mt19937 rng(51);
  struct Layer {
    DType dtype;
    WeightLayout layout;
    int out;
    bool bias;
  };
  const std::vector<Layer> shapes = {{DType::bf16, WeightLayout::out_by_in, 96, true},
                                     {DType::f16, WeightLayout::out_by_in, 37, false},
                                     {DType::f32, WeightLayout::in_by_out, 40, true},
                                     {DType::f16, WeightLayout::in_by_out, 280, true},
                                     {DType::f32, WeightLayout::out_by_in, 300, false}};  // five: past one pass's four
  constexpr int in = 160;  // the first four: 72,480 multiply-adds a row, shared out among the threads
  std::vector<Stored> stored;
  std::vector<WeightMatrix> weights;
  std::vector<RowVector> biases;
  for (const Layer& l : shapes) {
    const bool out_first = l.layout == WeightLayout::out_by_in;
    stored.push_back(random_weight(l.dtype, out_first ? l.out : in, out_first ? in : l.out, rng));
    weights.push_back(WeightMatrix::copy_of(l.dtype, stored.back().bytes.data(), out_first ? l.out : in,
                                            out_first ? in : l.out, l.layout));
    biases.push_back(l.bias ? RowVector(RowVector::Random(l.out)) : RowVector());
  }
  for (int rows : {1, 2, 3}) {
    CAPTURE(rows);
    const Matrix x = Matrix::Random(rows, in);
    std::vector<Matrix> together(shapes.size());
    attnplay::linear_together(x, {{&weights[0], &biases[0], &together[0]}, {&weights[1], &biases[1], &together[1]},
                                  {&weights[2], &biases[2], &together[2]}, {&weights[3], &biases[3], &together[3]},
                                  {&weights[4], &biases[4], &together[4]}});
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      CAPTURE(i);
      const Matrix alone = attnplay::linear(x, weights[i], biases[i]);
      REQUIRE(together[i].rows() == rows);
      REQUIRE(together[i].cols() == shapes[i].out);
      CHECK(together[i] == alone);
    }
  }
  Matrix y;
  const RowVector short_bias = RowVector::Ones(5);
  CHECK_THROWS_WITH_AS(attnplay::linear_together(Matrix::Ones(1, in), {{&weights[0], &short_bias, &y}}),
                       "linear: bias has 5 entries for 96 outputs", std::invalid_argument);
  CHECK_THROWS_WITH_AS(attnplay::linear_together(Matrix::Ones(1, in + 1), {{&weights[0], &biases[0], &y}}),
                       "linear: input width 161 but the weight takes 160", std::invalid_argument);
}

TEST_CASE("linear: shapes that do not fit are refused with both sizes") {
  const WeightMatrix w = WeightMatrix::from_matrix(Matrix::Ones(4, 3), WeightLayout::in_by_out);  // in 4, out 3
  CHECK_THROWS_WITH_AS(attnplay::linear(Matrix::Ones(2, 5), w), "linear: input width 5 but the weight takes 4",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(attnplay::linear(Matrix::Ones(2, 4), w, RowVector::Ones(4)),
                       "linear: bias has 4 entries for 3 outputs", std::invalid_argument);
  CHECK_THROWS_WITH_AS(WeightMatrix::copy_of(DType::f16, nullptr, -1, 2, WeightLayout::in_by_out),
                       "weight matrix: negative shape", std::invalid_argument);
}
