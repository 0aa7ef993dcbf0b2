// The Python package (python/): installed offline into a fresh virtual
// environment (`pip install --no-index`, Debian's python3-venv), then
// - tests/notebook/python-package.ipynb, which calls every function (bertviz's
//   README calls with `from attnplay import ...` as the only change, model
//   outputs replaced by numpy arrays of the same shapes; encoder–decoder
//   inputs; CircuitsVis's calls; a TransformerLens cache's keys; PyTorch
//   float32/float16/bfloat16 tensors when python3-torch is installed), is
//   executed with `python3 -m nbconvert --execute --to html`, and the HTML it
//   writes is opened in Chromium from file:// with the network off: each
//   output's widget must hold the attention the notebook recorded, within the
//   encoding's stated error (float16: 2^-12; 8 bits: the row's largest / 510),
//   and its view must draw exactly the weights it holds (the head view's lines
//   by its rule, the model view's thumbnails, the matrix, the rollout against
//   the independent reference, the neuron view's q, k and softmax); no console
//   error and no request leaves the file; each frame is as tall as its content
//   and follows a JupyterLab-like host's theme;
// - the package without numpy (the venv has none): nested lists, the 8-bit
//   encoding, a sentence pair and save_html's one-file page, drawn the same way.
// Not here: the widget's data mode itself (data-mode.test.mjs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';

import { requireProgram } from '../programs.mjs';
import { assertHeadLines, evaluateJson, headViewLines, openBrowser, resultsDir, srcdocFrame } from './browser.mjs';
import { refRollout } from '../node/rollout-reference.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'attnplay-python-'));
const venv = join(tmp, 'venv');
const venvPython = join(venv, 'bin', 'python');
// Debian's python3 first: its kernel has ipykernel and numpy (and maybe torch).
const env = { ...process.env, PATH: `/usr/bin:/bin:${process.env.PATH}`, PYDEVD_DISABLE_FILE_VALIDATION: '1', PIP_NO_INDEX: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1' };
const FLOAT16_ERROR = 2 ** -12;
const FLOAT16_LIMIT = 2 ** 21;
const hasTorch = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { env }).status === 0;
let session;
let sitePackages;
let notebookShown = null; // what the executed notebook recorded (the nbconvert test)

/** stdout of a finished spawnSync, which must have succeeded. */
function succeeded(r, what) {
  assert.equal(r.status, 0, `${what} failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}
const options = (extraEnv = {}) => ({ env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 300000, maxBuffer: 1 << 26 });
/** Debian's python3 (which has nbconvert, ipykernel and numpy). */
const python3 = (args, extraEnv) => succeeded(spawnSync('/usr/bin/python3', args, options(extraEnv)), `python3 ${args.join(' ')}`);
/** The virtual environment's python (the package installed, no numpy). */
const inVenv = (args) => succeeded(spawnSync(venvPython, args, options()), `venv python ${args.join(' ')}`);

before(async () => {
  requireProgram('python3:venv', 'the Python package test');
  requireProgram('python3:nbconvert', 'the Python package test');
  requireProgram('python3:ipykernel_launcher', 'the Python package test');
  python3(['-m', 'venv', venv]);
  inVenv(['-m', 'pip', 'install', '--no-index', '--no-cache-dir', '--quiet', `${root}python`]);
  sitePackages = inVenv(['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']).trim();
  session = await openBrowser();
});
after(async () => {
  await session?.close();
  rmSync(tmp, { recursive: true, force: true });
});

// Debian's nbconvert template links its own copies of require.js and MathJax, which a file:// page may not find.
const NBCONVERT_ASSETS = 'file:///usr/share/javascript/';

/**
 * Opens an HTML file offline; returns { page, context, errors (console errors and exceptions, except
 * nbconvert's own missing assets), requests (anything not file:/data:/about:/blob:) }.
 */
async function openOffline(path) {
  const context = await session.browser.newContext({ offline: true });
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  const missingAssets = [];
  page.on('requestfailed', (request) => { if (request.url().startsWith(NBCONVERT_ASSETS)) missingAssets.push(request.url()); });
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    if (message.text().startsWith('Failed to load resource') && missingAssets.includes(message.location().url)) return;
    errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('request', (request) => { if (!/^(file|data|about|blob):/.test(request.url())) requests.push(request.url()); });
  await page.goto(pathToFileURL(path).href);
  return { page, context, errors, requests };
}

/** The widget of frame `frame` (or of the page) once ready: its state, status, attributes and the attention it holds. */
async function widgetOf(frame) {
  await frame.waitForFunction(() => document.querySelector('attention-view')?.dataset.state === 'ready', null, { timeout: 30000 });
  return evaluateJson(frame, () => {
    const w = document.querySelector('attention-view');
    const tensor = (t) => ({ data: Array.from(t.data), shape: t.shape });
    return {
      status: w.shadowRoot.querySelector('.status').textContent, view: w.getAttribute('view'), theme: w.getAttribute('theme'),
      tokens: w.result.tokens.map((t) => t.display), typeIds: w.result.tokens.map((t) => t.typeId),
      attentions: tensor(w.result.attentions), cross: w.result.cross ? tensor(w.result.cross.attentions) : null,
      contentHeight: document.documentElement.getBoundingClientRect().height, innerHeight,
    };
  });
}

/** Each value within the encoding's error: float16 (small tensors) or 8 bits per row (largest / 510). */
function assertEncoded(got, want, shape, what) {
  assert.deepEqual(got.shape, shape, `${what}: shape`);
  const count = shape.reduce((a, b) => a * b, 1);
  const width = shape[shape.length - 1];
  for (let row = 0; row < count / width; row += 1) {
    const values = want.slice(row * width, (row + 1) * width);
    const tolerance = count <= FLOAT16_LIMIT ? FLOAT16_ERROR : Math.max(...values) / 510 + 1e-7;
    values.forEach((w, i) => assert.ok(Math.abs(got.data[row * width + i] - w) <= tolerance, `${what}: value ${row * width + i} is ${got.data[row * width + i]}, the input ${w} (±${tolerance})`));
  }
}

const at = ({ data, shape: [, heads, t, k] }, layer) => (head, q, key) => data[((layer * heads + head) * t + q) * k + key];

/** What the view of `frame` draws, checked against the attention the widget holds (`held`) and the notebook's `entry`. */
async function assertDrawn(frame, held, entry) {
  const [layers, heads, t] = held.attentions.shape;
  const all = Array.from({ length: t }, (_, i) => i);
  if (entry.view === 'head') {
    const layer = entry.layer ?? 0;
    const shownHeads = entry.heads ?? Array.from({ length: heads }, (_, i) => i);
    const lines = await frame.evaluate(() => document.querySelector('attention-view').viewElement.lineModel());
    assertHeadLines(lines, headViewLines(at(held.attentions, layer), shownHeads, all, all), 1e-6);
  } else if (entry.view === 'model') {
    const thumbs = await evaluateJson(frame, () => document.querySelector('attention-view').viewElement.thumbnailModel());
    assert.equal(thumbs.length, layers * heads, 'a thumbnail per layer and head');
    if (entry.labels) assert.deepEqual(thumbs.map((th) => th.labels[0]), entry.labels);
  } else if (entry.view === 'matrix') {
    const heat = await evaluateJson(frame, () => document.querySelector('attention-view').viewElement.heatModel());
    const layer = entry.layer ?? 0;
    const head = entry.heads?.[0] ?? 0;
    assert.deepEqual(heat.heads, [head]);
    heat.values.forEach((v, i) => {
      const want = at(held.attentions, layer)(head, heat.rows[Math.floor(i / heat.cols.length)], heat.cols[i % heat.cols.length]);
      assert.ok(Math.abs(v - want) <= 1e-7 || (v === 0 && want < heat.threshold), `matrix cell ${i}: ${v} vs ${want}`);
    });
  } else if (entry.view === 'rollout') {
    const heat = await evaluateJson(frame, () => document.querySelector('attention-view').viewElement.heatModel());
    const reference = refRollout({ data: Float32Array.from(held.attentions.data), shape: held.attentions.shape });
    heat.values.forEach((v, i) => {
      const want = reference[heat.rows[Math.floor(i / heat.cols.length)]][heat.cols[i % heat.cols.length]];
      assert.ok(Math.abs(v - want) <= 1e-5 || (v === 0 && want < heat.threshold), `rollout cell ${i}: ${v} vs ${want}`);
    });
  } else if (entry.view === 'neuron') {
    await frame.waitForFunction(() => document.querySelector('attention-view').viewElement.neuronModel()?.keys.length > 0);
    const neuron = await evaluateJson(frame, () => document.querySelector('attention-view').viewElement.neuronModel());
    const [, h, n, d] = [layers, heads, t, entry.queries.length / (layers * heads * t)];
    const vector = (values, token) => values.slice(((entry.layer * h + entry.head) * n + token) * d, ((entry.layer * h + entry.head) * n + token + 1) * d);
    assert.equal(neuron.query, entry.query);
    neuron.q.forEach((v, i) => assert.ok(Math.abs(v - vector(entry.queries, entry.query)[i]) <= 2 ** -10 * Math.max(1, Math.abs(v)), `q[${i}]`));
    assert.equal(neuron.keys.length, entry.query + 1, 'causal: the keys up to the query');
    for (const key of neuron.keys) {
      key.k.forEach((v, i) => assert.ok(Math.abs(v - vector(entry.keys, key.key)[i]) <= 2 ** -10 * Math.max(1, Math.abs(v)), `k[${key.key}][${i}]`));
      const want = entry.values[((entry.layer * h + entry.head) * n + entry.query) * n + key.key];
      assert.ok(Math.abs(key.modelWeight - want) <= FLOAT16_ERROR, `the model's weight of key ${key.key}`);
      assert.ok(Math.abs(key.softmax - want) <= 5e-3, `the view's softmax of key ${key.key}: ${key.softmax} vs ${want}`);
    }
  }
}

test('the package installs offline into a fresh virtual environment (and editable into another); its version is the npm package\'s', () => {
  const version = inVenv(['-c', 'import attnplay; print(attnplay.__version__)']).trim();
  assert.equal(version, JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version);
  assert.match(inVenv(['-c', 'import sys, attnplay; print(attnplay.__file__, "numpy" in sys.modules)']), new RegExp(`^${venv}.* False\\n$`), 'installed in the venv; numpy not imported at import time');
  const editablePython = join(tmp, 'venv-editable', 'bin', 'python');
  python3(['-m', 'venv', join(tmp, 'venv-editable')]);
  succeeded(spawnSync(editablePython, ['-m', 'pip', 'install', '--no-index', '--quiet', '-e', `${root}python`], options()), 'pip install -e');
  const editable = succeeded(spawnSync(editablePython, ['-c', 'import attnplay; print(attnplay.__file__, attnplay.__version__)'], options({ PYTHONPATH: '' })), 'the editable import');
  assert.equal(editable, `${root}python/attnplay/__init__.py ${version}\n`, 'imported from the source folder');
});

test('nbconvert --execute: every call of the notebook draws the attention it was given, offline', async (t) => {
  const out = join(tmp, 'notebook');
  const reference = join(tmp, 'reference.json');
  const saved = join(tmp, 'saved.html');
  python3(['-m', 'nbconvert', '--execute', '--to', 'html', '--output-dir', out, `${root}tests/notebook/python-package.ipynb`],
    { PYTHONPATH: sitePackages, ATTNPLAY_REFERENCE: reference, ATTNPLAY_SAVED: saved });
  const { shown, errors: messages, version, sizes } = JSON.parse(readFileSync(reference, 'utf8'));
  notebookShown = shown;
  t.diagnostic(`GPT-2 small's shape at 256 tokens: attnplay writes ${sizes.attnplay.toLocaleString('en')} bytes, bertviz's attention alone is ${sizes.bertviz.toLocaleString('en')} bytes`);
  assert.equal(version, JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version);
  assert.match(messages.eager, /attn_implementation="eager"/);
  assert.match(messages.count, /attention has 9 positions \(shape \[4, 6, 9, 9\]\), while tokens has 8 tokens/);
  assert.match(messages.batch, /batch of 2 \(shape \[4, 2, 6, 9, 9\]\)/);
  assert.match(messages.shape, /shape \[2, 3, 4, 9, 9, 1\]; expected a tuple per layer of \[batch=1, heads, queries, keys\]/);
  assert.match(messages.negative, /-1\.0 at layer 0, head 0, query 0, key 0 .*probabilities/);
  assert.match(messages['head index'], /^heads: 6 is not one of the 6 heads \(indices from 0/);
  assert.match(messages['neuron shapes'], /^attention has 4 layers of 6 heads, the queries and keys 2 of 6$/);
  assert.match(messages['no weights'], /^the model output holds no attention weights: .*attn_implementation="eager"/);

  const { page, context, errors, requests } = await openOffline(join(out, 'python-package.html'));
  const frames = page.locator('iframe');
  assert.equal(await frames.count(), shown.length, 'one output per recorded call');
  for (let i = 0; i < shown.length; i += 1) {
    const entry = shown[i];
    await frames.nth(i).scrollIntoViewIfNeeded(); // the widget starts once it is near the viewport
    const frame = await (await frames.nth(i).elementHandle()).contentFrame();
    const held = await widgetOf(frame);
    const what = `output ${i} (${entry.view}${entry.torch ? `, ${entry.torch}` : ''})`;
    assert.equal(held.status, '', `${what}: no warning`);
    assert.equal(held.view, entry.view, what);
    assert.equal(held.theme, entry.theme ?? 'light', `${what}: the host's (light) theme, or the one asked for`);
    if (entry.part === 'cross') {
      assertEncoded(held.cross, entry.values, entry.shape, `${what} cross`);
      assert.deepEqual(held.tokens, [...entry.encoder_tokens, ...entry.tokens].map((t) => t.replace('▁', ' ')));
    } else {
      assertEncoded(held.attentions, entry.values, entry.shape, what);
      const pretty = entry.tokens.map((t) => t.replace('Ġ', ' ').replace('▁', ' '));
      assert.deepEqual(held.tokens, entry.view === 'model' && entry.labels ? entry.tokens : pretty, `${what}: tokens`);
      if (entry.sentence_b_start) assert.deepEqual(held.typeIds, entry.tokens.map((_, t) => (t < entry.sentence_b_start ? 0 : 1)));
      await assertDrawn(frame, held, entry);
    }
    const frameHeight = await frames.nth(i).evaluate((f) => f.getBoundingClientRect().height);
    assert.ok(Math.abs(frameHeight - held.contentHeight) <= 1, `${what}: the frame (${frameHeight}px) is as tall as its content (${held.contentHeight}px)`);
  }
  // The encoder–decoder output's other parts, by the widget's part picker.
  const seq2seq = shown.findIndex((e) => e.part === 'cross');
  const frame = await (await frames.nth(seq2seq).elementHandle()).contentFrame();
  for (const part of ['encoder', 'decoder']) {
    await frame.evaluate((p) => document.querySelector('attention-view').setAttribute('attention', p), part);
    await frame.waitForFunction((n) => document.querySelector('attention-view').result?.tokens.length === n && !document.querySelector('attention-view').result.cross, 7);
    const held = await widgetOf(frame);
    assertEncoded(held.attentions, shown[seq2seq][part], [6, 8, 7, 7], `encoder–decoder ${part}`);
  }
  // A JupyterLab-like host switching to its dark theme: the widgets without a theme of their own follow.
  await page.evaluate(() => { document.body.dataset.jpThemeLight = 'false'; });
  const first = await (await frames.nth(0).elementHandle()).contentFrame();
  await first.waitForFunction(() => document.querySelector('attention-view').getAttribute('theme') === 'dark');
  const light = shown.findIndex((e) => e.theme === 'light');
  assert.equal(await (await (await frames.nth(light).elementHandle()).contentFrame()).evaluate(() => document.querySelector('attention-view').getAttribute('theme')), 'light');
  await page.screenshot({ path: `${resultsDir}python-package-notebook.png` });
  assert.deepEqual(errors, [], 'no console errors');
  assert.deepEqual(requests, [], 'no request leaves the file');
  await context.close();

  // GPT-2 small's shape at 256 tokens: its attention (more than a megabyte) is kept beside the frame, which reads it.
  const big = await openOffline(`${saved}.big-cell.html`);
  const bigFrame = await srcdocFrame(big.page); // (an element handle would preview the srcdoc's megabytes)
  await bigFrame.waitForFunction(() => document.querySelector('attention-view')?.dataset.state === 'ready', null, { timeout: 30000 });
  const bigHeld = await bigFrame.evaluate(() => {
    const w = document.querySelector('attention-view');
    const { data, shape } = w.result.attentions;
    return { status: w.shadowRoot.querySelector('.status').textContent, shape, causal: data.every((v, i) => v === 0 || i % 256 <= Math.floor(i / 256) % 256), rows: data.length / 256 };
  });
  assert.equal(bigHeld.status, '', 'rows within the 8-bit rounding of 1: no warning');
  assert.deepEqual(bigHeld.shape, [12, 12, 256, 256]);
  assert.ok(bigHeld.causal, 'causal: nothing above the diagonal');
  await big.context.close();
  // In a frame that may not read its host (a sandboxed viewer), a note says where the attention is.
  const sandboxed = join(tmp, 'sandboxed-cell.html');
  writeFileSync(sandboxed, readFileSync(`${saved}.big-cell.html`, 'utf8').replace('<iframe ', '<iframe sandbox="allow-scripts" '));
  const blocked = await openOffline(sandboxed);
  const blockedFrame = await srcdocFrame(blocked.page);
  await blockedFrame.waitForSelector('p[role="alert"]');
  assert.match(await blockedFrame.textContent('p[role="alert"]'), /data is kept in the notebook beside this frame, which this viewer does not let the frame read.*save_html/);
  await blocked.context.close();

  // html_action='return' .data written to a file, and save_html's one-file page, open on their own.
  for (const file of [saved, `${saved}.page.html`]) {
    const opened = await openOffline(file);
    const target = file === saved ? await (await opened.page.locator('iframe').elementHandle()).contentFrame() : opened.page;
    const held = await widgetOf(target);
    assert.equal(held.view, 'head');
    assert.deepEqual(opened.errors, []);
    assert.deepEqual(opened.requests, []);
    await opened.context.close();
  }
});

test('the notebook\'s PyTorch inputs (float32, float16, bfloat16 tensors) were among the outputs checked above', { skip: !hasTorch && 'PyTorch (python3-torch) is not installed here' }, () => {
  assert.ok(notebookShown, 'the nbconvert test ran');
  assert.deepEqual(notebookShown.filter((e) => e.torch).map((e) => e.torch), ['torch.float32', 'torch.float16', 'torch.bfloat16']);
});

test('without numpy: nested lists, 8 bits per row, a sentence pair, save_html', async () => {
  const page = join(tmp, 'pure.html');
  const script = `
import json, random, sys
import attnplay
assert 'numpy' not in sys.modules
random.seed(3)
def rows(n, k):
    out = []
    for _ in range(n):
        r = [random.random() ** 3 for _ in range(k)]
        out.append([v / sum(r) for v in r])
    return out
x = [[rows(6, 6) for h in range(3)] for l in range(2)]
view = attnplay.head_view([[layer] for layer in x], ['[CLS]', 'a', '[SEP]', 'b', 'c', '[SEP]'], 3, html_action='return', encoding='uint8')
view.save_html(sys.argv[1])
causal = [[[row[:i + 1] + [0.0] * (5 - i) for i, row in enumerate(rows(6, 6))] for h in range(2)]]
causal = [[[[w / sum(row) for w in row] for row in head] for head in layer] for layer in causal]
causal_view = attnplay.model_view(causal, ['a', 'b', 'c', 'd', 'e', 'f'], html_action='return')
causal_view.save_html(sys.argv[1] + '.causal.html')
# Any array type with tolist() (jax, mlx; here the standard library's multi-dimensional memoryview), one per layer.
import array
views = tuple(memoryview(array.array('f', [w for head in layer for row in head for w in row]).tobytes()).cast('f', shape=[3, 6, 6]) for layer in x)
assert attnplay.model_view(views, ['a'] * 6, html_action='return', encoding='uint8').attention_data['attentions'] == view.attention_data['attentions']
json.dump({'x': x, 'data': view.attention_data, 'causal': causal, 'causal_data': causal_view.attention_data}, open(sys.argv[1] + '.json', 'w'))
`;
  inVenv(['-c', script, page]);
  assert.notEqual(spawnSync(venvPython, ['-c', 'import numpy'], { env }).status, 0, 'the venv has no numpy');
  const { x, data, causal, causal_data: causalData } = JSON.parse(readFileSync(`${page}.json`, 'utf8'));
  assert.equal(data.attentions.dtype, 'uint8');
  assert.equal(data.attentions.triangle, undefined);
  assert.deepEqual([causalData.attentions.dtype, causalData.attentions.triangle], ['float16', 'lower']);
  const causalPage = await openOffline(`${page}.causal.html`);
  const causalHeld = await widgetOf(causalPage.page);
  assert.equal(causalHeld.status, '');
  assertEncoded(causalHeld.attentions, causal.flat(3), [1, 2, 6, 6], 'causal, written as lower triangles by plain Python');
  await causalPage.context.close();
  const opened = await openOffline(page);
  const held = await widgetOf(opened.page);
  assert.equal(held.status, '');
  const flat = x.flat(3);
  const width = 6;
  for (let row = 0; row < flat.length / width; row += 1) {
    const values = flat.slice(row * width, (row + 1) * width);
    const tolerance = Math.max(...values) / 510 + 1e-7;
    values.forEach((w, i) => assert.ok(Math.abs(held.attentions.data[row * width + i] - w) <= tolerance, `value ${row * width + i}`));
  }
  assert.deepEqual(held.typeIds, [0, 0, 0, 1, 1, 1], 'sentence B from sentence_b_start');
  const lines = await opened.page.evaluate(() => document.querySelector('attention-view').viewElement.lineModel());
  const all = [0, 1, 2, 3, 4, 5];
  assertHeadLines(lines, headViewLines(at(held.attentions, 0), [0, 1, 2], all, all), 1e-6);
  assert.deepEqual(opened.errors, []);
  assert.deepEqual(opened.requests, []);
  await opened.context.close();
});

test('python/examples/attention-views.ipynb: its saved outputs draw without running it', async () => {
  const out = join(tmp, 'example');
  python3(['-m', 'nbconvert', '--to', 'html', '--output-dir', out, `${root}python/examples/attention-views.ipynb`]);
  const { tokens } = JSON.parse(readFileSync(`${root}python/examples/austen-gpt-attention.json`, 'utf8'));
  const opened = await openOffline(join(out, 'attention-views.html'));
  const frames = opened.page.locator('iframe');
  const views = [];
  for (let i = 0; i < await frames.count(); i += 1) {
    await frames.nth(i).scrollIntoViewIfNeeded();
    const held = await widgetOf(await (await frames.nth(i).elementHandle()).contentFrame());
    assert.equal(held.status, '');
    assert.deepEqual(held.tokens, tokens.map((t) => t.replace('Ġ', ' ')));
    views.push(held.view);
  }
  assert.deepEqual(views, ['head', 'model', 'matrix', 'rollout']);
  assert.deepEqual(opened.errors, []);
  assert.deepEqual(opened.requests, []);
  await opened.context.close();
});

/** The native CLI's JSON answer (build/native/attnplay). */
function cliJson(args) {
  return JSON.parse(succeeded(spawnSync(`${root}build/native/attnplay`, args, options()), `attnplay ${args.join(' ')}`));
}

/** Each weight of the widget's attention within `tolerance` of [L][H][T][T] nested lists. */
function assertClose(held, want, tolerance, what) {
  const flat = want.flat(3);
  assert.equal(held.data.length, flat.length, `${what}: size`);
  flat.forEach((w, i) => assert.ok(Math.abs(held.data[i] - w) <= tolerance, `${what}: weight ${i} is ${held.data[i]}, the reference ${w}`));
}

test('playground(): the shipped austen-gpt runs in the cell offline (the CLI\'s attention and greedy tokens), and every tab shows its view', async () => {
  const text = 'It is a truth universally acknowledged';
  const cell = join(tmp, 'playground-cell.html');
  inVenv(['-c', `import sys, attnplay
open(sys.argv[1], 'w').write(attnplay.playground('austen-gpt', text=sys.argv[2], generate='4', html_action='return').data)`, cell, text]);
  const opened = await openOffline(cell);
  const frame = await (await opened.page.locator('iframe').elementHandle()).contentFrame();
  const held = await widgetOf(frame);
  assert.equal(held.status, '');
  const reference = cliJson(['attention', '--model', `${root}models/austen-gpt`, '--text', text]);
  assert.deepEqual(held.tokens, reference.tokens.map((t) => t.token));
  assertClose(held.attentions, reference.attentions, 1e-5, 'austen-gpt in the cell vs the CLI');
  const tabs = await frame.evaluate(() => [...document.querySelectorAll('nav.views button')].map((b) => b.dataset.view));
  assert.deepEqual(tabs, ['head', 'model', 'matrix', 'rollout', 'neuron', 'lens', 'generate', 'ablation', 'compare']);
  for (const view of tabs) {
    await frame.evaluate((v) => document.querySelector(`nav.views button[data-view="${v}"]`).click(), view);
    await frame.waitForFunction((v) => {
      const w = document.querySelector('attention-view');
      return w.getAttribute('view') === v && w.dataset.state === 'ready' && w.viewElement?.isConnected;
    }, view, { timeout: 30000, polling: 50 });
    assert.equal(await frame.evaluate(() => document.querySelector('attention-view').shadowRoot.querySelector('.status').textContent), '', `the ${view} tab`);
    assert.equal(await frame.evaluate(() => document.querySelector('nav.views button[aria-pressed="true"]').dataset.view), view);
  }
  // generate="4": the generate tab wrote the CLI's greedy tokens.
  await frame.evaluate(() => document.querySelector('nav.views button[data-view="generate"]').click());
  await frame.waitForFunction(() => {
    const generation = document.querySelector('attention-view').shadowRoot.querySelector('generation-panel')?.generation;
    return generation && !generation.running && generation.steps.length === 4;
  }, null, { timeout: 60000, polling: 50 });
  const generated = await frame.evaluate(() => document.querySelector('attention-view').shadowRoot.querySelector('generation-panel').generation.steps.map((s) => s.token));
  const greedy = cliJson(['generate', '--model', `${root}models/austen-gpt`, '--text', text, '--max-new-tokens', '4', '--greedy']).ids;
  assert.deepEqual(generated, greedy.slice(-4));
  await opened.page.screenshot({ path: `${resultsDir}python-package-playground.png` });
  assert.deepEqual(opened.errors, []);
  assert.deepEqual(opened.requests, [], 'a shipped model needs no network');
  await opened.context.close();
});

test('playground(): a hub model, downloaded by the page from a local imitation of the hub, draws PyTorch\'s attention', async () => {
  const { startFakeHub, FAMILY_MODELS } = await import('../hub/fake-hub.mjs');
  const fake = await startFakeHub();
  try {
    const golden = JSON.parse(readFileSync(`${root}tests/golden/models/${FAMILY_MODELS['tiny/llama']}/golden.json`, 'utf8')).cases[0];
    const page = join(tmp, 'playground-hub.html');
    inVenv(['-c', `import sys, attnplay
attnplay.playground('tiny/llama', text=sys.argv[2], hub=sys.argv[3], html_action='return').save_html(sys.argv[1])`, page, golden.text, fake.hub]);
    const context = await session.browser.newContext();
    const tab = await context.newPage();
    const errors = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(pathToFileURL(page).href);
    const held = await widgetOf(tab);
    assert.equal(held.status, '');
    assertClose(held.attentions, golden.attentions, 1e-4, 'tiny/llama from the hub vs PyTorch');
    assert.ok(fake.requests.some((r) => r.path.includes('/tiny/llama/resolve/main/model.safetensors')), 'the weights came from the hub');
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    await fake.close();
  }
});
