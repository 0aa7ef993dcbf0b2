// Rollout, flow and logit-lens benchmark (a `npm run bench` section, not a
// test), in one process: attention rollout of a GPT-2-small-shaped stack
// ([12, 12, T, T], causal, random rows) by web/attention/rollout.js (what the page did
// on its main thread) against the C++ core in WASM (Engine.rollout, what the
// engine worker does now), in Node and in headless Chromium (there: the time
// the page's thread is blocked before, rollout.js, and after, handing the
// attention to the worker, EngineClient.rollout, and the wait for the map);
// attention flow at the largest
// size the page allows in four layers; and the logit lens's cost on top of a
// forward pass (the shipped austen-gpt at 256 tokens, a GPT-2-small-shaped
// model at 128 tokens), single-threaded WASM. The answers are compared before timing.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

import { startServer } from '../../scripts/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../browser/browser.mjs';
import { createEngine } from '../../dist/engine/engine.js';
import { rolledOut } from '../../web/attention/rollout.js';
import { randomAttention } from '../node/reference.mjs';
import { writeGpt2Checkpoint } from './checkpoint.mjs';
import { GPT2_SMALL } from './forward.mjs';

const REPEATS = 3;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const timed = (fn) => {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
};
const medianMs = (fn) => median(Array.from({ length: REPEATS }, () => timed(fn).ms));

function assertSame(js, wasm, what) {
  let worst = 0;
  for (let i = 0; i < js.length; i += 1) worst = Math.max(worst, Math.abs(js[i] - wasm[i]));
  if (!(worst < 1e-9)) throw new Error(`${what}: rollout.js and the core differ by ${worst}`);
}

// In Chromium, on the served page's modules: { js (rollout.js on the page's thread), post (the page's
// thread handing the attention to the worker), total (until the map arrives) } in ms, medians.
async function pageRollout(t) {
  const { server, url } = await startServer({ port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.goto(`${url}embed/`);
    return await page.evaluate(async ({ t, repeats }) => {
      const { getEngineClient } = await import('/engine/engine-client.js');
      const { rolledOut } = await import('/attention/rollout.js');
      const client = getEngineClient();
      await client.info(); // the worker and its WASM are ready
      const shape = [12, 12, t, t];
      const data = new Float32Array(12 * 12 * t * t);
      for (let row = 0; row < 12 * 12 * t; row += 1) { // causal rows of positive weights summing to 1
        const q = row % t;
        let sum = 0;
        for (let j = 0; j <= q; j += 1) sum += (data[row * t + j] = Math.random());
        for (let j = 0; j <= q; j += 1) data[row * t + j] /= sum;
      }
      const attentions = { data, shape };
      const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const js = [];
      const post = [];
      const total = [];
      for (let r = 0; r < repeats; r += 1) {
        let start = performance.now();
        rolledOut(attentions, 'rollout');
        js.push(performance.now() - start);
        start = performance.now();
        const answer = client.rollout(attentions, 'rollout');
        post.push(performance.now() - start);
        await answer;
        total.push(performance.now() - start);
      }
      return { js: median(js), post: median(post), total: median(total) };
    }, { t, repeats: REPEATS });
  } finally {
    await browser.close();
    await new Promise((resolve) => server.close(resolve));
  }
}

async function lensRows(engine) {
  const rows = [];
  const shippedDir = new URL('../../models/austen-gpt/', import.meta.url);
  if (existsSync(shippedDir)) {
    const model = await engine.loadModel({
      config: readFileSync(new URL('config.json', shippedDir), 'utf8'),
      weights: readFileSync(new URL('model.safetensors', shippedDir)),
      tokenizer: readFileSync(new URL('tokenizer.json', shippedDir), 'utf8'),
    });
    const ids = Array.from({ length: 256 }, (_, i) => (i * 37) % model.config.vocabSize);
    rows.push({ what: `austen-gpt (${model.config.layers} layers, vocabulary ${model.config.vocabSize}), 256 tokens`, plain: medianMs(() => model.forward(ids)), lens: medianMs(() => model.forward(ids, { lens: 5 })) });
    model.dispose();
  }
  const dir = mkdtempSync(join(tmpdir(), 'attnplay-lens-bench-'));
  try {
    writeGpt2Checkpoint(dir, GPT2_SMALL);
    const model = await engine.loadModel({ config: readFileSync(join(dir, 'config.json'), 'utf8'), weights: readFileSync(join(dir, 'model.safetensors')) });
    const ids = Array.from({ length: 128 }, (_, i) => (i * 7919) % GPT2_SMALL.vocab_size);
    rows.push({ what: 'GPT-2-small shape (12 layers, vocabulary 50257), 128 tokens', plain: medianMs(() => model.forward(ids)), lens: medianMs(() => model.forward(ids, { lens: 5 })) });
    model.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

export const analysis = {
  id: 'analysis',
  title: 'Rollout, flow and logit lens: rollout.js on the main thread vs the C++ core in the worker',
  async run({ log }) {
    const engine = await createEngine({ threads: false });
    const rollout = [];
    for (const [layers, heads, t, method] of [[12, 12, 256, 'rollout'], [12, 12, 512, 'rollout'], [4, 4, 45, 'flow']]) {
      const shape = [layers, heads, t, t];
      const attentions = { data: randomAttention(shape, 7, true), shape };
      assertSame(rolledOut(attentions, method).data, engine.rollout(attentions, method).data, `${method} ${shape}`);
      const row = { shape, method, js: medianMs(() => rolledOut(attentions, method)), wasm: medianMs(() => engine.rollout(attentions, method)), clone: medianMs(() => structuredClone(attentions)) };
      log(`${method} [${shape}]: rollout.js ${row.js.toFixed(0)} ms, core ${row.wasm.toFixed(0)} ms, copy ${row.clone.toFixed(1)} ms`);
      rollout.push(row);
    }
    const page = [];
    for (const t of [256, 512]) {
      const row = { t, ...(await pageRollout(t)) };
      log(`page rollout [12, 12, ${t}, ${t}]: main thread ${row.js.toFixed(0)} ms before, ${row.post.toFixed(1)} ms after (map in ${row.total.toFixed(0)} ms)`);
      page.push(row);
    }
    const lens = await lensRows(engine);
    lens.forEach((row) => log(`lens ${row.what}: ${row.plain.toFixed(1)} → ${row.lens.toFixed(1)} ms`));
    const markdown = [
      `Median of ${REPEATS}, single-threaded. In Node: rollout.js against the C++ core in WASM on the same random causal attention (answers equal within 1e-9), and structuredClone of the attention (what handing it to a worker copies).`,
      '',
      '| map | attention [L, H, T, T] | rollout.js, ms | C++ core in WASM, ms | structuredClone, ms |',
      '|---|---|---:|---:|---:|',
      ...rollout.map((r) => `| ${r.method} | [${r.shape.join(', ')}] | ${r.js.toFixed(0)} | ${r.wasm.toFixed(0)} | ${r.clone.toFixed(1)} |`),
      '',
      'In headless Chromium, the page\'s thread: before, the rollout view ran rollout.js on it (the page froze that long); now it hands the attention to the engine worker (EngineClient.rollout) and stays responsive until the map arrives.',
      '',
      '| rollout of [12, 12, T, T] | page thread blocked before (rollout.js), ms | page thread blocked now (hand-off), ms | map arrives after, ms |',
      '|---|---:|---:|---:|',
      ...page.map((r) => `| T = ${r.t} | ${r.js.toFixed(0)} | ${r.post.toFixed(1)} | ${r.total.toFixed(0)} |`),
      '',
      '| logit lens (top-5 of every layer × position) | forward, ms | forward + lens, ms |',
      '|---|---:|---:|',
      ...lens.map((r) => `| ${r.what} | ${r.plain.toFixed(1)} | ${r.lens.toFixed(1)} |`),
    ].join('\n');
    return { markdown };
  },
};
