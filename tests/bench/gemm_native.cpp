// Native GEMM timings for the benchmark (tests/bench/gemm.mjs runs this):
// attnplay::matmul (Eigen natively, one thread) and the portable build of the
// SIMD kernel (tensor/gemm.h with 128-bit vectors, one thread), for every
// "m,k,n" argument. Prints one JSON object per line:
//   {"m":..,"k":..,"n":..,"eigen":GFLOP/s,"kernel":GFLOP/s}
// Timing: best of 5 batches, each at least 0.1 s, after a warm-up batch.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
  attnplay::threads::set_concurrency(1);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist;
  for (int i = 1; i < argc; ++i) {
    int m = 0, k = 0, n = 0;
    if (std::sscanf(argv[i], "%d,%d,%d", &m, &k, &n) != 3 || m <= 0 || k <= 0 || n <= 0) {
      std::fprintf(stderr, "usage: %s m,k,n...\n", argv[0]);
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
    std::printf("{\"m\":%d,\"k\":%d,\"n\":%d,\"eigen\":%.2f,\"kernel\":%.2f}\n", m, k, n, eigen, kernel);
    std::fflush(stdout);
  }
  return 0;
}
