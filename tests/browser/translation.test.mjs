// The playground with an encoder–decoder (Marian) model, in headless
// Chromium: a small random Marian checkpoint of the golden tests
// (tests/golden/models/marian-l2-h4-f32, whose runtime tests/node/seq2seq.test.mjs
// checks against PyTorch) loaded by URL. Typed text is translated with the
// target tokens appearing one by one (the decoding view redrawn after each),
// the engine's greedy tokens and rows; with a target text the decoding and
// matrix views draw the engine's cross-attention (run in Node on the same
// text, 1e-6), the part picker shows the encoder's and the decoder's
// self-attention, and the JSON export and the one-file page carry all three
// parts (the page opened offline). The widget
// does the same with the model: view="cross" with a `target`, and its own
// translation. The shipped gettext-en-fr, picked from the model menu,
// translates typed English with the engine's text, tokens and cross-attention.
// The Neuron tab of each part gives the engine's weights from q and k; the
// Logit lens tab reads the decoder with the engine's numbers.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';

import { downloadOf, newPage, openBrowser, resultsDir, settledHash } from './browser.mjs';
import { createEngine } from '../../dist/engine/engine.js';
import { modelFiles } from '../node/model-golden.mjs';

const MODEL = 'marian-l2-h4-f32';
const modelDir = fileURLToPath(new URL(`../golden/models/${MODEL}/`, import.meta.url));
const SOURCE = 'The cat sat.';
const TARGET = 'Le chat';
// The engine in Node on the same texts: what the page must draw.
const engine = await createEngine();
const reference = await engine.loadModel(modelFiles(MODEL));
const FORCED = reference.run(SOURCE, { target: TARGET }); // tensors over the start token and the target
const TRANSLATED = reference.translate(SOURCE); // tensors over the decoder's inputs: row i wrote decoderTokens[i + 1]
const TYPED = 'Zoë, 42?';
const RETRANSLATED = reference.translate(TYPED);
reference.dispose();
/** Weight [layer][head][row][column] of a { data, shape: [L, H, R, C] } tensor. */
const at = ({ data, shape: [, H, R, C] }, l, h, r, c) => data[((l * H + h) * R + r) * C + c];
const pageDir = mkdtempSync(join(tmpdir(), 'attnplay-translation-'));
// The shipped English → French model, and what the engine in Node makes of the tutorial-style adjective–noun phrase.
const shippedDir = fileURLToPath(new URL('../../models/gettext-en-fr/', import.meta.url));
const PHRASE = 'incorrect binary data format';
const shipped = await engine.loadModel({ config: readFileSync(`${shippedDir}config.json`, 'utf8'), weights: readFileSync(`${shippedDir}model.safetensors`), tokenizer: readFileSync(`${shippedDir}tokenizer.json`, 'utf8') });
const FRENCH = shipped.translate(PHRASE);
shipped.dispose();
// A T5 checkpoint (ReLU, tied output): its neuron view adds each head's relative position bias.
const T5_MODEL = 't5-l2-h4-relu-tied-f32';
const t5Dir = fileURLToPath(new URL(`../golden/models/${T5_MODEL}/`, import.meta.url));
const t5 = await engine.loadModel(modelFiles(T5_MODEL));
const T5_FORCED = t5.run(SOURCE, { target: TARGET });
const T5_BIAS = { encoder: t5.positionBias('encoder', 200), decoder: t5.positionBias('decoder', 200) };
t5.dispose();
let session;

before(async () => {
  writeFileSync(join(pageDir, 'widgets.html'), `<!doctype html><meta charset="utf-8"><title>translation widgets</title><link rel="icon" href="/favicon.svg">
<script type="module" src="/widget/attention-view.js"></script>
<attention-view id="forced" model="/marian/" view="cross" layer="1" heads="2"></attention-view>
<attention-view id="own" model="/marian/" view="cross" controls></attention-view>`);
  session = await openBrowser({ mounts: { '/marian/': modelDir, '/t5/': t5Dir, '/w/': pageDir } });
});
after(async () => {
  await session?.close();
  rmSync(pageDir, { recursive: true, force: true });
});

async function openModel(hash, beforeLoad = async () => {}, folder = 'marian/') {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#model=__own__&${hash}`);
  await page.waitForSelector('#engine-status[data-state="ready"]', { timeout: 30000 });
  await beforeLoad(page);
  await page.fill('#model-url', `${session.url}${folder}`);
  await page.click('#model-url-form button');
  return { page, errors };
}
const runs = (page) => page.evaluate(() => Number(document.body.dataset.run ?? 0));
/** Picks `part` in the Attention menu and returns the neuron view's model once it shows `keys` keys. */
async function neuronModelOf(page, part, keys) {
  await page.selectOption('select[name="attention"]', part);
  await page.waitForFunction((p) => {
    const view = document.querySelector('neuron-view');
    return view.dataset.state === 'ready' && view.neuronModel()?.keys.length === p;
  }, keys, { timeout: 30000 });
  return page.evaluate(() => document.querySelector('neuron-view').neuronModel());
}
const close = (a, b, tolerance, what) => assert.ok(Math.abs(a - b) <= tolerance, `${what}: ${a} vs ${b}`);

test('typed text is translated token by token, each token drawn with its cross-attention row', async () => {
  // Record every result the decoding view is given, from before the model loads: the steps arrive one by one.
  const { page, errors } = await openModel(`text=${encodeURIComponent(SOURCE)}&view=cross`, (p) => p.evaluate(() => {
    const view = document.querySelector('decoding-view');
    const { get, set } = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(view), 'result');
    window.decodingRows = [];
    Object.defineProperty(view, 'result', { get() { return get.call(this); }, set(value) { if (value) window.decodingRows.push(value.cross.attentions.shape[2]); set.call(this, value); } });
  }));
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  const rows = await page.evaluate(() => window.decodingRows);
  const steps = rows.length - 1; // the last result is the whole run's
  assert.equal(steps, TRANSLATED.decoderTokens.length - 1);
  assert.deepEqual(rows.slice(0, steps), Array.from({ length: steps }, (_, i) => i + 1), 'one more row per step');
  assert.equal(rows[steps], steps, 'the final result has every step');

  // The engine's greedy tokens, each step's row drawn in the decoding view against the source tokens.
  const model = await page.evaluate(() => document.querySelector('decoding-view').decodingModel());
  assert.equal(model.steps, steps);
  assert.deepEqual(model.sourceLabels, TRANSLATED.sourceTokens.map((t) => t.display));
  assert.deepEqual(model.targetLabels, TRANSLATED.decoderTokens.slice(1).map((t) => t.display));
  // Layer 1, the mean of all 4 heads (float64 mean of the engine's rows).
  const mean = (q, k) => [0, 1, 2, 3].reduce((sum, h) => sum + at(TRANSLATED.crossAttentions, 0, h, q, k), 0) / 4;
  assert.deepEqual(model.heads, [0, 1, 2, 3]);
  model.rows.forEach((row, q) => row.forEach((w, k) => close(w, mean(q, k), 1e-6, `step ${q} key ${k}`)));
  const ids = await page.evaluate(() => document.querySelector('decoding-view').result.tokens.filter((t) => t.typeId === 1).map((t) => t.id));
  assert.deepEqual(ids, TRANSLATED.decoderTokens.slice(1).map((t) => t.id));
  assert.ok(!(await page.locator('#translation').isHidden()));
  assert.ok(!(await page.locator('[role=tab][data-view="cross"]').isHidden()), 'the Decoding tab');
  assert.ok(!(await page.locator('[role=tab][data-view="neuron"]').isHidden()), 'the Neuron tab (its parts: the last test)');
  assert.ok(!(await page.locator('[role=tab][data-view="lens"]').isHidden()), 'the Logit lens tab (its numbers: the last test)');
  assert.match(await page.textContent('#engine-status'), new RegExp(`${TRANSLATED.sourceTokens.length} source → ${steps} target tokens · encoder 2 × 4, decoder 2 × 4`));

  // Typing other text translates it again.
  await page.fill('#text-a', TYPED);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 2, null, { timeout: 60000 });
  const again = await page.evaluate(() => document.querySelector('decoding-view').decodingModel());
  assert.deepEqual(again.sourceLabels, RETRANSLATED.sourceTokens.map((t) => t.display));
  assert.deepEqual(again.targetLabels, RETRANSLATED.decoderTokens.slice(1).map((t) => t.display));
  assert.equal(await page.locator('#translation output').textContent(), RETRANSLATED.text);
  assert.deepEqual(errors, []);
  await page.close();
});

test('with a target text every view draws the engine\'s attention; the part picker and the exports', async () => {
  const { page, errors } = await openModel(`text=${encodeURIComponent(SOURCE)}&target=${encodeURIComponent(TARGET)}&view=cross&layer=1&heads=2`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  const T = FORCED.decoderTokens.length - 1; // rows: the steps that wrote the target tokens (the last position wrote nothing given)
  const S = FORCED.sourceTokens.length;
  const cross = (l, h, q, k) => at(FORCED.crossAttentions, l, h, q, k);

  // The decoding view: layer 2, head 3, every step.
  const drawn = await page.evaluate(() => document.querySelector('decoding-view').decodingModel());
  assert.deepEqual([drawn.layer, drawn.heads, drawn.steps], [1, [2], T]);
  drawn.rows.forEach((row, q) => row.forEach((w, k) => close(w, cross(1, 2, q, k), 1e-6, `cross [${q}][${k}]`)));
  assert.deepEqual(drawn.targetLabels, FORCED.decoderTokens.slice(1).map((t) => t.display));
  assert.equal(await page.locator('#translation output').textContent(), TARGET);

  // The matrix view of the cross part: target rows × source columns, the same numbers.
  await page.click('[role=tab][data-view="matrix"]');
  const heat = await page.evaluate(() => document.querySelector('matrix-view').heatModel());
  assert.equal(heat.values.length, T * S);
  heat.values.forEach((w, i) => close(w, cross(1, 2, Math.floor(i / S), i % S), 1e-6, `matrix ${i}`));

  // The part picker: the decoder's self-attention (causal) and the encoder's.
  await page.selectOption('select[name="attention"]', 'decoder');
  await page.waitForFunction((t) => document.querySelector('matrix-view').heatModel()?.values.length === t * t, T);
  const decoder = await page.evaluate(() => document.querySelector('matrix-view').heatModel());
  decoder.values.forEach((w, i) => close(w, at(FORCED.decoderAttentions, 1, 2, Math.floor(i / T), i % T), 1e-6, `decoder ${i}`));
  assert.ok(decoder.masked[1] === 1 && decoder.masked[T] === 0, 'causal mask drawn');
  await page.selectOption('select[name="attention"]', 'encoder');
  await page.waitForFunction((s) => document.querySelector('matrix-view').heatModel()?.values.length === s * s, S);
  const encoder = await page.evaluate(() => document.querySelector('matrix-view').heatModel());
  encoder.values.forEach((w, i) => close(w, at(FORCED.encoderAttentions, 1, 2, Math.floor(i / S), i % S), 1e-6, `encoder ${i}`));
  assert.match(await settledHash(page), /part=encoder/);

  // The JSON export: all three parts, Hugging Face's names, the widget's data mode reads it.
  const json = JSON.parse((await downloadOf(page, '#export-json')).bytes.toString('utf8'));
  assert.deepEqual(Object.keys(json).filter((key) => key.endsWith('_attentions')), ['encoder_attentions', 'decoder_attentions', 'cross_attentions']);
  assert.equal(json.target_tokens.length, T);
  json.cross_attentions[1][2].forEach((row, q) => row.forEach((w, k) => close(w, cross(1, 2, q, k), 1e-6, `exported cross [${q}][${k}]`)));
  assert.deepEqual(json.decoder_tokens, FORCED.decoderTokens.slice(0, -1).map((t) => t.display));

  // "Download as a page": the three parts in one file, opened offline on the part shown (the encoder's).
  const file = join(pageDir, 'translation.html');
  writeFileSync(file, (await downloadOf(page, '#export-page')).bytes);
  const offline = await session.browser.newContext({ offline: true });
  await offline.route('**/*', (route) => (route.request().url().startsWith('file:') ? route.continue() : route.abort()));
  const saved = await offline.newPage();
  await saved.goto(pathToFileURL(file).href);
  await saved.waitForFunction(() => document.querySelector('attention-view')?.dataset.state === 'ready', null, { timeout: 30000 });
  const savedHeat = await saved.evaluate(() => document.querySelector('attention-view').viewElement.heatModel());
  savedHeat.values.forEach((w, i) => close(w, at(FORCED.encoderAttentions, 1, 2, Math.floor(i / S), i % S), 1e-6, `saved encoder ${i}`));
  await saved.locator('select[name="attention"]').selectOption('cross');
  await saved.waitForFunction((n) => document.querySelector('attention-view').viewElement.heatModel()?.values.length === n, T * S);
  const savedCross = await saved.evaluate(() => document.querySelector('attention-view').viewElement.heatModel());
  assert.deepEqual(savedCross.rowLabels, FORCED.decoderTokens.slice(1).map((t) => t.display), 'rows: the token each wrote');
  savedCross.values.forEach((w, i) => close(w, cross(1, 2, Math.floor(i / S), i % S), 1e-6, `saved cross ${i}`));
  await offline.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test('the widget: view="cross" with a target draws the engine\'s cross-attention; without one it translates; its neuron view and lens', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}w/widgets.html`);
  await page.evaluate(([source, target]) => {
    for (const id of ['forced', 'own']) document.getElementById(id).text = source;
    document.getElementById('forced').target = target;
  }, [SOURCE, TARGET]);
  for (const id of ['forced', 'own']) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    await page.waitForFunction((i) => document.getElementById(i).runs >= 1 && document.getElementById(i).dataset.state === 'ready', id, { timeout: 60000 });
  }
  const forced = await page.evaluate(() => document.getElementById('forced').viewElement.decodingModel());
  const T = FORCED.decoderTokens.length - 1;
  assert.deepEqual([forced.layer, forced.heads, forced.steps], [1, [2], T]);
  forced.rows.forEach((row, q) => row.forEach((w, k) => close(w, at(FORCED.crossAttentions, 1, 2, q, k), 1e-6, `widget cross [${q}][${k}]`)));
  const own = await page.evaluate(() => ({ ids: document.getElementById('own').result.tokens.filter((t) => t.typeId === 1).map((t) => t.id), picker: document.getElementById('own').shadowRoot.querySelector('select[name="attention"]')?.closest('label').hidden }));
  assert.deepEqual(own.ids, TRANSLATED.decoderTokens.slice(1).map((t) => t.id));
  assert.equal(own.picker, true, 'the decoding view always shows cross-attention: no part picker there');
  // Another view shows the part the `attention` attribute names.
  await page.evaluate(() => { const w = document.getElementById('own'); w.view = 'matrix'; w.setAttribute('attention', 'encoder'); });
  await page.waitForFunction((s) => document.getElementById('own').viewElement.heatModel()?.values.length === s * s, TRANSLATED.sourceTokens.length);
  // The neuron view of the forced run's cross-attention: the last target token's query over every source key, the engine's weights.
  await page.evaluate(() => { document.getElementById('forced').view = 'neuron'; });
  const S = FORCED.sourceTokens.length;
  await page.waitForFunction((s) => document.getElementById('forced').viewElement.neuronModel?.()?.keys.length === s, S, { timeout: 30000 });
  const neuron = await page.evaluate(() => document.getElementById('forced').viewElement.neuronModel());
  assert.equal(neuron.query, S + T - 1);
  neuron.keys.forEach((key, k) => close(key.softmax, at(FORCED.crossAttentions, 1, 2, T - 1, k), 1e-5, `widget neuron key ${k}`));
  // Its logit lens reads the decoder: a row per decoder layer and the embeddings, a column per decoder input.
  await page.evaluate(() => { document.getElementById('forced').view = 'lens'; });
  await page.waitForFunction(() => document.getElementById('forced').viewElement.lensModel?.() != null, null, { timeout: 30000 });
  const lens = await page.evaluate(() => document.getElementById('forced').viewElement.lensModel());
  assert.deepEqual([lens.cells.length, lens.columnLabels], [3, FORCED.decoderTokens.slice(0, -1).map((t) => t.display)]);
  assert.deepEqual(errors, []);
  await page.close();
});

test('gettext-en-fr in the page: typed English becomes French token by token, with the engine\'s cross-attention', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#view=cross&layer=2`);
  await page.waitForFunction(() => [...document.querySelectorAll('#model-select option')].some((o) => o.value === 'gettext-en-fr'), null, { timeout: 30000 });
  await page.selectOption('#model-select', 'gettext-en-fr');
  await page.fill('#text-a', PHRASE);
  await page.waitForFunction((text) => document.querySelector('#translation output').textContent === text, FRENCH.text, { timeout: 60000 });
  const drawn = await page.evaluate(() => document.querySelector('decoding-view').decodingModel());
  assert.deepEqual(drawn.targetLabels, FRENCH.decoderTokens.slice(1).map((t) => t.display));
  assert.deepEqual(drawn.sourceLabels, FRENCH.sourceTokens.map((t) => t.display));
  // The last layer, the mean of its 4 heads.
  const mean = (q, k) => [0, 1, 2, 3].reduce((sum, h) => sum + at(FRENCH.crossAttentions, 2, h, q, k), 0) / 4;
  drawn.rows.forEach((row, q) => row.forEach((w, k) => close(w, mean(q, k), 1e-6, `gettext-en-fr step ${q} key ${k}`)));
  assert.deepEqual(errors, []);
  await page.close();
});

// Gap: the encoder–decoder had no Neuron tab. For each part the view's q·k arithmetic (from the traced
// head's q and k) gives the engine's weights of that part (the engine: checked against PyTorch in Node).
test('the Neuron tab of an encoder–decoder: the encoder, the decoder and cross-attention, each the engine\'s weights', async () => {
  const { page, errors } = await openModel(`text=${encodeURIComponent(SOURCE)}&target=${encodeURIComponent(TARGET)}&view=neuron&layer=1&heads=2`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  assert.equal(await page.isVisible('[role=tab][data-view="neuron"]'), true);
  const S = FORCED.sourceTokens.length;
  const T = FORCED.decoderTokens.length - 1;
  const parts = {
    encoder: { tensor: FORCED.encoderAttentions, query: 0, row: 0, keys: S },
    decoder: { tensor: FORCED.decoderAttentions, query: T - 1, row: T - 1, keys: T },
    cross: { tensor: FORCED.crossAttentions, query: S + T - 1, row: T - 1, keys: S }, // drawn over [source, target] tokens
  };
  for (const [part, want] of Object.entries(parts)) {
    const shown = await neuronModelOf(page, part, want.keys);
    assert.deepEqual([shown.layer, shown.head, shown.query], [1, 2, want.query], part);
    shown.keys.forEach((key, k) => {
      close(key.softmax, at(want.tensor, 1, 2, want.row, k), 1e-5, `${part}: softmax(q·k/√d_k) of key ${k}`);
      close(key.modelWeight, at(want.tensor, 1, 2, want.row, k), 1e-6, `${part}: the model's weight of key ${k}`);
    });
    if (part === 'cross') assert.match(await page.textContent('neuron-view'), /the query comes from the decoder \(a target token\), the keys from the encoder/);
  }
  await page.screenshot({ path: `${resultsDir}translation-neuron-cross.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

// T5 has no position embeddings: each head adds a learned bias for the distance key − query. The neuron view
// shows it as a column between the (unscaled) q·k and the softmax, and a panel draws each head's bias over the
// distances with its buckets, the chosen key marked; the numbers are the engine's (Node: against PyTorch).
test('T5 in the Neuron tab: q·k unscaled plus the engine\'s position bias gives its weights; the bias panel', async () => {
  const { page, errors } = await openModel(`text=${encodeURIComponent(SOURCE)}&target=${encodeURIComponent(TARGET)}&view=neuron&layer=1&heads=2`, undefined, 't5/');
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  const S = T5_FORCED.sourceTokens.length;
  const T = T5_FORCED.decoderTokens.length - 1;
  const parts = {
    encoder: { tensor: T5_FORCED.encoderAttentions, query: 0, row: 0, keys: S },
    decoder: { tensor: T5_FORCED.decoderAttentions, query: T - 1, row: T - 1, keys: T },
    cross: { tensor: T5_FORCED.crossAttentions, query: S + T - 1, row: T - 1, keys: S },
  };
  for (const [part, want] of Object.entries(parts)) {
    const shown = await neuronModelOf(page, part, want.keys);
    assert.deepEqual([shown.layer, shown.head, shown.query, shown.divisor], [1, 2, want.query, 1], `${part}: T5's q·k is unscaled`);
    assert.equal(shown.positionBias, part !== 'cross', `${part}: a position bias in self-attention only`);
    shown.keys.forEach((key, k) => {
      close(key.softmax, at(want.tensor, 1, 2, want.row, k), 1e-5, `${part}: softmax(q·k + bias) of key ${k}`);
      if (part === 'cross') return assert.equal(key.bias, 0);
      const { span, bias: { data, shape: [, columns] } } = T5_BIAS[part];
      close(key.bias, data[2 * columns + span + k - want.query], 1e-6, `${part}: the bias of head 3 at distance ${k - want.query}`);
    });
    const panel = await page.$$eval('neuron-view .bias-panel', (panels) => panels.map((p) => ({
      text: p.querySelector('.rope-summary').textContent,
      heads: p.querySelectorAll('.bias-other').length + p.querySelectorAll('.bias-head').length,
      chosen: p.querySelectorAll('.bias-table tr.bias-chosen').length,
    })));
    if (part === 'cross') {
      assert.deepEqual(panel, [], 'cross-attention has no bias panel');
      continue;
    }
    assert.equal(panel.length, 1, `${part}: the bias panel`);
    assert.equal(panel[0].heads, 4, 'a line per head');
    assert.equal(panel[0].chosen, 1, 'the bucket of the key shown is marked');
    assert.match(panel[0].text, /Relative position bias \(T5\)/);
    assert.ok((await page.evaluate(() => document.querySelector('neuron-view').svg())).includes('+ position bias'), `${part}: the SVG export has the bias column`);
    await page.screenshot({ path: `${resultsDir}t5-neuron-${part}.png`, fullPage: true });
  }
  assert.deepEqual(errors, []);
  await page.close();
});

// Gap: the encoder–decoder had no Logit lens tab. It reads the decoder (every part of the picker alike):
// each decoder layer's residual stream through the output layer, the engine's numbers (Node: against PyTorch).
test('the Logit lens tab of an encoder–decoder reads its decoder, with the engine\'s numbers', async () => {
  const { page, errors } = await openModel(`text=${encodeURIComponent(SOURCE)}&target=${encodeURIComponent(TARGET)}&view=lens`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  await page.waitForSelector('lens-view td', { timeout: 30000 });
  const shown = await page.evaluate(() => document.querySelector('lens-view').lensModel());
  const inputs = FORCED.decoderTokens.slice(0, -1);
  const model = await engine.loadModel(modelFiles(MODEL));
  const { lens } = model.forward(FORCED.sourceTokens.map((t) => t.id), inputs.map((t) => t.id), { lens: 5 });
  model.dispose();
  const [rows, T, k] = lens.shape;
  assert.deepEqual([shown.cells.length, shown.columnLabels.length], [rows, T]);
  assert.deepEqual(shown.columnLabels, inputs.map((t) => t.display));
  assert.equal(rows, 3, 'the embeddings and 2 decoder layers');
  shown.cells.forEach((row, r) => row.forEach((cell, t) => {
    const at = (r * T + t) * k;
    assert.deepEqual(cell.top.map((item) => item.id), Array.from(lens.ids.subarray(at, at + k)), `row ${r} position ${t}`);
    cell.top.forEach((item, i) => close(item.probability, lens.probabilities[at + i], 1e-7, `row ${r} position ${t} rank ${i}`));
  }));
  assert.match(await page.textContent('lens-view .lens-caption'), /the decoder’s residual stream .* through the output layer/);
  // While the decoder's lens is read, a part's result says so, not that the model has no lens.
  const waiting = await page.evaluate(() => {
    const view = document.querySelector('lens-view');
    const kept = view.result;
    view.result = { ...kept, lens: null, decoderLens: false }; // a part's result, as translationParts makes it
    const title = view.querySelector('.view-title');
    const shown = [title.textContent, title.hasAttribute('data-error')];
    view.result = kept;
    return shown;
  });
  assert.deepEqual(waiting, ['Reading the decoder’s logit lens…', false]);
  assert.equal(await page.isVisible('select[name="attention"]'), false, 'the lens reads the decoder: no part picker');
  assert.deepEqual(errors, []);
  await page.close();
});
