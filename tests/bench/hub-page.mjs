// Hub-model page benchmark (a `npm run bench` section, not a test), in
// headless Chromium against dist/ and the local imitation of the hub
// (tests/hub/fake-hub.mjs, on this machine, so "download" is a loopback
// transfer): from submitting a model id to its first attention drawn, for a
// 124M-parameter GPT-2-shaped model (F16) and a SmolLM2-135M-shaped one
// (BF16), random weights written by checkpoint.mjs, a byte-level tokenizer
// (one token per byte) whose vocabulary is the model's.
// "download included": a fresh browser profile (empty Cache Storage);
// "download excluded": the page reloaded, the files then come from Cache
// Storage (read from disk, no request reaches the hub). Peak WASM memory:
// the worker's WASM memory after the first run (it never shrinks). One
// thread (the page is not cross-origin isolated). Target (issue 15): under
// 2 s once the bytes have arrived.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { startServer } from '../../scripts/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../browser/browser.mjs';
import { startFakeHub } from '../hub/fake-hub.mjs';
import { writeByteTokenizer, writeGpt2Checkpoint, writeLlamaCheckpoint } from './checkpoint.mjs';
import { GPT2_SMALL } from './forward.mjs';
import { SMOLLM2 } from './llama.mjs';

const REPEATS = 3;
const MODELS = [
  { id: 'bench/gpt2-124m-f16', title: 'GPT-2 small shape (124M, F16)', vocab: GPT2_SMALL.vocab_size, write: (dir) => writeGpt2Checkpoint(dir, GPT2_SMALL) },
  { id: 'bench/smollm2-135m-bf16', title: 'SmolLM2-135M shape (135M, BF16)', vocab: SMOLLM2.vocab_size, write: (dir) => writeLlamaCheckpoint(dir, SMOLLM2).bytes },
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Opens the page (default model first), then submits `id` and times the wait for its first attention.
async function timeOpen(page, url, id) {
  await page.goto('about:blank'); // a new document each time (the link alone would only change the hash)
  await page.goto(url);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 120000 });
  await page.selectOption('#model-select', '__hub__');
  await page.fill('#hub-id', id);
  const runs = await page.evaluate(() => Number(document.body.dataset.run));
  const started = await page.evaluate(() => performance.now());
  await page.click('#hub-form button');
  await page.waitForFunction((n) => Number(document.body.dataset.run) > n, runs, { timeout: 600000, polling: 'raf' });
  const ms = (await page.evaluate(() => performance.now())) - started;
  const info = await page.evaluate(async () => (await import('./engine/engine-client.js')).getEngineClient().info());
  // The worker's forward pass (top-5 predictions at every position included), from the status line.
  const forward = Number(/forward ([\d.]+) ms/.exec(await page.textContent('#engine-status'))?.[1]);
  const tokens = Number(/· (\d+) tokens/.exec(await page.textContent('#engine-status'))?.[1]);
  return { ms, forward, tokens, memory: info.memoryBytes, label: await page.textContent('#load-label') };
}

export const hubPage = {
  id: 'hub-page',
  title: 'Page: a 124M-parameter model by hub id, click to first attention',
  async run({ log }) {
    const dir = mkdtempSync(join(tmpdir(), 'attnplay-hub-bench-'));
    const folders = {};
    const sizes = {};
    for (const model of MODELS) {
      const folder = join(dir, model.id.replace('/', '-'));
      mkdirSync(folder);
      sizes[model.id] = model.write(folder);
      writeByteTokenizer(folder, model.vocab); // every id the model can predict has a name
      folders[model.id] = folder;
    }
    const fake = await startFakeHub({ folders });
    const { server, url } = await startServer({ port: 0 });
    const rows = [];
    try {
      for (const model of MODELS) {
        const included = [];
        const excluded = [];
        const forwards = [];
        let tokens = 0;
        let memory = 0;
        for (let i = 0; i < REPEATS; i += 1) {
          const profile = mkdtempSync(join(tmpdir(), 'attnplay-hub-profile-'));
          const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
          try {
            const page = await context.newPage();
            const link = `${url}#hub=${encodeURIComponent(fake.hub)}`;
            const first = await timeOpen(page, link, model.id);
            const before = fake.requests.length;
            const again = await timeOpen(page, link, model.id);
            if (fake.requests.length !== before || !/nothing downloaded/.test(again.label)) throw new Error(`the reload of ${model.id} was not served from the cache: ${again.label}`);
            included.push(first.ms);
            excluded.push(again.ms);
            forwards.push(again.forward);
            tokens = again.tokens;
            memory = Math.max(memory, first.memory, again.memory);
            log(`${model.id}: download included ${first.ms.toFixed(0)} ms, excluded ${again.ms.toFixed(0)} ms (forward ${again.forward} ms), WASM memory ${(memory / 2 ** 20).toFixed(0)} MiB`);
          } finally {
            await context.close();
            rmSync(profile, { recursive: true, force: true });
          }
        }
        rows.push(`| ${model.title} | ${(sizes[model.id] / 2 ** 20).toFixed(0)} MiB | ${median(included).toFixed(0)} ms (${included.map((x) => x.toFixed(0)).join(', ')}) | ${median(excluded).toFixed(0)} ms (${excluded.map((x) => x.toFixed(0)).join(', ')}) | ${median(forwards).toFixed(0)} ms at ${tokens} tokens | ${(memory / 2 ** 20).toFixed(0)} MiB (${(memory / sizes[model.id]).toFixed(2)}× the weights) | ${median(excluded) < 2000 ? 'yes' : 'no'} |`);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
    return {
      markdown: [
        `From submitting the model id to its first attention drawn (the default text), median of ${REPEATS} fresh browser profiles (each run in brackets); `
        + 'the hub is the local imitation (tests/hub/fake-hub.mjs) on loopback, so "download included" is mostly reading and storing the bytes; '
        + '"excluded": the same page reloaded, the files from Cache Storage. The forward pass is the worker\'s, with the top-5 next tokens at every position '
        + '(the default text is one token per byte with this tokenizer). One thread (no COOP/COEP). Target: under 2 s after the bytes have arrived.',
        '',
        '| model | weights | download included | download excluded (from the cache) | of which the forward pass | peak WASM memory | excluded < 2 s |',
        '|---|---|---|---|---|---|---|',
        ...rows,
      ].join('\n'),
    };
  },
};
