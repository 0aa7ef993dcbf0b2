// Notebook outputs benchmark (a `npm run bench` section, not a test): what
// the Python package (python/) writes into a notebook, and how long it takes
// to open. For GPT-2 small's shape (12 layers × 12 heads) at 64, 128 and 256
// tokens of random causal attention, head_view's output is measured:
// - its bytes, beside the bytes bertviz writes for the same attention (its
//   json.dumps(attention.tolist()), the attention alone: bertviz's own script
//   and require.js tags add a little to that, and bertviz itself cannot be
//   installed here);
// - the time from opening it in headless Chromium (an HTML file holding the
//   output, from file://, offline) until the widget has drawn (median of 3).
// The playground cell with the shipped austen-gpt: bytes, and the time until
// its first attention is drawn.
// Not here: the tests of what is drawn (tests/browser/python-package.test.mjs).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

import { CHROMIUM, CHROMIUM_ARGS } from '../browser/browser.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TOKENS = [64, 128, 256];
const OPENS = 3;

// Writes the outputs: for each token count, head_view's .data in an HTML file; the playground cell; their sizes as JSON.
const WRITE = `
import json, sys
import numpy as np
import attnplay
out, counts = sys.argv[1], [int(n) for n in sys.argv[2].split(',')]
rng = np.random.default_rng(0)
sizes = {}
for n in counts:
    x = np.tril(rng.random((12, 12, n, n)) ** 4)
    x = (x / x.sum(-1, keepdims=True)).astype(np.float32)
    view = attnplay.head_view(tuple(layer[None] for layer in x), [f'Ġw{i}' for i in range(n)], html_action='return')
    with open(f'{out}/head-{n}.html', 'w', encoding='utf-8') as file:
        file.write('<!doctype html><meta charset="utf-8">' + view.data)
    sizes[n] = {'attnplay': len(view.data), 'encoding': view.attention_data['attentions']['dtype'], 'bertviz': len(json.dumps(x.tolist()))}
cell = attnplay.playground('austen-gpt', text='It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.', html_action='return')
with open(f'{out}/playground.html', 'w', encoding='utf-8') as file:
    file.write('<!doctype html><meta charset="utf-8">' + cell.data)
sizes['playground'] = len(cell.data)
json.dump(sizes, open(f'{out}/sizes.json', 'w'))
`;

/** Milliseconds from navigating to `file` until its frame's widget is ready (the median of OPENS fresh pages). */
async function openMs(browser, file) {
  const times = [];
  for (let i = 0; i < OPENS; i += 1) {
    const context = await browser.newContext({ offline: true });
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(pathToFileURL(file).href);
    // Found by its URL: an element handle of the <iframe> would make Playwright preview its (megabytes of) srcdoc.
    const frame = page.frames().find((f) => f.url() === 'about:srcdoc');
    await frame.waitForFunction(() => document.querySelector('attention-view')?.dataset.state === 'ready', null, { timeout: 120000, polling: 20 });
    times.push(performance.now() - started);
    await context.close();
  }
  return times.sort((a, b) => a - b)[Math.floor(OPENS / 2)];
}

const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export const notebook = {
  id: 'notebook',
  title: 'Notebook outputs (the Python package): bytes beside bertviz\'s, and the time to open',
  async run({ log }) {
    const out = mkdtempSync(join(tmpdir(), 'attnplay-notebook-bench-'));
    try {
      const written = spawnSync('/usr/bin/python3', ['-c', WRITE, out, TOKENS.join(',')], { env: { ...process.env, PYTHONPATH: `${root}python` }, encoding: 'utf8' });
      if (written.status !== 0) return { markdown: `- The package could not write the outputs:\n\n\`\`\`\n${written.stderr.slice(-2000)}\n\`\`\``, failed: true };
      const sizes = JSON.parse(readFileSync(join(out, 'sizes.json'), 'utf8'));
      const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      const rows = [];
      try {
        for (const n of TOKENS) {
          const ms = await openMs(browser, join(out, `head-${n}.html`));
          const { attnplay, bertviz, encoding } = sizes[n];
          log(`head_view, ${n} tokens: ${mib(attnplay)} (${encoding}), bertviz ${mib(bertviz)}, ${ms.toFixed(0)} ms`);
          rows.push(`| head_view, GPT-2 small's shape, ${n} tokens | ${encoding} | ${mib(attnplay)} | ${mib(bertviz)} | ${(bertviz / attnplay).toFixed(1)}× | ${ms.toFixed(0)} ms |`);
        }
        const ms = await openMs(browser, join(out, 'playground.html'));
        log(`playground cell (austen-gpt inside): ${mib(sizes.playground)}, ${ms.toFixed(0)} ms`);
        rows.push(`| playground("austen-gpt"): the model, engine and WASM inside, its first attention | – | ${mib(sizes.playground)} | – | – | ${ms.toFixed(0)} ms |`);
      } finally {
        await browser.close();
      }
      return {
        markdown: [
          'An output as the notebook holds it (an HTML file with the `<iframe srcdoc>`), opened from file:// offline in headless Chromium; time from navigation until the widget has drawn, median of 3. bertviz: the bytes of `json.dumps(attention.tolist())` for the same attention, which bertviz writes into its output (bertviz cannot be installed on this machine to time it).',
          '',
          '| output | encoding | attnplay | bertviz (attention alone) | smaller by | open, until drawn |',
          '|---|---|---|---|---|---|',
          ...rows,
        ].join('\n'),
      };
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  },
};
