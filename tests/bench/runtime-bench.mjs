// Benchmark of the model runtime (a script, not a timed test): generates a
// GPT-2-small-shaped checkpoint (12 layers, 12 heads, width 768, 1024
// positions, 50257 tokens, random F16 weights, 124M parameters) in a temporary
// folder, then times, side by side in one run, the forward pass (attention of
// every layer and head + top-5 next tokens) natively (build/native/
// tests/bench/runtime_bench) and in WASM under Node (dist/engine.js), at 128
// and 512 tokens, and reports the WASM memory after loading and at its peak.
// usage: node tests/bench/runtime-bench.mjs [REPEATS=3]
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createEngine } from '../../dist/engine.js';

const repeats = Number(process.argv[2] ?? 3);
const LENGTHS = [128, 512];
const cfg = { model_type: 'gpt2', n_layer: 12, n_head: 12, n_embd: 768, n_positions: 1024, vocab_size: 50257,
  layer_norm_epsilon: 1e-5, activation_function: 'gelu_new' };

// Random F16 weights of magnitude 2^-8..2^-4 (layer-norm gains 1, biases 0).
function writeCheckpoint(dir) {
  const d = cfg.n_embd;
  const tensors = [['wte.weight', [cfg.vocab_size, d]], ['wpe.weight', [cfg.n_positions, d]]];
  for (let l = 0; l < cfg.n_layer; l += 1) {
    const p = `h.${l}.`;
    tensors.push([`${p}ln_1.weight`, [d]], [`${p}ln_1.bias`, [d]], [`${p}attn.c_attn.weight`, [d, 3 * d]],
      [`${p}attn.c_attn.bias`, [3 * d]], [`${p}attn.c_proj.weight`, [d, d]], [`${p}attn.c_proj.bias`, [d]],
      [`${p}ln_2.weight`, [d]], [`${p}ln_2.bias`, [d]], [`${p}mlp.c_fc.weight`, [d, 4 * d]], [`${p}mlp.c_fc.bias`, [4 * d]],
      [`${p}mlp.c_proj.weight`, [4 * d, d]], [`${p}mlp.c_proj.bias`, [d]]);
  }
  tensors.push(['ln_f.weight', [d]], ['ln_f.bias', [d]]);
  const header = {};
  let offset = 0;
  for (const [name, shape] of tensors) {
    const bytes = 2 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F16', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const headerBytes = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerBytes.length));
  const fd = openSync(join(dir, 'model.safetensors'), 'w');
  writeSync(fd, length);
  writeSync(fd, headerBytes);
  let state = 12345;
  for (const [name, shape] of tensors) {
    const values = new Uint16Array(shape.reduce((a, b) => a * b, 1));
    if (name.endsWith('ln_1.weight') || name.endsWith('ln_2.weight') || name === 'ln_f.weight') {
      values.fill(0x3c00); // 1.0
    } else if (!name.endsWith('.bias')) {
      for (let i = 0; i < values.length; i += 1) {
        state ^= state << 13; state ^= state >>> 17; state ^= state << 5; // xorshift32
        values[i] = (state & 0x83ff) | ((7 + ((state >>> 10) & 3)) << 10); // ±2^-8 .. 2^-4
      }
    }
    writeSync(fd, new Uint8Array(values.buffer));
  }
  closeSync(fd);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(cfg));
  return 8 + headerBytes.length + offset;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

const dir = mkdtempSync(join(tmpdir(), 'attnplay-bench-'));
try {
  const fileBytes = writeCheckpoint(dir);
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
