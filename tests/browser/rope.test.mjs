// The neuron view of RoPE models in headless Chromium: the playground opens a
// golden checkpoint (tests/golden/models/, mounted at /test-models/) on its
// golden text, and the rotary panel's numbers (q and k before the rotation,
// the angle position × θ per pair, q and k after it, each pair's part of q·k)
// equal the PyTorch float64 golden trace of that head; the key menu changes
// the key; partial rotary (Pythia) names the dimensions left unrotated; a
// GPT-2 model has no rotary panel; Gemma 2's scaling, softcap and sliding
// window in the neuron, matrix and model views.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { downloadOf, newPage, openBrowser, pngSize, resultsDir, svgTexts } from './browser.mjs';

const modelsDir = fileURLToPath(new URL('../golden/models/', import.meta.url));
let session;

before(async () => {
  session = await openBrowser({ mounts: { '/test-models/': modelsDir } });
});
after(async () => {
  await session?.close();
});

/** Opens the page with a golden model in the neuron view; hash: more state. */
async function openNeuron(page, name, hash) {
  await page.goto(`${session.url}#model=__own__&view=neuron${hash}`);
  await page.waitForSelector('#engine-status[data-state="ready"]');
  await page.fill('#model-url', `${session.url}test-models/${name}/`);
  await page.click('#model-url-form button');
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 30000 });
  await page.waitForSelector('neuron-view[data-state="ready"]', { timeout: 30000 });
}

const golden = (name) => JSON.parse(readFileSync(`${modelsDir}${name}/golden.json`, 'utf8')).cases[0];
const neuronModel = (page) => page.evaluate(() => document.querySelector('neuron-view').neuronModel());

/** |a - b| <= tolerance · scale, per element. */
function close(a, b, scale, what, tolerance = 1e-5) {
  assert.ok(Math.abs(a - b) <= tolerance * scale, `${what}: ${a} vs ${b}`);
}
const maxAbs = (rows) => rows.flat().reduce((m, v) => Math.max(m, Math.abs(v)), 0);

/** Every number of the rotary panel against the golden trace (query row `query`, the panel's key). */
function checkAgainstGolden(model, c) {
  const { rotary } = model;
  const g = c.trace.rotary;
  const theta = g.inverse_frequencies;
  const half = theta.length;
  const query = model.query;
  const key = rotary.key;
  assert.equal(rotary.pairs.length, half);
  assert.equal(rotary.rotated, 2 * half);
  assert.equal(rotary.unrotatedDims, model.dk - 2 * half);
  const [qScale, kScale] = [maxAbs(g.q), maxAbs(g.k)];
  for (const p of rotary.pairs) {
    const [i, j] = p.dims;
    assert.deepEqual([i, j], [p.index, p.index + half]);
    close(p.theta, theta[p.index], theta[p.index], `θ of pair ${i}`, 1e-9);
    close(p.qAngle, query * theta[p.index], 1, `q angle of pair ${i}`, 1e-9);
    close(p.kAngle, key * theta[p.index], 1, `k angle of pair ${i}`, 1e-9);
    [0, 1].forEach((n) => {
      const d = p.dims[n];
      close(p.qBefore[n], g.q[query][d], qScale, `q before, dim ${d}`);
      close(p.kBefore[n], g.k[key][d], kScale, `k before, dim ${d}`);
      close(p.qAfter[n], c.trace.q[query][d], maxAbs(c.trace.q), `q after, dim ${d}`);
      close(p.kAfter[n], c.trace.k[key][d], maxAbs(c.trace.k), `k after, dim ${d}`);
    });
    // The "after" vectors are the "before" ones turned by the angle.
    const turn = ([x, y], a) => [x * Math.cos(a) - y * Math.sin(a), y * Math.cos(a) + x * Math.sin(a)];
    turn(p.qBefore, p.qAngle).forEach((v, n) => close(v, p.qAfter[n], qScale, `q of pair ${i} turned`));
    turn(p.kBefore, p.kAngle).forEach((v, n) => close(v, p.kAfter[n], kScale, `k of pair ${i} turned`));
  }
  // The dot product the rows show uses the rotated vectors: the golden raw score.
  const row = model.keys.find((k) => k.key === key);
  const score = c.trace.scores[query][key];
  close(rotary.dotAfter, score, maxAbs(c.trace.scores), 'sum of the "after" parts vs the golden q·k');
  close(row.dot, rotary.dotAfter, maxAbs(c.trace.scores), 'the row\'s q·k vs the panel');
  const before = g.q[query].reduce((s, v, d) => s + v * g.k[key][d], 0);
  close(rotary.dotBefore, before, maxAbs(c.trace.scores), 'q·k before the rotation');
}

for (const [name, partial] of [['pythia-parallel-f16', true], ['qwen3-qknorm-bf16', false]]) {
  test(`${name}: the neuron view shows q and k before and after RoPE, as PyTorch computes them`, async () => {
    const c = golden(name);
    const T = c.ids.length;
    const H = JSON.parse(readFileSync(`${modelsDir}${name}/config.json`, 'utf8')).num_attention_heads;
    const { page, errors } = await newPage(session.browser);
    await openNeuron(page, name, `&layer=${c.trace.layer}&heads=${c.trace.head}&token=${T - 1}&text=${encodeURIComponent(c.text)}`);
    assert.equal(c.trace.head, H - 1);
    let model = await neuronModel(page);
    assert.deepEqual([model.layer, model.head, model.query], [c.trace.layer, c.trace.head, T - 1]);
    assert.ok(model.rotary, 'a RoPE model has rotary numbers');
    checkAgainstGolden(model, c);
    const strongest = model.keys.reduce((b, k) => (k.modelWeight > b.modelWeight ? k : b));
    assert.equal(model.rotary.key, strongest.key, 'by default the key with the largest weight');

    // The panel: one table row per pair with the numbers, the summary names the tokens (as text).
    const panel = await page.evaluate(() => {
      const p = document.querySelector('neuron-view .rope-panel');
      return { summary: p.querySelector('.rope-summary').textContent, rows: [...p.querySelectorAll('tbody tr')].map((r) => [...r.cells].map((td) => td.textContent)), drawings: p.querySelectorAll('tbody svg line').length };
    });
    assert.equal(panel.rows.length, model.rotary.pairs.length);
    const p0 = model.rotary.pairs[0];
    assert.equal(panel.rows[0][3], `(${p0.qBefore[0].toFixed(3)}, ${p0.qBefore[1].toFixed(3)})`);
    assert.equal(panel.rows[0][5], `(${p0.qAfter[0].toFixed(3)}, ${p0.qAfter[1].toFixed(3)})`);
    assert.equal(panel.rows[0][4], `${p0.qAngle.toFixed(3)} rad`);
    assert.equal(panel.drawings, 4 * model.rotary.pairs.length, 'four arrows per pair');
    assert.match(panel.summary, /The q·k above uses the rotated vectors/);
    assert.ok(panel.summary.includes(`“${model.queryLabel}” (position ${T - 1})`), panel.summary);
    if (partial) assert.match(panel.summary, new RegExp(`Dimensions ${model.rotary.rotated + 1}–${model.dk} are not rotated \\(partial rotary\\)`));
    else assert.doesNotMatch(panel.summary, /not rotated/);
    assert.equal(await page.isVisible('neuron-view .controls label:nth-child(3) select'), true, 'the key menu');

    // Another key from the menu: the panel follows, still equal to PyTorch.
    const other = model.keys.findLast((k) => k.key !== model.rotary.key && k.key > 0).key; // a key that turns (position > 0)
    await page.selectOption('neuron-view .controls label:nth-child(3) select', String(other));
    model = await neuronModel(page);
    assert.equal(model.rotary.key, other);
    checkAgainstGolden(model, c);
    await page.screenshot({ path: `${resultsDir}neuron-rope-${name}.png`, fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('Gemma 2: the neuron view divides by √query_pre_attn_scalar, shows the softcap step and only the window\'s keys; the matrix hatches the window, the model view names it', async () => {
  const name = 'gemma2-softcap-window-f32'; // softcap 2, window 3 on layers 1 and 3, query_pre_attn_scalar 12, head_dim 16
  const c = golden(name);
  const T = c.ids.length;
  const { page, errors } = await newPage(session.browser);
  await openNeuron(page, name, `&layer=${c.trace.layer}&heads=${c.trace.head}&token=${T - 1}&text=${encodeURIComponent(c.text)}`);
  const model = await neuronModel(page);
  assert.equal(c.trace.layer, 2, 'the traced layer is a sliding one');
  assert.deepEqual([model.divisor, model.softcap, model.window], [Math.fround(Math.sqrt(12)), 2, 3]);
  assert.deepEqual(model.keys.map((k) => k.key), [T - 3, T - 2, T - 1], 'only the window\'s keys');
  const scale = maxAbs(c.trace.scores);
  for (const key of model.keys) {
    close(key.dot, c.trace.scores[T - 1][key.key], scale, `q·k of key ${key.key}`);
    close(key.capped, 2 * Math.tanh(key.scaled / 2), 1, `capped score of key ${key.key}`, 1e-12);
    assert.ok(Math.abs(key.capped) < 2);
    close(key.softmax, key.modelWeight, 1, `softmax vs the model's weight, key ${key.key}`);
    close(key.modelWeight, c.attentions[2][c.trace.head][T - 1][key.key], 1, `the model's weight vs PyTorch, key ${key.key}`);
  }
  assert.ok(model.layout.x.capped > model.layout.x.scaled && model.layout.x.capped < model.layout.x.softmax, 'the cap column between ÷ and softmax');
  assert.match(await page.textContent('neuron-view'), /Sliding-window layer: the query sees only its last 3 keys/);
  assert.match(await page.textContent('neuron-view'), /2·tanh\(s ÷ 2\)/);

  // The matrix view hatches the keys before the window; a global layer (2) only the causal triangle.
  for (const [layer, window] of [[2, 3], [1, 0]]) {
    await page.evaluate((l) => { location.hash = location.hash.replace(/view=[a-z]+/, 'view=matrix').replace(/layer=\d+/, `layer=${l}`); }, layer);
    await page.waitForFunction((l) => document.querySelector('matrix-view')?.heatModel()?.title.startsWith(`Layer ${l + 1}`), layer);
    const heat = await page.evaluate(() => { const m = document.querySelector('matrix-view').heatModel(); return { masked: Array.from(m.masked), legend: document.querySelector('matrix-view').textContent }; });
    for (let r = 0; r < T; r += 1) {
      for (let k = 0; k < T; k += 1) assert.equal(heat.masked[r * T + k], k > r || (window && r - k >= window) ? 1 : 0, `layer ${layer + 1} [${r}][${k}]`);
    }
    assert.equal(/sliding window of 3 tokens/.test(heat.legend), Boolean(window));
  }
  await page.evaluate(() => { location.hash = location.hash.replace(/view=[a-z]+/, 'view=model'); });
  await page.waitForSelector('model-view .model-layer-caption');
  assert.deepEqual(await page.$$eval('model-view .model-layer-caption', (els) => els.map((e) => e.textContent)),
    ['Layer 1 · window 3', 'Layer 2', 'Layer 3 · window 3']);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a GPT-2 model (learned positions) has no rotary panel', async () => {
  const { page, errors } = await newPage(session.browser);
  await openNeuron(page, 'gpt2-l1-h1-k64-f32', '&text=sixteen');
  const model = await neuronModel(page);
  assert.equal(model.rotary, null);
  assert.equal(await page.locator('neuron-view .rope-panel').count(), 0);
  assert.equal(await page.isVisible('neuron-view .controls label:nth-child(3)'), false);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the model view\'s export of a GQA model has the KV-group and sink line of every thumbnail', async () => {
  const name = 'llama-gqa-llama3-bf16';
  const c = golden(name);
  const dir = `${modelsDir}${name}/`;
  const engine = await createEngine();
  const model = await engine.loadModel({ config: readFileSync(`${dir}config.json`, 'utf8'), weights: readFileSync(`${dir}model.safetensors`), tokenizer: readFileSync(`${dir}tokenizer.json`, 'utf8') });
  const want = model.run(c.text);
  model.dispose();
  const [L, H, T] = want.attentions.shape;
  const kvHeads = model.config.kvHeads;
  assert.ok(kvHeads < H, 'a GQA model');
  /** "KV<n> · sink <p>%" from the engine's weights: key/value head h / (H / KV), mean weight of queries 1.. on token 0. */
  const facts = (layer, head) => {
    let sum = 0;
    for (let q = 1; q < T; q += 1) sum += want.attentions.data[((layer * H + head) * T + q) * T];
    return `KV${Math.floor(head / (H / kvHeads)) + 1} · sink ${Math.round((sum / (T - 1)) * 100)}%`;
  };

  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#model=__own__&view=model&text=${encodeURIComponent(c.text)}`);
  await page.waitForSelector('#engine-status[data-state="ready"]');
  await page.fill('#model-url', `${session.url}test-models/${name}/`);
  await page.click('#model-url-form button');
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 30000 });
  await page.waitForFunction((n) => [...document.querySelectorAll('model-view .thumb-facts')].filter((f) => f.textContent).length === n, L * H);
  const { layout, screen } = await page.evaluate(() => {
    const view = document.querySelector('model-view');
    return {
      layout: view.exportLayout(),
      screen: [...view.querySelectorAll('.model-thumb')].map((b) => ({ layer: Number(b.dataset.layer), head: Number(b.dataset.head), facts: b.querySelector('.thumb-facts').textContent })),
    };
  });
  const texts = svgTexts((await downloadOf(page, '#export-svg')).bytes.toString('utf8'));
  for (const { layer, head, facts: shown } of screen) {
    assert.equal(shown, facts(layer, head), `L${layer + 1} H${head + 1} on screen`);
    const thumb = layout.thumbs.find((t) => t.layer === layer && t.head === head);
    const caption = layout.texts.find((t) => t.text === `L${layer + 1} H${head + 1}`);
    const line = layout.texts.find((t) => t.text === shown && Math.abs(t.x - caption.x) < 1e-9 && t.y > caption.y && t.y < thumb.y + thumb.size + 40);
    assert.ok(line, `L${layer + 1} H${head + 1}: "${shown}" under its caption in the export`);
    // Below the caption, above the next row's thumbnails, inside the picture.
    assert.ok(layout.thumbs.every((t) => t.layer !== layer + 1 || line.y < t.y - 3), 'does not overlap the next layer');
    assert.ok(line.y < layout.height);
  }
  assert.equal(texts.filter((t) => /^KV\d+ · sink \d+%$/.test(t)).length, L * H, 'every facts line in the SVG');
  const png = await downloadOf(page, '#export-png');
  assert.deepEqual(pngSize(png.bytes), [2 * layout.width, 2 * layout.height]);
  assert.deepEqual(errors, []);
  await page.close();
});
