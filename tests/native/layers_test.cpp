// Transformer block pieces (layer norm, GELU, residual) against their
// formulas in double precision and published reference values.
#include <doctest/doctest.h>

#include <cmath>

#include "nn/layers.h"
#include "reference.h"

using attnplay::Matrix;
using attnplay::RowVector;

TEST_CASE("layer_norm normalises each row with the biased variance, then scales and shifts") {
  std::mt19937 rng(4);
  for (int d : {1, 3, 8, 17, 65}) {
    const Matrix x = ref::random_matrix(5, d, rng, 3.0f);
    const RowVector gamma = ref::random_matrix(1, d, rng), beta = ref::random_matrix(1, d, rng);
    const Matrix y = attnplay::layer_norm(x, gamma, beta, 1e-5f);
    for (int r = 0; r < 5; ++r) {
      double mean = 0, var = 0;
      for (int c = 0; c < d; ++c) mean += x(r, c);
      mean /= d;
      for (int c = 0; c < d; ++c) var += (x(r, c) - mean) * (x(r, c) - mean);
      var /= d;
      for (int c = 0; c < d; ++c)
        CHECK(y(r, c) == doctest::Approx((x(r, c) - mean) / std::sqrt(var + 1e-5) * gamma(c) + beta(c)).epsilon(1e-4));
    }
  }
  CHECK_THROWS_AS(attnplay::layer_norm(Matrix::Ones(2, 3), RowVector::Ones(2), RowVector::Ones(3), 1e-5f),
                  std::invalid_argument);
}

TEST_CASE("GELU: exact (erf) and tanh approximation") {
  Matrix x(1, 5);
  x << -3.0f, -1.0f, 0.0f, 1.0f, 2.5f;
  Matrix exact = x, approx = x;
  attnplay::gelu_erf(exact);
  attnplay::gelu_tanh(approx);
  for (int c = 0; c < 5; ++c) {
    const double v = x(0, c);
    CHECK(exact(0, c) == doctest::Approx(0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))).epsilon(1e-6));
    CHECK(approx(0, c) ==
          doctest::Approx(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))).epsilon(1e-6));
  }
  CHECK(exact(0, 3) == doctest::Approx(0.8413447460685429));  // Φ(1)
  CHECK(approx(0, 3) == doctest::Approx(0.8411919906082768));
}

// Eigen's float erf (as XLA computes it) is within 9.2e-7 here; std::erf was
// within 1.1e-7 but a scalar libm call in WebAssembly (nn/layers.cpp).
TEST_CASE("GELU (erf) within 1e-6 of the double-precision value over -8..8") {
  Matrix x(1, 16001);
  for (int i = 0; i <= 16000; ++i) x(0, i) = -8.0f + 0.001f * static_cast<float>(i);
  Matrix y = x;
  attnplay::gelu_erf(y);
  double worst = 0;
  for (int i = 0; i <= 16000; ++i) {
    const double v = x(0, i);
    const double want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    worst = std::max(worst, std::abs(y(0, i) - want) / std::max(1.0, std::abs(want)));
  }
  CHECK(worst < 1e-6);
}

TEST_CASE("quick GELU: x·σ(1.702·x), transformers' QuickGELUActivation") {
  Matrix x(1, 6);
  x << -8.0f, -3.0f, -1.0f, 0.0f, 1.0f, 2.5f;
  Matrix y = x;
  attnplay::quick_gelu(y);
  for (int c = 0; c < 6; ++c) {
    const double v = x(0, c);
    CHECK(y(0, c) == doctest::Approx(v / (1 + std::exp(-1.702 * v))).epsilon(1e-6));
  }
}

TEST_CASE("residual adds element-wise") {
  std::mt19937 rng(6);
  const Matrix y = ref::random_matrix(4, 3, rng);
  Matrix z = y;
  attnplay::add_residual(z, y);
  CHECK((z - 2 * y).cwiseAbs().maxCoeff() == 0.0f);
}
