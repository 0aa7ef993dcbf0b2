// Vision transformers in the page and the widget, in headless Chromium: the
// shipped shapes-vit opens on its Picture tab with its first sample and the
// engine's labels (Node's, on the same PNG); the overlay dims each patch by
// 1 - weight / strongest; hovering a patch shows its own attention; Shift+click
// knocks a head out and the labels show before → after; the PNG export; a file
// that is not a picture is refused with a message. A golden ViT opened by URL
// reads a picture given to the file picker exactly as Pillow and PyTorch do
// (tests/golden/make_vision_goldens.py): the browser's PNG decoding and the
// core's resize give seen.png byte for byte, and the attention is PyTorch's
// within 1e-5. The <attention-view> widget shows a DeiT's picture view from its
// picture attribute. Attention flow over the patches; the picture named in the
// link (a sample by name, the reader's own kept in this browser, carried in
// the link on request); the JSON and one-file page exports, which draw the
// picture offline; the CLI's JSON drawn by the widget with no model. Everything
// is served under a strict CSP.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';

import { PNG } from 'pngjs';

import { createEngine } from '../../dist/engine/engine.js';
import { parseNpy, readAttentionData } from '../../web/attention/attention-data-source.js';
import { attentionFlowRow } from '../../web/attention/rollout.js';
import { downloadOf, evaluateJson, newPage, openBrowser, pngSize } from './browser.mjs';

const modelsDir = fileURLToPath(new URL('../golden/models/', import.meta.url));
const fixturesDir = fileURLToPath(new URL('./fixtures/', import.meta.url));
const shippedDir = fileURLToPath(new URL('../../models/shapes-vit/', import.meta.url));
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";
const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const made = mkdtempSync(join(tmpdir(), 'attnplay-vision-')); // what the tests write and serve under /made/
let session;

before(async () => {
  session = await openBrowser({ mounts: { '/test-models/': modelsDir, '/fixtures/': fixturesDir, '/made/': `${made}/` }, headers: { 'Content-Security-Policy': CSP } });
});
after(async () => {
  await session?.close();
  rmSync(made, { recursive: true, force: true });
});

const png = (path) => PNG.sync.read(readFileSync(path));
const runsAfter = (page, n) => page.waitForFunction((k) => Number(document.body.dataset.run ?? 0) > k, n, { timeout: 60000 });
const runCount = (page) => page.evaluate(() => Number(document.body.dataset.run ?? 0));

/** What Node's engine gives for shapes-vit's samples (file names under samples/): { [name]: its run }. */
async function shapesVitRuns(...names) {
  const engine = await createEngine();
  const model = await engine.loadModel({
    config: readFileSync(`${shippedDir}config.json`, 'utf8'), weights: readFileSync(`${shippedDir}model.safetensors`),
    preprocessor: readFileSync(`${shippedDir}preprocessor_config.json`, 'utf8'),
  });
  try {
    return Object.fromEntries(names.map((name) => {
      const { data, width, height } = png(`${shippedDir}samples/${name}`);
      return [name, model.run({ data, width, height })];
    }));
  } finally {
    model.dispose();
  }
}

test('shapes-vit: the Picture tab, the engine\'s labels, the overlay, hover, knocking a head out, the PNG export, a bad file', async () => {
  const { 'circle.png': want } = await shapesVitRuns('circle.png');
  const sample = png(`${shippedDir}samples/circle.png`);

  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#model=shapes-vit`);
  await runsAfter(page, 0);
  assert.equal(await page.getAttribute('[role=tab][data-view=image]', 'aria-selected'), 'true', 'a vision model opens on its Picture tab');
  assert.equal(await page.isHidden('#text-a'), true, 'no text to type');
  const shown = await evaluateJson(page, () => {
    const { picture, tokens } = document.querySelector('image-view').result;
    return { labels: picture.topK.labels, probabilities: [...picture.topK.probabilities], tokens: tokens.map((t) => t.display) };
  });
  assert.deepEqual(shown.labels, want.topK.labels);
  shown.probabilities.forEach((p, i) => assert.ok(Math.abs(p - want.topK.probabilities[i]) < 1e-6));
  assert.deepEqual(shown.tokens, want.tokens);
  assert.deepEqual(await page.$$eval('.image-labels .label-name', (names) => names.map((n) => n.textContent)), want.topK.labels);

  // The overlay: CLS's mean attention of layer 1 over the patches; the strongest patch undimmed, the weakest dimmed by 0.82.
  const [, H, T] = want.attentions.shape;
  const row = Array.from({ length: T }, (_, k) => {
    let sum = 0;
    for (let h = 0; h < H; h += 1) sum += want.attentions.data[(h * T) * T + k];
    return sum / H;
  }).slice(1);
  const max = Math.max(...row);
  const brightness = await evaluateJson(page, (patches) => {
    const canvas = document.querySelector('image-view canvas.image-main');
    const { data, width } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const cell = canvas.width / 6;
    return patches.map((p) => {
      const x = Math.floor(((p % 6) + 0.5) * cell), y = Math.floor((Math.floor(p / 6) + 0.5) * cell);
      const at = (y * width + x) * 4;
      return data[at] + data[at + 1] + data[at + 2];
    });
  }, row.map((_, p) => p));
  const seenBrightness = row.map((_, p) => {
    const x = Math.floor(((p % 6) + 0.5) * 8), y = Math.floor((Math.floor(p / 6) + 0.5) * 8);
    const at = (y * 48 + x) * 4;
    return sample.data[at] + sample.data[at + 1] + sample.data[at + 2];
  });
  row.forEach((w, p) => {
    const expected = seenBrightness[p] * (1 - 0.82 * (1 - w / max));
    assert.ok(Math.abs(brightness[p] - expected) <= 6, `patch ${p}: drawn ${brightness[p]}, expected ${expected.toFixed(1)}`);
  });

  // Hovering a patch shows where it looks; a click locks it.
  const box = await page.locator('image-view canvas.image-main').boundingBox();
  await page.mouse.move(box.x + box.width * (3.5 / 6), box.y + box.height * (2.5 / 6));
  await page.waitForFunction(() => document.querySelector('image-view .view-title').textContent.endsWith('attention from (2, 3)'));
  await page.mouse.click(box.x + box.width * (3.5 / 6), box.y + box.height * (2.5 / 6));
  await page.mouse.move(box.x + 2, box.y + 2);
  assert.match(await page.textContent('image-view .view-title'), /attention from \(2, 3\)$/, 'the locked patch stays');

  // Shift+click knocks head 2 out: the model runs again, the labels say what they were.
  const before = await runCount(page);
  await page.click('image-view .image-grid button:nth-child(2)', { modifiers: ['Shift'] });
  await runsAfter(page, before);
  assert.match(await page.textContent('.image-labels'), /\(was \d+\.\d%\)/);
  await page.waitForFunction(() => /(^#|&)ablate=0(%3A|:)1(&|$)/.test(location.hash), null, { timeout: 5000 });

  const { name, bytes } = await downloadOf(page, '#export-png');
  assert.match(name, /\.png$/);
  assert.ok(pngSize(bytes)[0] >= 300);

  await page.setInputFiles('#picture-file', { name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('not a picture at all') });
  await page.waitForFunction(() => /is not a picture this browser can read/.test(document.querySelector('#picture-name').textContent));
  assert.deepEqual(errors, []);
  await page.close();
});

test('a golden ViT by URL reads a picture from the file picker as Pillow and PyTorch do', async () => {
  const name = 'vit-classifier-nonsquare-f32';
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#model=${encodeURIComponent(`${session.url}test-models/${name}/`)}`);
  await runsAfter(page, 0); // on the first of the sample photographs
  assert.deepEqual(await page.$$eval('#picture-samples button', (buttons) => buttons.map((b) => [b.textContent, b.title])), [
    ['cat', 'Chelsea the cat: Stefan van der Walt, CC0 1.0 (no copyright restrictions)'],
    ['coffee', 'A cup of coffee (Pikolo Espresso Bar): Rachel Michetti, CC0 1.0 (no copyright restrictions)'],
    ['astronaut', 'Eileen Collins, astronaut: NASA, public domain (no known copyright restrictions)'],
    ['rocket', 'A Falcon 9 rocket on its pad: SpaceX, public domain (released by SpaceX)'],
  ]);
  await page.waitForFunction(() => /picture=sample%3Asample-pictures%2Fcat\.jpg/.test(location.hash), null, { timeout: 5000 });
  const before = await runCount(page);
  await page.setInputFiles('#picture-file', `${modelsDir}${name}/picture.png`);
  await runsAfter(page, before);
  const got = await evaluateJson(page, () => {
    const { picture, attentions } = document.querySelector('image-view').result;
    return { seen: [...picture.seen.data], width: picture.seen.width, attentions: [...attentions.data], labels: [...picture.topK.ids] };
  });
  const seen = png(`${modelsDir}${name}/seen.png`);
  assert.equal(got.width, seen.width);
  assert.deepEqual(got.seen, [...seen.data], 'the browser\'s decoding and the core\'s resize give Pillow\'s picture');
  const reference = parseNpy(readFileSync(`${modelsDir}${name}/attentions.npy`)).data;
  assert.equal(got.attentions.length, reference.length);
  assert.ok(got.attentions.every((v, i) => Math.abs(v - reference[i]) < 1e-5));
  const golden = JSON.parse(readFileSync(`${modelsDir}${name}/golden.json`, 'utf8'));
  assert.deepEqual(got.labels, golden.top5);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the widget shows a DeiT\'s picture view from its picture attribute, or from a child <img> it follows', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}fixtures/widget-picture.html`);
  await page.waitForFunction(() => ['picture', 'child'].every((id) => Number(document.getElementById(id).dataset.runs ?? 0) >= 1), null, { timeout: 60000 });
  const labelsOf = (id) => page.evaluate((i) => [...document.getElementById(i).shadowRoot.querySelector('image-view').result.picture.topK.ids], id);
  assert.deepEqual(await labelsOf('child'), await labelsOf('picture'), 'a child <img> is the same picture as the attribute');
  await page.evaluate(() => { document.querySelector('#child img').src = '/test-models/vit-classifier-nonsquare-f32/picture.png'; });
  await page.waitForFunction(() => Number(document.getElementById('child').dataset.runs) >= 2, null, { timeout: 30000 });
  const seen = await page.evaluate(() => document.getElementById('child').shadowRoot.querySelector('image-view').result.picture.seen.data.slice(0, 12).join(','));
  const first = await page.evaluate(() => document.getElementById('picture').shadowRoot.querySelector('image-view').result.picture.seen.data.slice(0, 12).join(','));
  assert.notEqual(seen, first, 'the new <img> src is read');
  const shown = await page.evaluate(() => {
    const view = document.getElementById('picture').shadowRoot.querySelector('image-view');
    return { tokens: view.result.tokens.slice(0, 3).map((t) => t.display), labels: [...view.result.picture.topK.ids], chips: view.querySelectorAll('.image-chips button').length };
  });
  const golden = JSON.parse(readFileSync(`${modelsDir}deit-distilled-teacher-bf16/golden.json`, 'utf8'));
  assert.deepEqual(shown.tokens, ['[CLS]', '[DIST]', '(0, 0)']);
  assert.deepEqual(shown.labels, golden.top5);
  assert.equal(shown.chips, 2, 'CLS and the distillation token');
  assert.deepEqual(errors, []);
  await page.close();
});

// The brightness (R + G + B) of the middle pixel of each of shapes-vit's 6 × 6 patches in the Picture tab's main canvas.
const patchBrightness = (page) => evaluateJson(page, () => {
  const canvas = document.querySelector('image-view canvas.image-main');
  const { data, width } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  const cell = canvas.width / 6;
  return Array.from({ length: 36 }, (_, p) => {
    const at = (Math.floor((Math.floor(p / 6) + 0.5) * cell) * width + Math.floor(((p % 6) + 0.5) * cell)) * 4;
    return data[at] + data[at + 1] + data[at + 2];
  });
});

test('shapes-vit: attention flow over the patches; the picture in the link; the JSON and one-file exports draw it offline', async () => {
  const { 'circle.png': want, 'square.png': wantSquare } = await shapesVitRuns('circle.png', 'square.png');
  const circle = png(`${shippedDir}samples/circle.png`);
  const squareBytes = readFileSync(`${shippedDir}samples/square.png`);

  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#model=shapes-vit`);
  await runsAfter(page, 0);
  await page.waitForFunction(() => /(^#|&)picture=sample%3Ashapes-vit%2Fsamples%2Fcircle\.png(&|$)/.test(location.hash), null, { timeout: 5000 });

  // Attention flow from CLS, solved a few tokens per frame, dims the patches as the rollout does.
  await page.selectOption('image-view select[aria-label="What the picture shows"]', 'flow');
  await page.waitForFunction(() => document.querySelector('image-view .view-title').textContent === 'Attention flow over all 4 layers: where [CLS] draws from', null, { timeout: 30000 });
  await page.waitForFunction(() => /(^#|&)overlay=flow(&|$)/.test(location.hash), null, { timeout: 5000 });
  assert.doesNotMatch(page.url(), /[#&]z?text=/, 'a vision model\'s link names no text');
  const flow = [...attentionFlowRow(want.attentions, 0)].slice(1);
  const max = Math.max(...flow);
  const drawn = await patchBrightness(page);
  flow.forEach((w, p) => {
    const at = ((Math.floor(p / 6) * 8 + 4) * 48 + (p % 6) * 8 + 4) * 4;
    const expected = (circle.data[at] + circle.data[at + 1] + circle.data[at + 2]) * (1 - 0.82 * (1 - w / max));
    assert.ok(Math.abs(drawn[p] - expected) <= 6, `patch ${p}: drawn ${drawn[p]}, expected ${expected.toFixed(1)} (flow ${w.toFixed(4)})`);
  });

  // The JSON export carries the picture as the model saw it; the widget's data mode reads it.
  const json = JSON.parse((await downloadOf(page, '#export-json')).bytes.toString('utf8'));
  const seen = PNG.sync.read(Buffer.from(json.image.seen.png, 'base64'));
  assert.deepEqual([...seen.data], [...want.seen.data], 'the exported picture is the one the model saw, pixel for pixel');
  const data = readAttentionData(json).parts.self.result;
  assert.ok(data.attentions.data.every((v, i) => Math.abs(v - want.attentions.data[i]) < 1e-6));
  assert.deepEqual(data.picture.topK.labels, want.topK.labels);
  assert.deepEqual(data.picture.norms.length, 5, 'the norms of the input and of each of the 4 layers');

  // "Download as a page" from the Picture tab: the picture view with its flow overlay, offline, with no model.
  const { name, bytes } = await downloadOf(page, '#export-page');
  assert.equal(name, 'attnplay-shapes-vit-image.html');
  const path = join(made, name);
  writeFileSync(path, bytes);
  const context = await session.browser.newContext({ offline: true });
  const saved = await context.newPage();
  const savedErrors = [];
  saved.on('pageerror', (error) => savedErrors.push(error.message));
  await saved.goto(pathToFileURL(path).href);
  await saved.waitForFunction(() => document.querySelector('attention-view')?.dataset.state === 'ready', null, { timeout: 30000 });
  await saved.waitForFunction(() => !/solved/.test(document.querySelector('attention-view').viewElement.querySelector('.view-title').textContent), null, { timeout: 30000 });
  const offline = await evaluateJson(saved, () => {
    const view = document.querySelector('attention-view').viewElement;
    return {
      tag: view.tagName, labels: view.result.picture.topK.labels, tokens: view.result.tokens.map((t) => t.display),
      seen: [...view.result.picture.seen.data], attentions: [...view.result.attentions.data],
      title: view.querySelector('.view-title').textContent,
    };
  });
  assert.equal(offline.tag, 'IMAGE-VIEW');
  assert.deepEqual(offline.labels, want.topK.labels);
  assert.deepEqual(offline.tokens, want.tokens);
  assert.deepEqual(offline.seen, [...want.seen.data]);
  assert.ok(offline.attentions.every((v, i) => Math.abs(v - want.attentions.data[i]) < 1e-6));
  assert.equal(offline.title, 'Attention flow over all 4 layers: where [CLS] draws from');
  assert.deepEqual(savedErrors, []);
  await context.close();

  // The reader's own picture: kept in this browser under its SHA-256, named in the link, back after a reload.
  const before = await runCount(page);
  await page.setInputFiles('#picture-file', { name: 'mine.png', mimeType: 'image/png', buffer: squareBytes });
  await runsAfter(page, before);
  const hash = createHash('sha256').update(squareBytes).digest('hex');
  await page.waitForFunction((h) => location.hash.includes(`picture=local%3A${h}`), hash, { timeout: 5000 });
  assert.match(await page.textContent('#picture-name'), /it stays in this browser: the link opens it here only/);
  const link = page.url();
  await page.reload();
  await page.waitForFunction((want) => [...document.querySelectorAll('.image-labels .label-name')].map((n) => n.textContent).join() === want,
    wantSquare.topK.labels.join(), { timeout: 60000 });
  assert.match(await page.textContent('#picture-name'), /^your picture \(kept in this browser\)/);

  // Another browser (fresh storage) does not have it, and says so.
  const elsewhere = await session.browser.newContext();
  const other = await elsewhere.newPage();
  await other.goto(link);
  await other.waitForFunction(() => /kept in the browser where the link was made/.test(document.querySelector('#picture-name').textContent), null, { timeout: 60000 });
  assert.match(await other.textContent('#run-note'), /Choose a picture/);

  // Asked to, the link carries the picture: it opens in the other browser.
  await page.check('#picture-in-link');
  await page.waitForFunction(() => /(^#|&)picture=inline%3A[\w-]{100,}(&|$)/.test(location.hash), null, { timeout: 5000 });
  assert.match(await page.textContent('#picture-name'), /the link carries it/);
  const carried = page.url();
  await other.goto('about:blank');
  await other.goto(carried);
  await other.waitForFunction(() => document.querySelector('image-view')?.result?.picture && document.querySelector('.image-labels .label-name'), null, { timeout: 60000 });
  const labels = await other.$$eval('.image-labels .label-name', (names) => names.map((n) => n.textContent));
  assert.deepEqual(labels, wantSquare.topK.labels, 'the square travels as a PNG (shorter than its JPEG): exact');
  assert.match(await other.textContent('#picture-name'), /^the picture in the link/);
  await elsewhere.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test("the widget draws the CLI's attention --image JSON (DINOv2 with registers) with no model: picture, registers, labels", async () => {
  const name = 'dinov2-registers-swiglu-bf16';
  const text = execFileSync(cli, ['attention', '--model', `${modelsDir}${name}`, '--image', `${modelsDir}${name}/picture.png`], { maxBuffer: 1 << 28 });
  writeFileSync(join(made, 'dinov2.json'), text);
  const json = JSON.parse(text);
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}fixtures/widget-picture-data.html`);
  await page.waitForFunction(() => document.getElementById('data').dataset.state === 'ready', null, { timeout: 30000 });
  const shown = await evaluateJson(page, () => {
    const view = document.getElementById('data').viewElement;
    return {
      tag: view.tagName, tokens: view.result.tokens.map((t) => t.display), chips: [...view.querySelectorAll('.image-chips button')].map((b) => b.textContent.split(' ')[0]),
      seen: [...view.result.picture.seen.data], attentions: [...view.result.attentions.data],
      resources: performance.getEntriesByType('resource').map((r) => r.name).filter((n) => /\.wasm$|engine-worker\.js|\/models\//.test(n)),
    };
  });
  assert.equal(shown.tag, 'IMAGE-VIEW');
  assert.deepEqual(shown.tokens, json.tokens.map((t) => t.token));
  assert.deepEqual(shown.chips, shown.tokens.slice(0, shown.tokens.length - 16), 'CLS and the registers are the learned tokens');
  assert.ok(shown.chips.includes('[REG1]'));
  assert.deepEqual(shown.seen, [...png(`${modelsDir}${name}/seen.png`).data], "the JSON's picture is Pillow's seen.png");
  const flat = json.attentions.flat(3);
  assert.ok(shown.attentions.every((v, i) => Math.abs(v - flat[i]) < 1e-7));
  assert.deepEqual(shown.resources, [], 'no engine, no WASM');
  assert.deepEqual(errors, []);
  await page.close();
});
