// The matrix, model and neuron views and the attention table in headless
// Chromium, fed with REAL attention: tests/browser/fixtures/views.html runs
// the engine (the C++ core in WASM) on seeded random inputs and hands the
// [L, H, T, T] weights and the Q/K traces to the views. The tests compare
// what the views draw (canvas pixels, exposed models) and write (readouts,
// tables) with the engine's numbers, recomputed here in double precision.
// Screenshots go to test-results/; the matrix view's redraw time at 512
// tokens is printed and written to test-results/matrix-view-timing.json.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { evaluateJson, newPage, openBrowser, resultsDir } from './browser.mjs';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const HOSTILE = '<img src=x onerror=alert(1)>';
let session;

before(async () => {
  session = await openBrowser({ mounts: { '/fixtures/': fixtures, '/web/': fileURLToPath(new URL('../../web/', import.meta.url)) } });
});
after(async () => {
  await session?.close();
});

/** Opens the fixture page; resolves to { page, errors, dialogs }. */
async function openFixture(query, viewport = { width: 1200, height: 900 }) {
  const { page, errors } = await newPage(session.browser);
  const dialogs = [];
  page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  await page.setViewportSize(viewport);
  await page.goto(`${session.url}fixtures/views.html?${new URLSearchParams(query)}`);
  await page.waitForSelector('body[data-ready]', { timeout: 30000 });
  return { page, errors, dialogs };
}

/** The fixture's tensor (and the Q/K traces, unless traces is false) as plain arrays. */
const fixtureData = (page, { traces = true } = {}) => evaluateJson(page, (withTraces) => {
  const { result } = window.fixture;
  const plain = (m) => ({ data: Array.from(m.data), shape: m.shape });
  return {
    shape: result.attentions.shape,
    attentions: Array.from(result.attentions.data),
    traces: withTraces ? Object.fromEntries(Object.entries(window.fixture.traces).map(([key, t]) => [key, { q: plain(t.q), k: plain(t.k), scores: plain(t.scores) }])) : null,
  };
}, traces);

/** Weight [query][key] of one head, from the flat tensor. */
const weight = ({ shape, attentions }, layer, head, query, key) => {
  const [, heads, t] = shape;
  return attentions[((layer * heads + head) * t + query) * t + key];
};

/** Mean over heads in double precision: rows of [T][T]. */
function meanMap(data, layer, heads) {
  const t = data.shape[2];
  return Array.from({ length: t }, (_, q) => Array.from({ length: t }, (_, k) =>
    heads.reduce((s, h) => s + weight(data, layer, h, q, k), 0) / heads.length));
}

/** RGBA of canvas pixels at CSS-pixel points [[x, y], ...]. */
const samplePixels = (page, selector, points) => page.evaluate(([sel, pts]) => {
  const canvas = document.querySelector(sel).exportCanvas?.() ?? document.querySelector(sel);
  const ratio = canvas.width / canvas.getBoundingClientRect().width;
  const ctx = canvas.getContext('2d');
  return pts.map(([x, y]) => Array.from(ctx.getImageData(Math.floor(x * ratio), Math.floor(y * ratio), 1, 1).data));
}, [selector, points]);

const luminance = ([r, g, b]) => 0.2126 * r + 0.7152 * g + 0.0722 * b;
const isGrey = ([r, g, b]) => Math.abs(r - g) <= 10 && Math.abs(g - b) <= 12 && r < 200;

/** Larger values must be drawn darker (pairs far enough apart on the scale). */
function assertDarkerWhenLarger(cells, scaleMax, what) {
  let compared = 0;
  for (const a of cells) {
    for (const b of cells) {
      if (a.value - b.value > 0.15 * scaleMax) {
        compared += 1;
        assert.ok(luminance(a.rgba) < luminance(b.rgba), `${what}: ${a.value} drawn lighter than ${b.value} (${a.rgba} vs ${b.rgba})`);
      }
    }
  }
  assert.ok(compared > 10, `${what}: only ${compared} pairs compared`);
}

test('matrix view: the mean of the selected heads, masked upper triangle, exact values on hover, lock and keyboard', async () => {
  const { page, errors, dialogs } = await openFixture({ tokens: 12, layers: 2, heads: 4, dk: 8, causal: 1, views: 'matrix', state: JSON.stringify({ layer: 1, heads: [0, 2] }) });
  const data = await fixtureData(page);
  const model = await evaluateJson(page, () => window.fixture.elements.matrix.heatModel());
  assert.match(model.title, /Layer 2, mean of heads 1, 3 \(2 of 4\)/);
  assert.match(await page.textContent('matrix-view .view-title'), /mean of heads 1, 3/);
  assert.deepEqual(model.heads, [0, 2]);
  const expected = meanMap(data, 1, [0, 2]);
  const t = 12;
  for (let r = 0; r < t; r += 1) {
    for (let c = 0; c < t; c += 1) {
      assert.ok(Math.abs(model.values[r * t + c] - expected[r][c]) < 1e-6, `value [${r}][${c}]`);
      assert.equal(model.masked[r * t + c], c > r ? 1 : 0, `masked [${r}][${c}]`);
    }
  }
  assert.equal(model.rowLabels[2], HOSTILE);

  // Pixels: every masked cell grey (with hatching: two grey levels inside the
  // triangle), every other cell on the blue scale, darker for larger weights.
  const centre = (r, c) => [model.left + (c + 0.5) * model.cell, model.top + (r + 0.5) * model.cell];
  const cells = [];
  for (let r = 0; r < t; r += 1) for (let c = 0; c < t; c += 1) cells.push({ r, c });
  const pixels = await samplePixels(page, 'matrix-view', cells.map(({ r, c }) => centre(r, c)));
  const open = [];
  cells.forEach(({ r, c }, i) => {
    if (c > r) assert.ok(isGrey(pixels[i]), `masked cell [${r}][${c}] drawn ${pixels[i]}`);
    else {
      assert.ok(!isGrey(pixels[i]) || pixels[i][0] > 200, `open cell [${r}][${c}] drawn grey ${pixels[i]}`);
      assert.ok(pixels[i][2] >= pixels[i][0], `open cell [${r}][${c}] not on the blue scale: ${pixels[i]}`);
      open.push({ value: expected[r][c], rgba: pixels[i] });
    }
  });
  assertDarkerWhenLarger(open, model.scaleMax, 'matrix cells');
  const step = model.cell / 8;
  const hatch = await samplePixels(page, 'matrix-view', Array.from({ length: 64 }, (_, i) => [model.left + 11 * model.cell + (i % 8) * step + 1, model.top + 0.1 * model.cell + Math.floor(i / 8) * step]));
  assert.ok(hatch.every(isGrey), 'masked cell has non-grey pixels');
  assert.ok(new Set(hatch.map((p) => p[0])).size >= 2, 'masked cell is not hatched');

  // Hover: readout and tooltip give the exact weight, or "masked".
  const box = await page.$eval('matrix-view canvas', (c) => { const r = c.getBoundingClientRect(); return { x: r.left, y: r.top }; });
  const hover = async (r, c) => {
    const [x, y] = centre(r, c);
    await page.mouse.move(box.x + x, box.y + y);
  };
  await hover(5, 2);
  const readout = await page.textContent('matrix-view .readout');
  assert.ok(readout.includes(expected[5][2].toFixed(6)), readout);
  assert.ok(readout.includes(`${HOSTILE} (key 3)`), readout);
  assert.equal(await page.isVisible('matrix-view .matrix-tooltip'), true);
  assert.equal(await page.textContent('matrix-view .matrix-tooltip'), readout);
  await hover(1, 7);
  assert.match(await page.textContent('matrix-view .readout'), /masked \(−∞ before softmax\)$/);
  await page.screenshot({ path: `${resultsDir}view-matrix.png`, fullPage: true });

  // Click locks the row's query token; the row is outlined; Escape unlocks.
  const [x4, y4] = centre(4, 2);
  await page.mouse.click(box.x + x4, box.y + y4);
  assert.equal(await page.evaluate(() => window.fixture.store.state.token), 4);
  await page.mouse.move(box.x + 2, box.y + 2);
  const [outline] = await samplePixels(page, 'matrix-view', [[model.left + 3.5 * model.cell, model.top + 4 * model.cell]]);
  const [before] = await samplePixels(page, 'matrix-view', [[model.left + 3.5 * model.cell, model.top + 6 * model.cell]]);
  assert.notDeepEqual(outline, before, 'locked row not outlined');
  await page.keyboard.press('Escape');
  assert.equal(await page.evaluate(() => window.fixture.store.state.token), null);

  // Keyboard: the cell cursor starts at the clicked cell (4, 2); arrows move
  // it and the readout follows; Enter locks its row.
  assert.equal(await page.evaluate(() => document.activeElement.tagName), 'CANVAS');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  assert.ok((await page.textContent('matrix-view .readout')).includes(expected[6][3].toFixed(6)));
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => window.fixture.store.state.token), 6);
  // Focusing from elsewhere with no cursor: it starts on the locked row.
  await page.evaluate(() => { window.fixture.store.set({ token: 9 }); document.activeElement.blur(); });
  await page.evaluate(() => window.fixture.store.set({ layer: 0 })); // a new map resets the cursor
  await page.focus('matrix-view canvas');
  await page.keyboard.press('ArrowRight');
  assert.ok((await page.textContent('matrix-view .readout')).includes('(query 10) → '), 'cursor not on the locked row');

  // One head selected: its own map, not a mean.
  await page.evaluate(() => window.fixture.store.set({ heads: [3] }));
  const single = await evaluateJson(page, () => window.fixture.elements.matrix.heatModel());
  assert.match(single.title, /Layer 1, head 4$/);
  assert.ok(Math.abs(single.values[5 * t + 3] - weight(data, 0, 3, 5, 3)) < 1e-7);
  assert.equal(await page.evaluate(() => document.querySelectorAll('img').length), 0);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('matrix view without a causal mask: nothing is masked', async () => {
  const { page, errors } = await openFixture({ tokens: 9, layers: 1, heads: 2, causal: 0, views: 'matrix' });
  const model = await evaluateJson(page, () => window.fixture.elements.matrix.heatModel());
  assert.ok(model.masked.every((m) => m === 0));
  assert.match(model.title, /mean of all 2 heads/);
  assert.equal(model.rowLabels[0], '[CLS]');
  assert.deepEqual(errors, []);
  await page.close();
});

test('model view: every layer x head as a thumbnail of block means; click and Enter open the head view', async () => {
  const { page, errors, dialogs } = await openFixture({ tokens: 40, layers: 3, heads: 4, dk: 8, causal: 1, views: 'model' });
  const data = await fixtureData(page, { traces: false });
  const thumbs = await evaluateJson(page, () => window.fixture.elements.model.thumbnailModel());
  assert.equal(thumbs.length, 12);
  assert.equal(await page.locator('model-view button.model-thumb').count(), 12);
  const t = 40;
  for (const thumb of thumbs) {
    assert.deepEqual(thumb.shape, [40, 40]); // fewer tokens than 64 blocks: one block per cell
    for (let r = 0; r < t; r += 1) {
      for (let c = 0; c < t; c += 1) {
        const v = thumb.values[r * t + c];
        if (c > r) assert.equal(v, null, `masked block ${thumb.layer}.${thumb.head} [${r}][${c}]`);
        else assert.ok(Math.abs(v - weight(data, thumb.layer, thumb.head, r, c)) < 1e-6);
      }
    }
  }
  // Pixels of one thumbnail's canvas (1 pixel per block).
  const { pixels } = await evaluateJson(page, () => {
    const canvas = document.querySelector('model-view button[data-layer="1"][data-head="2"] canvas');
    return { pixels: Array.from(canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data) };
  });
  const thumb = thumbs.find((x) => x.layer === 1 && x.head === 2);
  const open = [];
  for (let i = 0; i < t * t; i += 1) {
    const rgba = pixels.slice(i * 4, i * 4 + 4);
    if (thumb.values[i] === null) assert.ok(isGrey(rgba), `masked block drawn ${rgba}`);
    else open.push({ value: thumb.values[i], rgba });
  }
  assertDarkerWhenLarger(open, thumb.scaleMax, 'thumbnail');

  // Labels from the head-pattern scores become badges.
  await page.evaluate(() => {
    window.fixture.elements.model.headScores = [{ layer: 2, head: 1, previousToken: 0.91, induction: 0.02, sink: 0.1, self: 0.05, local: 0.95, labels: ['previous-token', 'local'] }];
  });
  assert.deepEqual(await page.$$eval('model-view button[data-layer="2"][data-head="1"] .head-badge', (b) => b.map((x) => x.textContent)), ['previous-token', 'local']);
  assert.match(await page.getAttribute('model-view button[data-layer="2"][data-head="1"]', 'aria-label'), /Layer 3, head 2: previous-token, local/);
  assert.equal(await page.locator('model-view .thumb-badges .head-badge').count(), 2);
  const border = await page.$eval('model-view button[data-layer="0"][data-head="1"]', (b) => getComputedStyle(b).borderTopColor);
  assert.equal(border, 'rgb(255, 119, 0)'); // palette colour of head 2 (#ff7700)
  await page.screenshot({ path: `${resultsDir}view-model.png`, fullPage: true });

  await page.click('model-view button[data-layer="1"][data-head="2"]');
  assert.deepEqual(await page.evaluate(() => { const { view, layer, heads } = window.fixture.store.state; return { view, layer, heads }; }), { view: 'head', layer: 1, heads: [2] });
  // Keyboard: one tab stop (the current head), arrows move, Enter opens.
  await page.evaluate(() => window.fixture.store.set({ view: 'model' }));
  await page.focus('model-view button[tabindex="0"]');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.head), '2');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  assert.deepEqual(await page.evaluate(() => { const { view, layer, heads } = window.fixture.store.state; return { view, layer, heads }; }), { view: 'head', layer: 2, heads: [3] });
  assert.deepEqual(dialogs, []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('model view at 12 x 12 heads and 128 tokens: downsampled thumbnails, build time', async (t) => {
  const { page, errors } = await openFixture({ tokens: 128, layers: 12, heads: 12, dk: 8, causal: 1, views: 'model' });
  // Only the map of layer 6, head 8 (the whole tensor is slow to send).
  const map = await evaluateJson(page, () => {
    const start = (5 * 12 + 7) * 128 * 128;
    return Array.from(window.fixture.result.attentions.data.subarray(start, start + 128 * 128));
  });
  const w = (r, c) => map[r * 128 + c];
  const thumbs = await evaluateJson(page, () => window.fixture.elements.model.thumbnailModel());
  assert.equal(thumbs.length, 144);
  const thumb = thumbs[5 * 12 + 7];
  assert.deepEqual(thumb.shape, [64, 64]);
  // Block [10][3] covers rows 20-21, columns 6-7 (all below the diagonal).
  const expected = [20, 21].flatMap((r) => [6, 7].map((c) => w(r, c))).reduce((a, b) => a + b) / 4;
  assert.ok(Math.abs(thumb.values[10 * 64 + 3] - expected) < 1e-6);
  // Diagonal block [10][10] (rows 20-21, cols 20-21): 3 open cells.
  const diagonal = (w(20, 20) + w(21, 20) + w(21, 21)) / 3;
  assert.ok(Math.abs(thumb.values[10 * 64 + 10] - diagonal) < 1e-6);
  const times = await page.evaluate(() => {
    const view = window.fixture.elements.model;
    const runs = [];
    for (let i = 0; i < 5; i += 1) {
      const start = performance.now();
      view.result = window.fixture.result;
      view.querySelector('canvas').getContext('2d').getImageData(0, 0, 1, 1);
      runs.push(performance.now() - start);
    }
    return runs.sort((a, b) => a - b);
  });
  t.diagnostic(`model view build, 12 x 12 heads at 128 tokens: median ${times[2].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[4].toFixed(1)})`);
  await page.screenshot({ path: `${resultsDir}view-model-12x12.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

test('neuron view: q, k, q x k, q·k, ÷ √d_k and softmax match the core', async () => {
  const { page, errors, dialogs } = await openFixture({ tokens: 12, layers: 2, heads: 4, dk: 8, causal: 1, views: 'neuron', state: JSON.stringify({ layer: 1, heads: [1], token: 5 }) });
  await page.waitForSelector('neuron-view[data-state="ready"]');
  const data = await fixtureData(page);
  const checkAgainstCore = async (layer, head, query, keyCount) => {
    const model = await evaluateJson(page, () => window.fixture.elements.neuron.neuronModel());
    const trace = data.traces[`${layer}.${head}`];
    const dk = trace.q.shape[1];
    const t = trace.q.shape[0];
    assert.deepEqual([model.layer, model.head, model.query, model.dk], [layer, head, query, dk]);
    assert.equal(model.keys.length, keyCount);
    assert.ok(Math.abs(model.divisor - Math.sqrt(dk)) < 1e-12);
    model.q.forEach((v, d) => assert.equal(v, trace.q.data[query * dk + d]));
    for (const key of model.keys) {
      const score = trace.scores.data[query * t + key.key];
      assert.ok(Math.abs(key.dot - score) < 1e-5, `q·k ${key.dot} vs core score ${score}`);
      assert.ok(Math.abs(key.scaled - score / Math.sqrt(dk)) < 1e-5);
      const core = weight(data, layer, head, query, key.key);
      assert.ok(Math.abs(key.softmax - core) < 1e-5, `softmax ${key.softmax} vs core weight ${core}`);
      key.products.forEach((p, d) => assert.ok(Math.abs(p - trace.q.data[query * dk + d] * trace.k.data[key.key * dk + d]) < 1e-6));
    }
    assert.ok(Math.abs(model.keys.reduce((s, k) => s + k.softmax, 0) - 1) < 1e-9);
    return model;
  };
  const model = await checkAgainstCore(1, 1, 5, 6); // causal: keys 0..5 only

  // Pixels: q cells blue when positive, orange when negative.
  const { x, cellWidth, rowHeight, qTop } = model.layout;
  const qPixels = await samplePixels(page, 'neuron-view', model.q.map((_, d) => [x.k + (d + 0.5) * cellWidth, qTop + rowHeight / 2]));
  model.q.forEach((v, d) => {
    const [r, , b] = qPixels[d];
    if (Math.abs(v) > 0.1) assert.ok(v > 0 ? b > r : r > b, `q[${d}] = ${v} drawn ${qPixels[d]}`);
  });

  // Hover the q·k cell of key 3 (the hostile token is key 3, index 2).
  const box = await page.$eval('neuron-view canvas', (c) => { const r = c.getBoundingClientRect(); return { x: r.left, y: r.top }; });
  await page.mouse.move(box.x + x.dot + 20, box.y + model.layout.keysTop + 2.5 * rowHeight);
  const readout = await page.textContent('neuron-view .readout');
  assert.ok(readout.includes(model.keys[2].dot.toFixed(6)), readout);
  assert.ok(readout.includes(HOSTILE), readout);
  assert.equal(await page.getAttribute('neuron-view canvas', 'title'), readout);
  await page.mouse.move(box.x + x.softmax + 20, box.y + model.layout.keysTop + 4.5 * rowHeight);
  assert.ok((await page.textContent('neuron-view .readout')).includes(model.keys[4].softmax.toFixed(6)));
  await page.screenshot({ path: `${resultsDir}view-neuron.png`, fullPage: true });

  // Keyboard reads a key row.
  await page.focus('neuron-view canvas');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.match(await page.textContent('neuron-view .readout'), new RegExp(`token 2\\): q·k = ${model.keys[1].dot.toFixed(6)}`));

  // Another head: the view asks for its trace, waits, then shows it.
  const asked = await page.evaluate(() => window.fixture.requests.length);
  await page.selectOption('neuron-view .controls label:nth-child(2) select', '3');
  await page.waitForFunction((n) => window.fixture.requests.length > n, asked);
  assert.deepEqual(await page.evaluate(() => window.fixture.requests.at(-1)), { layer: 1, head: 3 });
  await page.waitForSelector('neuron-view[data-state="ready"]');
  await checkAgainstCore(1, 3, 5, 6);
  // No locked token: the last token of a causal model, and the view says so.
  await page.evaluate(() => window.fixture.store.set({ token: null }));
  await checkAgainstCore(1, 3, 11, 12);
  assert.match(await page.textContent('neuron-view .hint'), /No token is locked, so the query is the last token/);
  assert.ok((await page.$$eval('neuron-view option', (o) => o.map((x) => x.textContent))).includes(`3: ${HOSTILE}`));
  assert.equal(await page.evaluate(() => document.querySelectorAll('img').length), 0);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('neuron view of a bidirectional model: every key, first token by default', async () => {
  const { page, errors } = await openFixture({ tokens: 10, layers: 1, heads: 2, dk: 16, causal: 0, views: 'neuron' });
  await page.waitForSelector('neuron-view[data-state="ready"]');
  const data = await fixtureData(page);
  const model = await evaluateJson(page, () => window.fixture.elements.neuron.neuronModel());
  assert.equal(model.query, 0);
  assert.equal(model.keys.length, 10);
  for (const key of model.keys) {
    assert.ok(Math.abs(key.dot - data.traces['0.0'].scores.data[key.key]) < 1e-5);
    assert.ok(Math.abs(key.softmax - weight(data, 0, 0, 0, key.key)) < 1e-5);
  }
  assert.match(await page.textContent('neuron-view .hint'), /query is the first token/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('attention table: top 5 keys of each query with their weights; full matrix up to 32 tokens', async () => {
  const { page, errors, dialogs } = await openFixture({ tokens: 12, layers: 2, heads: 4, dk: 8, causal: 1, views: 'table', state: JSON.stringify({ token: 3 }) });
  const data = await fixtureData(page);
  const expected = meanMap(data, 0, [0, 1, 2, 3]);
  assert.match(await page.textContent('attention-table caption'), /Layer 1, mean of all 4 heads: the 5 strongest keys/);
  const rows = await page.$$eval('attention-table table.attention-top tbody tr', (trs) => trs.map((tr) => ({
    query: Number(tr.dataset.query),
    head: tr.querySelector('th').textContent,
    current: tr.getAttribute('aria-current'),
    keys: [...tr.querySelectorAll('td[data-key]')].map((td) => Number(td.dataset.key)),
    weights: [...tr.querySelectorAll('td.weight')].map((td) => ({ text: td.textContent, value: Number(td.dataset.value) })),
  })));
  assert.equal(rows.length, 12);
  rows.forEach((row, q) => {
    const order = expected[q].map((w, k) => [w, k]).filter(([, k]) => k <= q).sort((a, b) => b[0] - a[0]).slice(0, 5);
    assert.deepEqual(row.keys, order.map(([, k]) => k), `row ${q} keys`);
    row.weights.forEach((w, i) => {
      assert.ok(Math.abs(w.value - order[i][0]) < 1e-6);
      assert.equal(w.text, order[i][0].toFixed(4));
    });
    assert.equal(row.current, q === 3 ? 'true' : null);
  });
  assert.equal(rows[2].head, `${HOSTILE} #3`);
  assert.equal(rows[0].keys.length, 1); // the first token of a causal model sees only itself
  assert.equal(await page.locator('attention-table th[scope=col]').count(), 11);

  await page.check('attention-table input[type=checkbox]');
  const full = await page.$$eval('attention-table table.attention-full tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td.classList.contains('masked') ? 'masked' : Number(td.dataset.value)))));
  assert.equal(full.length, 12);
  full.forEach((row, q) => row.forEach((v, k) => {
    if (k > q) assert.equal(v, 'masked');
    else assert.ok(Math.abs(v - expected[q][k]) < 1e-6);
  }));
  await page.screenshot({ path: `${resultsDir}view-attention-table.png`, fullPage: true });
  await page.evaluate(() => window.fixture.store.set({ heads: [2] }));
  assert.match(await page.textContent('attention-table table.attention-top caption'), /Layer 1, head 3:/);
  assert.equal(await page.evaluate(() => document.querySelectorAll('img').length), 0);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('attention table at 40 tokens: no full-matrix option, top 5 still listed', async () => {
  const { page, errors } = await openFixture({ tokens: 40, layers: 1, heads: 2, causal: 0, views: 'table' });
  assert.equal(await page.isDisabled('attention-table input[type=checkbox]'), true);
  assert.equal(await page.locator('attention-table table.attention-top tbody tr').count(), 40);
  assert.equal(await page.locator('attention-table table.attention-top tbody tr:first-child td[data-key]').count(), 5);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a hostile token renders literally in every view', async () => {
  const { page, errors, dialogs } = await openFixture({ tokens: 8, layers: 1, heads: 2, causal: 1, views: 'matrix,model,neuron,table', state: JSON.stringify({ token: 2 }) });
  await page.waitForSelector('neuron-view[data-state="ready"]');
  await page.check('attention-table input[type=checkbox]');
  const found = await page.evaluate((hostile) => ({
    images: document.querySelectorAll('img').length,
    matrix: window.fixture.elements.matrix.heatModel().rowLabels[2],
    neuron: window.fixture.elements.neuron.neuronModel().queryLabel,
    tableCells: [...document.querySelectorAll('attention-table th, attention-table td')].filter((e) => e.textContent.includes(hostile)).length,
    title: document.querySelector('neuron-view .view-title').textContent,
    escaped: document.querySelector('attention-table').innerHTML.includes('&lt;img src=x onerror=alert(1)&gt;'),
  }), HOSTILE);
  assert.equal(found.images, 0);
  assert.equal(found.matrix, HOSTILE);
  assert.equal(found.neuron, HOSTILE);
  assert.ok(found.tableCells >= 3, `hostile token in ${found.tableCells} table cells`);
  assert.ok(found.title.includes(`“${HOSTILE}”`));
  assert.equal(found.escaped, true);
  await page.waitForTimeout(200); // an injected onerror would fire by now
  assert.deepEqual(dialogs, []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('matrix view at 512 tokens: redraw and hover repaint times', async (t) => {
  const { page, errors } = await openFixture({ tokens: 512, layers: 1, heads: 12, dk: 8, causal: 1, views: 'matrix' }, { width: 1400, height: 1000 });
  const model = await evaluateJson(page, () => window.fixture.elements.matrix.heatModel());
  assert.equal(model.rows.length, 512);
  const timing = await page.evaluate(({ left, top, cell }) => {
    const { store, elements } = window.fixture;
    const canvas = elements.matrix.exportCanvas();
    const flush = () => canvas.getContext('2d').getImageData(0, 0, 1, 1); // waits for the drawing
    const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const rebuild = [];
    for (let i = 0; i < 9; i += 1) {
      const start = performance.now();
      store.set({ heads: i % 2 ? null : [i % 12] }); // new map: mean of 12 heads, or one head
      flush();
      rebuild.push(performance.now() - start);
    }
    const hover = [];
    const rect = canvas.getBoundingClientRect();
    for (let i = 0; i < 60; i += 1) {
      const start = performance.now();
      canvas.dispatchEvent(new PointerEvent('pointermove', { clientX: rect.left + left + (i * 7 + 0.5) * cell, clientY: rect.top + top + (i * 5 + 300.5) * cell, bubbles: true }));
      flush();
      hover.push(performance.now() - start);
    }
    return { rebuildMs: median(rebuild), rebuildMaxMs: Math.max(...rebuild), hoverMs: median(hover), hoverMaxMs: Math.max(...hover), canvas: [canvas.width, canvas.height] };
  }, model);
  t.diagnostic(`matrix view at 512 tokens x 12 heads: rebuild (new map, mean of 12 heads) median ${timing.rebuildMs.toFixed(1)} ms, max ${timing.rebuildMaxMs.toFixed(1)} ms; hover repaint median ${timing.hoverMs.toFixed(2)} ms, max ${timing.hoverMaxMs.toFixed(2)} ms; canvas ${timing.canvas.join(' x ')}`);
  writeFileSync(`${resultsDir}matrix-view-timing.json`, `${JSON.stringify({ tokens: 512, heads: 12, ...timing }, null, 2)}\n`);
  await page.screenshot({ path: `${resultsDir}view-matrix-512.png` });
  // SVG export of a map this large: the cells as one embedded image, the labels still text.
  const svg = await page.evaluate(() => window.fixture.elements.matrix.svg());
  assert.equal((svg.match(/<image /g) ?? []).length, 1);
  assert.match(svg, /href="data:image\/png;base64,/);
  assert.ok((svg.match(/<rect /g) ?? []).length < 10, 'no rectangle per cell');
  assert.ok((svg.match(/<text /g) ?? []).length > 20, 'token labels as text');
  assert.deepEqual(errors, []);
  await page.close();
});
