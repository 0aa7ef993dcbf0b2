// Benchmark of the model runtime (a script, not a timed test): generates a
// GPT-2-small-shaped checkpoint (12 layers, 12 heads, width 768, 1024
// positions, 50257 tokens, random F16 weights, 124M parameters) in a temporary
// folder, then times, side by side in one run, the forward pass (attention of
// every layer and head + top-5 next tokens) natively (build/native/
// tests/bench/runtime_bench) and in WASM under Node (dist/engine/engine.js), at 128
// and 512 tokens, and reports the WASM memory after loading and at its peak.
// usage: node tests/bench/runtime-bench.mjs [REPEATS=3]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createEngine } from '../../dist/engine/engine.js';
import { writeGpt2Checkpoint } from './checkpoint.mjs';

const repeats = Number(process.argv[2] ?? 3);
const LENGTHS = [128, 512];
const cfg = { n_layer: 12, n_head: 12, n_embd: 768, n_positions: 1024, vocab_size: 50257 };

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

const dir = mkdtempSync(join(tmpdir(), 'attnplay-bench-'));
try {
  const fileBytes = writeGpt2Checkpoint(dir, cfg);
  console.log(`GPT-2-small-shaped checkpoint: ${mib(fileBytes)} F16 (${dir})`);

  const nativeBench = fileURLToPath(new URL('../../build/native/tests/bench/runtime_bench', import.meta.url));
  const native = JSON.parse(execFileSync(nativeBench, [dir, String(repeats), ...LENGTHS.map(String)], { encoding: 'utf8' }));

  const engine = await createEngine();
  const files = { config: readFileSync(join(dir, 'config.json'), 'utf8'), weights: readFileSync(join(dir, 'model.safetensors')) };
  const t0 = performance.now();
  const model = await engine.loadModel(files);
  const wasmLoad = performance.now() - t0;
  const afterLoad = engine.memoryBytes();
  const wasm = LENGTHS.map((tokens) => {
    const ids = Array.from({ length: tokens }, (_, i) => (i * 7919) % cfg.vocab_size);
    const ms = Array.from({ length: repeats }, () => {
      const start = performance.now();
      model.forward(ids, { topK: 5 });
      return performance.now() - start;
    });
    return { tokens, ms };
  });
  const peak = engine.memoryBytes();
  model.dispose();

  console.log(`parameters: ${model.config.parameters.toLocaleString('en')}; median of ${repeats} runs; attention of every layer and head + top-5 next tokens\n`);
  console.log('| | native | WASM (Node, SIMD) | WASM / native |');
  console.log('|---|---:|---:|---:|');
  console.log(`| load (parse + F16 -> F32) | ${native.load_ms.toFixed(0)} ms | ${wasmLoad.toFixed(0)} ms | ${(wasmLoad / native.load_ms).toFixed(1)}x |`);
  LENGTHS.forEach((tokens, i) => {
    const n = median(native.runs[i].ms);
    const w = median(wasm[i].ms);
    console.log(`| forward, ${tokens} tokens | ${n.toFixed(0)} ms | ${w.toFixed(0)} ms | ${(w / n).toFixed(1)}x |`);
  });
  console.log(`\nWASM memory: ${mib(afterLoad)} after loading, ${mib(peak)} peak (after the ${LENGTHS.at(-1)}-token forward); limit 4096 MiB`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
