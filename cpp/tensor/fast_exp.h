// A float exp that compilers vectorize: Cephes' expf algorithm (range
// reduction by ln 2 in two parts, a degree-6 polynomial, the power of two put
// into the exponent bits), with no branches and no library call, so a loop
// over an array becomes SIMD code natively (AVX) and in WebAssembly (simd128),
// where std::exp, std::tanh and std::erf are scalar library calls. Measured:
// GELU and the top-k softmax of a 64-token forward pass of austen-gpt went
// from most of its time to a small part (RESULTS.md, forward).
// Accuracy: within 2 ulp of std::exp on [-87, 88]; inputs are clamped to that
// range, so exp(-1000) gives about 1.6e-38 rather than 0 and nothing overflows;
// NaN gives NaN (a checkpoint with NaN weights must not reach undefined behaviour).
// Not here: array loops (callers write them so that they vectorize).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace attnplay {

inline float fast_exp(float x) {
  x = x < -87.0f ? -87.0f : x;  // selects, not std::fmin/fmax: those do not vectorize in WebAssembly
  x = x > 88.0f ? 88.0f : x;
  float n = std::floor(x * 1.44269504088896341f + 0.5f);  // round(x / ln 2)
  n = n == n ? n : 0.0f;  // NaN in: n = 0 keeps the cast below defined; r (and the result) stay NaN
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;     // x - n ln 2, |r| <= ln 2 / 2
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;  // e^r
  const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;  // 2^n, n in [-126, 127]
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

}  // namespace attnplay
