// Forward-pass benchmark (a `npm run bench` section, not a test): a
// GPT-2-small-shaped model (12 layers, 12 heads, width 768, random F16 weights
// from checkpoint.mjs) at T = 128 and 512, in one process: ours in WASM
// (dist/engine/engine.js, single-threaded) against the same computation written with
// @tensorflow/tfjs-core ops on tfjs-backend-wasm (SIMD, 1 thread) with the
// same weights. Both do the playground's work: every layer's attention
// weights read back to JS and the next-token logits at every position. The
// outputs are compared before timing. Also the shipped models at T = 64 (the
// live-typing budget), when they exist.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import tfWasm from '@tensorflow/tfjs-backend-wasm';

import { createEngine } from '../../dist/engine/engine.js';
import { writeGpt2Checkpoint } from './checkpoint.mjs';

export const GPT2_SMALL = { n_layer: 12, n_head: 12, n_embd: 768, n_positions: 1024, vocab_size: 50257 };
const LENGTHS = [128, 512];
const REPEATS = 3;
// Shipped models are timed on the first SHIPPED_TOKENS tokens of this text (the live-typing budget).
export const SHIPPED_TOKENS = 64;
export const SHIPPED_TEXT = 'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want '
  + 'of a wife. However little known the feelings or views of such a man may be on his first entering a neighbourhood, '
  + 'this truth is so well fixed in the minds of the surrounding families, that he is considered as the rightful '
  + 'property of some one or other of their daughters.';
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The shipped models that exist in models/, each loaded with the first SHIPPED_TOKENS ids of SHIPPED_TEXT: { name, model, ids } (the caller disposes each model). */
export async function* shippedModels(engine) {
  for (const name of ['austen-gpt', 'austen-bert']) {
    const folder = new URL(`../../models/${name}/`, import.meta.url);
    if (!existsSync(new URL('model.safetensors', folder))) continue;
    const model = await engine.loadModel({ config: readFileSync(new URL('config.json', folder), 'utf8'), weights: readFileSync(new URL('model.safetensors', folder)), tokenizer: readFileSync(new URL('tokenizer.json', folder), 'utf8') });
    const ids = model.run(SHIPPED_TEXT).tokens.map((t) => t.id).slice(0, SHIPPED_TOKENS);
    if (ids.length !== SHIPPED_TOKENS) throw new Error(`${name}: the benchmark text gives only ${ids.length} tokens`);
    yield { name, model, ids };
  }
}

function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

// F16 safetensors -> { name: tf.Tensor (float32) }.
function tfWeights(path) {
  const bytes = readFileSync(path);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8'));
  const base = 8 + headerLength;
  const table = new Float32Array(65536).map((_, h) => halfToFloat(h));
  const weights = {};
  for (const [name, { shape, data_offsets: [from, to] }] of Object.entries(header)) {
    const halves = new Uint16Array(bytes.buffer.slice(bytes.byteOffset + base + from, bytes.byteOffset + base + to));
    weights[name] = tf.tensor(Float32Array.from(halves, (h) => table[h]), shape);
  }
  return weights;
}

// GPT-2 forward with tfjs ops -> { logits [T, V], attentions: [layer] of [H, T, T] } (tensors).
function tfForward(w, ids) {
  const t = ids.length;
  const d = GPT2_SMALL.n_embd;
  const heads = GPT2_SMALL.n_head;
  const dk = d / heads;
  const layerNorm = (x, prefix) => {
    const { mean, variance } = tf.moments(x, -1, true);
    return tf.add(tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, 1e-5))), w[`${prefix}.weight`]), w[`${prefix}.bias`]);
  };
  const linear = (x, prefix) => tf.add(tf.matMul(x, w[`${prefix}.weight`]), w[`${prefix}.bias`]);
  const geluTanh = (x) => tf.mul(tf.mul(x, 0.5), tf.add(1, tf.tanh(tf.mul(Math.sqrt(2 / Math.PI), tf.add(x, tf.mul(0.044715, tf.pow(x, 3)))))));
  const split = (m) => tf.transpose(tf.reshape(m, [t, heads, dk]), [1, 0, 2]); // [H, T, d_k]
  const mask = tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([t, t]), -1, 0)), -1e9); // [T, T]
  let x = tf.add(tf.gather(w['wte.weight'], tf.tensor1d(ids, 'int32')), tf.slice(w['wpe.weight'], [0, 0], [t, d])); // [T, d]
  const attentions = [];
  for (let l = 0; l < GPT2_SMALL.n_layer; l += 1) {
    const [q, k, v] = tf.split(linear(layerNorm(x, `h.${l}.ln_1`), `h.${l}.attn.c_attn`), 3, 1).map(split);
    const weights = tf.softmax(tf.add(tf.div(tf.matMul(q, k, false, true), Math.sqrt(dk)), mask)); // [H, T, T]
    attentions.push(weights);
    const heads_out = tf.reshape(tf.transpose(tf.matMul(weights, v), [1, 0, 2]), [t, d]);
    x = tf.add(x, linear(heads_out, `h.${l}.attn.c_proj`));
    x = tf.add(x, linear(geluTanh(linear(layerNorm(x, `h.${l}.ln_2`), `h.${l}.mlp.c_fc`)), `h.${l}.mlp.c_proj`));
  }
  const logits = tf.matMul(layerNorm(x, 'ln_f'), w['wte.weight'], false, true); // [T, V]
  return { logits, attentions };
}

function timeTf(weights, ids) {
  const start = performance.now();
  const out = tf.tidy(() => tfForward(weights, ids));
  const attention = out.attentions.map((a) => a.dataSync()); // read back like the page does
  const logits = out.logits.dataSync();
  tf.dispose([out.logits, ...out.attentions]);
  return { ms: performance.now() - start, attention, logits };
}

export const forward = {
  id: 'forward',
  title: 'Forward pass: GPT-2-small shape vs tfjs-wasm, shipped models at 64 tokens',
  async run({ log }) {
    // The shipped models first, in a fresh process as the page's worker is:
    // after the 124M model and tfjs below, the same passes measured about
    // 1.5× slower (a heap grown to a gigabyte, tfjs's memory, more GC).
    const shipped = [];
    for await (const { name, model: m, ids } of shippedModels(await createEngine({ threads: false }))) {
      const pass = () => m.forward(ids, { topK: 5, ...(m.config.causal ? {} : { typeIds: ids.map(() => 0), maskPositions: [5] }) });
      for (let r = 0; r < 3; r += 1) pass(); // warm-up: V8 optimizes hot WebAssembly functions while they first run
      const ms = Array.from({ length: 21 }, () => { const s = performance.now(); pass(); return performance.now() - s; });
      shipped.push({ name, tokens: ids.length, ms: median(ms) });
      m.dispose();
    }
    tfWasm.setThreadsCount(1);
    await tf.setBackend('wasm');
    await tf.ready();
    const dir = mkdtempSync(join(tmpdir(), 'attnplay-forward-bench-'));
    try {
      writeGpt2Checkpoint(dir, GPT2_SMALL);
      const engine = await createEngine({ threads: false });
      const model = await engine.loadModel({ config: readFileSync(join(dir, 'config.json'), 'utf8'), weights: readFileSync(join(dir, 'model.safetensors')) });
      const weights = tfWeights(join(dir, 'model.safetensors'));
      const rows = [];
      for (const tokens of LENGTHS) {
        const ids = Array.from({ length: tokens }, (_, i) => (i * 7919) % GPT2_SMALL.vocab_size);
        // Same work, same answers: compare before timing.
        const ours = model.forward(ids, { logits: true });
        const theirs = timeTf(weights, ids);
        let worst = 0;
        theirs.attention[GPT2_SMALL.n_layer - 1].forEach((v, i) => { worst = Math.max(worst, Math.abs(v - ours.attentions.data[(GPT2_SMALL.n_layer - 1) * GPT2_SMALL.n_head * tokens * tokens + i])); });
        if (!(worst < 1e-3)) throw new Error(`tfjs and attnplay disagree at T=${tokens}: attention differs by ${worst}`);
        const oursMs = [];
        const tfMs = [];
        for (let r = 0; r < REPEATS; r += 1) { // alternate, so load changes hit both
          let start = performance.now();
          model.forward(ids, { logits: true });
          oursMs.push(performance.now() - start);
          tfMs.push(timeTf(weights, ids).ms);
        }
        rows.push({ tokens, ours: median(oursMs), tf: median(tfMs), worst });
        log(`T=${tokens}: ours ${median(oursMs).toFixed(0)} ms, tfjs-wasm ${median(tfMs).toFixed(0)} ms`);
      }
      model.dispose();
      tf.dispose(Object.values(weights));

      return {
        markdown: [
          'Command: `node tests/bench/run.mjs forward` (Node, one thread each).',
          '',
          '| GPT-2-small shape (124M parameters) | attnplay WASM | tfjs-wasm (same weights, same ops) | tfjs / attnplay |',
          '|---|---:|---:|---:|',
          ...rows.map((r) => `| forward, ${r.tokens} tokens | ${r.ours.toFixed(0)} ms | ${r.tf.toFixed(0)} ms | ${(r.tf / r.ours).toFixed(2)}x |`),
          '',
          `Both compute every layer's attention weights (read back to JS) and the logits at every position; median of ${REPEATS} alternating runs; the last layer's attention agrees within ${Math.max(...rows.map((r) => r.worst)).toExponential(1)}.`,
          '',
          shipped.length ? '| shipped model | tokens | forward (attention + top-5) |\n|---|---:|---:|' : 'Shipped models: none in models/ yet.',
          ...shipped.map((s) => `| ${s.name} | ${s.tokens} | ${s.ms.toFixed(1)} ms |`),
          ...(shipped.length ? ['', 'Shipped models: median of 21 passes after 3 warm-up passes.'] : []),
        ].join('\n'),
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
