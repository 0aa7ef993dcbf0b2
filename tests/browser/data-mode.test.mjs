// The <attention-view> widget in data mode, in headless Chromium under the
// widget tests' strict CSP: attention given as a child JSON script (the CLI's
// JSON), by `src` (PyTorch's per-layer [1, H, T, T] JSON; a .npy with
// tokens-src), by the `data` property, and an encoder–decoder model's
// cross-attention; the head, matrix and model views draw exactly those
// weights, the rollout view (rollout and flow, by attribute and by its
// picker; flow as lines by rollout-display) the reference's rolled-out map,
// and it refuses cross-attention;
// the neuron view says why it is not available; bad
// data shows its message; a 512-token 12-layer × 12-head .npy renders and
// stays interactive. In data mode no worker starts and no WASM is fetched;
// once the data source is removed, the widget runs its model again.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { assertHeadLines, headViewLines, newPage, openBrowser, resultsDir } from './browser.mjs';
import { randomAttention } from '../node/reference.mjs';
import { refFlow, refRollout } from '../node/rollout-reference.mjs';

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";
const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'attnplay-data-mode-'));
let session;

function cliAttention(model, text, extra = []) {
  const r = spawnSync(cli, ['attention', '--model', fileURLToPath(new URL(`../golden/models/${model}`, import.meta.url)), '--text', text, ...extra], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr);
  return extra.length ? null : JSON.parse(r.stdout);
}

const nested = (data, [layers, heads, t, k], batch = false) => Array.from({ length: layers }, (_, l) => {
  const layer = Array.from({ length: heads }, (__, h) => Array.from({ length: t }, (___, q) => Array.from(data.subarray(((l * heads + h) * t + q) * k, ((l * heads + h) * t + q + 1) * k))));
  return batch ? [layer] : layer;
});
function npyBytes(data, shape) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const prefix = Buffer.alloc(10 + header.length);
  prefix.write('\x93NUMPY\x01\x00', 0, 'latin1');
  prefix.writeUInt16LE(header.length, 8);
  prefix.write(header, 10, 'latin1');
  return Buffer.concat([prefix, Buffer.from(data.buffer, data.byteOffset, data.byteLength)]);
}

// The fixtures: the CLI's attention on a 12-head golden model, random causal
// data in PyTorch's shape, a .npy, an encoder–decoder model.
const GPT = cliAttention('gpt2-l2-h12-k8-f16', 'Hello <b>world</b>, hello again.');
const gptShape = [2, 12, GPT.tokens.length, GPT.tokens.length];
const gptFlat = Float32Array.from(GPT.attentions.flat(3));
const torchShape = [3, 4, 9, 9];
const torchFlat = randomAttention(torchShape, 7, true);
const torchTokens = ['The', 'Ġcat', 'Ġsat', 'Ġon', 'Ġthe', 'Ġmat', 'Ġand', 'Ġpur', 'red'];
const npyShape = [2, 3, 6, 6];
const npyFlat = randomAttention(npyShape, 11);
const npyTokens = ['[CLS]', 'river', 'bank', '##s', 'flood', '[SEP]'];
const S = 5;
const T = 4;
const crossShape = [2, 2, T, S];
const crossFlat = randomAttention(crossShape, 5);
const encDec = {
  encoder_tokens: ['▁The', '▁house', '▁is', '▁small', '</s>'],
  decoder_tokens: ['<pad>', '▁La', '▁maison', '▁est'],
  encoder_attentions: nested(randomAttention([2, 2, S, S], 3), [2, 2, S, S], true),
  decoder_attentions: nested(randomAttention([2, 2, T, T], 4, true), [2, 2, T, T], true),
  cross_attentions: nested(crossFlat, crossShape, true),
};
const BIG = [12, 12, 512, 512];
const bigAttention = randomAttention(BIG, 1); // written as big.npy (151 MB), then checked against what is drawn

before(async () => {
  writeFileSync(join(dataDir, 'torch.json'), JSON.stringify({ tokens: torchTokens, attentions: nested(torchFlat, torchShape, true) }));
  writeFileSync(join(dataDir, 'attn.npy'), npyBytes(npyFlat, npyShape));
  writeFileSync(join(dataDir, 'tokens.json'), JSON.stringify(npyTokens));
  writeFileSync(join(dataDir, 'encdec.json'), JSON.stringify(encDec));
  writeFileSync(join(dataDir, 'npy-tokens.json'), JSON.stringify({ tokens: npyTokens, attentions: nested(npyFlat, npyShape) }));
  const child = JSON.stringify(GPT).replaceAll('<', '\\u003c');
  writeFileSync(join(dataDir, 'widgets.html'), `<!doctype html><meta charset="utf-8"><title>data mode</title>
<script type="module" src="/widget/attention-view.js"></script>
<attention-view id="child" view="head" layer="1" controls><script type="application/json">${child}</script></attention-view>
<attention-view id="torch" src="/data/torch.json" view="matrix" layer="2" heads="1"></attention-view>
<attention-view id="npy" src="/data/attn.npy" tokens-src="/data/tokens.json" view="model"></attention-view>
<attention-view id="encdec" src="/data/encdec.json" view="head" heads="1"></attention-view>
<attention-view id="neuron" src="/data/torch.json" view="neuron"></attention-view>
<attention-view id="rollout" src="/data/torch.json" view="rollout"></attention-view>
<attention-view id="flow" src="/data/npy-tokens.json" view="rollout" rollout-method="flow"></attention-view>
<attention-view id="cross-rollout" src="/data/encdec.json" view="rollout"></attention-view>
<attention-view id="missing" src="/data/nothing.json"></attention-view>`);
  writeFileSync(join(dataDir, 'big.npy'), npyBytes(bigAttention, BIG));
  writeFileSync(join(dataDir, 'big-tokens.json'), JSON.stringify(Array.from({ length: 512 }, (_, i) => (i % 3 ? `Ġw${i}` : `w${i}`))));
  writeFileSync(join(dataDir, 'big.html'), `<!doctype html><meta charset="utf-8"><title>big</title>
<script type="module" src="/widget/attention-view.js"></script>
<attention-view id="big" src="/data/big.npy" tokens-src="/data/big-tokens.json" view="head" layer="11" heads="0,5" height="400"></attention-view>`);
  session = await openBrowser({ mounts: { '/data/': dataDir }, headers: { 'Content-Security-Policy': CSP } });
});
after(async () => {
  await session?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Every line drawn against the weights given, by the head view's rule (headViewLines). */
function assertLines(lines, weight, heads, rows, keys, focusRow = null) {
  assertHeadLines(lines, headViewLines(weight, heads, rows, keys, focusRow), 0);
}
const at = (flat, [, H, t, k], layer) => (head, q, key) => flat[((layer * H + head) * t + q) * k + key];
const range = (n, from = 0) => Array.from({ length: n - from }, (_, i) => from + i);
const ready = (page, id) => page.waitForFunction((i) => ['ready', 'error'].includes(document.getElementById(i).dataset.state) && document.getElementById(i).dataset.state !== 'loading', id, { timeout: 60000 });
const status = (page, id) => page.evaluate((i) => document.getElementById(i).shadowRoot.querySelector('.status').textContent, id);

async function openData(file) {
  const { page, errors } = await newPage(session.browser);
  const requests = [];
  let workers = 0;
  page.on('request', (request) => requests.push(new URL(request.url()).pathname));
  page.on('worker', () => { workers += 1; });
  await page.goto(`${session.url}data/${file}`);
  return { page, errors, requests, workers: () => workers };
}

test('every source and format draws exactly the given weights; no worker, no WASM', async () => {
  const { page, errors, requests, workers } = await openData('widgets.html');
  for (const id of ['child', 'torch', 'npy', 'encdec', 'neuron', 'rollout', 'flow', 'cross-rollout', 'missing']) await page.locator(`#${id}`).scrollIntoViewIfNeeded();
  for (const id of ['child', 'torch', 'npy', 'encdec', 'neuron', 'rollout', 'flow', 'cross-rollout', 'missing']) await ready(page, id);

  // Child JSON (the CLI's output): head view, layer 1, all 12 heads; hostile token text stays text.
  const child = await page.evaluate(() => { const w = document.getElementById('child'); return { lines: w.viewElement.lineModel(), runs: w.runs, tokens: w.result.tokens.map((t) => t.display) }; });
  assertLines(child.lines, at(gptFlat, gptShape, 1), range(12), range(gptShape[2]), range(gptShape[2]));
  assert.equal(child.runs, 0, 'no forward run in data mode');
  assert.deepEqual(child.tokens, GPT.tokens.map((t) => t.token));
  assert.equal(await page.evaluate(() => document.querySelectorAll('b').length), 0, 'a "<b>" token is never markup');

  // src JSON in PyTorch's shape: matrix view of layer 2, head 1, causal triangle masked.
  const heat = await page.evaluate(() => document.getElementById('torch').viewElement.heatModel());
  const [, , n] = torchShape;
  for (let q = 0; q < n; q += 1) {
    for (let k = 0; k < n; k += 1) {
      assert.equal(heat.values[q * n + k], at(torchFlat, torchShape, 2)(1, q, k));
      assert.equal(heat.masked[q * n + k], k > q ? 1 : 0, `masked ${q},${k}`);
    }
  }
  assert.deepEqual(heat.rowLabels, torchTokens);

  // .npy + tokens-src: the model view's thumbnails, one per layer × head.
  const thumbs = await page.evaluate(() => document.getElementById('npy').viewElement.thumbnailModel());
  assert.equal(thumbs.length, 2 * 3);
  for (const thumb of thumbs) {
    assert.deepEqual(thumb.shape, [6, 6]);
    thumb.values.forEach((v, i) => assert.ok(Math.abs(v - at(npyFlat, npyShape, thumb.layer)(thumb.head, Math.floor(i / 6), i % 6)) < 1e-7));
  }

  // The data property, set before the element is added: { data, shape } with head labels, drawn in the model view's badges.
  await page.evaluate(([flat, shape, tokens]) => {
    const w = document.createElement('attention-view');
    w.id = 'prop';
    w.view = 'model';
    w.data = { tokens, attentions: { data: Float32Array.from(flat), shape }, head_labels: [['previous token', 'sink', ''], [['induction', 'copy'], '', 'self']] };
    document.body.prepend(w);
  }, [Array.from(npyFlat), npyShape, npyTokens]);
  await page.locator('#prop').scrollIntoViewIfNeeded(); // like every widget, it starts once it is near the viewport
  await page.waitForFunction(() => document.getElementById('prop').viewElement?.thumbnailModel()?.length === 6);
  const labels = await page.evaluate(() => document.getElementById('prop').viewElement.thumbnailModel().map((t) => t.labels));
  assert.deepEqual(labels, [['previous token'], ['sink'], [], ['induction', 'copy'], [], ['self']]);

  // Encoder–decoder: cross-attention by default, decoder tokens (queries) → encoder tokens (keys); the picker switches parts.
  const cross = await page.evaluate(() => document.getElementById('encdec').viewElement.lineModel());
  assertLines(cross, (h, q, k) => (q >= S && k < S ? at(crossFlat, crossShape, 0)(h, q - S, k) : 0), [1], range(S + T, S), range(S));
  await page.locator('#encdec select[name="attention"]').selectOption('decoder');
  await page.waitForFunction(() => document.getElementById('encdec').result.tokens.length === 4);
  const decoder = await page.evaluate(() => document.getElementById('encdec').viewElement.lineModel());
  const decoderFlat = Float32Array.from(encDec.decoder_attentions.flat(4));
  assertLines(decoder, at(decoderFlat, [2, 2, T, T], 0), [1], range(T), range(T));

  // Rollout over all layers (causal data: the upper triangle masked), flow by the attribute, then flow by the view's picker.
  const heatOf = (id) => page.evaluate((i) => document.getElementById(i).viewElement.heatModel(), id);
  const assertMap = (drawn, expected, what) => {
    const t = expected.length;
    assert.equal(drawn.values.length, t * t, what);
    expected.forEach((row, q) => row.forEach((v, k) => assert.ok(Math.abs(drawn.values[q * t + k] - v) < 1e-6, `${what} [${q}][${k}]: ${drawn.values[q * t + k]} vs ${v}`)));
  };
  const torchTensor = { data: torchFlat, shape: torchShape };
  const rolled = await heatOf('rollout');
  assert.match(rolled.title, /^Attention rollout over layers 1–3 \(mean of all 4 heads, plus the residual\)$/);
  assertMap(rolled, refRollout(torchTensor), 'rollout');
  rolled.masked.forEach((m, i) => assert.equal(m, i % n > Math.floor(i / n) ? 1 : 0, `rollout masked ${i}`));
  assert.deepEqual(rolled.rowLabels, torchTokens);
  const flowed = await heatOf('flow');
  assert.match(flowed.title, /^Attention flow over layers 1–2 \(mean of all 3 heads, plus the residual\)$/);
  assertMap(flowed, refFlow({ data: npyFlat, shape: npyShape }), 'flow (attribute)');
  await page.locator('#rollout select[name="rollout-method"]').selectOption('flow');
  await page.waitForFunction(() => document.getElementById('rollout').viewElement.heatModel().title.startsWith('Attention flow'));
  assertMap(await heatOf('rollout'), refFlow(torchTensor), 'flow (picker)');
  assert.equal(await page.evaluate(() => document.getElementById('rollout').rolloutMethod), 'flow');
  // rollout-display="lines": the flow map of the attribute's widget as the head view's lines.
  await page.evaluate(() => document.getElementById('flow').setAttribute('rollout-display', 'lines'));
  const flowRef = refFlow({ data: npyFlat, shape: npyShape });
  const flowAll = range(flowRef.length);
  assertHeadLines(await page.evaluate(() => document.getElementById('flow').viewElement.lineModel()), headViewLines((head, q, k) => flowRef[q][k], [0], flowAll, flowAll), 1e-6);

  // Cross-attention is refused with the reason; the decoder's self-attention rolls out.
  const refused = await page.evaluate(() => { const v = document.getElementById('cross-rollout').viewElement; return { heat: v.heatModel(), title: v.querySelector('.view-title').textContent }; });
  assert.equal(refused.heat, null);
  assert.match(refused.title, /^Attention rollout is defined for self-attention.*cross-attention \(decoder → encoder\) does not chain/);
  await page.locator('#cross-rollout select[name="attention"]').selectOption('decoder');
  await page.waitForFunction(() => document.getElementById('cross-rollout').viewElement.heatModel()?.values.length === 16);
  assertMap(await heatOf('cross-rollout'), refRollout({ data: Float32Array.from(encDec.decoder_attentions.flat(4)), shape: [2, 2, T, T] }), 'decoder rollout');

  // Views that need the model say so; a missing file says which.
  assert.match(await page.evaluate(() => document.getElementById('neuron').shadowRoot.querySelector('[data-unavailable]').textContent), /neuron view needs the model’s queries and keys.*not available here; the head, model, matrix, rollout and \(for cross-attention\) decoding views are/);
  assert.match(await status(page, 'missing'), /^Cannot draw this attention data: could not fetch the attention data \/data\/nothing\.json: HTTP 404$/);

  // Bad data through the property: each message shown; a good value afterwards draws again.
  const cases = [
    [{ tokens: ['a', 'b', 'c'], attentions: [[[[1, 0], [0.5, 0.5]]]] }, /shapes disagree: tokens has 3 tokens/],
    [{ tokens: ['a', 'b'], attentions: { data: [1, 0, NaN, 1], shape: [1, 1, 2, 2] } }, /NaN at layer 0, head 0, query 1, key 0/],
    [{ tokens: ['a', 'b'], attentions: { dtype: 'float32', shape: [12, 12, 4096, 4096], base64: '' } }, /too large to draw/],
    [{ tokens: ['a', 'b'], attentions: [[[[0.5, 0], [0.5, 0.5]]]] }, /^Warning: 1 of 2 rows of attentions do not sum to 1/],
  ];
  for (const [data, pattern] of cases) {
    await page.evaluate((d) => {
      const w = document.getElementById('prop');
      w.view = 'head';
      if (Array.isArray(d.attentions.data)) d.attentions.data = Float32Array.from(d.attentions.data);
      w.data = d;
    }, data);
    await page.waitForFunction((p) => new RegExp(p).test(document.getElementById('prop').shadowRoot.querySelector('.status').textContent), pattern.source);
  }
  assert.equal(await page.evaluate(() => document.getElementById('prop').dataset.state), 'ready', 'a warning still draws');

  await page.screenshot({ path: `${resultsDir}data-mode.png`, fullPage: true });
  assert.equal(workers(), 0, 'no engine worker');
  assert.deepEqual(requests.filter((path) => /wasm|engine-worker\.js|\/models\//.test(path)), [], 'no WASM, worker or model request');
  assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
  await page.close();
});

test('a 512-token, 12-layer × 12-head tensor from a .npy file renders and stays interactive', async (t) => {
  const started = Date.now();
  const { page, errors, workers } = await openData('big.html');
  await ready(page, 'big');
  t.diagnostic(`151 MB .npy fetched, checked and drawn (head view, 2 heads) in ${Date.now() - started} ms (informative, not asserted)`);
  assert.equal(await status(page, 'big'), '');
  const drawn = await page.evaluate(() => {
    const w = document.getElementById('big');
    window.selected = [];
    w.addEventListener('token-select', (e) => window.selected.push(e.detail.token));
    return { shape: w.result.attentions.shape, lines: w.viewElement.lineModel().length };
  });
  assert.deepEqual(drawn.shape, BIG);
  assert.equal(drawn.lines, headViewLines(at(bigAttention, BIG, 11), [0, 5], range(512), range(512)).size);
  // The reader clicks a token near the top, then moves down with the keyboard: the lines follow, each equal to the data.
  await page.locator('#big head-view canvas').click({ position: { x: 60, y: 70 } });
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => window.selected.length === 2);
  const [first, second] = await page.evaluate(() => window.selected);
  assert.ok(first >= 0 && first < 10 && second === first + 1, `selected ${first}, then ${second}`);
  const focused = await page.evaluate(() => document.getElementById('big').viewElement.lineModel());
  assertLines(focused, at(bigAttention, BIG, 11), [0, 5], [second], range(512), second);
  // Another layer and the matrix view redraw from the same data.
  await page.evaluate(() => { const w = document.getElementById('big'); w.layer = 0; w.view = 'matrix'; });
  await page.waitForFunction(() => document.getElementById('big').viewElement?.heatModel()?.title.startsWith('Layer 1'));
  const row = await page.evaluate(() => { const m = document.getElementById('big').viewElement.heatModel(); return m.values.slice(4 * 512, 5 * 512); });
  row.forEach((v, k) => assert.ok(Math.abs(v - (at(bigAttention, BIG, 0)(0, 4, k) + at(bigAttention, BIG, 0)(5, 4, k)) / 2) < 1e-7, `key ${k}`));
  await page.screenshot({ path: `${resultsDir}data-mode-512.png` });
  assert.equal(workers(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test('removing the data source turns the widget back into a model widget, which then runs its model', async () => {
  const { page, errors, workers } = await openData('widgets.html');
  await page.locator('#torch').scrollIntoViewIfNeeded();
  await ready(page, 'torch');
  assert.equal(workers(), 0);
  await page.evaluate(() => { const w = document.getElementById('torch'); w.view = 'head'; w.removeAttribute('src'); });
  await page.waitForFunction(() => document.getElementById('torch').runs >= 1, null, { timeout: 60000 });
  const result = await page.evaluate(() => { const w = document.getElementById('torch'); return { modelType: w.result.modelType, tokens: w.result.tokens.length, picker: w.shadowRoot.querySelector('select[name="attention"]') !== null }; });
  assert.equal(result.modelType, 'gpt2', 'the default model (austen-gpt) ran on the default text');
  assert.ok(result.tokens > 9);
  assert.equal(workers(), 1, 'the engine worker starts only now');
  assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
  await page.close();
});
