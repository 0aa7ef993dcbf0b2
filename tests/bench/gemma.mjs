// Benchmark section "gemma" (issue 28's performance target), in one headless
// Chromium page, one thread each, side by side on the same weights: a
// Gemma-3-270M-shaped model (18 layers, width 640, 4 query heads on one
// key/value head of 256, MLP 2,048, 262,144-token vocabulary, tied, sliding
// windows of 512 on five layers of six; random BF16 weights written by
// checkpoint.mjs) run by attnplay's single-threaded WASM build at 128 tokens,
// - every layer's attention and no logits (what the attention view needs),
// - the same with the top-5 after the last token (the page's predictions: the
//   262k-wide output layer at one position),
// - the top-5 at every position (what the output layer costs at all 128),
// and by llama.cpp's WebAssembly build (@wllama/wllama, n_threads 1, CPU) on
// GGUF files converted from the same checkpoint (gguf.mjs): BF16 (the
// matrices as stored: what convert_hf_to_gguf.py's default --outtype auto
// writes for BF16 tensors), F32 (the same values widened, llama.cpp's fastest
// exact form in WebAssembly) and F16 (rounded, --outtype f16); its
// prompt-processing time (llama-server's timings.prompt_ms) for the same 128
// token ids, no prompt cache: wllama takes a text, so the prompt is 128 ASCII
// characters without spaces, one byte piece each in the GGUF's vocabulary
// (id 4 + byte), which are attnplay's ids. Both runtimes' most likely next
// tokens are compared, as a check that they computed the same model.
// Also load times and attnplay's WASM memory (its peak: the memory never
// shrinks) after the attention view's runs, and after the top-5 everywhere.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { openBrowser } from '../browser/browser.mjs';
import { writeLlamaCheckpoint } from './checkpoint.mjs';
import { writeGemma3Gguf } from './gguf.mjs';

export const GEMMA3_270M = { model_type: 'gemma3_text', hidden_size: 640, intermediate_size: 2048, num_hidden_layers: 18,
  num_attention_heads: 4, num_key_value_heads: 1, head_dim: 256, vocab_size: 262144, max_position_embeddings: 32768,
  rope_theta: 1000000, rope_local_base_freq: 10000, rms_norm_eps: 1e-6, query_pre_attn_scalar: 256, sliding_window: 512,
  sliding_window_pattern: 6, hidden_activation: 'gelu_pytorch_tanh', tie_word_embeddings: true,
  final_logit_softcapping: null, attn_logit_softcapping: null };
const TOKENS = 128;
// The prompt: 128 ASCII characters, no white space (SentencePiece would write a space as ▁, three byte pieces).
const PROMPT = 'Itisatruthuniversallyacknowledged,thatasinglemaninpossessionofagoodfortune,mustbeinwantofawife.' +
  'Howeverlittleknownthefeelingsorviewsofsuchamanmaybe';
const REPEATS = 3;
const WLLAMA = fileURLToPath(new URL('../../node_modules/@wllama/wllama/esm/', import.meta.url));
const WLLAMA_VERSION = JSON.parse(readFileSync(new URL('../package.json', `file://${WLLAMA}`), 'utf8')).version;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${Math.round(x).toLocaleString('en-US')} ms`;
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

// In the page: attnplay's runs. -> { loadMs, runs: { attention, lastTop5, allTop5 } (ms lists),
// memory: { view (after attention and lastTop5), all }, topLast }
async function attnplayInPage({ ids, repeats }) {
  const { createEngine } = await import('/engine/engine.js');
  const engine = await createEngine({ threads: false });
  let started = performance.now();
  const model = await engine.loadModel('/model/');
  const loadMs = performance.now() - started;
  const runs = { attention: [], lastTop5: [], allTop5: [] };
  const options = { attention: {}, lastTop5: { topK: 5, predictionPositions: [-1] }, allTop5: { topK: 5 } };
  let topLast = null;
  const memory = {};
  for (const [name, opts] of Object.entries(options)) {
    if (name === 'allTop5') memory.view = engine.memoryBytes();
    model.forward(ids, opts);  // warm-up
    for (let i = 0; i < repeats; i += 1) {
      started = performance.now();
      const r = model.forward(ids, opts);
      runs[name].push(performance.now() - started);
      if (name === 'lastTop5') topLast = Array.from(r.topK.ids);
    }
  }
  memory.all = engine.memoryBytes();
  model.dispose();
  return { loadMs, runs, memory, topLast };
}

// In the page: llama.cpp's prompt processing of `ids` from the GGUF at `url`. -> { loadMs, promptMs: [], top }
async function wllamaInPage({ url, text, tokens, repeats }) {
  const { Wllama } = await import('/wllama/index.js');
  const wllama = new Wllama({ default: '/wllama/wasm/wllama.wasm' }, { suppressNativeLog: true });
  const blob = await (await fetch(url)).blob();
  let started = performance.now();
  await wllama.loadModel([blob], { n_threads: 1, n_ctx: 512, n_batch: 512, n_ubatch: 512, n_gpu_layers: 0 });
  const loadMs = performance.now() - started;
  const promptMs = [];
  let top = null;
  for (let i = 0; i <= repeats; i += 1) {
    const r = await wllama.createCompletion({ prompt: text, max_tokens: 1, temperature: 0, cache_prompt: false, n_probs: 5 });
    if (r.timings.prompt_n !== tokens) throw new Error(`llama.cpp read ${r.timings.prompt_n} tokens, not ${tokens}`);
    if (i > 0) promptMs.push(r.timings.prompt_ms);  // the first is a warm-up
    top = r.choices[0].logprobs.content[0].top_logprobs.map((t) => t.id);
  }
  await wllama.exit();
  return { loadMs, promptMs, top };
}

export const gemma = {
  id: 'gemma',
  title: 'Gemma 3 270M shape, one thread: 128 tokens with every layer\'s attention, beside llama.cpp (@wllama/wllama) on the same weights',
  async run({ log }) {
    const dir = mkdtempSync(join(tmpdir(), 'attnplay-gemma-'));
    try {
      const { bytes } = writeLlamaCheckpoint(dir, GEMMA3_270M);
      const ggufF32 = writeGemma3Gguf(dir, join(dir, 'model-f32.gguf'), 'F32');
      const ggufBf16 = writeGemma3Gguf(dir, join(dir, 'model-bf16.gguf'), 'BF16');
      const ggufF16 = writeGemma3Gguf(dir, join(dir, 'model-f16.gguf'), 'F16');
      log(`checkpoint ${mib(bytes)}, GGUF F32 ${mib(ggufF32)}, BF16 ${mib(ggufBf16)}, F16 ${mib(ggufF16)}`);
      const session = await openBrowser({
        mounts: { '/model/': dir, '/wllama/': WLLAMA },
        headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
      });
      const text = PROMPT.slice(0, TOKENS);
      const ids = Array.from(text, (ch) => 4 + ch.charCodeAt(0));  // the GGUF's byte pieces <0xNN> (gguf.mjs)
      try {
        const page = await session.browser.newPage();
        await page.goto(`${session.url}index.html`);
        const ours = await page.evaluate(attnplayInPage, { ids, repeats: REPEATS });
        log(`attnplay: load ${ms(ours.loadMs)}, attention ${ms(median(ours.runs.attention))}, + last top-5 ${ms(median(ours.runs.lastTop5))}, top-5 everywhere ${ms(median(ours.runs.allTop5))}, memory ${mib(ours.memory.view)} / ${mib(ours.memory.all)}`);
        await page.close();
        const theirs = {};
        for (const [name, file] of [['F32', 'model-f32.gguf'], ['BF16', 'model-bf16.gguf'], ['F16', 'model-f16.gguf']]) {
          const tab = await session.browser.newPage();
          await tab.goto(`${session.url}index.html`);
          theirs[name] = await tab.evaluate(wllamaInPage, { url: `/model/${file}`, text, tokens: TOKENS, repeats: REPEATS });
          log(`llama.cpp ${name}: load ${ms(theirs[name].loadMs)}, prompt ${ms(median(theirs[name].promptMs))}, next ${theirs[name].top.slice(0, 3)} (attnplay ${ours.topLast.slice(0, 3)})`);
          await tab.close();
        }
        const attention = median(ours.runs.attention);
        const [f32, bf16, f16] = [median(theirs.F32.promptMs), median(theirs.BF16.promptMs), median(theirs.F16.promptMs)];
        return {
          markdown: [
            `Command: \`node tests/bench/run.mjs gemma\` (headless Chromium, one page served with COOP/COEP; attnplay's single-threaded WASM build; @wllama/wllama ${WLLAMA_VERSION} with n_threads 1 and no GPU layers; median of ${REPEATS} runs after a warm-up; ${TOKENS} token ids; random BF16 weights of a Gemma-3-270M-shaped model, ${mib(bytes)}).`,
            '',
            '| | attnplay (WASM, 1 thread) | llama.cpp F32 GGUF | llama.cpp BF16 GGUF | llama.cpp F16 GGUF |',
            '|---|---:|---:|---:|---:|',
            `| 128 tokens, every layer's attention, no logits | **${ms(attention)}** | ${ms(f32)} (prompt, no attention out) | ${ms(bf16)} | ${ms(f16)} |`,
            `| + top-5 after the last token (the page's predictions) | ${ms(median(ours.runs.lastTop5))} | | | |`,
            `| top-5 at every position (the 262k-wide output layer 128 times) | ${ms(median(ours.runs.allTop5))} | | | |`,
            `| load (attnplay: from the folder URL, the fetch included; llama.cpp: from a Blob already read) | ${ms(ours.loadMs)} | ${ms(theirs.F32.loadMs)} | ${ms(theirs.BF16.loadMs)} | ${ms(theirs.F16.loadMs)} |`,
            `| WASM memory: after the attention view's runs / after the top-5 everywhere | ${mib(ours.memory.view)} / ${mib(ours.memory.all)} | | | |`,
            '',
            `With every layer's attention, attnplay is ${(bf16 / attention).toFixed(1)}× faster than llama.cpp on the same BF16 weights ` +
              '(the GGUF convert_hf_to_gguf.py writes from them by default), ' +
              `${(f16 / attention).toFixed(1)}× on them rounded to F16 and ` +
              `${(f32 / attention).toFixed(1)}× on them widened to F32 (llama.cpp's fastest form in WebAssembly, twice the bytes). ` +
              'Targets (issue 28): ≤ 2.5 s, ≥ 5× faster than llama.cpp on a GGUF of the same weights, ≤ 1.2 GB. ' +
              `The most likely next tokens after the prompt, the check that both ran the same model: attnplay ${ours.topLast.slice(0, 3).join(', ')}; ` +
              `llama.cpp F32 ${theirs.F32.top.slice(0, 3).join(', ')}, BF16 ${theirs.BF16.top.slice(0, 3).join(', ')}, ` +
              `F16 (rounded weights) ${theirs.F16.top.slice(0, 3).join(', ')}.`,
          ].join('\n'),
          failed: attention > 2500 || bf16 / attention < 5 || ours.memory.view > 1.2e9 ||
            ours.topLast[0] !== theirs.F32.top[0] || ours.topLast[0] !== theirs.BF16.top[0],
        };
      } finally {
        await session.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
