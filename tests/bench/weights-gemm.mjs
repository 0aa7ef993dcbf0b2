// Benchmark section "weights": products with a weight stored [out, in] (y =
// x·Wᵀ, as nn.Linear) in float32, bfloat16 and IEEE half, in GFLOP/s, at the
// shapes of SmolLM2-135M's and Qwen2.5-0.5B's linear layers (prompt of 128 or
// 512 tokens, and one token as in generation). Half weights are widened
// inside the kernel while it packs B's panels (one token: read in place by
// tensor/gemv.h), so they cost half the memory;
// this shows what the widening costs in time. WASM: the single-threaded build
// (engine.residentProduct, operands resident in the heap); native: the same
// kernel built with 128-bit vector extensions, and Eigen on the float32 weight
// (build/native/tests/bench/gemm_native_bench --weights).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { createEngine } from '../../dist/engine/engine.js';
import { fixed, markdownTable, ratio, secondsPerCall } from './report.mjs';

// [m, k, n] = [tokens, in, out].
const SHAPES = [
  [128, 576, 576], [128, 576, 192], [128, 576, 1536], [128, 1536, 576], [512, 576, 1536], [1, 576, 1536],
  [128, 896, 4864], [128, 4864, 896], [1, 896, 4864],
];

function randomFloats(count, seed) {
  let s = seed >>> 0;
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 1) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32 - 0.5) * 0.2;
  }
  return out;
}

// float32 -> bfloat16 bit patterns (round to nearest even) and back.
function toBfloat16(values) {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  return Uint16Array.from(bits, (b) => (b + 0x7fff + ((b >>> 16) & 1)) >>> 16);
}
// float32 -> IEEE half bit patterns (round to nearest even; inputs in half's normal range or flushed to zero).
function toHalf(values) {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  return Uint16Array.from(bits, (b) => {
    const sign = (b >>> 16) & 0x8000;
    const exponent = ((b >>> 23) & 0xff) - 127 + 15;
    if (exponent <= 0) return sign;
    let rounded = (exponent << 10) | ((b & 0x7fffff) >>> 13);
    const rest = b & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (rounded & 1))) rounded += 1;
    return sign | Math.min(rounded, 0x7bff);
  });
}

function nativeResults() {
  const binary = fileURLToPath(new URL('../../build/native/tests/bench/gemm_native_bench', import.meta.url));
  const out = execFileSync(binary, ['--weights', ...SHAPES.map((s) => s.join(','))], { encoding: 'utf8' });
  return new Map(out.trim().split('\n').map((line) => JSON.parse(line)).map((r) => [`${r.m},${r.k},${r.n}`, r]));
}

export const weightsGemm = {
  id: 'weights',
  title: 'Half-precision weights: y = x·Wᵀ with W stored F32 / BF16 / F16, GFLOP/s',
  async run({ log }) {
    const engine = await createEngine({ threads: false });
    const rows = [];
    for (const [m, k, n] of SHAPES) {
      const a = { data: randomFloats(m * k, m + 3 * k), shape: [m, k] };
      const w = randomFloats(n * k, 7 * n + k); // [n, k]
      const products = {
        f32: engine.residentProduct({ a, b: { data: w, shape: [n, k] }, transposeB: true }),
        bf16: engine.residentProduct({ a, b: { dtype: 'bf16', bits: toBfloat16(w), shape: [n, k] }, transposeB: true }),
        f16: engine.residentProduct({ a, b: { dtype: 'f16', bits: toHalf(w), shape: [n, k] }, transposeB: true }),
      };
      // The rounded weights give nearly the float32 product.
      const want = products.f32.result().data;
      for (const dtype of ['bf16', 'f16']) {
        const got = products[dtype].result().data;
        let worst = 0;
        for (let i = 0; i < want.length; i += 1) worst = Math.max(worst, Math.abs(got[i] - want[i]) / (1 + Math.abs(want[i])));
        if (!(worst < 0.05)) throw new Error(`${dtype} ${m}x${k}x${n}: product differs from float32's by ${worst}`);
      }
      const seconds = await secondsPerCall(Object.fromEntries(Object.entries(products).map(([dtype, p]) => [dtype, () => p.run()])));
      Object.values(products).forEach((p) => p.dispose());
      const g = Object.fromEntries(Object.entries(seconds).map(([dtype, s]) => [dtype, (2 * m * k * n) / s / 1e9]));
      rows.push({ shape: [m, k, n], ...g });
      log(`  ${m}x${k}x${n}: WASM f32 ${g.f32.toFixed(1)}, bf16 ${g.bf16.toFixed(1)}, f16 ${g.f16.toFixed(1)} GFLOP/s`);
    }
    log('  native ...');
    const native = nativeResults();
    const columns = [
      { title: 'tokens×in×out' },
      { title: 'WASM F32', format: fixed(1) },
      { title: 'WASM BF16', format: fixed(1) },
      { title: 'WASM F16', format: fixed(1) },
      { title: 'BF16/F32', format: ratio },
      { title: 'F16/F32', format: ratio },
      { title: 'native kernel F32', format: fixed(1) },
      { title: 'native kernel BF16', format: fixed(1) },
      { title: 'native kernel F16', format: fixed(1) },
      { title: 'native Eigen F32', format: fixed(1) },
    ];
    const table = rows.map((r) => {
      const nat = native.get(r.shape.join(',')) ?? {};
      return [r.shape.join('×'), r.f32, r.bf16, r.f16, r.bf16 / r.f32, r.f16 / r.f32, nat.kernel_t, nat.kernel_t_bf16, nat.kernel_t_f16, nat.eigen_t];
    });
    return {
      markdown: [
        markdownTable(columns, table),
        '',
        '- Weight stored [out, in] (nn.Linear), y = x·Wᵀ, 1 thread everywhere; GFLOP/s = 2·tokens·in·out / time (best of 7 interleaved batches).',
        '- **WASM**: the single-threaded build, `engine.residentProduct` with `{ dtype, bits, shape }` weights: BF16/F16 elements are widened (integer SIMD) while the kernel packs each 256×128 block of Wᵀ; no float32 copy of the weight exists. One token (a decoding step) reads W in place instead, each element once (`tensor/gemv.h`); there the GFLOP/s are twice the weight elements read per ns.',
        '- **native kernel**: the same source with GCC/Clang vector extensions (128-bit, built by clang++-14); **native Eigen F32**: `attnplay::matmul_transposed` (AVX-512/AVX2 with `-march=native`), what float32 weights use natively.',
        '- Each half-precision product is checked against the float32 one (rounding of the weights only) before timing.',
      ].join('\n'),
    };
  },
};
