// Matrix products and the row softmax against naive double loops, including
// sizes that leave SIMD tails, huge scores and -inf entries.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference.h"
#include "tensor/fast_exp.h"
#include "tensor/ops.h"

using attnplay::Matrix;

TEST_CASE("matmul and matmul_transposed match the naive reference at sizes around the SIMD width") {
  std::mt19937 rng(1);
  const std::vector<int> sizes = {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 64, 65};
  for (int m : sizes)
    for (int k : sizes)
      for (int n : {1, 4, 5, 17, 65}) {
        CAPTURE(m);
        CAPTURE(k);
        CAPTURE(n);
        const Matrix a = ref::random_matrix(m, k, rng), b = ref::random_matrix(k, n, rng);
        const Matrix bt = ref::random_matrix(n, k, rng);
        const double tol = 1e-5 * (1 + std::sqrt(static_cast<double>(k)));
        CHECK(ref::max_abs_diff(attnplay::matmul(a, b), ref::matmul(ref::from(a), ref::from(b))) < tol);
        CHECK(ref::max_abs_diff(attnplay::matmul_transposed(a, bt),
                                ref::matmul(ref::from(a), ref::transpose(ref::from(bt)))) < tol);
      }
  CHECK_THROWS_WITH_AS(attnplay::matmul(Matrix::Ones(2, 3), Matrix::Ones(4, 2)),
                       "matmul: inner dimensions differ (2x3 · 4x2)", std::invalid_argument);
}

TEST_CASE("softmax_rows is numerically stable and rows sum to 1") {
  Matrix x(3, 3);
  x << 1000.0f, 1001.0f, 1002.0f,  // would overflow exp() without the max shift
      -1000.0f, -1000.0f, -1000.0f,  //
      0.0f, 1.0f, 2.0f;
  attnplay::softmax_rows(x);
  const double e1 = std::exp(1.0), e2 = std::exp(2.0);
  for (int r : {0, 2}) {
    CHECK(x(r, 0) == doctest::Approx(1 / (1 + e1 + e2)).epsilon(1e-6));
    CHECK(x(r, 2) == doctest::Approx(e2 / (1 + e1 + e2)).epsilon(1e-6));
  }
  CHECK(x(1, 1) == doctest::Approx(1.0 / 3).epsilon(1e-6));
  for (int r = 0; r < 3; ++r) CHECK(x.row(r).sum() == doctest::Approx(1.0).epsilon(1e-6));
}

TEST_CASE("softmax_rows gives -inf entries weight exactly 0 and a fully masked row all zeros") {
  const float inf = std::numeric_limits<float>::infinity();
  Matrix x(2, 3);
  x << 0.5f, -inf, 0.5f,  //
      -inf, -inf, -inf;
  attnplay::softmax_rows(x);
  CHECK(x(0, 1) == 0.0f);
  CHECK(x(0, 0) == doctest::Approx(0.5));
  CHECK(x.row(1).cwiseAbs().sum() == 0.0f);
}

TEST_CASE("require_shape names the tensor in its message") {
  CHECK_NOTHROW(attnplay::require_shape(Matrix::Zero(2, 3), 2, 3, "w"));
  CHECK_THROWS_WITH_AS(attnplay::require_shape(Matrix::Zero(2, 3), 3, 2, "h.0.attn.c_attn.weight"),
                       "h.0.attn.c_attn.weight: expected shape [3, 2], got [2, 3]", std::invalid_argument);
}

TEST_CASE("fast_exp is within 2 ulp of std::exp on [-87, 88] and clamps outside") {
  float worst = 0;
  for (float x = -87.0f; x <= 88.0f; x += 0.0137f) {
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, static_cast<float>(std::abs(attnplay::fast_exp(x) - want) / want));
  }
  CHECK(worst < 2.5e-7f);  // 2 ulp of float is 2.4e-7 relative
  CHECK(attnplay::fast_exp(0.0f) == 1.0f);
  CHECK(attnplay::fast_exp(-1000.0f) == doctest::Approx(std::exp(-87.0)).epsilon(1e-6));
  CHECK(std::isnan(attnplay::fast_exp(std::nanf(""))));  // NaN weights give NaN, never undefined behaviour
  CHECK(std::isfinite(attnplay::fast_exp(1000.0f)));
}
