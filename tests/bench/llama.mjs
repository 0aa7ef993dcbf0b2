// Benchmark sections for the Llama family (issue 14's Performance section),
// in one process, on random BF16 checkpoints written by checkpoint.mjs:
// - "llama": a SmolLM2-135M-shaped model (30 layers, width 576, 9 heads, 3 kv
//   heads, MLP 1536, vocabulary 49,152, tied embeddings) forward at 128 and
//   512 tokens natively (build/native/tests/bench/runtime_bench), in WASM with
//   1 and 2 threads, and the same computation written with
//   @tensorflow/tfjs-core ops on tfjs-backend-wasm (SIMD, 1 thread) with the
//   same weights (widened to float32, which tfjs needs); every layer's
//   attention read back and the logits at every position, outputs compared
//   before timing. Also generation tokens/s with the KV cache (WASM, 1 thread),
//   the cost of one step after 64 and after 1,024 context tokens (in WASM and
//   natively, 1 thread),
//   and load time from bytes in memory to the first forward.
// - "qwen-memory": a Qwen2.5-0.5B-shaped model (24 layers, width 896, 14
//   heads, 2 kv heads, head_dim 64, MLP 4864, vocabulary 151,936, tied
//   embeddings, q/k/v biases; 494M parameters, 988 MB BF16) loaded and run at
//   128 tokens in the single-threaded WASM build, whose memory is capped at
//   4 GiB; peak WASM memory against the weights' bytes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import tfWasm from '@tensorflow/tfjs-backend-wasm';

import { createEngine } from '../../dist/engine/engine.js';
import { writeLlamaCheckpoint } from './checkpoint.mjs';

export const SMOLLM2 = { model_type: 'llama', hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 30,
  num_attention_heads: 9, num_key_value_heads: 3, vocab_size: 49152, max_position_embeddings: 8192,
  rope_theta: 100000, rms_norm_eps: 1e-5, tie_word_embeddings: true };
const QWEN25_05B = { model_type: 'qwen2', hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24,
  num_attention_heads: 14, num_key_value_heads: 2, head_dim: 64, vocab_size: 151936, max_position_embeddings: 32768,
  rope_theta: 1000000, rms_norm_eps: 1e-6, tie_word_embeddings: true };
const LENGTHS = [128, 512];
const REPEATS = 3;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const idsOf = (tokens, vocab) => Array.from({ length: tokens }, (_, i) => (i * 7919 + 13) % vocab);

// BF16 safetensors -> { name: tf.Tensor (float32) }.
function tfWeights(bytes) {
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8'));
  const base = 8 + headerLength;
  const weights = {};
  for (const [name, { shape, data_offsets: [from, to] }] of Object.entries(header)) {
    const halves = new Uint16Array(bytes.buffer.slice(bytes.byteOffset + base + from, bytes.byteOffset + base + to));
    const bits = Uint32Array.from(halves, (h) => h << 16);
    weights[name] = tf.tensor(new Float32Array(bits.buffer), shape);
  }
  return weights;
}

// The Llama forward (Hugging Face's LlamaForCausalLM / Qwen2ForCausalLM) with
// tfjs ops -> { logits [T, V], attentions: [layer] of [H, T, T] } (tensors).
function tfLlama(w, c, ids) {
  const t = ids.length;
  const heads = c.num_attention_heads;
  const kvHeads = c.num_key_value_heads;
  const hd = c.head_dim ?? c.hidden_size / heads;
  const rms = (x, weight) => tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.square(x), -1, true), c.rms_norm_eps))), weight);
  const linear = (x, name) => {
    const y = tf.matMul(x, w[`${name}.weight`], false, true);
    return w[`${name}.bias`] ? tf.add(y, w[`${name}.bias`]) : y;
  };
  // RoPE, rotate_half convention: angles[p, i] = p · theta^(-2i / hd), cos/sin [1, T, hd].
  const inv = tf.tensor1d(Array.from({ length: hd / 2 }, (_, i) => c.rope_theta ** (-(2 * i) / hd)));
  const angles = tf.outerProduct(tf.range(0, t, 1, 'float32'), inv); // [T, hd/2]
  const cos = tf.expandDims(tf.concat([tf.cos(angles), tf.cos(angles)], -1), 0);
  const sin = tf.expandDims(tf.concat([tf.sin(angles), tf.sin(angles)], -1), 0);
  const rope = (x) => { // [h, T, hd]
    const [x1, x2] = tf.split(x, 2, -1);
    return tf.add(tf.mul(x, cos), tf.mul(tf.concat([tf.neg(x2), x1], -1), sin));
  };
  const split = (m, n) => tf.transpose(tf.reshape(m, [t, n, hd]), [1, 0, 2]); // [n, T, hd]
  const kvOfHead = tf.tensor1d(Array.from({ length: heads }, (_, h) => Math.floor(h / (heads / kvHeads))), 'int32');
  const mask = tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([t, t]), -1, 0)), -1e9); // [T, T]
  let x = tf.gather(w['model.embed_tokens.weight'], tf.tensor1d(ids, 'int32')); // [T, d]
  const attentions = [];
  for (let l = 0; l < c.num_hidden_layers; l += 1) {
    const p = `model.layers.${l}.`;
    const h = rms(x, w[`${p}input_layernorm.weight`]);
    const q = rope(split(linear(h, `${p}self_attn.q_proj`), heads));
    const k = tf.gather(rope(split(linear(h, `${p}self_attn.k_proj`), kvHeads)), kvOfHead); // [H, T, hd]
    const v = tf.gather(split(linear(h, `${p}self_attn.v_proj`), kvHeads), kvOfHead);
    const weights = tf.softmax(tf.add(tf.div(tf.matMul(q, k, false, true), Math.sqrt(hd)), mask)); // [H, T, T]
    attentions.push(weights);
    x = tf.add(x, linear(tf.reshape(tf.transpose(tf.matMul(weights, v), [1, 0, 2]), [t, heads * hd]), `${p}self_attn.o_proj`));
    const m = rms(x, w[`${p}post_attention_layernorm.weight`]);
    const gate = linear(m, `${p}mlp.gate_proj`);
    x = tf.add(x, linear(tf.mul(tf.mul(gate, tf.sigmoid(gate)), linear(m, `${p}mlp.up_proj`)), `${p}mlp.down_proj`));
  }
  const logits = tf.matMul(rms(x, w['model.norm.weight']), w[c.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight'], false, true);
  return { logits, attentions };
}

function timeTf(weights, config, ids) {
  const start = performance.now();
  const out = tf.tidy(() => tfLlama(weights, config, ids));
  const attention = out.attentions.map((a) => a.dataSync()); // read back like the page does
  const logits = out.logits.dataSync();
  tf.dispose([out.logits, ...out.attentions]);
  return { ms: performance.now() - start, attention, logits };
}

// Largest |a - b| over the last layer's attention of ours ([L, H, T, T]) and tfjs's ([H, T, T]).
function lastLayerDifference(ours, theirs, layers, heads, tokens) {
  const offset = (layers - 1) * heads * tokens * tokens;
  let worst = 0;
  theirs.forEach((v, i) => { worst = Math.max(worst, Math.abs(v - ours[offset + i])); });
  return worst;
}

function timed(run) {
  const start = performance.now();
  run();
  return performance.now() - start;
}

export const llama = {
  id: 'llama',
  title: 'Llama family: SmolLM2-135M shape (BF16) vs tfjs-wasm, natively, WASM 1 and 2 threads; generation; load',
  async run({ log }) {
    tfWasm.setThreadsCount(1);
    await tf.setBackend('wasm');
    await tf.ready();
    const dir = mkdtempSync(join(tmpdir(), 'attnplay-llama-bench-'));
    try {
      const { config, bytes: fileBytes } = writeLlamaCheckpoint(dir, SMOLLM2);
      log(`  SmolLM2-135M-shaped checkpoint: ${mib(fileBytes)} BF16`);
      const nativeBench = fileURLToPath(new URL('../../build/native/tests/bench/runtime_bench', import.meta.url));
      const native = JSON.parse(execFileSync(nativeBench, [dir, String(REPEATS), ...LENGTHS.map(String)], { encoding: 'utf8' }));
      log(`  native: load ${native.load_ms.toFixed(0)} ms`);

      const files = { config: readFileSync(join(dir, 'config.json'), 'utf8'), weights: readFileSync(join(dir, 'model.safetensors')) };
      const single = await createEngine({ threads: false });
      let start = performance.now();
      const model = await single.loadModel(files);
      const loadMs = performance.now() - start;
      const firstMs = timed(() => model.forward(idsOf(1, config.vocab_size)));
      const threaded = await createEngine({ threads: true });
      threaded.setThreads(2);
      const model2 = await threaded.loadModel(files);
      const weights = tfWeights(files.weights);

      const rows = [];
      for (const tokens of LENGTHS) {
        const ids = idsOf(tokens, config.vocab_size);
        const ours = model.forward(ids, { logits: true });
        const theirs = timeTf(weights, config, ids);
        const worst = lastLayerDifference(ours.attentions.data, theirs.attention.at(-1), config.num_hidden_layers, config.num_attention_heads, tokens);
        if (!(worst < 1e-3)) throw new Error(`tfjs and attnplay disagree at T=${tokens}: attention differs by ${worst}`);
        const times = { one: [], two: [], tf: [] };
        for (let r = 0; r < REPEATS; r += 1) { // alternate, so load changes hit all
          times.one.push(timed(() => model.forward(ids, { logits: true })));
          times.two.push(timed(() => model2.forward(ids, { logits: true })));
          times.tf.push(timeTf(weights, config, ids).ms);
        }
        const row = { tokens, worst, native: median(native.runs[LENGTHS.indexOf(tokens)].ms), ...Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])) };
        rows.push(row);
        log(`  T=${tokens}: native ${row.native.toFixed(0)} ms, WASM 1T ${row.one.toFixed(0)} ms, 2T ${row.two.toFixed(0)} ms, tfjs-wasm ${row.tf.toFixed(0)} ms`);
      }
      model2.dispose();
      tf.dispose(Object.values(weights));

      // Generation: 32 new tokens after a 16-token prompt, greedy; the prompt's cost is taken out.
      let generation = null;
      if (typeof model.generate === 'function') {
        const prompt = idsOf(16, config.vocab_size);
        const newTokens = 32;
        const promptMs = median([0, 1, 2].map(() => timed(() => model.generate(prompt, { maxNewTokens: 1 }))));
        const allMs = median([0, 1, 2].map(() => timed(() => model.generate(prompt, { maxNewTokens: newTokens + 1 }))));
        generation = { newTokens, perToken: (allMs - promptMs) / newTokens };
        log(`  generation: ${(1000 / generation.perToken).toFixed(1)} tokens/s`);
        generation.memory = single.memoryBytes();  // before the 1,024-token prompt below
        // One decoding step after 64 and after 1,024 context tokens (median of 16 steps): what a longer cache costs.
        for (const context of [64, 1024]) {
          const steps = model.startGeneration(idsOf(context, config.vocab_size), { maxNewTokens: 18, greedy: true });
          steps.step();  // the prompt's pass
          generation[context] = median(Array.from({ length: 16 }, () => timed(() => steps.step())));
          steps.dispose();
        }
        log(`  a step at 64 / 1,024 context tokens: ${generation[64].toFixed(1)} / ${generation[1024].toFixed(1)} ms`);
        // The same natively, 1 thread (median of 16 steps): the step without the copy of its attention row into JS.
        generation.native = Object.fromEntries([64, 1024].map((context) => [context,
          JSON.parse(execFileSync(nativeBench, ['--generate', dir, '1', String(context), '16'], { encoding: 'utf8' })).median_step_ms]));
        log(`  natively, 1 thread: ${generation.native[64].toFixed(1)} / ${generation.native[1024].toFixed(1)} ms`);
      }
      const memory = generation?.memory ?? single.memoryBytes();
      model.dispose();

      const r = (row) => [`| forward, ${row.tokens} tokens | ${row.native.toFixed(0)} ms | ${row.one.toFixed(0)} ms | ${row.two.toFixed(0)} ms | ${row.tf.toFixed(0)} ms |`,
        ` ${(row.tf / row.one).toFixed(2)}x | ${(row.one / row.native).toFixed(2)}x |`].join('');
      return {
        markdown: [
          `SmolLM2-135M shape: ${SMOLLM2.num_hidden_layers} layers, width ${SMOLLM2.hidden_size}, ${SMOLLM2.num_attention_heads} heads / ${SMOLLM2.num_key_value_heads} kv heads, MLP ${SMOLLM2.intermediate_size}, vocabulary ${SMOLLM2.vocab_size.toLocaleString('en')}, tied embeddings; random BF16 weights (${mib(fileBytes)}).`,
          '',
          '| | native (its thread pool) | attnplay WASM 1 thread | WASM 2 threads | tfjs-wasm 1 thread (same weights, same ops) | tfjs / WASM 1T | WASM 1T / native |',
          '|---|---:|---:|---:|---:|---:|---:|',
          ...rows.map(r),
          '',
          `Every forward computes every layer's attention weights (read back to JS) and the logits at every position (native: top-5 at every position); median of ${REPEATS} alternating runs; the last layer's attention agrees with tfjs within ${Math.max(...rows.map((x) => x.worst)).toExponential(1)}. attnplay keeps the weights in BF16 (widened inside the GEMM); tfjs needs them as float32.`,
          '',
          '| | WASM 1 thread |',
          '|---|---:|',
          `| load: checkpoint bytes in JS memory -> model ready (native: ${native.load_ms.toFixed(0)} ms from disk) | ${loadMs.toFixed(0)} ms |`,
          `| then the first forward (1 token) | ${firstMs.toFixed(0)} ms |`,
          generation ? `| generation with the KV cache, greedy, after a 16-token prompt | ${(1000 / generation.perToken).toFixed(1)} tokens/s (${generation.perToken.toFixed(1)} ms/token) |` : '| generation | (no generate() in this build) |',
          generation ? `| one step after 64 / after 1,024 context tokens (the cache read in place; issue 31's goal: ≤ 1.15×) | ${generation[64].toFixed(1)} / ${generation[1024].toFixed(1)} ms (${(generation[1024] / generation[64]).toFixed(2)}×) |` : '',
          generation ? `| the same step natively, 1 thread (no copy of the step's attention row into JS) | ${generation.native[64].toFixed(1)} / ${generation.native[1024].toFixed(1)} ms (${(generation.native[1024] / generation.native[64]).toFixed(2)}×) |` : '',
          `| WASM memory after the 512-token forward | ${mib(memory)} |`,
        ].join('\n'),
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export const qwenMemory = {
  id: 'qwen-memory',
  title: 'Qwen2.5-0.5B shape (BF16) in WASM within 4 GiB: peak memory against the weights',
  async run({ log }) {
    const dir = mkdtempSync(join(tmpdir(), 'attnplay-qwen-bench-'));
    try {
      const { config, bytes: fileBytes } = writeLlamaCheckpoint(dir, QWEN25_05B);
      log(`  Qwen2.5-0.5B-shaped checkpoint: ${mib(fileBytes)} BF16`);
      const engine = await createEngine({ threads: false });
      const files = { config: readFileSync(join(dir, 'config.json'), 'utf8'), weights: readFileSync(join(dir, 'model.safetensors')) };
      const before = engine.memoryBytes();
      let start = performance.now();
      const model = await engine.loadModel(files);
      const loadMs = performance.now() - start;
      const afterLoad = engine.memoryBytes();
      const heapAfterLoad = engine.heapBytesInUse();
      const ids = idsOf(128, config.vocab_size);
      start = performance.now();
      const out = model.forward(ids, { topK: 5 });
      const forwardMs = performance.now() - start;
      const peak = engine.memoryBytes();
      if (out.attentions.shape.join() !== [config.num_hidden_layers, config.num_attention_heads, 128, 128].join()) throw new Error('unexpected attention shape');
      model.dispose();
      const parameters = model.config.parameters;
      log(`  load ${loadMs.toFixed(0)} ms, forward ${forwardMs.toFixed(0)} ms, peak ${mib(peak)}`);
      return {
        markdown: [
          `Qwen2.5-0.5B shape: ${QWEN25_05B.num_hidden_layers} layers, width ${QWEN25_05B.hidden_size}, ${QWEN25_05B.num_attention_heads} heads / ${QWEN25_05B.num_key_value_heads} kv heads, head_dim 64, MLP ${QWEN25_05B.intermediate_size}, vocabulary ${QWEN25_05B.vocab_size.toLocaleString('en')}, tied embeddings, q/k/v biases: ${parameters.toLocaleString('en')} parameters, random BF16 (${mib(fileBytes)} file). Single-threaded WASM build (memory limit 4 GiB).`,
          '',
          '| | |',
          '|---|---:|',
          `| checkpoint file (weights' bytes) | ${mib(fileBytes)} |`,
          `| WASM memory before loading | ${mib(before)} |`,
          `| after loading (malloc'd: ${mib(heapAfterLoad)}) | ${mib(afterLoad)} |`,
          `| peak, after a 128-token forward (attention of every layer + top-5) | ${mib(peak)} (${(peak / fileBytes).toFixed(2)}x the weights) |`,
          `| load time (bytes in JS memory -> model ready) | ${loadMs.toFixed(0)} ms |`,
          `| forward, 128 tokens | ${forwardMs.toFixed(0)} ms |`,
          '',
          'WASM memory never shrinks, so the memory after the forward is the peak of the whole run.',
        ].join('\n'),
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
