// Page benchmark (a `npm run bench` section, not a test), in headless Chromium
// against dist/ served locally: time from navigation to the first attention
// drawn with the default model, and hover-redraw times of the head view and
// the matrix view at 512 tokens with 12 heads on (a random GPT-2 with 2
// layers x 12 heads and one token per byte, written by checkpoint.mjs).
// "Redraw" is the work a pointer move triggers (measured in the page around
// the synchronous event dispatch); a 60 Hz frame is 16.7 ms.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

import { startServer } from '../../scripts/serve.mjs';
import { writeByteTokenizer, writeGpt2Checkpoint } from './checkpoint.mjs';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TOKENS = 512;
const MOVES = 120;

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { median: at(0.5), p95: at(0.95), max: s[s.length - 1] };
};

// Pointer moves over a view's canvas, each followed by a frame; returns the
// dispatch (redraw) times in ms. rowHeight: the distance between targets.
async function hoverTimes(page, selector, rowHeight) {
  return page.evaluate(async ({ selector, moves, rowHeight }) => {
    const canvas = document.querySelector(selector);
    const rect = canvas.getBoundingClientRect();
    const times = [];
    for (let i = 0; i < moves; i += 1) {
      const x = rect.left + Math.min(rect.width - 2, 60 + (i % 7) * 10);
      const y = rect.top + Math.min(rect.height - 2, 10 + ((i * rowHeight) % (rect.height - 20)));
      const start = performance.now();
      canvas.dispatchEvent(new PointerEvent('pointermove', { clientX: x, clientY: y, bubbles: true, pointerType: 'mouse' }));
      times.push(performance.now() - start);
      await new Promise(requestAnimationFrame);
    }
    return times;
  }, { selector, moves: MOVES, rowHeight });
}

export const page = {
  id: 'page',
  title: 'Page: first attention, hover redraw at 512 tokens',
  async run({ log }) {
    const dir = mkdtempSync(join(tmpdir(), 'attnplay-page-bench-'));
    writeGpt2Checkpoint(dir, { n_layer: 2, n_head: 12, n_embd: 192, n_positions: TOKENS, vocab_size: 257 });
    writeByteTokenizer(dir);
    const { server, url } = await startServer({ port: 0, mounts: { '/bench-model/': dir } });
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
    try {
      const tab = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const shipped = await (await fetch(`${url}models/index.json`)).json();
      let firstLine = '- No shipped model in dist/ yet: time to the first attention not measured.';
      if (shipped.length > 0) {
        await tab.goto(url);
        await tab.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 120000 });
        const firstDraw = await tab.evaluate(() => performance.now());
        const defaultModel = await tab.evaluate(() => document.querySelector('#engine-status').textContent.split(' · ')[0]);
        firstLine = `- Navigation to the first attention drawn with the default model (${defaultModel}): **${firstDraw.toFixed(0)} ms**.`;
        log(`first attention drawn with ${defaultModel} after ${firstDraw.toFixed(0)} ms`);
      }

      await tab.goto(`${url}#model=__own__&text=${'a'.repeat(8)}`);
      await tab.waitForSelector('#engine-status[data-state="ready"]');
      await tab.fill('#model-url', `${url}bench-model/`);
      await tab.click('#model-url-form button');
      await tab.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 120000 });
      const text = 'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. '.repeat(6).slice(0, TOKENS);
      await tab.fill('#text-a', text);
      await tab.waitForFunction((n) => document.querySelector('#engine-status').textContent.includes(`${n} tokens`), TOKENS, { timeout: 120000 });
      const forward = await tab.evaluate(() => /forward ([\d.]+) ms/.exec(document.querySelector('#engine-status').textContent)[1]);
      const head = stats(await hoverTimes(tab, 'head-view canvas', 14));
      await tab.click('[role=tab][data-view="matrix"]');
      const matrix = stats(await hoverTimes(tab, 'matrix-view canvas', 5));
      log(`head view hover: median ${head.median.toFixed(1)} ms, matrix view hover: median ${matrix.median.toFixed(1)} ms`);
      const row = (name, s) => `| ${name} | ${s.median.toFixed(1)} | ${s.p95.toFixed(1)} | ${s.max.toFixed(1)} |`;
      return {
        markdown: [
          `Command: \`node tests/bench/run.mjs page\` (headless Chromium, software rendering, ${MOVES} pointer moves per view).`,
          '',
          firstLine,
          `- Forward pass of the 512-token text in the page's worker (2 layers × 12 heads, width 192): ${forward} ms.`,
          '',
          `| hover redraw at ${TOKENS} tokens, 12 heads on | median ms | p95 ms | max ms |`,
          '|---|---:|---:|---:|',
          row('head view (all 12 heads, lines of the hovered token)', head),
          row('matrix view (mean of 12 heads)', matrix),
          '',
          'A 60 Hz frame is 16.7 ms.',
        ].join('\n'),
      };
    } finally {
      await browser.close();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
