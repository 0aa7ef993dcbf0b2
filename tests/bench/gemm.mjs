// Benchmark section "gemm": float32 matrix products C = A·B (B [k, n]) in
// GFLOP/s at several sizes, in this one process: our WASM kernel (single-
// threaded build, and the pthreads build), onnxruntime-web (wasm backend,
// one thread, a MatMul graph with B as a constant), @tensorflow/tfjs-backend-wasm
// (SIMD, one thread) and, natively, Eigen (attnplay::matmul of the native
// build, one thread) from build/native/tests/bench/gemm_native_bench. Every
// column is also given as a share of this machine's WebAssembly SIMD ceiling,
// measured by build/wasm/tests/bench/simd_peak.wasm (simd_peak.cpp).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import * as ort from 'onnxruntime-web';
import * as tf from '@tensorflow/tfjs-core';
import tfWasm from '@tensorflow/tfjs-backend-wasm';

import { createEngine, toMatrix } from '../../dist/engine/engine.js';
import { matmulModel } from './onnx-model.mjs';
import { fixed, markdownTable, percent, ratio, secondsPerCall } from './report.mjs';

// [m, k, n]: square sizes, then attention-shaped products (scores Q·Kᵀ
// [T, d_head]·[d_head, T] and weights·V [T, T]·[T, d_head] with d_head 64) and
// GPT-2-small linear layers at T = 128 (768 -> 768 and 768 -> 3072).
const SHAPES = [
  [64, 64, 64], [128, 128, 128], [256, 256, 256], [512, 512, 512], [1024, 1024, 1024],
  [128, 64, 128], [128, 128, 64], [512, 64, 512], [512, 512, 64], [128, 768, 768], [128, 768, 3072],
];

function randomData(count, seed) {
  let s = seed >>> 0;
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 1) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 32 - 0.5;
  }
  return out;
}

/** Largest |x - y| / (1 + |y|): a check that every library computed the same product. */
function relativeError(x, y) {
  let worst = 0;
  for (let i = 0; i < y.length; i += 1) worst = Math.max(worst, Math.abs(x[i] - y[i]) / (1 + Math.abs(y[i])));
  return worst;
}

function nativeResults() {
  const binary = fileURLToPath(new URL('../../build/native/tests/bench/gemm_native_bench', import.meta.url));
  const out = execFileSync(binary, SHAPES.map((s) => s.join(',')), { encoding: 'utf8' });
  const byShape = new Map();
  for (const line of out.trim().split('\n')) {
    const r = JSON.parse(line);
    byShape.set(`${r.m},${r.k},${r.n}`, r);
  }
  return byShape;
}

/** GFLOP/s of the SIMD throughput probe: 96 floating-point operations per iteration, no memory traffic. */
async function simdPeakGflops() {
  const url = new URL('../../build/wasm/tests/bench/simd_peak.wasm', import.meta.url);
  const { instance } = await WebAssembly.instantiate(readFileSync(url));
  const iterations = 1_000_000;
  const { peak } = await secondsPerCall({ peak: () => instance.exports.simd_peak(iterations) });
  return (96 * iterations) / peak / 1e9;
}

export const gemm = {
  id: 'gemm',
  title: 'GEMM: float32 C = A·B, GFLOP/s',
  async run({ log }) {
    const single = await createEngine({ threads: false });
    const threaded = await createEngine({ threads: true });
    ort.env.wasm.numThreads = 1;
    tfWasm.setThreadsCount(1);
    await tf.setBackend('wasm');
    await tf.ready();
    if (!tf.env().getBool('WASM_HAS_SIMD_SUPPORT')) throw new Error('tfjs-backend-wasm runs without SIMD here');

    const rows = [];
    for (const [m, k, n] of SHAPES) {
      const flops = 2 * m * k * n;
      const gflops = (seconds) => flops / seconds / 1e9;
      const a = { data: randomData(m * k, m * 7 + k), shape: [m, k] };
      const b = { data: randomData(k * n, k * 13 + n), shape: [k, n] };
      const reference = single.matmul({ a, b }).data;
      const check = (name, data) => {
        const error = relativeError(data, reference);
        if (!(error < 1e-4)) throw new Error(`${name} ${m}x${k}x${n}: result differs from ours (${error})`);
      };

      const oursSingle = single.residentProduct({ a, b });
      const oursThreaded = threaded.residentProduct({ a, b });
      const session = await ort.InferenceSession.create(matmulModel(m, k, n, b.data), {
        executionProviders: ['wasm'],
        graphOptimizationLevel: 'all',
      });
      const feeds = { A: new ort.Tensor('float32', a.data, [m, k]) };
      const ta = tf.tensor2d(a.data, [m, k]);
      const tb = tf.tensor2d(b.data, [k, n]);

      oursSingle.run();
      check('ours', oursSingle.result().data);
      oursThreaded.run();
      check('ours (threads)', oursThreaded.result().data);
      check('onnxruntime-web', (await session.run(feeds)).Y.data);
      const tc = tf.matMul(ta, tb);
      check('tfjs-wasm', tc.dataSync());
      tc.dispose();

      const seconds = await secondsPerCall({
        ours: () => oursSingle.run(),
        oursCopies: () => single.matmul({ a, b }),
        threaded: () => oursThreaded.run(),
        ort: () => session.run(feeds),
        tf: () => tf.matMul(ta, tb).dispose(),
      });
      oursSingle.dispose();
      oursThreaded.dispose();
      await session.release();
      tf.dispose([ta, tb]);
      const g = Object.fromEntries(Object.entries(seconds).map(([name, t]) => [name, gflops(t)]));

      rows.push({ shape: [m, k, n], ...g });
      log(`  ${m}x${k}x${n}: ours ${g.ours.toFixed(1)}, ort ${g.ort.toFixed(1)}, tfjs ${g.tf.toFixed(1)} GFLOP/s`);
    }
    log('  native (Eigen) ...');
    const native = nativeResults();
    const peak = await simdPeakGflops();
    log(`  WebAssembly SIMD ceiling (mul + add, no memory traffic): ${peak.toFixed(1)} GFLOP/s`);

    const columns = [
      { title: 'm×k×n' },
      { title: 'ours 1T', format: fixed(1) },
      { title: 'ours 1T +copies', format: fixed(1) },
      { title: `ours ${threaded.threads}T`, format: fixed(1) },
      { title: 'ort-web 1T', format: fixed(1) },
      { title: 'tfjs-wasm 1T', format: fixed(1) },
      { title: 'Eigen native 1T', format: fixed(1) },
      { title: 'ours/ort', format: ratio },
      { title: 'ours/tfjs', format: ratio },
      { title: 'Eigen/ours', format: ratio },
      { title: 'ours/ceiling', format: percent },
      { title: 'tfjs/ceiling', format: percent },
    ];
    const table = rows.map((r) => {
      const eigen = native.get(r.shape.join(','))?.eigen ?? NaN;
      return [r.shape.join('×'), r.ours, r.oursCopies, r.threaded, r.ort, r.tf, eigen, r.ours / r.ort, r.ours / r.tf, eigen / r.ours, r.ours / peak, r.tf / peak];
    });
    return {
      markdown: [
        markdownTable(columns, table),
        '',
        `- **ours 1T**: the single-threaded build, operands resident in the WASM heap (\`engine.residentProduct\`), as tfjs tensors are; **+copies**: \`engine.matmul\`, copying A and B in and C out on every call.`,
        `- **ours ${threaded.threads}T**: the pthreads build (attnplay_core_mt) with ${threaded.threads} threads.`,
        `- **ort-web**: onnxruntime-web ${ort.env.versions?.web ?? ''} wasm backend, 1 thread, a MatMul graph with B as a constant initializer; \`session.run\` copies A in and C out on every call.`,
        `- **tfjs-wasm**: @tensorflow/tfjs-backend-wasm ${tfWasm.version_wasm} (SIMD, 1 thread), \`tf.matMul\` on resident tensors, result not read back.`,
        '- **Eigen native**: `attnplay::matmul` in the native build (Eigen 3.4, `-march=native`, 1 thread).',
        '- Every library\'s result is checked against ours (relative error < 1e-4) before it is timed.',
        `- **ceiling**: ${peak.toFixed(1)} GFLOP/s, what this CPU's WebAssembly SIMD can do at all: twelve independent 4-lane multiply-then-add chains with no memory traffic (\`tests/bench/simd_peak.cpp\`; WebAssembly has no fused multiply-add in Emscripten 3.1.6, so a GEMM issues exactly this mix). No single-threaded WASM GEMM can exceed it.`,
        '- GFLOP/s = 2·m·k·n / time; time = best of 7 batches of ≥ 0.05 s after a warm-up batch, the libraries taking turns batch by batch (Eigen: best of 5 batches of ≥ 0.1 s, in its own process).',
      ].join('\n'),
    };
  },
};
