// Cross-attention in the <attention-view> widget, in headless Chromium under
// the widget tests' strict CSP: view="cross" (the decoding view), the
// matrix and model views draw exactly the weights given in data mode (a hand-made 2-D
// alignment, and an encoder–decoder model's [layer][1][head][target][source]
// with a mean of heads checked against a float64 mean), step by step with
// the buttons, Play and the target tokens, sharing the locked token with the
// widget's state; hostile token text stays text. The from-scratch mode's
// cross-attention step reproduces the seed's alignment example ("European
// Economic Area" ↔ "zone économique européenne", the order flipped) against
// a float64 computation of Q = X_dec·W_Q, K = X_enc·W_K, V = X_enc·W_V.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { assertHeadLines, headViewLines, newPage, openBrowser } from './browser.mjs';
import { randomAttention } from '../node/reference.mjs';
import { seedAlignmentExample } from '../../web/scratch/presets.js';

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";
const dataDir = mkdtempSync(join(tmpdir(), 'attnplay-cross-'));
let session;

// A hand-made alignment of the seed's phrase: one map [target][source].
const ALIGNMENT = {
  encoder_tokens: ['European', 'Economic', 'Area'],
  decoder_tokens: ['zone', 'économique', 'européenne'],
  cross_attentions: [[0.05, 0.1, 0.85], [0.1, 0.8, 0.1], [0.85, 0.1, 0.05]],
};
// An encoder–decoder model's output in PyTorch's shape, with hostile token text.
const [L, H, T, S] = [2, 3, 4, 5];
const crossFlat = randomAttention([L, H, T, S], 9);
const nested = (flat, [layers, heads, t, k]) => Array.from({ length: layers }, (_, l) => [Array.from({ length: heads }, (__, h) =>
  Array.from({ length: t }, (___, q) => Array.from(flat.subarray(((l * heads + h) * t + q) * k, ((l * heads + h) * t + q + 1) * k))))]);
const ENCDEC = {
  encoder_tokens: ['▁The', '▁<b>house</b>', '▁is', '▁small', '</s>'],
  decoder_tokens: ['<pad>', '▁La', '▁<img src=x onerror=alert(1)>', '▁est'],
  decoder_attentions: nested(randomAttention([L, H, T, T], 4, true), [L, H, T, T]),
  cross_attentions: nested(crossFlat, [L, H, T, S]),
};
const at = (layer, head, q, k) => crossFlat[((layer * H + head) * T + q) * S + k];
// An author's own cross-attention example for the from-scratch step: the adjective–noun flip.
const OWN_CROSS = {
  source: ['the', 'black', 'cat'], target: ['le', 'chat', 'noir'],
  xEncoder: [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
  xDecoder: [[1, 0, 0.1], [0, 0.1, 1], [0.1, 1, 0]],
  wq: [[2, 0, 0], [0, 2, 0], [0, 0, 2]], wk: [[2, 0, 0], [0, 2, 0], [0, 0, 2]], wv: [[1, 0], [0, 1], [1, 1]],
};
/** Float64 mean of the given heads' weights, row by row: [T][S]. */
const meanRows = (layer, heads) => Array.from({ length: T }, (_, q) => Array.from({ length: S }, (__, k) => heads.reduce((sum, head) => sum + at(layer, head, q, k), 0) / heads.length));

before(async () => {
  writeFileSync(join(dataDir, 'encdec.json'), JSON.stringify(ENCDEC));
  writeFileSync(join(dataDir, 'decoder-only.json'), JSON.stringify({ decoder_tokens: ENCDEC.decoder_tokens, decoder_attentions: ENCDEC.decoder_attentions }));
  writeFileSync(join(dataDir, 'widgets.html'), `<!doctype html><meta charset="utf-8"><title>cross-attention</title><link rel="icon" href="/favicon.svg">
<script type="module" src="/widget/attention-view.js"></script>
<attention-view id="align" view="cross"><script type="application/json">${JSON.stringify(ALIGNMENT)}</script></attention-view>
<attention-view id="encdec" src="/data/encdec.json" view="cross" layer="1" heads="0,2" controls></attention-view>
<attention-view id="matrix" src="/data/encdec.json" view="matrix" layer="1" heads="1"></attention-view>
<attention-view id="head" src="/data/encdec.json" view="head" layer="0" heads="2"></attention-view>
<attention-view id="no-cross" src="/data/decoder-only.json" view="cross"></attention-view>
<attention-view id="scratch" view="scratch" step="cross-attention"></attention-view>
<attention-view id="own-cross" view="scratch"><script type="application/json">${JSON.stringify(OWN_CROSS)}</script></attention-view>`);
  session = await openBrowser({ mounts: { '/data/': dataDir }, headers: { 'Content-Security-Policy': CSP } });
});
after(async () => {
  await session?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const ready = (page, id) => page.waitForFunction((i) => document.getElementById(i).dataset.state === 'ready', id, { timeout: 60000 });
const decoding = (page, id) => page.evaluate((i) => document.getElementById(i).viewElement.decodingModel(), id);
const close = (a, b, tolerance, what) => assert.ok(Math.abs(a - b) <= tolerance, `${what}: ${a} vs ${b}`);

test('view="cross" and the matrix view draw the given cross-attention, step by step', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}data/widgets.html`);
  for (const id of ['align', 'encdec', 'matrix', 'head', 'no-cross']) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    await ready(page, id);
  }

  // The hand-made alignment: one layer, one head, every step shown, values exact (as float32).
  const align = await decoding(page, 'align');
  assert.deepEqual([align.step, align.steps, align.heads], [2, 3, [0]]);
  assert.deepEqual(align.sourceLabels, ALIGNMENT.encoder_tokens);
  assert.deepEqual(align.targetLabels, ALIGNMENT.decoder_tokens);
  align.rows.forEach((row, q) => row.forEach((w, k) => assert.equal(w, Math.fround(ALIGNMENT.cross_attentions[q][k]))));
  const cells = await page.evaluate(() => [...document.getElementById('align').viewElement.querySelectorAll('table.alignment td')].map((td) => [Number(td.dataset.row), Number(td.dataset.col), Number(td.dataset.value)]));
  assert.equal(cells.length, 9);
  for (const [q, k, w] of cells) assert.equal(w, Math.fround(ALIGNMENT.cross_attentions[q][k]));
  await page.locator('#align table.alignment td[data-row="0"][data-col="2"]').hover();
  assert.equal(await page.locator('#align .readout').textContent(), 'zone → Area: 0.8500');

  // PyTorch-shaped data, layer 2, mean of heads 1 and 3: every row against a float64 mean.
  const expected = meanRows(1, [0, 2]);
  const all = await decoding(page, 'encdec');
  assert.deepEqual([all.layer, all.heads, all.step, all.steps], [1, [0, 2], T - 1, T]);
  assert.deepEqual(all.targetLabels, ENCDEC.decoder_tokens);
  all.rows.forEach((row, q) => row.forEach((w, k) => close(w, expected[q][k], 1e-6, `row ${q} key ${k}`)));

  // Only the layer control applies to the decoding view (it draws the weights as given).
  const controls = await page.evaluate(() => [...document.getElementById('encdec').shadowRoot.querySelectorAll('view-controls label')].filter((l) => !l.hidden).map((l) => l.textContent.trim()));
  assert.deepEqual(controls, ['Layer 12']);

  // Stepping: First shows one row; Next adds one and locks that target token in the widget's state.
  await page.locator('#encdec .decoding-first').click();
  let model = await decoding(page, 'encdec');
  assert.deepEqual([model.step, model.rows.length, model.targetLabels], [0, 1, ['<pad>']]);
  model.current.forEach((w, k) => close(w, expected[0][k], 1e-6, `step 1 key ${k}`));
  const shading = await page.evaluate(() => [...document.getElementById('encdec').viewElement.querySelectorAll('.decoding-source .decoding-token')].map((s) => s.title));
  assert.deepEqual(shading, ENCDEC.encoder_tokens.map((token, k) => `${token}: ${expected[0][k].toFixed(4)}`));
  await page.locator('#encdec .decoding-next').click();
  model = await decoding(page, 'encdec');
  assert.deepEqual([model.step, model.rows.length], [1, 2]);
  assert.equal(await page.evaluate(() => document.getElementById('encdec').token), S + 1, 'the step is the locked token');
  // A target token goes back to its step; the token attribute moves the step; Play runs to the last step.
  await page.locator('#encdec .decoding-target button', { hasText: '<pad>' }).click();
  assert.equal((await decoding(page, 'encdec')).step, 0);
  await page.evaluate((token) => document.getElementById('encdec').setAttribute('token', String(token)), S + 2);
  assert.equal((await decoding(page, 'encdec')).step, 2);
  await page.locator('#encdec .decoding-play').click();
  await page.waitForFunction(() => document.getElementById('encdec').viewElement.decodingModel().step === 3 && document.getElementById('encdec').token === null, null, { timeout: 20000 });
  assert.equal(await page.locator('#encdec .decoding-play').textContent(), 'Play ▶');

  // The matrix view of cross-attention: target rows × source columns, exactly the given head.
  const heat = await page.evaluate(() => document.getElementById('matrix').viewElement.heatModel());
  assert.deepEqual(heat.rowLabels, ENCDEC.decoder_tokens);
  assert.deepEqual(heat.colLabels, ENCDEC.encoder_tokens);
  heat.values.forEach((w, i) => assert.equal(w, at(1, 1, Math.floor(i / S), i % S)));
  assert.match(await page.evaluate(() => document.getElementById('matrix').viewElement.querySelector('.view-title').textContent),
    /^Layer 2, head 2: cross-attention, the alignment matrix: target tokens \(rows\) × source tokens \(columns\)$/);

  // The model view of cross-attention: every layer × head, target rows × source columns, exactly.
  await page.evaluate(() => { document.getElementById('matrix').view = 'model'; });
  await page.waitForFunction((n) => document.getElementById('matrix').viewElement.localName === 'model-view' && document.getElementById('matrix').viewElement.thumbnailModel()?.length === n, L * H);
  const thumbs = await page.evaluate(() => document.getElementById('matrix').viewElement.thumbnailModel());
  for (const thumb of thumbs) {
    assert.deepEqual(thumb.shape, [T, S]);
    thumb.values.forEach((w, i) => close(w, at(thumb.layer, thumb.head, Math.floor(i / S), i % S), 1e-7, `L${thumb.layer} H${thumb.head} cell ${i}`));
  }

  // bertviz's encoder–decoder head view: target tokens (left) → source tokens (right), the sides named.
  const head = await page.evaluate(() => { const v = document.getElementById('head').viewElement; return { lines: v.lineModel(), legend: v.querySelector('.head-view-legend').textContent }; });
  assertHeadLines(head.lines, headViewLines((h, q, k) => (q >= S && k < S ? at(0, h, q - S, k) : 0), [2], Array.from({ length: T }, (_, i) => S + i), Array.from({ length: S }, (_, i) => i)), 0);
  assert.match(head.legend, /^Cross-attention: target tokens \(the decoder’s queries, left\) read source tokens \(the encoder’s keys, right\)\. One colour per head/);

  // Hostile token text is text, everywhere.
  const markup = await page.evaluate(() => [...document.querySelectorAll('attention-view')].reduce((n, w) => n + w.shadowRoot.querySelectorAll('b, img').length, 0));
  assert.equal(markup, 0);
  assert.match(await page.locator('#encdec .decoding-source').textContent(), /▁<b>house<\/b>/);

  // Data without cross-attention: the decoding view says why it is empty.
  assert.match(await page.locator('#no-cross decoding-view .view-title').textContent(), /only encoder–decoder models/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('from scratch: cross-attention reproduces the seed\'s alignment example', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}data/widgets.html`);
  await page.locator('#scratch').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.getElementById('scratch').viewElement?.dataset.state === 'ready', null, { timeout: 60000 });
  const values = (key) => page.evaluate((k) => [...document.getElementById('scratch').viewElement.querySelectorAll(`matrix-table[data-key="${k}"] tbody tr`)]
    .map((row) => [...row.querySelectorAll('td')].map((td) => Number(td.dataset.value))), key);

  // Float64 reference from the example's matrices.
  const reference = (c) => {
    const mul = (a, b) => a.map((row) => b[0].map((_, j) => row.reduce((sum, v, i) => sum + v * b[i][j], 0)));
    const q = mul(c.xDecoder, c.wq);
    const k = mul(c.xEncoder, c.wk);
    const v = mul(c.xEncoder, c.wv);
    const scores = q.map((qi) => k.map((kj) => qi.reduce((sum, x, i) => sum + x * kj[i], 0)));
    const weights = scores.map((row) => {
      const e = row.map((s) => Math.exp(s / Math.sqrt(k[0].length)));
      const total = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / total);
    });
    const output = mul(weights, v);
    return { q, k, v, scores, weights, output };
  };
  const assertTable = async (key, want) => {
    const got = await values(key);
    assert.equal(got.length, want.length, key);
    got.forEach((row, i) => row.forEach((w, j) => close(w, want[i][j], 1e-5, `${key}[${i}][${j}]`)));
  };
  const ref = reference(seedAlignmentExample);
  for (const key of ['q', 'k', 'v', 'scores', 'weights', 'output']) await assertTable(`cross-${key}`, ref[key]);
  // The tutorial's alignment: zone ↔ Area, économique ↔ Economic, européenne ↔ European.
  const argmax = ref.weights.map((row) => seedAlignmentExample.source[row.indexOf(Math.max(...row))]);
  assert.deepEqual(argmax, ['Area', 'Economic', 'European']);
  const check = page.locator('#scratch #scratch-cross-check');
  assert.equal(await check.textContent(), `"zone" reads "Area" (${ref.weights[0][2].toFixed(2)}), "économique" reads "Economic" (${ref.weights[1][1].toFixed(2)}), "européenne" reads "European" (${ref.weights[2][0].toFixed(2)}): the word order flips, as in the tutorial's alignment matrix.`);
  const rowLabels = await page.evaluate(() => [...document.getElementById('scratch').viewElement.querySelectorAll('matrix-table[data-key="cross-weights"] tbody th')].map((th) => th.textContent));
  assert.deepEqual(rowLabels, seedAlignmentExample.target);

  // Editing X_dec recomputes: "zone" given the axes of "européenne" now reads "European".
  const edited = structuredClone(seedAlignmentExample);
  edited.xDecoder[0] = [0.2, 0.1, 1];
  for (const [j, value] of edited.xDecoder[0].entries()) {
    const input = page.locator(`#scratch matrix-table[data-key="cross-x-decoder"] tbody tr:first-child td:nth-of-type(${j + 1}) input`);
    await input.fill(String(value));
    await input.press('Enter');
  }
  await page.waitForFunction(() => /not the tutorial's alignment/.test(document.querySelector('#scratch').shadowRoot.querySelector('#scratch-cross-check').textContent));
  await assertTable('cross-weights', reference(edited).weights);

  // An author's own example (child JSON) opens on the cross-attention step and is computed the same way.
  await page.locator('#own-cross').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.getElementById('own-cross').viewElement?.dataset.state === 'ready' && /"le" reads/.test(document.getElementById('own-cross').shadowRoot.querySelector('#scratch-cross-check').textContent), null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.getElementById('own-cross').viewElement.step), 11);
  const own = reference(OWN_CROSS);
  for (const key of ['q', 'k', 'v', 'scores', 'weights', 'output']) {
    const got = await page.evaluate((k) => [...document.getElementById('own-cross').viewElement.querySelectorAll(`matrix-table[data-key="cross-${k}"] tbody tr`)]
      .map((row) => [...row.querySelectorAll('td')].map((td) => Number(td.dataset.value))), key);
    got.forEach((row, i) => row.forEach((w, j) => close(w, own[key][i][j], 1e-5, `own ${key}[${i}][${j}]`)));
  }
  assert.equal(await page.locator('#own-cross #scratch-cross-check').textContent(),
    `"le" reads "the" (${own.weights[0][0].toFixed(2)}), "chat" reads "cat" (${own.weights[1][2].toFixed(2)}), "noir" reads "black" (${own.weights[2][1].toFixed(2)}): the source word each target word reads most.`);
  // A cross example that does not fit says what is wrong.
  await page.evaluate(() => {
    const w = document.createElement('attention-view');
    w.id = 'bad-cross';
    w.view = 'scratch';
    w.append(Object.assign(document.createElement('script'), { type: 'application/json', textContent: '{"source": ["a"], "target": ["b"], "xEncoder": [[1, 2]], "xDecoder": [[1]], "wq": [[1]], "wk": [[1]], "wv": [[1]]}' }));
    document.body.append(w);
  });
  await page.locator('#bad-cross').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.getElementById('bad-cross').dataset.state === 'error');
  assert.equal(await page.locator('#bad-cross .status').textContent(), 'Cannot use the example\'s matrices: wk has 1 rows, expected 2');
  assert.deepEqual(errors, []);
  await page.close();
});
