// The <attention-view> widget in headless Chromium, on fixture pages served
// with a strict Content-Security-Policy (default-src 'self'; script-src 'self'
// 'wasm-unsafe-eval', so no inline scripts or styles, no eval):
// three widgets (one plain, one inside a container with hostile CSS, one far
// below the fold) draw the engine's attention (head view line model against
// the engine's numbers computed in Node), share one worker, one WASM fetch and
// one download per model, do nothing before they are scrolled into view,
// follow attribute and property changes (view="rollout" with rollout-method
// equal to the float64 rollout and flow of the engine's attention, and
// rollout-display="lines" drawing flow as the head view's lines), and fire
// token-select / head-select on reader clicks. Scratch widgets with an author's own matrices show
// softmax(Q·Kᵀ/√d_k) equal to a naive double-precision computation here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { assertHeadLines, headViewLines, newPage, openBrowser, resultsDir } from './browser.mjs';
import { refFlow, refRollout } from '../node/rollout-reference.mjs';

const modelsDir = fileURLToPath(new URL('../golden/models/', import.meta.url));
const fixturesDir = fileURLToPath(new URL('./fixtures/', import.meta.url));
// No 'unsafe-inline' styles either: style-src falls back to default-src 'self'.
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";
const GPT = 'gpt2-l2-h12-k8-f16';
const BERT = 'bert-l2-h2-k32-f32';
let session;
let engine;
const models = {};

before(async () => {
  session = await openBrowser({ mounts: { '/test-models/': modelsDir, '/fixtures/': fixturesDir }, headers: { 'Content-Security-Policy': CSP } });
  engine = await createEngine();
  for (const name of [GPT, BERT]) {
    models[name] = await engine.loadModel({
      config: readFileSync(`${modelsDir}${name}/config.json`, 'utf8'),
      weights: readFileSync(`${modelsDir}${name}/model.safetensors`),
      tokenizer: readFileSync(`${modelsDir}${name}/tokenizer.json`, 'utf8'),
    });
  }
});
after(async () => {
  for (const model of Object.values(models)) model.dispose();
  await session?.close();
});

const runs = (page, id) => page.evaluate((i) => document.getElementById(i).runs, id);
const waitRuns = (page, id, n) => page.waitForFunction(([i, k]) => document.getElementById(i).runs >= k, [id, n], { timeout: 30000 });
const lineModel = (page, id) => page.evaluate((i) => document.getElementById(i).shadowRoot.querySelector('head-view').lineModel(), id);

/** Every drawn line against the engine's weights, by the head view's rule (headViewLines). */
function assertLines(lines, want, layer, heads, focusRow = null) {
  const [, H, T] = want.attentions.shape;
  const weight = (head, q, k) => want.attentions.data[((layer * H + head) * T + q) * T + k];
  const all = Array.from({ length: T }, (_, i) => i);
  assertHeadLines(lines, headViewLines(weight, heads, all, all, focusRow));
}

async function openWidgets() {
  const { page, errors } = await newPage(session.browser);
  const requests = [];
  let workers = 0;
  page.on('request', (request) => requests.push(new URL(request.url()).pathname));
  page.on('worker', () => { workers += 1; });
  await page.goto(`${session.url}fixtures/widgets.html`);
  await waitRuns(page, 'plain', 1);
  await waitRuns(page, 'hostile', 1);
  return { page, errors, requests, workers: () => workers };
}

test('three widgets under a strict CSP: the engine\'s attention, one engine, no work off-screen, no CSS leaks', async () => {
  const { page, errors, requests, workers } = await openWidgets();
  // The policy is really enforced on this page: eval is refused, and only the probe's attempt was.
  assert.equal(await page.evaluate(() => document.documentElement.dataset.evalAllowed), 'no');
  const violations = await page.evaluate(() => window.cspViolations);
  assert.deepEqual(violations.map((v) => v.source.split('/').pop()), ['csp-probe.js']);

  // The off-screen widget has done nothing: no run, no view, no download of its model.
  assert.equal(await runs(page, 'offscreen'), 0);
  assert.equal(await page.evaluate(() => document.getElementById('offscreen').viewElement), null);
  assert.equal(await page.getAttribute('#offscreen', 'data-state'), 'idle');
  assert.ok(!requests.some((path) => path.includes(BERT)), 'no request for the off-screen widget\'s model');

  assertLines(await lineModel(page, 'plain'), models[GPT].run('The cat sat on the mat.'), 0, [...Array(12).keys()]);
  assertLines(await lineModel(page, 'hostile'), models[GPT].run('A truth, universally.'), 1, [...Array(12).keys()]);

  // Hostile CSS: the widget is still displayed and drawn, in its own colours and fonts.
  const hostile = await page.evaluate(() => {
    const widget = document.getElementById('hostile');
    const root = widget.shadowRoot.querySelector('.root');
    const canvas = widget.shadowRoot.querySelector('head-view canvas');
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let coloured = 0;
    for (let i = 0; i < pixels.length; i += 4) if (pixels[i + 3] > 0 && Math.max(pixels[i], pixels[i + 1], pixels[i + 2]) - Math.min(pixels[i], pixels[i + 1], pixels[i + 2]) > 40) coloured += 1;
    const style = getComputedStyle(root);
    return { height: widget.getBoundingClientRect().height, canvasHeight: canvas.getBoundingClientRect().height, coloured, color: style.color, font: style.fontFamily, spacing: style.letterSpacing, hostText: getComputedStyle(document.querySelector('.hostile-text')).color };
  });
  assert.ok(hostile.height > 200 && hostile.canvasHeight > 100, JSON.stringify(hostile));
  assert.ok(hostile.coloured > 200, `${hostile.coloured} coloured pixels`);
  assert.notEqual(hostile.color, 'rgb(255, 0, 0)');
  assert.doesNotMatch(hostile.font, /monospace/);
  assert.equal(hostile.spacing, 'normal');
  assert.equal(hostile.hostText, 'rgb(255, 0, 0)', 'the host page\'s own rule still applies to its own text');
  // The widget's styles (p, table, button, colours) do not reach the host page.
  const host = await page.evaluate(() => ({
    p: getComputedStyle(document.getElementById('page-text')).margin,
    colour: getComputedStyle(document.getElementById('page-text')).color,
    button: getComputedStyle(document.getElementById('page-button')).padding,
    table: getComputedStyle(document.getElementById('page-table')).borderCollapse,
  }));
  assert.deepEqual(host, { p: '7px 0px', colour: 'rgb(0, 100, 0)', button: '1px 3px', table: 'separate' });

  // Scrolled into view, the third widget runs (a BERT sentence pair).
  await page.locator('#offscreen').scrollIntoViewIfNeeded();
  await waitRuns(page, 'offscreen', 1);
  assertLines(await lineModel(page, 'offscreen'), models[BERT].run('The river bank.', { textB: 'It floods.' }), 0, [0, 1]);
  await page.screenshot({ path: `${resultsDir}widget-page.png`, fullPage: true });

  // One worker, one WASM fetch, one download of each model for all three widgets.
  const count = (pattern) => requests.filter((path) => pattern.test(path)).length;
  assert.equal(workers(), 1);
  assert.equal(count(/engine-worker\.js$/), 1);
  assert.equal(count(/\.wasm$/), 1);
  assert.equal(count(new RegExp(`${GPT}/model\\.safetensors$`)), 1);
  assert.equal(count(new RegExp(`${BERT}/model\\.safetensors$`)), 1);
  assert.deepEqual(errors, []);
  await page.close();
});

test('attribute and property changes update the view; reader clicks fire token-select and head-select', async () => {
  const { page, errors } = await openWidgets();
  await page.evaluate(() => {
    window.widgetEvents = [];
    for (const type of ['token-select', 'head-select']) document.addEventListener(type, (e) => window.widgetEvents.push({ type, id: e.target.id, detail: e.detail }));
  });
  const events = () => page.evaluate(() => window.widgetEvents);

  // Attributes: layer and heads redraw at once; a new text runs again.
  await page.evaluate(() => { const w = document.getElementById('plain'); w.setAttribute('layer', '1'); w.setAttribute('heads', '0,2'); });
  assertLines(await lineModel(page, 'plain'), models[GPT].run('The cat sat on the mat.'), 1, [0, 2]);
  const before = await runs(page, 'plain');
  await page.evaluate(() => document.getElementById('plain').setAttribute('text', 'Dogs bark.'));
  await waitRuns(page, 'plain', before + 1);
  const dogs = models[GPT].run('Dogs bark.');
  assertLines(await lineModel(page, 'plain'), dogs, 1, [0, 2]);
  // Properties: a locked token shows only its lines.
  await page.evaluate(() => { document.getElementById('plain').token = 3; });
  assertLines(await lineModel(page, 'plain'), dogs, 1, [0, 2], 3);
  assert.deepEqual(await page.evaluate(() => { const w = document.getElementById('plain'); return [w.layer, w.heads, w.token, w.text]; }), [1, [0, 2], 3, 'Dogs bark.']);
  assert.deepEqual(await events(), [], 'programmatic changes fire no reader events');

  // Reader: click query token 1, then head chip 3 (toggles head index 2 off).
  await page.evaluate(() => { document.getElementById('plain').token = null; });
  await page.locator('#plain head-view canvas').click({ position: { x: 60, y: 8 + 1.5 * 20 } });
  await page.locator('#plain .head-chip >> nth=2').click();
  assert.deepEqual(await events(), [
    { type: 'token-select', id: 'plain', detail: { token: 1, display: dogs.tokens[1].display, layer: 1 } },
    { type: 'head-select', id: 'plain', detail: { layer: 1, heads: [0] } },
  ]);
  assertLines(await lineModel(page, 'plain'), dogs, 1, [0], 1);

  // Switching views through the attribute; an editable widget reruns on the reader's text.
  await page.evaluate(() => { document.getElementById('hostile').view = 'matrix'; });
  assert.equal(await page.evaluate(() => document.getElementById('hostile').viewElement.localName), 'matrix-view');
  // The rollout view of the model's attention (all layers), then attention flow by the rollout-method attribute.
  const truth = models[GPT].run('A truth, universally.');
  const assertRolled = (heat, expected, what) => expected.forEach((row, q) => row.forEach((v, k) => assert.ok(Math.abs(heat.values[q * row.length + k] - v) < 1e-6, `${what} [${q}][${k}]`)));
  await page.evaluate(() => { document.getElementById('hostile').view = 'rollout'; });
  // Computed in the engine worker (the C++ core): the map arrives after the switch.
  await page.waitForFunction(() => document.getElementById('hostile').viewElement.heatModel() !== null);
  const rolled = await page.evaluate(() => document.getElementById('hostile').viewElement.heatModel());
  assert.equal(rolled.title, 'Attention rollout over layers 1–2 (mean of all 12 heads, plus the residual)');
  assertRolled(rolled, refRollout(truth.attentions), 'rollout');
  await page.evaluate(() => document.getElementById('hostile').setAttribute('rollout-method', 'flow'));
  await page.waitForFunction(() => document.getElementById('hostile').viewElement.heatModel()?.title.startsWith('Attention flow'));
  const flowed = await page.evaluate(() => document.getElementById('hostile').viewElement.heatModel());
  assert.match(flowed.title, /^Attention flow over layers 1–2 /);
  assertRolled(flowed, refFlow(truth.attentions), 'flow');
  // rollout-display="lines": the flow map as the head view's lines; the threshold leaves out the lines below it, as in the matrix form.
  await page.evaluate(() => { const w = document.getElementById('hostile'); w.setAttribute('rollout-display', 'lines'); w.setAttribute('threshold', '0.05'); });
  const flow = refFlow(truth.attentions);
  const all = [...flow.keys()];
  const flowLines = headViewLines((head, q, k) => flow[q][k], [0], all, all);
  for (const [key, { w }] of flowLines) if (w < 0.05) flowLines.delete(key);
  assertHeadLines(await page.evaluate(() => document.getElementById('hostile').viewElement.lineModel()), flowLines);
  assert.equal(await page.evaluate(() => document.getElementById('hostile').rolloutDisplay), 'lines');
  assert.match(await page.evaluate(() => document.getElementById('hostile').viewElement.querySelector('.head-view-legend').textContent), /^Attention flow of all 2 layers combined: /);
  await page.evaluate(() => { const w = document.getElementById('hostile'); w.removeAttribute('rollout-display'); w.removeAttribute('threshold'); });
  await page.evaluate(() => document.getElementById('hostile').setAttribute('editable', ''));
  const beforeEdit = await runs(page, 'hostile');
  await page.locator('#hostile textarea.text-a').fill('Emma.');
  await waitRuns(page, 'hostile', beforeEdit + 1);
  const tokens = await page.evaluate(() => document.getElementById('hostile').result.tokens.map((t) => t.id));
  assert.deepEqual(tokens, models[GPT].run('Emma.').tokens.map((t) => t.id));

  // theme and height.
  const look = () => page.evaluate(() => {
    const root = document.getElementById('plain').shadowRoot;
    return { background: getComputedStyle(root.querySelector('.root')).backgroundColor, maxHeight: getComputedStyle(root.querySelector('.view-slot')).maxHeight };
  });
  await page.evaluate(() => { const w = document.getElementById('plain'); w.theme = 'light'; w.height = 300; });
  assert.deepEqual(await look(), { background: 'rgb(251, 251, 253)', maxHeight: '300px' });
  await page.evaluate(() => { const w = document.getElementById('plain'); w.theme = 'dark'; w.height = '20rem'; });
  assert.deepEqual(await look(), { background: 'rgb(22, 22, 26)', maxHeight: '320px' });
  assert.deepEqual(errors, []);

  // A model folder that does not exist: a readable message in the widget.
  await page.evaluate(() => document.getElementById('plain').setAttribute('model', '/test-models/no-such-model/'));
  await page.waitForSelector('#plain[data-state="error"]', { timeout: 20000 });
  assert.match(await page.evaluate(() => document.getElementById('plain').shadowRoot.querySelector('.status').textContent), /^Could not load the model \/test-models\/no-such-model\/: .+/);
  await page.close();
});

// softmax(Q·Kᵀ/√d_k) and its product with V in double precision.
function naiveAttention({ x, wq, wk, wv }) {
  const mul = (a, b) => a.map((row) => b[0].map((_, j) => row.reduce((sum, v, k) => sum + v * b[k][j], 0)));
  const q = mul(x, wq);
  const k = mul(x, wk);
  const v = mul(x, wv);
  const dk = wq[0].length;
  const weights = q.map((qi) => {
    const scores = k.map((kj) => qi.reduce((sum, value, t) => sum + value * kj[t], 0) / Math.sqrt(dk));
    const top = Math.max(...scores);
    const e = scores.map((s) => Math.exp(s - top));
    const total = e.reduce((a, b) => a + b, 0);
    return e.map((value) => value / total);
  });
  return { weights, output: mul(weights, v) };
}

test('scratch widgets show an author\'s matrices (child JSON or attributes); bad matrices get a clear message', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}fixtures/widget-scratch.html`);
  const table = (id, key) => page.evaluate(([i, k]) => [...document.getElementById(i).shadowRoot.querySelectorAll(`matrix-table[data-key="${k}"] tbody tr`)]
    .map((row) => [...row.querySelectorAll('td')].map((td) => Number(td.dataset.value))), [id, key]);
  const examples = {
    'from-script': JSON.parse(readFileSync(`${fixturesDir}widget-scratch.html`, 'utf8').match(/<script type="application\/json">([\s\S]*?)<\/script>/)[1]),
    'from-attributes': { x: [[0.0, 0.9], [0.6, 0.2]], wq: [[2, 0], [0, 1]], wk: [[1, 1], [0, 2]], wv: [[1, 0], [0, 1]] },
  };
  for (const [id, example] of Object.entries(examples)) {
    const n = example.x.length;
    await page.waitForFunction(([i, rows]) => {
      const w = document.getElementById(i);
      const view = w.shadowRoot.querySelector('scratch-view');
      return view?.dataset.state === 'ready' && w.shadowRoot.querySelectorAll('matrix-table[data-key="weights"] tbody tr').length === rows;
    }, [id, n], { timeout: 30000 });
    const want = naiveAttention(example);
    for (const [key, expected] of [['weights', want.weights], ['output', want.output]]) {
      const got = await table(id, key);
      assert.equal(got.length, expected.length);
      got.forEach((row, i) => row.forEach((value, j) => assert.ok(Math.abs(value - expected[i][j]) < 1e-5, `${id} ${key}[${i}][${j}] ${value} vs ${expected[i][j]}`)));
    }
  }
  const labels = await page.evaluate(() => [...document.getElementById('from-attributes').shadowRoot.querySelectorAll('matrix-table[data-key="weights"] tbody th')].map((th) => th.textContent));
  assert.deepEqual(labels, ['river', 'bank']);
  const shown = await page.evaluate(() => [...document.getElementById('from-attributes').shadowRoot.querySelectorAll('section.step')].filter((s) => !s.hidden).map((s) => s.id));
  assert.deepEqual(shown, ['step-scores'], 'the step attribute picks the step shown');
  await page.waitForSelector('#bad[data-state="error"]');
  assert.match(await page.evaluate(() => document.getElementById('bad').shadowRoot.querySelector('.status').textContent), /row 2 of x has 1 numbers, expected 2/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the embedding guide: every widget loads and draws, with no console error, under the strict CSP', async () => {
  // The shipped model names resolve to models/<name>/ next to the module; the test serves golden checkpoints there.
  const gallery = await openBrowser({
    mounts: { '/models/austen-gpt/': `${modelsDir}${GPT}/`, '/models/austen-bert/': `${modelsDir}${BERT}/` },
    headers: { 'Content-Security-Policy': CSP },
  });
  try {
    const { page, errors } = await newPage(gallery.browser);
    await page.goto(`${gallery.url}embed/`);
    const ids = await page.$$eval('attention-view', (widgets) => widgets.map((w) => w.id));
    assert.deepEqual(ids, ['demo-head', 'demo-model', 'demo-matrix', 'demo-rollout', 'demo-cross', 'demo-lens', 'demo-neuron', 'demo-generate', 'demo-compare', 'demo-ablation', 'demo-picture', 'demo-scratch', 'demo-data']);
    for (const id of ids) {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await page.waitForFunction((i) => document.getElementById(i).dataset.state === 'ready', id, { timeout: 30000 });
    }
    const drawn = await page.evaluate(() => [...document.querySelectorAll('attention-view')].map((w) => w.viewElement?.localName));
    assert.deepEqual(drawn, ['head-view', 'model-view', 'matrix-view', 'rollout-view', 'decoding-view', 'lens-view', 'neuron-view', 'generation-panel', 'compare-view', 'ablation-view', 'image-view', 'scratch-view', 'head-view']);
    await page.waitForFunction(() => /Matches the tutorial's printed output/.test(document.getElementById('demo-scratch').shadowRoot.querySelector('#scratch-printed-check')?.textContent));
    await page.waitForFunction(() => document.getElementById('demo-neuron').viewElement.dataset.state === 'ready', null, { timeout: 20000 });
    await page.screenshot({ path: `${resultsDir}widget-gallery.png`, fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await gallery.close();
  }
});

// Rough edge: on a phone, in the tutorial's column, widgets drew past their own
// right edge (a generation's prompt did not wrap; the head view's lines ran
// under the scroller's border and scrollbar). With the shipped models, which
// have room to generate.
test('the embedding guide fits a 375 px phone: no widget draws past its right edge', async () => {
  const phone = await session.browser.newContext({ viewport: { width: 375, height: 740 }, hasTouch: true, isMobile: true });
  try {
    const small = await phone.newPage();
    await small.goto(`${session.url}embed/`);
    const ids = await small.$$eval('attention-view', (widgets) => widgets.map((w) => w.id));
    for (const id of ids) {
      await small.locator(`#${id}`).scrollIntoViewIfNeeded();
      await small.waitForFunction((i) => document.getElementById(i).dataset.state === 'ready', id, { timeout: 30000 });
      if (id === 'demo-generate') await small.waitForFunction(() => document.getElementById('demo-generate').shadowRoot.querySelector('.generation-prompt'), null, { timeout: 30000 });
    }
    const overflows = await small.evaluate(() => [...document.querySelectorAll('attention-view')].flatMap((w) => {
      const slot = w.shadowRoot.querySelector('.view-slot');
      const found = slot.scrollWidth > slot.clientWidth + 1 ? [`${w.id}: its view is ${slot.scrollWidth} px wide in ${slot.clientWidth} px`] : [];
      for (const scroller of w.shadowRoot.querySelectorAll('.head-view-scroller')) {
        const canvas = scroller.querySelector('canvas');
        if (scroller.checkVisibility() && canvas.getBoundingClientRect().width > scroller.clientWidth + 0.5) found.push(`${w.id}: head view ${canvas.getBoundingClientRect().width} px in ${scroller.clientWidth} px`);
      }
      return found;
    }));
    assert.deepEqual(overflows, []);
    await small.screenshot({ path: `${resultsDir}widget-gallery-375px.png`, fullPage: true });
  } finally {
    await phone.close();
  }
});
