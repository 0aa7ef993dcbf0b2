// The memory read bandwidth of this machine as WebAssembly sees it, for the
// decode section (tests/bench/decode.mjs): a sum of float32 values with eight
// independent f32x4 accumulators, so that nothing but the loads limits it.
// A one-row product reads each weight once per generated token, so the
// bandwidth over the weights' bytes is the ceiling of tokens/s. Run in one
// web worker and in two at once (each its own buffer) for the two-thread
// ceiling. Built only into build/wasm/tests/bench/read_bandwidth.wasm; not
// part of the product.
#include <wasm_simd128.h>

// Sums count floats (count a multiple of 32) from data; the sum keeps the loads.
extern "C" float read_sum(const float* data, int count) {
  v128_t a[8];
  for (v128_t& v : a) v = wasm_f32x4_splat(0.0f);
  for (int i = 0; i + 32 <= count; i += 32)
    for (int q = 0; q < 8; ++q) a[q] = wasm_f32x4_add(a[q], wasm_v128_load(data + i + 4 * q));
  for (int q = 1; q < 8; ++q) a[0] = wasm_f32x4_add(a[0], a[q]);
  return wasm_f32x4_extract_lane(a[0], 0);
}
