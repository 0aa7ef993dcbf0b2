// The SIMD GEMM kernel (tensor/gemm.h) and the thread pool under it, against
// naive double-precision loops: every size around the 4x8 register tile and
// the cache blocks (k blocks of 256, tasks of 128 columns), both operand
// layouts, right-hand operands stored as float32, IEEE half and bfloat16
// (widened while packing), strided (sub-matrix) operands, the fused bias,
// k = 0, and results that do not depend on the number of threads; the
// widening itself on every 16-bit pattern, against the formula; operands
// packed ahead (PackedOperand) give the unpacked product bit for bit; one
// and two rows (tensor/gemv.h, read in place) through every widening route,
// the known-finite IEEE half route exact on every finite bit pattern.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "reference.h"
#include "tensor/gemm.h"
#include "tensor/ops.h"
#include "tensor/thread_pool.h"

using attnplay::Matrix;
using attnplay::RowVector;
using attnplay::gemm::Element;
using attnplay::gemm::RightOperand;

namespace {

// C = A·op(B) (+ bias) in double, from raw row-major arrays (b: B's values).
std::vector<double> naive(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, const float* a, std::ptrdiff_t lda,
                          const double* b, std::ptrdiff_t ldb, RightOperand layout, const float* bias) {
  std::vector<double> c(static_cast<std::size_t>(m * n));
  for (std::ptrdiff_t i = 0; i < m; ++i)
    for (std::ptrdiff_t j = 0; j < n; ++j) {
      double s = bias ? bias[j] : 0.0;
      for (std::ptrdiff_t p = 0; p < k; ++p)
        s += static_cast<double>(a[i * lda + p]) *
             (layout == RightOperand::k_by_n ? b[p * ldb + j] : b[j * ldb + p]);
      c[static_cast<std::size_t>(i * n + j)] = s;
    }
  return c;
}

std::vector<float> random_values(std::size_t count, std::mt19937& rng) {
  ref::NormalDraws dist;
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

// A right-hand operand stored as `element`: its bytes and the values they
// encode (by the formulas of reference.h). Half-precision values are drawn as
// bit patterns with exponents around 1 (a few subnormals among them).
struct Stored {
  std::vector<unsigned char> bytes;
  std::vector<double> values;
};

Stored random_stored(Element element, std::size_t count, std::mt19937& rng) {
  Stored s;
  s.values.resize(count);
  if (element == Element::f32) {
    const std::vector<float> v = random_values(count, rng);
    s.bytes.resize(count * 4);
    std::memcpy(s.bytes.data(), v.data(), s.bytes.size());
    for (std::size_t i = 0; i < count; ++i) s.values[i] = v[i];
    return s;
  }
  const bool half = element == Element::f16;
  const int mantissa_bits = half ? 10 : 7, bias = half ? 15 : 127;
  std::uniform_int_distribution<unsigned> mantissa(0, (1u << mantissa_bits) - 1), exponent(bias - 3, bias + 1),
      sign(0, 1), subnormal(0, 15);
  s.bytes.resize(count * 2);
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned e = subnormal(rng) == 0 ? 0 : exponent(rng);
    const auto bits = static_cast<std::uint16_t>((sign(rng) << 15) | (e << mantissa_bits) | mantissa(rng));
    std::memcpy(&s.bytes[2 * i], &bits, 2);
    s.values[i] = half ? ref::half_value(bits) : ref::bfloat16_value(bits);
  }
  return s;
}

// Runs one product with operands padded by `pad` columns (strides > widths)
// and a C with a guard band, and returns the largest error against `naive`,
// or infinity if the kernel wrote outside C's [m, n] window.
double product_error(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, RightOperand layout, bool with_bias,
                     std::ptrdiff_t pad, std::mt19937& rng, Element element = Element::f32, bool known_finite = false) {
  const std::ptrdiff_t lda = k + pad;
  const std::ptrdiff_t b_rows = layout == RightOperand::k_by_n ? k : n;
  const std::ptrdiff_t b_cols = layout == RightOperand::k_by_n ? n : k;
  const std::ptrdiff_t ldb = b_cols + pad, ldc = n + pad;
  const std::vector<float> a = random_values(static_cast<std::size_t>(m * lda), rng);
  const Stored b = random_stored(element, static_cast<std::size_t>(b_rows * ldb), rng);
  const std::vector<float> bias = random_values(static_cast<std::size_t>(n), rng);
  const float guard = 12345.0f;
  std::vector<float> c(static_cast<std::size_t>(m * ldc), guard);
  attnplay::gemm::multiply(m, n, k, {a.data(), lda}, attnplay::gemm::WeightView{b.bytes.data(), ldb, element, known_finite}, layout,
                           with_bias ? bias.data() : nullptr, c.data(), ldc);
  const std::vector<double> want =
      naive(m, n, k, a.data(), lda, b.values.data(), ldb, layout, with_bias ? bias.data() : nullptr);
  double worst = 0;
  for (std::ptrdiff_t i = 0; i < m; ++i) {
    for (std::ptrdiff_t j = 0; j < n; ++j)
      worst = std::max(worst, std::abs(c[static_cast<std::size_t>(i * ldc + j)] - want[static_cast<std::size_t>(i * n + j)]));
    for (std::ptrdiff_t j = n; j < ldc; ++j)
      if (c[static_cast<std::size_t>(i * ldc + j)] != guard) return INFINITY;
  }
  return worst;
}

double tolerance(std::ptrdiff_t k) { return 1e-5 * (1 + 2 * std::sqrt(static_cast<double>(k))); }

const std::vector<int> kEdgeSizes = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 63, 64, 65, 127, 129};

}  // namespace

TEST_CASE("gemm: every m, k and n around the register tile, both layouts, against double loops") {
  std::mt19937 rng(11);
  for (RightOperand layout : {RightOperand::k_by_n, RightOperand::n_by_k})
    for (int m : kEdgeSizes)
      for (int k : kEdgeSizes)
        for (int n : {1, 3, 4, 7, 8, 9, 16, 17, 31, 64, 65, 129}) {
          CAPTURE(m);
          CAPTURE(k);
          CAPTURE(n);
          CAPTURE(layout == RightOperand::k_by_n);
          CHECK(product_error(m, n, k, layout, false, 0, rng) < tolerance(k));
        }
}

TEST_CASE("gemm: sizes across the cache blocks, strided operands and the fused bias") {
  std::mt19937 rng(12);
  struct Shape {
    int m, k, n;
  };
  // k > 256 (several k blocks, accumulation), m > 64 and n > 128 (several
  // tiles), non-square, attention shapes (T x 64 x T), one row (decoding).
  const std::vector<Shape> shapes = {{257, 300, 129}, {65, 513, 257}, {128, 64, 128}, {1, 768, 300},
                                     {300, 1, 7},     {129, 256, 384}, {3, 1000, 2},  {200, 64, 200}};
  for (const Shape& s : shapes)
    for (RightOperand layout : {RightOperand::k_by_n, RightOperand::n_by_k})
      for (bool bias : {false, true})
        for (int pad : {0, 5}) {
          CAPTURE(s.m);
          CAPTURE(s.k);
          CAPTURE(s.n);
          CAPTURE(bias);
          CAPTURE(pad);
          CHECK(product_error(s.m, s.n, s.k, layout, bias, pad, rng) < tolerance(s.k));
        }
}

TEST_CASE("gemm: half-precision right-hand operands (IEEE half, bfloat16) widened while packing") {
  std::mt19937 rng(15);
  for (Element element : {Element::f16, Element::bf16})
    for (RightOperand layout : {RightOperand::k_by_n, RightOperand::n_by_k}) {
      for (int m : {1, 3, 4, 5, 17})
        for (int k : {1, 2, 3, 4, 5, 7, 8, 9, 31, 64, 257})
          for (int n : {1, 3, 7, 8, 9, 16, 17, 129}) {
            CAPTURE(m);
            CAPTURE(k);
            CAPTURE(n);
            CAPTURE(layout == RightOperand::k_by_n);
            CAPTURE(element == Element::f16);
            CHECK(product_error(m, n, k, layout, false, 0, rng, element) < tolerance(k));
          }
      // Across the blocks, with strides and the bias (odd strides leave
      // rows at odd addresses: loads need no alignment).
      for (const auto& shape : std::vector<std::array<int, 3>>{{65, 513, 257}, {128, 576, 192}, {1, 300, 300}})
        for (bool bias : {false, true})
          for (int pad : {0, 3}) {
            const int m = shape[0], k = shape[1], n = shape[2];  // named, not bound: clang 14's CAPTURE lambdas cannot capture bindings
            CAPTURE(m);
            CAPTURE(k);
            CAPTURE(n);
            CAPTURE(bias);
            CAPTURE(pad);
            CHECK(product_error(m, n, k, layout, bias, pad, rng, element) < tolerance(k));
          }
    }
}

TEST_CASE("gemm: widening is exact for every IEEE half and bfloat16 bit pattern, at any alignment") {
  std::vector<unsigned char> bytes(2 * 65536 + 1);
  for (unsigned bits = 0; bits < 65536; ++bits) {
    const auto u = static_cast<std::uint16_t>(bits);
    std::memcpy(&bytes[1 + 2 * bits], &u, 2);  // odd address: no alignment assumed
  }
  for (Element element : {Element::f16, Element::bf16}) {
    std::vector<float> out(65536);
    attnplay::gemm::widen(element, bytes.data() + 1, 65536, out.data());
    int wrong = 0;
    for (unsigned bits = 0; bits < 65536; ++bits) {
      const double want = element == Element::f16 ? ref::half_value(bits) : ref::bfloat16_value(bits);
      std::uint32_t got;
      std::memcpy(&got, &out[bits], 4);
      const bool sign_ok = (got >> 31) == (bits >> 15);
      if (std::isnan(want)) {
        // NaN keeps its sign and payload: the mantissa moves up, unchanged.
        const int shift = element == Element::f16 ? 13 : 16;
        const std::uint32_t payload = (bits & (element == Element::f16 ? 0x3ffu : 0x7fu)) << shift;
        if (!std::isnan(out[bits]) || !sign_ok || (got & 0x7fffffu) != payload) ++wrong;
      } else if (static_cast<double>(out[bits]) != want || !sign_ok) {  // sign_ok tells -0 from +0
        ++wrong;
      }
    }
    CAPTURE(element == Element::f16);
    CHECK(wrong == 0);
  }
  // Every count around the 8-wide step.
  for (int count = 0; count <= 19; ++count) {
    std::vector<float> out(static_cast<std::size_t>(count) + 1, 7.0f);
    attnplay::gemm::widen(Element::bf16, bytes.data() + 1 + 2 * 16000, count, out.data());
    for (int i = 0; i < count; ++i) CHECK(out[static_cast<std::size_t>(i)] == ref::bfloat16_value(16000u + i));
    CHECK(out[static_cast<std::size_t>(count)] == 7.0f);
  }
}

TEST_CASE("gemm: one and two rows read in place, every element type and widening route, every tail") {
  std::mt19937 rng(17);
  struct Route {
    Element element;
    bool known_finite;
  };
  for (const Route route : {Route{Element::f32, false}, Route{Element::bf16, false}, Route{Element::f16, false},
                            Route{Element::f16, true}})
    for (RightOperand layout : {RightOperand::k_by_n, RightOperand::n_by_k})
      for (int m : {1, 2})
        for (int k : {1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 300})
          for (int n : {1, 2, 3, 4, 5, 8, 15, 16, 17, 31, 33, 129})
            for (int pad : {0, 3}) {
              CAPTURE(m);
              CAPTURE(k);
              CAPTURE(n);
              CAPTURE(pad);
              CAPTURE(layout == RightOperand::k_by_n);
              CAPTURE(static_cast<int>(route.element));
              CAPTURE(route.known_finite);
              CHECK(product_error(m, n, k, layout, n % 2 == 1, pad, rng, route.element, route.known_finite) <
                    tolerance(k));
            }
}

TEST_CASE("gemm: one row through the known-finite IEEE half route gives every finite half exactly") {
  // Every bit pattern but the 2·1024 infinities and NaNs (exponent 31, set
  // to 0 here): B [k = 8, n] read as Bᵀ against x = e_q gives element q of
  // each row; B [1, n] against x = [1] gives every element.
  std::vector<std::uint16_t> bits(65536);
  for (unsigned b = 0; b < 65536; ++b) bits[b] = (b & 0x7c00u) == 0x7c00u ? 0 : static_cast<std::uint16_t>(b);
  const attnplay::gemm::WeightView view{bits.data(), 8, Element::f16, true};
  CHECK(attnplay::gemm::holds_only_finite(Element::f16, bits.data(), 65536));
  int wrong = 0;
  std::vector<float> out(8192);
  for (int q = 0; q < 8; ++q) {
    std::vector<float> x(8, 0.0f);
    x[static_cast<std::size_t>(q)] = 1.0f;
    attnplay::gemm::multiply(1, 8192, 8, {x.data(), 8}, view, RightOperand::n_by_k, nullptr, out.data(), 8192);
    for (int j = 0; j < 8192; ++j) wrong += out[static_cast<std::size_t>(j)] != ref::half_value(bits[static_cast<std::size_t>(8 * j + q)]);
  }
  const float one = 1.0f;
  std::vector<float> all(65536);
  attnplay::gemm::multiply(1, 65536, 1, {&one, 1}, {bits.data(), 65536, Element::f16, true}, RightOperand::k_by_n,
                           nullptr, all.data(), 65536);
  for (unsigned b = 0; b < 65536; ++b) wrong += all[b] != ref::half_value(bits[b]);
  CHECK(wrong == 0);
  // An infinity or a NaN anywhere is found (weights holding one take the general route).
  for (std::uint16_t special : {std::uint16_t{0x7c00}, std::uint16_t{0xfc00}, std::uint16_t{0x7e01}}) {
    bits[40001] = special;
    CHECK_FALSE(attnplay::gemm::holds_only_finite(Element::f16, bits.data(), 65536));
    CHECK(attnplay::gemm::holds_only_finite(Element::f16, bits.data(), 40001));
    CHECK(attnplay::gemm::holds_only_finite(Element::bf16, bits.data(), 65536));
  }
}

TEST_CASE("gemm: k = 0 gives the bias (or zeros); empty outputs are left alone") {
  const std::vector<float> bias = {1.5f, -2.0f, 3.0f};
  std::vector<float> c(6, 9.0f);
  attnplay::gemm::multiply(2, 3, 0, {nullptr, 0}, {nullptr, 3}, RightOperand::k_by_n, bias.data(), c.data(), 3);
  CHECK(c == std::vector<float>{1.5f, -2.0f, 3.0f, 1.5f, -2.0f, 3.0f});
  attnplay::gemm::multiply(2, 3, 0, {nullptr, 0}, {nullptr, 3}, RightOperand::k_by_n, nullptr, c.data(), 3);
  CHECK(c == std::vector<float>(6, 0.0f));
  std::vector<float> untouched(4, 7.0f);
  attnplay::gemm::multiply(0, 2, 3, {nullptr, 3}, {nullptr, 2}, RightOperand::k_by_n, nullptr, untouched.data(), 2);
  attnplay::gemm::multiply(2, 0, 3, {nullptr, 3}, {nullptr, 0}, RightOperand::k_by_n, nullptr, untouched.data(), 0);
  CHECK(untouched == std::vector<float>(4, 7.0f));
}

TEST_CASE("gemm: a right-hand operand packed ahead gives the unpacked product bit for bit") {
  std::mt19937 rng(16);
  // One and two rows (read in place), tails of the tile, several k blocks
  // (k > 256) and column tiles (n > 128), n not a multiple of 8.
  const std::vector<std::array<int, 3>> shapes = {{1, 300, 129}, {2, 7, 9}, {3, 5, 3}, {4, 256, 8},
                                                  {17, 257, 17}, {64, 192, 4096 + 3}, {65, 513, 257}};
  for (Element element : {Element::f32, Element::f16, Element::bf16})
    for (RightOperand layout : {RightOperand::k_by_n, RightOperand::n_by_k})
      for (const auto& shape : shapes)
        for (int pad : {0, 3}) {
          const int m = shape[0], k = shape[1], n = shape[2];
          CAPTURE(m);
          CAPTURE(k);
          CAPTURE(n);
          CAPTURE(pad);
          CAPTURE(layout == RightOperand::k_by_n);
          CAPTURE(static_cast<int>(element));
          const std::ptrdiff_t lda = k + pad, ldc = n + pad;
          const std::ptrdiff_t ldb = (layout == RightOperand::k_by_n ? n : k) + pad;
          const std::vector<float> a = random_values(static_cast<std::size_t>(m * lda), rng);
          const std::vector<float> bias = random_values(static_cast<std::size_t>(n), rng);
          const Stored b = random_stored(element, static_cast<std::size_t>((layout == RightOperand::k_by_n ? k : n) * ldb), rng);
          const attnplay::gemm::WeightView view{b.bytes.data(), ldb, element};
          const attnplay::gemm::PackedOperand packed(n, k, view, layout);
          CHECK(packed.bytes() == static_cast<std::size_t>(k * ((n + 7) / 8 * 8)) * sizeof(float));
          std::vector<float> plain(static_cast<std::size_t>(m * ldc), 7.0f), ahead(plain);
          attnplay::gemm::multiply(m, n, k, {a.data(), lda}, view, layout, bias.data(), plain.data(), ldc);
          attnplay::gemm::multiply(m, {a.data(), lda}, packed, bias.data(), ahead.data(), ldc);
          CHECK(plain == ahead);  // the guard columns included
        }
}

TEST_CASE("gemm: the result is bit-for-bit the same with 1 thread and with all threads") {
  std::mt19937 rng(13);
  const int m = 300, k = 520, n = 270;
  const std::vector<float> a = random_values(m * k, rng), b = random_values(k * n, rng);
  std::vector<float> one(m * n), all(m * n);
  const int full = attnplay::threads::concurrency();
  REQUIRE(attnplay::threads::set_concurrency(1) == 1);
  attnplay::gemm::multiply(m, n, k, {a.data(), k}, {b.data(), n}, RightOperand::k_by_n, nullptr, one.data(), n);
  attnplay::threads::set_concurrency(full);
  attnplay::gemm::multiply(m, n, k, {a.data(), k}, {b.data(), n}, RightOperand::k_by_n, nullptr, all.data(), n);
  CHECK(one == all);
  // A half-precision Bᵀ, split over rows and column tiles differently.
  Stored half = random_stored(Element::f16, static_cast<std::size_t>(k * n), rng);
  const attnplay::gemm::WeightView view{half.bytes.data(), k, Element::f16};
  REQUIRE(attnplay::threads::set_concurrency(1) == 1);
  attnplay::gemm::multiply(m, n, k, {a.data(), k}, view, RightOperand::n_by_k, nullptr, one.data(), n);
  attnplay::threads::set_concurrency(full);
  attnplay::gemm::multiply(m, n, k, {a.data(), k}, view, RightOperand::n_by_k, nullptr, all.data(), n);
  CHECK(one == all);
}

TEST_CASE("thread pool: every index runs exactly once, over many loops") {
  const int threads = attnplay::threads::concurrency();
  CHECK(threads >= 1);
  for (int loop = 0; loop < 2000; ++loop) {
    const int count = loop % 37;
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(count));
    attnplay::threads::parallel_for(count, [&](std::ptrdiff_t i) { hits[static_cast<std::size_t>(i)]++; });
    for (const auto& h : hits) REQUIRE(h.load() == 1);
  }
  CHECK(attnplay::threads::set_concurrency(0) == 1);  // clamped
  CHECK(attnplay::threads::set_concurrency(1000) == threads);
}

TEST_CASE("matmul_add_bias is A·B plus the bias on every row, and checks its shapes") {
  std::mt19937 rng(14);
  for (int n : {1, 7, 8, 9, 33}) {
    const Matrix a = ref::random_matrix(5, 19, rng), b = ref::random_matrix(19, n, rng);
    const RowVector bias = ref::random_matrix(1, n, rng);
    const Matrix c = attnplay::matmul_add_bias(a, b, bias);
    const auto want = ref::matmul(ref::from(a), ref::from(b));
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < n; ++j) CHECK(c(i, j) == doctest::Approx(want[i][j] + bias(j)).epsilon(1e-5));
  }
  CHECK_THROWS_WITH_AS(attnplay::matmul_add_bias(Matrix::Ones(2, 3), Matrix::Ones(3, 4), RowVector::Ones(3)),
                       "matmul_add_bias: bias has 3 entries for 4 outputs", std::invalid_argument);
}
