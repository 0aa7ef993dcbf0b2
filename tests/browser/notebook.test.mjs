// The notebook recipe (web/README.md, "Notebooks"): tests/notebook/attention.ipynb is
// executed with Debian's `python3 -m nbconvert --execute --to html` (the
// module that python3-nbconvert installs; the `jupyter` command is not part of
// it, so the test does not use that); the HTML it
// writes is opened in Chromium from file:// with the network off, and the
// widget inside the recipe's <iframe srcdoc> must have drawn exactly the
// weights the notebook computed. Two sources: attention written by our CLI
// (always), and a small random PyTorch model (when python3-torch is
// installed; CI does not install it, so there that test is reported skipped).
// The recipe cell of the notebook is web/README.md's, verbatim.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';

import { requireProgram } from '../programs.mjs';
import { assertHeadLines, headViewLines, openBrowser, resultsDir, srcdocFrame } from './browser.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const notebook = `${root}tests/notebook/attention.ipynb`;
const tmp = mkdtempSync(join(tmpdir(), 'attnplay-notebook-'));
// Debian's python3 first: its kernel has ipykernel (and maybe torch); another python3 on PATH may not.
const env = { ...process.env, PATH: `/usr/bin:/bin:${process.env.PATH}`, PYDEVD_DISABLE_FILE_VALIDATION: '1', ATTNPLAY_PAGE: `${root}dist/attention-page.html` };
const hasTorch = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { env }).status === 0;
let session;

before(async () => {
  requireProgram('python3:nbconvert', 'the notebook test');
  requireProgram('python3:ipykernel_launcher', 'the notebook test');
  session = await openBrowser();
});
after(async () => {
  await session?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** Executes the notebook with `source`; returns { html: path, reference: the data it drew }. */
function execute(source, extraEnv = {}) {
  const out = join(tmp, source);
  const reference = join(tmp, `${source}-reference.json`);
  const r = spawnSync('/usr/bin/python3', ['-m', 'nbconvert', '--execute', '--to', 'html', '--output-dir', out, notebook], {
    env: { ...env, ATTNPLAY_SOURCE: source, ATTNPLAY_REFERENCE: reference, ...extraEnv }, encoding: 'utf8', timeout: 300000,
  });
  assert.equal(r.status, 0, `python3 -m nbconvert failed:\n${r.stderr}`);
  return { html: join(out, 'attention.html'), reference: JSON.parse(readFileSync(reference, 'utf8')) };
}

/** The widget inside the notebook's iframe, offline: its drawn lines for every head of layer `layer`. */
async function drawnLines(htmlPath, layer, screenshot) {
  const context = await session.browser.newContext({ offline: true });
  const page = await context.newPage();
  await page.goto(pathToFileURL(htmlPath).href);
  await page.locator('iframe').scrollIntoViewIfNeeded(); // the widget starts once it is near the viewport
  const frame = await srcdocFrame(page); // the recipe's iframe, in the HTML nbconvert wrote
  await frame.waitForFunction(() => document.querySelector('attention-view')?.dataset.state === 'ready', null, { timeout: 30000 });
  const drawn = await frame.evaluate((l) => {
    const w = document.querySelector('attention-view');
    w.layer = l;
    return { lines: w.viewElement.lineModel(), tokens: w.result.tokens.map((t) => t.display), state: w.dataset.state, status: w.shadowRoot.querySelector('.status').textContent };
  }, layer);
  await page.screenshot({ path: `${resultsDir}${screenshot}` });
  await context.close();
  return drawn;
}

/** Every line drawn against the notebook's weights, by the head view's rule (headViewLines). */
function assertLines(lines, attentions, layer) {
  const heads = Array.from({ length: attentions[layer].length }, (_, i) => i);
  const all = Array.from({ length: attentions[layer][0].length }, (_, i) => i);
  assertHeadLines(lines, headViewLines((h, q, k) => Math.fround(attentions[layer][h][q][k]), heads, all, all), 0);
}

test('the notebook\'s recipe cell is web/README.md\'s, verbatim', () => {
  const cell = JSON.parse(readFileSync(notebook, 'utf8')).cells.find((c) => c.cell_type === 'code' && c.source.join('').includes('def show_attention')).source.join('');
  assert.ok(readFileSync(`${root}web/README.md`, 'utf8').includes(cell), 'web/README.md shows the tested recipe');
});

test('nbconvert --execute: attention written by our CLI, drawn inline by the widget', async () => {
  const cliJson = join(tmp, 'attention.json');
  const text = 'It is a truth universally acknowledged, that a single man';
  const r = spawnSync(`${root}build/native/attnplay`, ['attention', '--model', `${root}models/austen-gpt`, '--text', text, '--out', cliJson], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const { html } = execute('cli', { ATTNPLAY_CLI_JSON: cliJson });
  const want = JSON.parse(readFileSync(cliJson, 'utf8'));
  const drawn = await drawnLines(html, 2, 'notebook-cli.png');
  assert.equal(drawn.status, '');
  assert.deepEqual(drawn.tokens, want.tokens.map((t) => t.token));
  assertLines(drawn.lines, want.attentions, 2);
});

test('nbconvert --execute: a PyTorch model\'s per-layer [1, heads, T, T] attention, drawn inline by the widget', { skip: !hasTorch && 'PyTorch (python3-torch) is not installed here' }, async () => {
  const { html, reference } = execute('torch');
  assert.equal(reference.attentions.length, 3, 'three layers');
  assert.equal(reference.attentions[0].length, 1, 'batch of one, as PyTorch gives it');
  const perLayer = reference.attentions.map((layer) => layer[0]); // [L][H][T][T]
  const drawn = await drawnLines(html, 1, 'notebook-torch.png');
  assert.equal(drawn.status, '', 'rows sum to 1: no warning');
  assert.deepEqual(drawn.tokens, reference.tokens);
  assertLines(drawn.lines, perLayer, 1);
});
