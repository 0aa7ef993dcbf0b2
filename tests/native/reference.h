// Independent double-precision reference implementations for the native
// tests: plain loops, no Eigen expressions, no shared code with cpp/.
// Written from the formulas, so a bug in the core cannot hide in both.
#pragma once

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tensor/tensor.h"

namespace ref {

// A binary floating-point bit pattern with `exponent_bits` and
// `mantissa_bits` (IEEE half: 5, 10; bfloat16: 8, 7), from the formula
// (-1)^s · 2^(e - bias) · (1 + m / 2^M), subnormals 2^(1 - bias) · m / 2^M.
inline double decode_float_bits(unsigned bits, int exponent_bits, int mantissa_bits) {
  const unsigned m = bits & ((1u << mantissa_bits) - 1);
  const unsigned e = (bits >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const double sign = (bits >> (exponent_bits + mantissa_bits)) & 1 ? -1.0 : 1.0;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const double fraction = std::ldexp(static_cast<double>(m), -mantissa_bits);
  if (e == (1u << exponent_bits) - 1) return m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(fraction, 1 - bias);
  return sign * std::ldexp(1.0 + fraction, static_cast<int>(e) - bias);
}
inline double half_value(unsigned bits) { return decode_float_bits(bits, 5, 10); }
inline double bfloat16_value(unsigned bits) { return decode_float_bits(bits, 8, 7); }

using Mat = std::vector<std::vector<double>>;  // [rows][cols]

inline Mat from(const attnplay::Matrix& m) {
  Mat out(static_cast<std::size_t>(m.rows()), std::vector<double>(static_cast<std::size_t>(m.cols())));
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) out[r][c] = m(r, c);
  return out;
}

inline Mat matmul(const Mat& a, const Mat& b) {
  const std::size_t n = a.size(), k = b.size(), m = b.empty() ? 0 : b[0].size();
  Mat c(n, std::vector<double>(m, 0.0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      double s = 0;
      for (std::size_t p = 0; p < k; ++p) s += a[i][p] * b[p][j];
      c[i][j] = s;
    }
  return c;
}

inline Mat transpose(const Mat& a) {
  Mat t(a.empty() ? 0 : a[0].size(), std::vector<double>(a.size()));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < a[i].size(); ++j) t[j][i] = a[i][j];
  return t;
}

struct Head {
  Mat scores, weights, output;
};

// softmax((q·kᵀ) / divisor with causal mask) · v, in double.
inline Head attention(const Mat& q, const Mat& k, const Mat& v, bool scale, double temperature, bool causal) {
  Head h;
  h.scores = matmul(q, transpose(k));
  const double divisor = temperature * (scale ? std::sqrt(static_cast<double>(q[0].size())) : 1.0);
  h.weights = h.scores;
  for (std::size_t i = 0; i < q.size(); ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < k.size(); ++j)
      if (!(causal && j > i)) mx = std::max(mx, h.scores[i][j] / divisor);
    double sum = 0;
    for (std::size_t j = 0; j < k.size(); ++j) {
      h.weights[i][j] = (causal && j > i) ? 0.0 : std::exp(h.scores[i][j] / divisor - mx);
      sum += h.weights[i][j];
    }
    for (std::size_t j = 0; j < k.size(); ++j) h.weights[i][j] /= sum;
  }
  h.output = matmul(h.weights, v);
  return h;
}

// Normal draws with mean 0 and standard deviation sd (Box-Muller, two per
// pair of 32-bit draws), used instead of std::normal_distribution: libstdc++'s
// generate_canonical takes two long-double logarithms per draw, which clang
// does not fold away (gemm_test spent 80% of its 9 s drawing numbers).
class NormalDraws {
 public:
  explicit NormalDraws(float sd = 1.0f) : sd_(sd) {}
  float operator()(std::mt19937& rng) {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = (static_cast<double>(rng()) + 1.0) / 4294967297.0;  // (0, 1): log(u1) is finite
    const double u2 = static_cast<double>(rng()) / 4294967296.0;          // [0, 1)
    const double radius = std::sqrt(-2.0 * std::log(u1)) * sd_;
    const double angle = 2.0 * 3.14159265358979323846 * u2;
    spare_ = static_cast<float>(radius * std::sin(angle));
    has_spare_ = true;
    return static_cast<float>(radius * std::cos(angle));
  }

 private:
  double sd_;
  float spare_ = 0.0f;
  bool has_spare_ = false;
};

inline attnplay::Matrix random_matrix(Eigen::Index rows, Eigen::Index cols, std::mt19937& rng, float sd = 1.0f) {
  NormalDraws dist(sd);
  attnplay::Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = dist(rng);
  return m;
}

// Largest |a - b| over all entries; infinite if the shapes differ.
inline double max_abs_diff(const attnplay::Matrix& a, const Mat& b) {
  if (static_cast<std::size_t>(a.rows()) != b.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (Eigen::Index r = 0; r < a.rows(); ++r) {
    if (static_cast<std::size_t>(a.cols()) != b[r].size()) return std::numeric_limits<double>::infinity();
    for (Eigen::Index c = 0; c < a.cols(); ++c) worst = std::max(worst, std::abs(a(r, c) - b[r][c]));
  }
  return worst;
}

}  // namespace ref
