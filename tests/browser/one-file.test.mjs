// The one-file HTML export, opened as a reader would open an email attachment:
// from file://, with the network off (every non-file request aborted and
// recorded), under the page's own Content-Security-Policy (default-src
// 'none'; the widget script and page style allowed by hash only; an inline
// script probe proves it is enforced). Both writers: `attnplay attention
// --format html` (its weights against the CLI's JSON of the same run) and the
// playground's "Download as a page" (against the native CLI on the same text;
// the view, layer and heads of the playground carried over; from the Rollout
// tab, attention flow computed in the file against the float64 reference,
// opening on the Lines display chosen there; the model view's head badges).
// From the tabs the widget does not draw (lens, neuron, compare, ablation,
// from scratch): a script-free snapshot, read back the same as the tab.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';

import { DEFAULT_STATE } from '../../web/run/state.js';
import { assertHeadLines, headViewLines, openBrowser, pngSize, resultsDir, svgTexts } from './browser.mjs';
import { refFlow } from '../node/rollout-reference.mjs';

const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const austenGpt = fileURLToPath(new URL('../../models/austen-gpt', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'attnplay-one-file-'));
let session;

before(async () => { session = await openBrowser(); });
after(async () => {
  await session?.close();
  rmSync(tmp, { recursive: true, force: true });
});

function cliRun(args) {
  const r = spawnSync(cli, ['attention', '--model', austenGpt, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

/** Opens a local file offline (waiting for its widget, unless `widget` is null); returns { page, violations(), blocked, errors, close }. */
async function openOffline(path, widget = 'attention-view') {
  const context = await session.browser.newContext({ offline: true });
  const blocked = [];
  await context.route('**/*', (route) => {
    if (route.request().url().startsWith('file:')) return route.continue();
    blocked.push(route.request().url());
    return route.abort();
  });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
  await page.addInitScript(() => {
    window.violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(pathToFileURL(path).href);
  if (widget) await page.waitForFunction((selector) => document.querySelector(selector)?.dataset.state === 'ready', widget, { timeout: 30000 });
  return { page, blocked, errors, close: () => context.close() };
}

/** The page's CSP holds: nothing was blocked by it, and an injected inline script is. */
async function assertStrictCsp(page) {
  assert.deepEqual(await page.evaluate(() => window.violations), [], 'no CSP violation by the page itself');
  const probe = await page.evaluate(async () => {
    const script = document.createElement('script');
    script.textContent = 'window.injected = true;';
    document.body.append(script);
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { injected: window.injected ?? false, violations: window.violations };
  });
  assert.equal(probe.injected, false, 'an injected inline script does not run');
  assert.match(probe.violations.join('\n'), /script-src/);
}

/** Every line drawn against the given weights, by the head view's rule (headViewLines). */
function assertLines(lines, attentions, layer, heads, tolerance) {
  const all = Array.from({ length: attentions[0][0].length }, (_, i) => i);
  assertHeadLines(lines, headViewLines((h, q, k) => attentions[layer][h][q][k], heads, all, all), tolerance);
}

test('attnplay attention --format html: one file that draws the run offline under its own strict CSP', async () => {
  const text = 'It is a truth <img src=x onerror=alert(1)> universally acknowledged';
  const want = JSON.parse(cliRun(['--text', text]));
  const path = join(tmp, 'view.html');
  cliRun(['--text', text, '--format', 'html', '--view', 'head', '--out', path]);
  const { page, blocked, errors, close } = await openOffline(path);
  const drawn = await page.evaluate(() => {
    const w = document.querySelector('attention-view');
    return { lines: w.viewElement.lineModel(), tokens: w.result.tokens.map((t) => t.display), view: w.viewElement.localName, external: [...document.querySelectorAll('[src], link[href]')].length };
  });
  assert.equal(drawn.view, 'head-view');
  assert.deepEqual(drawn.tokens, want.tokens.map((t) => t.token));
  assertLines(drawn.lines, want.attentions, 0, [0, 1, 2, 3], 0);
  assert.equal(drawn.external, 0, 'nothing loaded by src or href');
  assert.deepEqual(blocked, [], 'no request left the file');
  assert.equal(await page.evaluate(() => document.querySelectorAll('img').length), 0, 'token text stays text');
  await assertStrictCsp(page);
  assert.deepEqual(errors.filter((e) => !/Content Security Policy/.test(e)), []);
  await page.screenshot({ path: `${resultsDir}one-file-cli.png` });
  await close();
});

test('the playground\'s "Download as a page" carries the view, layer and heads into a file that works offline', async () => {
  const page = await session.browser.newPage();
  await page.goto(`${session.url}#view=matrix&layer=2&heads=1,3`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-page')]);
  assert.equal(download.suggestedFilename(), 'attnplay-austen-gpt-matrix.html');
  const path = join(tmp, download.suggestedFilename());
  await download.saveAs(path);
  await page.close();

  const want = JSON.parse(cliRun(['--text', DEFAULT_STATE.text]));
  const { page: saved, blocked, errors, close } = await openOffline(path);
  const heat = await saved.evaluate(() => document.querySelector('attention-view').viewElement.heatModel());
  assert.match(heat.title, /^Layer 3, mean of heads 2, 4/);
  const T = want.tokens.length;
  assert.deepEqual(heat.rowLabels, want.tokens.map((t) => t.token));
  for (let q = 0; q < T; q += 1) {
    for (let k = 0; k < T; k += 1) {
      const mean = (want.attentions[2][1][q][k] + want.attentions[2][3][q][k]) / 2;
      assert.ok(Math.abs(heat.values[q * T + k] - mean) < 1e-5, `${q},${k}: ${heat.values[q * T + k]} vs ${mean} (WASM in the page, native CLI here)`);
    }
  }
  assert.deepEqual(blocked, []);
  await assertStrictCsp(saved);
  assert.deepEqual(errors.filter((e) => !/Content Security Policy/.test(e)), []);
  await saved.screenshot({ path: `${resultsDir}one-file-playground.png` });
  await close();
});

test('a page downloaded from the Rollout tab shows attention flow offline, with no WASM, as lines', async () => {
  const page = await session.browser.newPage();
  await page.goto(`${session.url}#view=rollout`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  await page.locator('rollout-view select[name="rollout-method"]').selectOption('flow');
  await page.locator('rollout-view select[name="rollout-display"]').selectOption('lines');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-page')]);
  assert.equal(download.suggestedFilename(), 'attnplay-austen-gpt-rollout.html');
  const path = join(tmp, download.suggestedFilename());
  await download.saveAs(path);
  await page.close();

  const want = JSON.parse(cliRun(['--text', DEFAULT_STATE.text]));
  const L = want.attentions.length;
  const T = want.tokens.length;
  const attentions = { data: Float32Array.from(want.attentions.flat(3)), shape: [L, want.attentions[0].length, T, T] };
  const { page: saved, blocked, errors, close } = await openOffline(path);
  const heat = await saved.evaluate(() => document.querySelector('attention-view').viewElement.heatModel());
  assert.match(heat.title, new RegExp(`^Attention flow over layers 1–${L} `));
  refFlow(attentions).forEach((row, q) => row.forEach((v, k) => assert.ok(Math.abs(heat.values[q * T + k] - v) < 1e-5, `${q},${k}: ${heat.values[q * T + k]} vs ${v}`)));
  // It opens on the Lines display chosen on the page: the flow map above as the head view's lines.
  assert.equal(await saved.evaluate(() => document.querySelector('attention-view').rolloutDisplay), 'lines');
  const all = [...Array(T).keys()];
  assertHeadLines(await saved.evaluate(() => document.querySelector('attention-view').viewElement.lineModel()), headViewLines((head, q, k) => heat.values[q * T + k], [0], all, all));
  assert.deepEqual(blocked, []);
  assert.deepEqual(errors.filter((e) => !/Content Security Policy/.test(e)), []);
  await close();
});

// What a tab shows, read the same way from the playground and from its saved
// page: the visible text outside pictures and text boxes, the values of the controls, the
// colours of every cell and label, each picture's pixels (a canvas in the
// playground, its image in the file) and, for the neuron view, the text of
// every key row (the playground's full SVG drawing, the file's inline SVG).
function describePanel(view) {
  const panel = document.querySelector(`[role=tabpanel][data-view="${view}"]`);
  const inNeuronRows = (node) => Boolean(node.closest?.('.neuron-view-scroller'));
  const texts = [];
  const walker = document.createTreeWalker(panel, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (node.data.trim() && !inNeuronRows(parent) && parent.checkVisibility() && !parent.closest('.readout, textarea')) texts.push(node.data.trim());
  }
  const styled = [...panel.querySelectorAll('td, th, [style]')].filter((e) => !inNeuronRows(e) && e.checkVisibility() && !['canvas', 'img'].includes(e.localName))
    .map((e) => `${e.textContent.trim().slice(0, 20)}: ${getComputedStyle(e).backgroundColor} ${getComputedStyle(e).color}`);
  const pictures = [...panel.querySelectorAll('canvas, img')].filter((e) => !inNeuronRows(e) && e.checkVisibility())
    .map((e) => ({ pixels: e.localName === 'canvas' ? e.toDataURL('image/png') : e.src, width: Math.round(e.getBoundingClientRect().width), height: Math.round(e.getBoundingClientRect().height) }));
  const neuron = panel.querySelector('neuron-view');
  const svg = neuron && (typeof neuron.svg === 'function' ? new DOMParser().parseFromString(neuron.svg(), 'image/svg+xml') : neuron.querySelector('.neuron-view-scroller svg'));
  const keyRows = svg ? [...svg.querySelectorAll('text')].map((t) => t.textContent) : null;
  return { texts, controls: [...panel.querySelectorAll('input, select, textarea')].map((c) => c.value), styled, pictures, keyRows };
}

test('"Download as a page" on the Lens, Neuron, Compare, Ablation and From scratch tabs saves that tab, drawn the same way offline', async () => {
  const tabs = [
    { view: 'lens', label: 'Logit lens', ready: () => document.querySelector('lens-view td') },
    { view: 'neuron', label: 'Neuron view', ready: () => document.querySelector('neuron-view').dataset.state === 'ready' },
    { view: 'compare', label: 'Compare texts', ready: () => document.querySelector('compare-view table') },
    { view: 'ablation', label: 'Ablation', ready: () => document.querySelector('ablation-view .ablation-shift') },
    // The positional-encoding step: its heat map is a canvas, saved as an image.
    { view: 'scratch', label: 'From scratch', ready: () => document.querySelector('scratch-view').dataset.state === 'ready', step: '10. Positional encoding' },
  ];
  // One page, one tab after the other: text B for the compare tab, a head knocked out for the ablation tab.
  const page = await session.browser.newPage();
  await page.goto(`${session.url}#compareText=${encodeURIComponent('It is a truth universally known')}&ablate=1:0`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  for (const { view, label, ready, step } of tabs) {
    await page.click(`[role=tab][data-view="${view}"]`);
    await page.waitForFunction(ready, null, { timeout: 60000 });
    if (step) await page.click(`scratch-view .step-list button:text-is("${step}")`);
    const live = await page.evaluate(describePanel, view);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-page')]);
    assert.equal(download.suggestedFilename(), view === 'scratch' ? 'attnplay-from-scratch.html' : `attnplay-austen-gpt-${view}.html`);
    const path = join(tmp, download.suggestedFilename());
    await download.saveAs(path);

    const { page: saved, blocked, errors, close } = await openOffline(path, null);
    assert.ok((await saved.title()).startsWith(view === 'scratch' ? `attnplay: ${label}` : `${label} · austen-gpt · “${DEFAULT_STATE.text.slice(0, 20)}`), `${view}: ${await saved.title()}`);
    assert.equal(await saved.evaluate(() => document.querySelectorAll('script, attention-view').length), 0, `${view}: the tab itself, not the widget, and no script`);
    const drawn = await saved.evaluate(describePanel, view);
    assert.ok(live.texts.length > 0 && live.styled.length + live.pictures.length + (live.keyRows?.length ?? 0) > 0, `${view}: the tab shows something`);
    assert.deepEqual(drawn, live, `${view}: the saved page shows what the tab showed`);
    if (view === 'neuron') assert.ok(drawn.keyRows.length > 20, 'every key row is in the file');
    if (view === 'scratch') assert.ok(drawn.pictures.length > 0, 'the heat maps are in the file');
    assert.deepEqual(blocked, [], `${view}: no request left the file`);
    assert.deepEqual(await saved.evaluate(() => window.violations), [], `${view}: nothing blocked by the file's CSP`);
    assert.deepEqual(errors, []);
    await saved.screenshot({ path: `${resultsDir}one-file-${view}.png`, fullPage: true });
    await close();
  }
  await page.close();
});

// Gap: the model view's exports lost the head badges (the head-pattern labels under each thumbnail).
test('the model view\'s SVG, PNG and one-file page keep every head\'s badges and the layer captions', async () => {
  const page = await session.browser.newPage();
  await page.goto(`${session.url}#view=model`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  await page.waitForSelector('model-view .head-badge', { timeout: 30000 });
  const shown = await page.evaluate(() => [...document.querySelectorAll('model-view [data-layer][data-head]')]
    .map((thumb) => ({ layer: Number(thumb.dataset.layer), head: Number(thumb.dataset.head), labels: [...thumb.querySelectorAll('.head-badge')].map((b) => b.textContent) })));
  assert.ok(shown.some((t) => t.labels.length > 0), 'some heads have badges on the page');
  const layers = Math.max(...shown.map((t) => t.layer)) + 1;

  const save = async (selector) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
    const path = join(tmp, download.suggestedFilename());
    await download.saveAs(path);
    return path;
  };
  const svg = readFileSync(await save('#export-svg'), 'utf8');
  const texts = svgTexts(svg);
  for (let layer = 0; layer < layers; layer += 1) assert.ok(texts.includes(`Layer ${layer + 1}`), `SVG: layer ${layer + 1} caption`);
  const counted = (list) => list.reduce((counts, label) => counts.set(label, (counts.get(label) ?? 0) + 1), new Map());
  assert.deepEqual(counted(texts.filter((t) => shown.some((s) => s.labels.includes(t)))), counted(shown.flatMap((t) => t.labels)), 'SVG: every badge, once per head that has it');

  // The PNG is the same layout drawn at 2x: its height holds the badge lines.
  const png = readFileSync(await save('#export-png'));
  const layout = await page.evaluate(() => document.querySelector('model-view').exportLayout().height);
  assert.equal(pngSize(png)[1], 2 * layout, 'PNG: the picture of the layout that holds the badges');

  const html = await save('#export-page');
  await page.close();
  const { page: saved, blocked, errors, close } = await openOffline(html);
  const thumbs = await saved.evaluate(() => document.querySelector('attention-view').viewElement.thumbnailModel().map(({ layer, head, labels }) => ({ layer, head, labels })));
  assert.deepEqual(thumbs, shown, 'the saved page shows every badge');
  assert.deepEqual(blocked, []);
  assert.deepEqual(errors.filter((e) => !/Content Security Policy/.test(e)), []);
  await close();
});
