// The ablation view in headless Chromium. On the playground (default model
// austen-gpt): clicking a head in the layer × head grid knocks it out, and the
// predictions shown before → after, the per-token loss change and the head
// view's attention of later layers equal what the engine computes in Node for
// the same text with and without that head (an independent path: no worker,
// no page); "Most important heads" lists the engine's ranking. With
// austen-bert, the loss change at each [MASK] (its tokens set apart in the
// strip, its layers apart in the grid). The widget's
// `ablate` and `ablation` attributes knock heads out in the ablation view
// and in the head view (its attention equals Node's ablated pass), and a bad
// attribute gets a readable status.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { newPage, openBrowser, resultsDir, settledHash } from './browser.mjs';

const modelsDir = fileURLToPath(new URL('../golden/models/', import.meta.url));
const fixturesDir = fileURLToPath(new URL('./fixtures/', import.meta.url));
const shippedDir = fileURLToPath(new URL('../../models/', import.meta.url));
const TEXT = 'She was not in the least surprised. She was not in the least surprised.';
let session;
let engine;

before(async () => {
  session = await openBrowser({ mounts: { '/test-models/': modelsDir, '/fixtures/': fixturesDir } });
  engine = await createEngine();
});
after(async () => {
  await session?.close();
});

async function loadModel(dir) {
  return engine.loadModel({
    config: readFileSync(`${dir}config.json`, 'utf8'),
    weights: readFileSync(`${dir}model.safetensors`),
    tokenizer: readFileSync(`${dir}tokenizer.json`, 'utf8'),
  });
}

/** The top-k row of a run at `row` as [{ id, probability }]. */
function topRow(run, row) {
  const k = run.topK.shape[1];
  return Array.from({ length: k }, (_, j) => ({ id: run.topK.ids[row * k + j], probability: run.topK.probabilities[row * k + j] }));
}

const shown = (page) => page.evaluate(() => {
  const view = document.querySelector('ablation-view');
  return {
    rows: [...view.querySelectorAll('.ablation-shift tr[data-id]')].map((tr) => ({
      id: Number(tr.dataset.id), token: tr.querySelector('.prediction-token').textContent,
      before: tr.querySelector('.before').textContent, after: tr.querySelector('.after').textContent,
    })),
    changes: [...view.querySelectorAll('.ablation-token')].map((span) => span.dataset.change ?? null),
    pressed: [...view.querySelectorAll('.ablation-head[aria-pressed="true"]')].map((b) => `${b.dataset.layer}:${b.dataset.head}`),
    attentions: Array.from(view.result.attentions.data), // the result the page hands every view
  };
});
const percent = (p) => `${(100 * p).toFixed(1)}%`;

test('clicking a head in the ablation view changes the predictions to the engine\'s for that ablation', async () => {
  const model = await loadModel(`${shippedDir}austen-gpt/`);
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#view=ablation&text=${encodeURIComponent(TEXT)}`);
  await page.waitForSelector('ablation-view .ablation-shift', { timeout: 60000 });
  const runs = await page.evaluate(() => Number(document.body.dataset.run));
  await page.click('ablation-view .ablation-head[data-layer="1"][data-head="0"]');
  await page.waitForFunction((n) => Number(document.body.dataset.run) > n && document.querySelector('ablation-view .ablation-head[aria-pressed="true"]'), runs, { timeout: 30000 });
  const page1 = await shown(page);
  assert.deepEqual(page1.pressed, ['1:0']);

  const intact = model.run(TEXT, { topK: 5, tokenLoss: true });
  const ablated = model.run(TEXT, { topK: 5, tokenLoss: true, ablate: [{ layer: 1, head: 0 }] });
  const last = intact.tokens.length - 1;
  const before = new Map(topRow(intact, last).map((e) => [e.id, e.probability]));
  const afterRow = topRow(ablated, last);
  assert.deepEqual(page1.rows.filter((r) => r.after !== '—').map((r) => r.id).sort(), afterRow.map((e) => e.id).sort());
  for (const e of afterRow) {
    const row = page1.rows.find((r) => r.id === e.id);
    assert.equal(row.after, percent(e.probability), `after of ${row.token}`);
    if (before.has(e.id)) assert.equal(row.before, percent(before.get(e.id)), `before of ${row.token}`);
  }
  assert.ok(afterRow.some((e, i) => Math.abs(e.probability - topRow(intact, last)[i].probability) > 1e-3), 'the head matters here');
  // The loss strip: token i + 1 carries the change of its loss.
  page1.changes.slice(1).forEach((change, i) => {
    assert.ok(Math.abs(Number(change) - (ablated.tokenLoss[i] - intact.tokenLoss[i])) < 1e-3, `loss change of token ${i + 1}`);
  });
  // Every view draws the ablated model's attention, as Node computes it.
  assert.equal(page1.attentions.length, ablated.attentions.data.length);
  let diff = 0;
  page1.attentions.forEach((w, i) => { diff = Math.max(diff, Math.abs(w - ablated.attentions.data[i])); });
  assert.ok(diff < 1e-6, `head view attention vs Node: ${diff}`);

  // Most important heads: the engine's ranking, best first.
  await page.click('ablation-view button[name="rank"]');
  await page.waitForSelector('ablation-view .ablation-ranking li', { timeout: 30000 });
  const listed = await page.evaluate(() => [...document.querySelectorAll('ablation-view .ablation-ranking li')].map((li) => `${li.dataset.layer}:${li.dataset.head}`));
  const ranking = model.rankHeads(intact.tokens.map((t) => t.id));
  assert.deepEqual(listed, ranking.heads.slice(0, listed.length).map((e) => `${e.layer}:${e.head}`));
  await page.screenshot({ path: `${resultsDir}ablation-view.png`, fullPage: true });

  // On the other tabs a banner says the model is shown without the head, and restores it.
  assert.equal(await page.isVisible('#ablation-banner'), false, 'no banner on the Ablation tab itself');
  await page.click('[role=tab][data-view="head"]');
  assert.match(await page.textContent('#ablation-banner'), /^1 head knocked out on the Ablation tab \(layer 2 head 1\): this view shows the model without it\./);
  const runsBefore = await page.evaluate(() => Number(document.body.dataset.run));
  await page.click('#ablation-banner button');
  await page.waitForFunction((n) => Number(document.body.dataset.run) > n, runsBefore, { timeout: 30000 });
  assert.equal(await page.isVisible('#ablation-banner'), false);
  const restored = await page.evaluate(() => Array.from(document.querySelector('ablation-view').result.attentions.data)); // the result every view has
  let intactDiff = 0;
  restored.forEach((w, i) => { intactDiff = Math.max(intactDiff, Math.abs(w - intact.attentions.data[i])); });
  assert.ok(intactDiff < 1e-6, `the head view shows the intact model again: ${intactDiff}`);
  model.dispose();
  assert.deepEqual(errors, []);
});

test('BERT: a click gives the loss change at each [MASK] against the intact model\'s own top prediction', async () => {
  const model = await loadModel(`${shippedDir}austen-bert/`);
  const text = 'She was a [MASK] woman, and he walked to the [MASK] at once.';
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#model=austen-bert&view=ablation&text=${encodeURIComponent(text)}`);
  await page.waitForSelector('ablation-view .ablation-shift', { timeout: 60000 });
  const runs = await page.evaluate(() => Number(document.body.dataset.run));
  await page.click('ablation-view .ablation-head[data-layer="0"][data-head="2"]');
  await page.waitForFunction((n) => Number(document.body.dataset.run) > n && document.querySelector('ablation-view .ablation-head[aria-pressed="true"]'), runs, { timeout: 30000 });
  const { changes } = await shown(page);
  const intact = model.run(text, { topK: 5 });
  const maskLabels = [...intact.maskPositions].map((_, m) => intact.topK.ids[5 * m]);
  const before = model.run(text, { topK: 5, tokenLoss: true, maskLabels });
  const after = model.run(text, { topK: 5, tokenLoss: true, maskLabels, ablate: [{ layer: 0, head: 2 }] });
  const marked = changes.map((c, i) => [i, c]).filter(([, c]) => c !== null);
  assert.deepEqual(marked.map(([i]) => i), [...intact.maskPositions]);
  marked.forEach(([, change], m) => assert.ok(Math.abs(Number(change) - (after.tokenLoss[m] - before.tokenLoss[m])) < 1e-3, `loss change at [MASK] ${m}`));
  model.dispose();
  // WordPiece tokens carry no spaces: each token of the strip is set apart, and a line separates the grid's layers.
  const separated = await page.evaluate(() => {
    const boxes = [...document.querySelectorAll('ablation-view .ablation-token')].map((span) => span.getBoundingClientRect());
    const gaps = boxes.slice(1).map((box, i) => [boxes[i], box]).filter(([left, right]) => Math.abs(right.top - left.top) < 1).map(([left, right]) => right.left - left.right);
    const layerLines = [...document.querySelectorAll('ablation-view .ablation-grid tr')].filter((row) => row.querySelector('th[scope=row]'))
      .map((row) => parseFloat(getComputedStyle(row.querySelector('th')).borderTopWidth));
    return { gaps, layerLines, layers: document.querySelector('ablation-view').result.attentions.shape[0] };
  });
  assert.ok(separated.gaps.length > 5 && separated.gaps.every((gap) => gap >= 1), `gaps between tokens: ${separated.gaps.join(', ')}`);
  assert.ok(separated.layerLines.length === separated.layers && separated.layerLines.every((width) => width >= 1), `lines between layers: ${separated.layerLines.join(', ')}`);
  assert.deepEqual(errors, []);
});

test('the widget\'s ablate and ablation attributes knock heads out in the ablation and head views', async () => {
  const model = await loadModel(`${modelsDir}gpt2-l2-h12-k8-f16/`);
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}fixtures/widget-ablation.html`);
  await page.waitForFunction(() => ['ablation', 'head', 'bad'].every((id) => document.getElementById(id).dataset.state === 'ready' || document.getElementById(id).dataset.state === 'error'), null, { timeout: 60000 });
  await page.waitForFunction(() => document.getElementById('ablation').shadowRoot.querySelector('ablation-view .ablation-shift'), null, { timeout: 30000 });
  const widget = await page.evaluate(() => {
    const view = document.getElementById('ablation').shadowRoot.querySelector('ablation-view');
    return {
      pressed: [...view.querySelectorAll('.ablation-head[aria-pressed="true"]')].map((b) => `${b.dataset.layer}:${b.dataset.head}`),
      mode: view.querySelector('select[name="ablation"]').value,
      after: view.result.ablation.after.predictions.at(-1).top.map((t) => [t.id, t.probability]),
      property: document.getElementById('ablation').ablate,
      head: Array.from(document.getElementById('head').result.attentions.data),
      bad: document.getElementById('bad').shadowRoot.querySelector('.status').textContent,
    };
  });
  assert.deepEqual(widget.pressed, ['0:3', '1:11']);
  assert.equal(widget.mode, 'mean');
  assert.equal(widget.property, '0:3,1:11');
  const text = 'The cat sat. The cat sat.';
  const mean = model.run(text, { topK: 5, ablate: [{ layer: 0, head: 3 }, { layer: 1, head: 11 }], ablation: 'mean' });
  const want = topRow(mean, mean.tokens.length - 1);
  widget.after.forEach(([id, p], i) => {
    assert.equal(id, want[i].id);
    assert.ok(Math.abs(p - want[i].probability) < 1e-6);
  });
  const zero = model.run(text, { ablate: [{ layer: 0, head: 3 }] });
  const intact = model.run(text, {});
  let diff = 0;
  let moved = 0;
  widget.head.forEach((w, i) => {
    diff = Math.max(diff, Math.abs(w - zero.attentions.data[i]));
    moved = Math.max(moved, Math.abs(w - intact.attentions.data[i]));
  });
  assert.ok(diff < 1e-6, `head-view widget vs Node's ablated pass: ${diff}`);
  assert.ok(moved > 1e-3, 'layer 2 attention moved with the ablation');
  assert.match(widget.bad, /The ablate attribute: "0-3" is not LAYER:HEAD/);
  // The attribute follows: removing it restores the intact model.
  await page.evaluate(() => document.getElementById('head').removeAttribute('ablate'));
  await page.waitForFunction(() => document.getElementById('head').runs >= 2, null, { timeout: 30000 });
  const restored = await page.evaluate(() => Array.from(document.getElementById('head').result.attentions.data));
  assert.ok(restored.every((w, i) => Math.abs(w - intact.attentions.data[i]) < 1e-6));
  model.dispose();
  assert.deepEqual(errors, []);
});

// ---- encoder–decoders: a grid per part; the target's loss, the decoder's predictions and the translation without the heads

/** What the ablation view of `root` (the page's document or a widget's shadow root) shows. */
const translationShown = (page, widgetId = null) => page.evaluate((id) => {
  const root = id ? document.getElementById(id).shadowRoot : document;
  const view = root.querySelector('ablation-view');
  return {
    grids: [...view.querySelectorAll('table.ablation-grid')].map((table) => ({
      part: table.dataset.part, layers: table.querySelectorAll('tr.ablation-layer').length,
      heads: table.querySelector('tr.ablation-layer').querySelectorAll('.ablation-head').length,
    })),
    pressed: [...view.querySelectorAll('.ablation-head[aria-pressed="true"]')].map((b) => `${b.dataset.part}:${b.dataset.layer}:${b.dataset.head}`),
    strip: [...view.querySelectorAll('.ablation-token')].map((b) => ({ token: b.textContent, change: b.dataset.change ?? null, pressed: b.getAttribute('aria-pressed') })),
    caption: view.querySelector('.ablation-shift caption')?.textContent ?? null,
    rows: [...view.querySelectorAll('.ablation-shift tr[data-id]')].map((tr) => ({ id: Number(tr.dataset.id), before: tr.querySelector('.before').textContent, after: tr.querySelector('.after').textContent })),
    intact: view.querySelector('.ablation-translations .intact')?.textContent ?? null,
    ablated: view.querySelector('.ablation-translations .ablated')?.textContent ?? null,
  };
}, widgetId);

test('an encoder–decoder\'s Ablation tab: heads of each part change the target\'s loss, the predictions and the translation as the engine computes', async () => {
  const dir = `${shippedDir}gettext-en-fr/`;
  const model = await loadModel(dir);
  const text = 'The file could not be opened.';
  const { page, errors } = await newPage(session.browser);
  // The link's "1:0" is a decoder-only model's head (no part): this model lacks it, and the tab says so.
  await page.goto(`${session.url}#model=gettext-en-fr&view=ablation&ablate=1%3A0&text=${encodeURIComponent(text)}`);
  await page.waitForSelector('ablation-view .ablation-translations .ablated[aria-busy="false"]', { timeout: 60000 });
  assert.match(await page.textContent('ablation-view [data-left-out="1"]'), /^1 head in the link is not in this model/);
  await page.click('ablation-view button[name="clear"]');
  const { config } = model;
  const intact = await translationShown(page);
  assert.deepEqual(intact.grids, [
    { part: 'encoder', layers: config.encoderLayers, heads: config.encoderHeads },
    { part: 'decoder', layers: config.decoderLayers, heads: config.decoderHeads },
    { part: 'cross', layers: config.decoderLayers, heads: config.decoderHeads },
  ]);
  assert.equal(await page.isVisible('select[name="attention"]'), false, 'a grid per part: no part picker');
  const own = model.translate(text);
  assert.equal(intact.intact, own.text);
  assert.deepEqual(intact.strip.map((t) => t.token), own.decoderTokens.slice(1).map((t) => t.display));

  // Knock out the cross-attention head and the encoder head that matter most to this target (the engine's ranking):
  // the link keeps them, the strip and the translation follow.
  const sourceIds = own.sourceTokens.map((t) => t.id);
  const decoderIds = own.decoderTokens.map((t) => t.id);
  const ranking = model.rankHeads(sourceIds, decoderIds);
  const heads = ['encoder', 'cross'].map((part) => ranking.heads.find((e) => e.part === part)).map(({ part, layer, head }) => ({ part, layer, head }));
  for (const { part, layer, head } of [...heads].reverse()) await page.click(`ablation-view table[data-part="${part}"] .ablation-head[data-layer="${layer}"][data-head="${head}"]`);
  const withoutText = model.translate(text, { ablate: heads }).text;
  await page.waitForFunction(() => document.querySelector('ablation-view').result.ablation?.heads.length === 2
    && document.querySelector('ablation-view').result.ablation.translation !== null, null, { timeout: 30000 });
  const ablated = await translationShown(page);
  const names = heads.map(({ part, layer, head }) => `${part}:${layer}:${head}`);
  assert.deepEqual(ablated.pressed, names);
  assert.equal(ablated.ablated, withoutText);
  assert.match(await settledHash(page), new RegExp(`ablate=${encodeURIComponent(names.join(','))}`));
  const before = model.forward(sourceIds, decoderIds, { topK: 5, tokenLoss: true, attentions: false });
  const after = model.forward(sourceIds, decoderIds, { topK: 5, tokenLoss: true, ablate: heads, attentions: false });
  ablated.strip.forEach((t, i) => assert.ok(Math.abs(Number(t.change) - (after.tokenLoss[i] - before.tokenLoss[i])) < 1e-3, `loss change of target token ${i + 1}`));
  const rises = ablated.strip.map((t) => Number(t.change));
  assert.ok(rises.some((c) => c > 0.1), `the heads matter to this target: ${rises.join(', ')}`);
  // The predictions shown at first are at the target token whose loss rose most; a click on another shows its own.
  const most = rises.indexOf(Math.max(...rises));
  assert.equal(ablated.strip[most].pressed, 'true');
  const pick = most === 0 ? 1 : 0;
  await page.click(`ablation-view .ablation-token >> nth=${pick}`);
  const picked = await translationShown(page);
  assert.match(picked.caption, new RegExp(`^Target token ${pick + 1} `));
  const k = 5;
  const topAt = (run) => Array.from({ length: k }, (_, j) => ({ id: run.topK.ids[pick * k + j], p: run.topK.probabilities[pick * k + j] }));
  for (const { id, p } of topAt(after)) assert.equal(picked.rows.find((r) => r.id === id)?.after, percent(p), `after of ${id}`);
  for (const { id, p } of topAt(before)) assert.equal(picked.rows.find((r) => r.id === id)?.before, percent(p), `before of ${id}`);

  // Most important heads: the engine's ranking over the three parts.
  await page.click('ablation-view button[name="rank"]');
  await page.waitForSelector('ablation-view .ablation-ranking li', { timeout: 60000 });
  const listed = await page.evaluate(() => [...document.querySelectorAll('ablation-view .ablation-ranking li')].map((li) => `${li.dataset.part}:${li.dataset.layer}:${li.dataset.head}`));
  assert.deepEqual(listed, ranking.heads.slice(0, listed.length).map((e) => `${e.part}:${e.layer}:${e.head}`));
  await page.screenshot({ path: `${resultsDir}ablation-translation.png`, fullPage: true });
  // On a phone the three grids, their captions and the prediction table fit the page's width.
  await page.setViewportSize({ width: 375, height: 800 });
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 375, 'the Ablation tab is no wider than a 375 px phone');
  await page.setViewportSize({ width: 1280, height: 720 });

  // The heads are knocked out on this tab only: the cross-attention tab draws the intact model, with no banner.
  await page.click('[role=tab][data-view="cross"]');
  assert.equal(await page.isVisible('#ablation-banner'), false);
  const shownCross = await page.evaluate(() => Array.from(document.querySelector('decoding-view').result.cross.attentions.data));
  const intactCross = model.translate(text).crossAttentions.data;
  assert.ok(shownCross.every((w, i) => Math.abs(w - intactCross[i]) < 1e-6), 'the Decoding tab shows the intact model');
  model.dispose();
  assert.deepEqual(errors, []);
});

test('the widget\'s ablate attribute names an encoder–decoder\'s heads by part', async () => {
  const model = await loadModel(`${modelsDir}marian-l2-h4-f32/`);
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}fixtures/widget-ablation.html`);
  await page.locator('#translation').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.getElementById('translation').shadowRoot.querySelector('ablation-view .ablation-translations .ablated[aria-busy="false"]'), null, { timeout: 60000 });
  const shownNow = await translationShown(page, 'translation');
  assert.deepEqual(shownNow.pressed, ['encoder:0:1', 'cross:1:2']);
  assert.deepEqual(shownNow.grids.map((g) => g.part), ['encoder', 'decoder', 'cross']);
  const text = 'The cat sat.';
  const heads = [{ part: 'encoder', layer: 0, head: 1 }, { part: 'cross', layer: 1, head: 2 }];
  const own = model.translate(text);
  const ids = [own.sourceTokens.map((t) => t.id), own.decoderTokens.map((t) => t.id)];
  const before = model.forward(...ids, { tokenLoss: true, attentions: false });
  const after = model.forward(...ids, { tokenLoss: true, ablate: heads, attentions: false });
  shownNow.strip.forEach((t, i) => assert.ok(Math.abs(Number(t.change) - (after.tokenLoss[i] - before.tokenLoss[i])) < 1e-3, `widget loss change ${i + 1}`));
  const ablatedIds = model.translate(text, { ablate: heads }).decoderTokens;
  assert.equal(shownNow.ablated, model.translate(text, { ablate: heads }).text ?? ablatedIds.slice(1).map((t) => t.display).join(' '));
  model.dispose();
  assert.deepEqual(errors, []);
});
