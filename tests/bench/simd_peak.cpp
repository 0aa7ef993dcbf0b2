// The WebAssembly SIMD throughput ceiling of this machine, for `npm run bench`
// (section gemm): twelve independent chains of 4-lane float multiply-then-add,
// the instruction mix of a GEMM microkernel (WebAssembly has no fused
// multiply-add in this toolchain), with no memory traffic at all. No GEMM can
// beat this figure; the gemm table reports every library as a share of it.
// Built only into build/wasm/tests/bench/simd_peak.wasm; not part of the product.
#include <wasm_simd128.h>

#define ATTNPLAY_CHAIN(i) a##i = wasm_f32x4_add(wasm_f32x4_mul(a##i, scale), shift)

// Runs `iterations` rounds (96 floating-point operations each) and returns a
// checksum so that the compiler keeps the work.
extern "C" float simd_peak(int iterations) {
  const v128_t scale = wasm_f32x4_splat(0.999999f), shift = wasm_f32x4_splat(1e-6f);  // converges to 1: no overflow, no denormals
  v128_t a0 = wasm_f32x4_splat(0.0f), a1 = wasm_f32x4_splat(0.1f), a2 = wasm_f32x4_splat(0.2f),
         a3 = wasm_f32x4_splat(0.3f), a4 = wasm_f32x4_splat(0.4f), a5 = wasm_f32x4_splat(0.5f),
         a6 = wasm_f32x4_splat(0.6f), a7 = wasm_f32x4_splat(0.7f), a8 = wasm_f32x4_splat(0.8f),
         a9 = wasm_f32x4_splat(0.9f), a10 = wasm_f32x4_splat(1.0f), a11 = wasm_f32x4_splat(1.1f);
  for (int i = 0; i < iterations; ++i) {
    ATTNPLAY_CHAIN(0); ATTNPLAY_CHAIN(1); ATTNPLAY_CHAIN(2); ATTNPLAY_CHAIN(3);
    ATTNPLAY_CHAIN(4); ATTNPLAY_CHAIN(5); ATTNPLAY_CHAIN(6); ATTNPLAY_CHAIN(7);
    ATTNPLAY_CHAIN(8); ATTNPLAY_CHAIN(9); ATTNPLAY_CHAIN(10); ATTNPLAY_CHAIN(11);
  }
  const v128_t sum = wasm_f32x4_add(
      wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3)),
                     wasm_f32x4_add(wasm_f32x4_add(a4, a5), wasm_f32x4_add(a6, a7))),
      wasm_f32x4_add(wasm_f32x4_add(a8, a9), wasm_f32x4_add(a10, a11)));
  return wasm_f32x4_extract_lane(sum, 0);
}
