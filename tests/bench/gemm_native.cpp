// Native GEMM timings for the benchmarks (tests/bench/gemm.mjs and
// weights-gemm.mjs run this): attnplay::matmul (Eigen natively, one thread)
// and the portable build of the SIMD kernel (tensor/gemm.h with 128-bit
// vectors, one thread), for every "m,k,n" argument; with --weights also the
// kernel on a weight stored [n, k] (y = x·Wᵀ, as nn.Linear) in float32,
// bfloat16 and IEEE half (widened while packing), and Eigen on the float32 one.
// Prints one JSON object per line:
//   {"m":..,"k":..,"n":..,"eigen":GFLOP/s,"kernel":GFLOP/s}
//   with --weights: ..., "eigen_t", "kernel_t", "kernel_t_bf16", "kernel_t_f16"
// Timing: best of 5 batches, each at least 0.1 s, after a warm-up batch.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tensor/gemm.h"
#include "tensor/ops.h"
#include "tensor/thread_pool.h"

namespace {

template <class Run>
double gflops(double flops, Run&& run) {
  using clock = std::chrono::steady_clock;
  double best = 1e30;
  for (int batch = 0; batch < 6; ++batch) {
    int reps = 0;
    const auto start = clock::now();
    double elapsed = 0;
    do {
      run();
      ++reps;
      elapsed = std::chrono::duration<double>(clock::now() - start).count();
    } while (elapsed < 0.1);
    if (batch > 0) best = std::min(best, elapsed / reps);  // batch 0 warms up
  }
  return flops / best / 1e9;
}

// float32 values rounded to nearest (ties to even) in bfloat16 or IEEE half
// bit patterns (finite, normal-range inputs only: benchmark data).
std::vector<std::uint16_t> to_half_bits(const float* values, std::size_t count, bool bfloat16) {
  std::vector<std::uint16_t> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    if (bfloat16) {
      out[i] = static_cast<std::uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
      continue;
    }
    const std::uint32_t sign = (bits >> 16) & 0x8000u;
    const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
    if (exponent <= 0) {  // below half's normal range: flush (benchmark data does not go there)
      out[i] = static_cast<std::uint16_t>(sign);
      continue;
    }
    std::uint32_t mantissa = bits & 0x7fffffu;
    std::uint32_t rounded = (static_cast<std::uint32_t>(exponent) << 10) | (mantissa >> 13);
    const std::uint32_t rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (rounded & 1))) ++rounded;
    out[i] = static_cast<std::uint16_t>(sign | std::min<std::uint32_t>(rounded, 0x7bffu));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  attnplay::threads::set_concurrency(1);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist;
  const bool weights = argc > 1 && std::string(argv[1]) == "--weights";
  for (int i = weights ? 2 : 1; i < argc; ++i) {
    int m = 0, k = 0, n = 0;
    if (std::sscanf(argv[i], "%d,%d,%d", &m, &k, &n) != 3 || m <= 0 || k <= 0 || n <= 0) {
      std::fprintf(stderr, "usage: %s [--weights] m,k,n...\n", argv[0]);
      return 2;
    }
    attnplay::Matrix a(m, k), b(k, n), c(m, n);
    for (Eigen::Index j = 0; j < a.size(); ++j) a.data()[j] = dist(rng);
    for (Eigen::Index j = 0; j < b.size(); ++j) b.data()[j] = dist(rng);
    const double flops = 2.0 * m * k * n;
    const double eigen = gflops(flops, [&] { c = attnplay::matmul(a, b); });
    const double kernel = gflops(flops, [&] {
      attnplay::gemm::multiply(m, n, k, {a.data(), k}, {b.data(), n}, attnplay::gemm::RightOperand::k_by_n, nullptr,
                               c.data(), n);
    });
    std::printf("{\"m\":%d,\"k\":%d,\"n\":%d,\"eigen\":%.2f,\"kernel\":%.2f", m, k, n, eigen, kernel);
    if (weights) {
      using attnplay::gemm::Element;
      const attnplay::Matrix w = b.transpose();  // [n, k]
      const std::vector<std::uint16_t> bf16 = to_half_bits(w.data(), w.size(), true);
      const std::vector<std::uint16_t> f16 = to_half_bits(w.data(), w.size(), false);
      const auto transposed = [&](const void* data, Element element) {
        // Checked once, as a WeightMatrix checks its elements when it is made.
        const attnplay::gemm::WeightView view(data, k, element, attnplay::gemm::holds_only_finite(element, data, n * k));
        return gflops(flops, [&] {
          attnplay::gemm::multiply(m, n, k, {a.data(), k}, view, attnplay::gemm::RightOperand::n_by_k, nullptr,
                                   c.data(), n);
        });
      };
      std::printf(",\"eigen_t\":%.2f,\"kernel_t\":%.2f,\"kernel_t_bf16\":%.2f,\"kernel_t_f16\":%.2f",
                  gflops(flops, [&] { c = attnplay::matmul_transposed(a, w); }), transposed(w.data(), Element::f32),
                  transposed(bf16.data(), Element::bf16), transposed(f16.data(), Element::f16));
    }
    std::printf("}\n");
    std::fflush(stdout);
  }
  return 0;
}
