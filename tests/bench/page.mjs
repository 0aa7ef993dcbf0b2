// Page benchmark (a `npm run bench` section, not a test), in headless Chromium
// against dist/ served locally: time from navigation to the first attention
// drawn with the default model, and hover-redraw times of the head view and
// the matrix view at 512 tokens with 12 heads on (a random GPT-2 with 2
// layers x 12 heads and one token per byte, written by checkpoint.mjs).
// "Redraw" is the work a pointer move triggers (measured in the page around
// the synchronous event dispatch); a 60 Hz frame is 16.7 ms.
// Then, with the default model at its 256 positions, how long the page stops
// answering: the longest gap between animation frames while a 5,000-word
// paste (from ../shared/corpus) is read, run and drawn, and the work of each
// layer change (the synchronous redraw after the Layer menu changes, and the
// gap to the next frame).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { openBrowser } from '../browser/browser.mjs';
import { writeByteTokenizer, writeGpt2Checkpoint } from './checkpoint.mjs';

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

// Starts recording the gaps between animation frames in the page.
const startFrameGaps = (page) => page.evaluate(() => {
  window.__gaps = [];
  let last = performance.now();
  const tick = (now) => {
    window.__gaps.push(now - last);
    last = now;
    if (window.__gaps) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
});
const stopFrameGaps = (page) => page.evaluate(() => {
  const gaps = window.__gaps;
  window.__gaps = null;
  return gaps;
});

// A 5,000-word paste and layer changes at 256 tokens with the default model.
async function pasteAndLayers(tab, url) {
  const corpusPath = new URL('../../../shared/corpus/austen-paragraphs.txt', import.meta.url);
  if (!existsSync(corpusPath)) return ['- ../shared/corpus/austen-paragraphs.txt is missing: paste and layer changes not measured.'];
  const words = readFileSync(corpusPath, 'utf8').split(/\s+/).slice(1000, 6000).join(' ');
  await tab.goto(url);
  await tab.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 120000 });
  const pastes = [];
  for (let i = 0; i < 3; i += 1) {
    const text = i % 2 === 0 ? words : words.slice(words.indexOf(' ') + 1); // a different text each time
    const before = await tab.evaluate(() => Number(document.body.dataset.run));
    await startFrameGaps(tab);
    await tab.fill('#text-a', text);
    await tab.waitForFunction((n) => Number(document.body.dataset.run) > n, before, { timeout: 120000 });
    await tab.waitForTimeout(300);
    pastes.push(Math.max(...await stopFrameGaps(tab)));
  }
  const tokens = await tab.evaluate(() => /· (\d+) tokens/.exec(document.querySelector('#engine-status').textContent)[1]);
  const layers = await tab.evaluate(async () => {
    const select = document.querySelector('view-controls select[name="layer"]');
    const count = select.options.length;
    const times = [];
    for (let i = 1; i <= 12; i += 1) {
      const layer = i % count;
      const start = performance.now();
      select.value = String(layer);
      select.dispatchEvent(new Event('change', { bubbles: true }));
      const redraw = performance.now() - start;
      await new Promise(requestAnimationFrame);
      const frame = performance.now() - start;
      if (!document.querySelector('head-view canvas').getAttribute('aria-label').includes(`layer ${layer + 1}:`)) throw new Error(`layer ${layer + 1} not drawn`);
      times.push({ redraw, frame });
    }
    return times;
  });
  const redraw = stats(layers.map((t) => t.redraw));
  const frame = stats(layers.map((t) => t.frame));
  return [
    `- A 5,000-word paste (${words.length} characters; the default model reads its first ${tokens} tokens), head view, 1280 × 900: longest gap between frames while it is read, run and drawn, over 3 pastes: **${Math.max(...pastes).toFixed(0)} ms** (each: ${pastes.map((p) => p.toFixed(0)).join(', ')} ms).`,
    `- Layer changes at ${tokens} tokens (head view, all heads; 12 changes): redraw median ${redraw.median.toFixed(1)} ms, max **${redraw.max.toFixed(1)} ms**; to the next frame median ${frame.median.toFixed(1)} ms, max **${frame.max.toFixed(1)} ms**.`,
  ];
}

export const page = {
  id: 'page',
  title: 'Page: first attention, hover redraw at 512 tokens, long paste and layer changes at 256',
  async run({ log }) {
    const dir = mkdtempSync(join(tmpdir(), 'attnplay-page-bench-'));
    writeGpt2Checkpoint(dir, { n_layer: 2, n_head: 12, n_embd: 192, n_positions: TOKENS, vocab_size: 257 });
    writeByteTokenizer(dir);
    const session = await openBrowser({ mounts: { '/bench-model/': dir } });
    const { browser, url } = session;
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
      const responsiveness = shipped.length > 0 ? await pasteAndLayers(tab, url) : [];
      for (const line of responsiveness) log(line);

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
          ...responsiveness,
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
      await session.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
