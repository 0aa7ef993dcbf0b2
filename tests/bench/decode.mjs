// Benchmark section "decode" (issue 31): generation, one new token at a
// time, side by side in one headless Chromium page (served with COOP/COEP),
// on the same weights: a SmolLM2-135M-shaped Llama (30 layers, width 576,
// 9 heads / 3 kv heads, MLP 1,536, 49,152-token vocabulary, tied; random
// BF16 weights written by checkpoint.mjs), stored as F32 (widened exactly),
// BF16 (as written) and F16 (rounded), run by
// - attnplay's WASM builds, 1 thread (the single-threaded build) and 2 (the
//   threaded build): startGeneration on 128 prompt ids, greedy; the first
//   step is the prompt's pass, then 64 steps of one token each, every step
//   with its attention row of every layer and head (what the page's
//   generation view draws), and
// - llama.cpp's WebAssembly build (@wllama/wllama, n_threads 1 and 2, no GPU
//   layers) on GGUF files converted from the same checkpoint (gguf.mjs: q/k
//   rows permuted as convert_hf_to_gguf.py does): createCompletion on a
//   128-character prompt of byte pieces (the same ids), temperature 0, 65
//   tokens, ignore_eos, its own timings (prompt_ms, predicted_ms).
// - the native build (build/native/tests/bench/runtime_bench --generate), 1
//   and 2 threads, the same 128 prompt ids and 64 greedy steps (the model
//   loaded afresh by each run; only the steps timed).
// After a warm-up round of each, rounds alternate the four runners, medians of 3. The machine's read
// bandwidth is measured in the same page (read_bandwidth.wasm in one web
// worker, then in two at once), and each engine's tokens/s is given as a
// share of bandwidth / the weights' bytes, the most one-row decoding can do.
// The greedy tokens of both engines are compared, as a check that they ran
// the same model.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { openBrowser } from '../browser/browser.mjs';
import { writeConvertedCheckpoint, writeLlamaCheckpoint } from './checkpoint.mjs';
import { writeLlamaGguf } from './gguf.mjs';
import { SMOLLM2 } from './llama.mjs';

const PROMPT_TOKENS = 128;
const NEW_TOKENS = 64;
const REPEATS = 3;
const DTYPES = ['F32', 'BF16', 'F16'];
// 128 ASCII characters without white space: one byte piece each (id 4 + byte) in the GGUF's vocabulary.
const PROMPT = 'Itisatruthuniversallyacknowledged,thatasinglemaninpossessionofagoodfortune,mustbeinwantofawife.' +
  'Howeverlittleknownthefeelingsorviewsofsuchamanmaybe';
const WLLAMA = fileURLToPath(new URL('../../node_modules/@wllama/wllama/esm/', import.meta.url));
const WLLAMA_VERSION = JSON.parse(readFileSync(new URL('../package.json', `file://${WLLAMA}`), 'utf8')).version;
const PROBES = fileURLToPath(new URL('../../build/wasm/tests/bench/', import.meta.url));
const NATIVE_BENCH = fileURLToPath(new URL('../../build/native/tests/bench/runtime_bench', import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const perSecond = (x) => x.toFixed(1);
const percent = (x) => `${(100 * x).toFixed(0)}%`;

// In the page: GB/s read by `workers` web workers at once, each summing its own 256 MiB four times.
async function bandwidthInPage({ workers, url }) {
  const source = `onmessage = async ({ data: url }) => {
    const { instance } = await WebAssembly.instantiate(await (await fetch(url)).arrayBuffer(), {});
    const bytes = 256 * 2 ** 20, memory = instance.exports.memory, base = memory.buffer.byteLength;
    memory.grow(bytes / 65536);
    new Float32Array(memory.buffer, base, bytes / 4).fill(1);
    instance.exports.read_sum(base, bytes / 4);
    postMessage('ready');
    onmessage = () => {
      const started = performance.now();
      for (let r = 0; r < 4; r += 1) instance.exports.read_sum(base, bytes / 4);
      postMessage(4 * bytes / ((performance.now() - started) / 1000));
    };
  };`;
  const script = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  const pool = Array.from({ length: workers }, () => new Worker(script));
  const next = (w) => new Promise((resolve) => { w.onmessage = ({ data }) => resolve(data); });
  await Promise.all(pool.map((w) => { const ready = next(w); w.postMessage(new URL(url, location.href).href); return ready; }));
  const totals = [];
  for (let r = 0; r < 3; r += 1) {
    const rates = await Promise.all(pool.map((w) => { const done = next(w); w.postMessage('go'); return done; }));
    totals.push(rates.reduce((a, b) => a + b, 0) / 1e9);
  }
  pool.forEach((w) => w.terminate());
  return totals.sort((a, b) => a - b)[1];
}

// In the page: attnplay with 1 and 2 threads, the model of `folder` loaded in each.
async function attnplayLoadInPage({ folder }) {
  const { createEngine } = await import('/engine/engine.js');
  globalThis.attnplayModels = {};
  for (const threads of [1, 2]) {
    const engine = await createEngine({ threads: threads > 1 });
    if (threads > 1) engine.setThreads(threads);
    globalThis.attnplayModels[threads] = await engine.loadModel(folder);
  }
}

// In the page: one generation -> { prefillMs, decodeMs, tokens }.
async function attnplayRoundInPage({ threads, ids, newTokens }) {
  const generation = globalThis.attnplayModels[threads].startGeneration(ids, { maxNewTokens: newTokens + 1, greedy: true });
  let started = performance.now();
  const tokens = [generation.step().token];  // the prompt's pass
  const prefillMs = performance.now() - started;
  started = performance.now();
  for (let i = 0; i < newTokens; i += 1) tokens.push(generation.step().token);
  const decodeMs = performance.now() - started;
  generation.dispose();
  return { prefillMs, decodeMs, tokens };
}

// In the page: llama.cpp with 1 and 2 threads, the GGUF at `url` loaded in each.
async function wllamaLoadInPage({ url }) {
  const { Wllama } = await import('/wllama/index.js');
  const blob = await (await fetch(url)).blob();
  globalThis.wllamas = {};
  for (const threads of [1, 2]) {
    const wllama = new Wllama({ default: '/wllama/wasm/wllama.wasm' }, { suppressNativeLog: true });
    await wllama.loadModel([blob], { n_threads: threads, n_ctx: 512, n_batch: 512, n_ubatch: 512, n_gpu_layers: 0 });
    globalThis.wllamas[threads] = wllama;
  }
}

async function wllamaRoundInPage({ threads, text, promptTokens, newTokens }) {
  const r = await globalThis.wllamas[threads].createCompletion({
    prompt: text, max_tokens: newTokens + 1, temperature: 0, cache_prompt: false, ignore_eos: true, n_probs: 1,
  });
  if (r.timings.prompt_n !== promptTokens) throw new Error(`llama.cpp read ${r.timings.prompt_n} prompt tokens, not ${promptTokens}`);
  if (r.timings.predicted_n !== newTokens + 1) throw new Error(`llama.cpp generated ${r.timings.predicted_n} tokens, not ${newTokens + 1}`);
  const tokens = r.choices[0].logprobs.content.map((c) => c.id ?? c.top_logprobs[0].id);
  return { prefillMs: r.timings.prompt_ms, decodeMs: r.timings.predicted_ms, tokens, decoded: r.timings.predicted_n };
}

async function wllamaExitInPage() {
  for (const wllama of Object.values(globalThis.wllamas)) await wllama.exit();
}

// Leading tokens on which two greedy runs agree.
function agreeing(a, b) {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n += 1;
  return n;
}

export const decode = {
  id: 'decode',
  title: 'Generation, one token at a time: SmolLM2-135M shape in F32 / BF16 / F16, attnplay beside llama.cpp (@wllama/wllama), 1 and 2 threads, against the read bandwidth',
  async run({ log }) {
    const dir = mkdtempSync(join(tmpdir(), 'attnplay-decode-'));
    try {
      const source = join(dir, 'source');
      mkdirSync(source);
      writeLlamaCheckpoint(source, SMOLLM2);
      const weightBytes = {};
      for (const dtype of DTYPES) {
        mkdirSync(join(dir, dtype));
        writeConvertedCheckpoint(source, join(dir, dtype), dtype);
        weightBytes[dtype] = statSync(join(dir, dtype, 'model.safetensors')).size;
        writeLlamaGguf(source, join(dir, `${dtype}.gguf`), dtype);
        log(`  ${dtype}: safetensors ${mib(weightBytes[dtype])}, GGUF ${mib(statSync(join(dir, `${dtype}.gguf`)).size)}`);
      }
      const session = await openBrowser({
        mounts: { '/model/': dir, '/wllama/': WLLAMA, '/probes/': PROBES },
        headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
      });
      const text = PROMPT.slice(0, PROMPT_TOKENS);
      const ids = Array.from(text, (ch) => 4 + ch.charCodeAt(0));  // the GGUF's byte pieces <0xNN> (gguf.mjs)
      const results = {};
      let bandwidth;
      try {
        const probe = await session.browser.newPage();
        await probe.goto(`${session.url}index.html`);
        bandwidth = {};
        for (const workers of [1, 2]) bandwidth[workers] = await probe.evaluate(bandwidthInPage, { workers, url: '/probes/read_bandwidth.wasm' });
        log(`  read bandwidth: ${bandwidth[1].toFixed(1)} GB/s (1 worker), ${bandwidth[2].toFixed(1)} GB/s (2 at once)`);
        await probe.close();
        for (const dtype of DTYPES) {
          const ours = await session.browser.newPage();
          await ours.goto(`${session.url}index.html`);
          await ours.evaluate(attnplayLoadInPage, { folder: `/model/${dtype}/` });
          const theirs = await session.browser.newPage();
          await theirs.goto(`${session.url}index.html`);
          await theirs.evaluate(wllamaLoadInPage, { url: `/model/${dtype}.gguf` });
          const runs = { attnplay1: [], attnplay2: [], llama1: [], llama2: [] };
          // A warm-up round of every runner: the browser compiles WebAssembly's hot functions again,
          // optimized, in the background while they run (and llama.cpp sets up its buffers).
          for (const threads of [1, 2]) {
            await ours.evaluate(attnplayRoundInPage, { threads, ids, newTokens: NEW_TOKENS });
            await theirs.evaluate(wllamaRoundInPage, { threads, text, promptTokens: PROMPT_TOKENS, newTokens: NEW_TOKENS });
          }
          for (let r = 0; r < REPEATS; r += 1) {
            for (const threads of [1, 2]) {
              runs[`attnplay${threads}`].push(await ours.evaluate(attnplayRoundInPage, { threads, ids, newTokens: NEW_TOKENS }));
              runs[`llama${threads}`].push(await theirs.evaluate(wllamaRoundInPage, { threads, text, promptTokens: PROMPT_TOKENS, newTokens: NEW_TOKENS }));
            }
          }
          await theirs.evaluate(wllamaExitInPage);
          await ours.close();
          await theirs.close();
          const summary = (list, generated) => ({
            prefillMs: median(list.map((x) => x.prefillMs)),
            tokensPerSecond: median(list.map((x) => (1000 * generated(x)) / x.decodeMs)),
            tokens: list[0].tokens,
          });
          results[dtype] = {
            attnplay1: summary(runs.attnplay1, () => NEW_TOKENS),
            attnplay2: summary(runs.attnplay2, () => NEW_TOKENS),
            llama1: summary(runs.llama1, (x) => x.decoded),
            llama2: summary(runs.llama2, (x) => x.decoded),
          };
          const r = results[dtype];
          log(`  ${dtype}: attnplay ${perSecond(r.attnplay1.tokensPerSecond)} / ${perSecond(r.attnplay2.tokensPerSecond)} tokens/s, ` +
            `llama.cpp ${perSecond(r.llama1.tokensPerSecond)} / ${perSecond(r.llama2.tokensPerSecond)} (1 / 2 threads); ` +
            `same greedy tokens for ${agreeing(r.attnplay1.tokens, r.llama1.tokens)} of ${NEW_TOKENS + 1}`);
        }
      } finally {
        await session.close();
      }
      // Natively: rounds alternating 1 and 2 threads; the prompt ids are runtime_bench's own (i · 7919 mod vocabulary).
      const native = {};
      for (const dtype of DTYPES) {
        const runs = { 1: [], 2: [] };
        for (let r = 0; r < REPEATS; r += 1) {
          for (const threads of [1, 2]) {
            const out = JSON.parse(execFileSync(NATIVE_BENCH, ['--generate', join(dir, dtype), String(threads), String(PROMPT_TOKENS), String(NEW_TOKENS)], { encoding: 'utf8' }));
            runs[threads].push(1000 / out.ms_per_token);
          }
        }
        native[dtype] = { 1: median(runs[1]), 2: median(runs[2]) };
        log(`  ${dtype} natively: ${perSecond(native[dtype][1])} / ${perSecond(native[dtype][2])} tokens/s (1 / 2 threads)`);
      }
      const ceiling = (dtype, threads) => (bandwidth[threads] * 1e9) / weightBytes[dtype];
      const rows = DTYPES.map((dtype) => {
        const r = results[dtype];
        return `| ${dtype} | ${mib(weightBytes[dtype])} | **${perSecond(r.attnplay1.tokensPerSecond)}** (${percent(r.attnplay1.tokensPerSecond / ceiling(dtype, 1))}) | ` +
          `${perSecond(r.attnplay2.tokensPerSecond)} (${(r.attnplay2.tokensPerSecond / r.attnplay1.tokensPerSecond).toFixed(2)}×) | ` +
          `${perSecond(r.llama1.tokensPerSecond)} (${percent(r.llama1.tokensPerSecond / ceiling(dtype, 1))}) | ` +
          `${perSecond(r.llama2.tokensPerSecond)} (${(r.llama2.tokensPerSecond / r.llama1.tokensPerSecond).toFixed(2)}×) | ` +
          `${perSecond(ceiling(dtype, 1))} / ${perSecond(ceiling(dtype, 2))} | ` +
          `${Math.round(r.attnplay1.prefillMs)} / ${Math.round(r.llama1.prefillMs)} ms | ${agreeing(r.attnplay1.tokens, r.llama1.tokens)} of ${NEW_TOKENS + 1} | ` +
          `${perSecond(native[dtype][1])} / ${perSecond(native[dtype][2])} (${(native[dtype][2] / native[dtype][1]).toFixed(2)}×) |`;
      });
      const r = results;
      const failures = [];
      if (r.F16.attnplay1.tokensPerSecond < 35) failures.push('F16 below 35 tokens/s');
      if (r.F16.attnplay1.tokensPerSecond < r.F32.llama1.tokensPerSecond) failures.push('F16 below llama.cpp F32');
      if (r.BF16.attnplay1.tokensPerSecond < 0.6 * ceiling('BF16', 1)) failures.push('BF16 below 60% of its ceiling');
      if (r.F32.attnplay1.tokensPerSecond < 0.75 * ceiling('F32', 1)) failures.push('F32 below 75% of its ceiling');
      if (r.F32.attnplay1.tokensPerSecond < r.F32.llama1.tokensPerSecond) failures.push('F32 below llama.cpp F32');
      for (const dtype of DTYPES) {
        if (r[dtype].attnplay2.tokensPerSecond < 1.6 * r[dtype].attnplay1.tokensPerSecond) failures.push(`${dtype}: 2 threads below 1.6× one`);
        if (native[dtype][2] < 1.6 * native[dtype][1]) failures.push(`${dtype} natively: 2 threads below 1.6× one`);
      }
      return {
        markdown: [
          `Command: \`node tests/bench/run.mjs decode\` (headless Chromium, one page per engine served with COOP/COEP; attnplay's single-threaded WASM build for 1 thread and its threaded build with 2; @wllama/wllama ${WLLAMA_VERSION} with n_threads 1 and 2, no GPU layers; ${PROMPT_TOKENS} prompt ids then ${NEW_TOKENS} generated tokens, greedy; a warm-up round of each, then rounds alternating the four runners, medians of ${REPEATS}; random weights of a SmolLM2-135M-shaped Llama written BF16 and stored as each type; natively \`runtime_bench --generate\`, the same counts, rounds alternating 1 and 2 threads, medians of ${REPEATS}).`,
          '',
          '| weights | read per token | attnplay 1 thread, tokens/s (share of the ceiling) | attnplay 2 threads (× 1 thread) | llama.cpp 1 thread | llama.cpp 2 threads | ceiling: bandwidth / weights, 1 / 2 threads | prompt of 128: attnplay / llama.cpp (1 thread) | greedy tokens alike | attnplay natively, 1 / 2 threads (× 1 thread) |',
          '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
          ...rows,
          '',
          `Read bandwidth in this page: ${bandwidth[1].toFixed(1)} GB/s from one web worker, ${bandwidth[2].toFixed(1)} GB/s from two at once (\`tests/bench/read_bandwidth.cpp\`: a sum of floats with eight SIMD accumulators). ` +
            'attnplay\'s steps also return every layer\'s attention row (30 × 9 weights per key) to JavaScript, which llama.cpp does not compute. ' +
            'Targets (issue 31, one thread): F16 ≥ 35 tokens/s and ≥ llama.cpp on F32; BF16 ≥ 60% of its ceiling; F32 ≥ 75% of its ceiling and ≥ llama.cpp on F32; two threads ≥ 1.6× one, in WASM and natively. ' +
            (failures.length ? `Not met in this run: ${failures.join('; ')}.` : 'All met in this run.'),
        ].join('\n'),
        failed: failures.length > 0 && failures.join('; '),
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
