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
// picture attribute. Everything is served under a strict CSP.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { PNG } from 'pngjs';

import { createEngine } from '../../dist/engine/engine.js';
import { parseNpy } from '../../web/attention/attention-data-source.js';
import { downloadOf, evaluateJson, newPage, openBrowser, pngSize } from './browser.mjs';

const modelsDir = fileURLToPath(new URL('../golden/models/', import.meta.url));
const fixturesDir = fileURLToPath(new URL('./fixtures/', import.meta.url));
const shippedDir = fileURLToPath(new URL('../../models/shapes-vit/', import.meta.url));
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";
let session;

before(async () => {
  session = await openBrowser({ mounts: { '/test-models/': modelsDir, '/fixtures/': fixturesDir }, headers: { 'Content-Security-Policy': CSP } });
});
after(async () => {
  await session?.close();
});

const png = (path) => PNG.sync.read(readFileSync(path));
const runsAfter = (page, n) => page.waitForFunction((k) => Number(document.body.dataset.run ?? 0) > k, n, { timeout: 60000 });
const runCount = (page) => page.evaluate(() => Number(document.body.dataset.run ?? 0));

test('shapes-vit: the Picture tab, the engine\'s labels, the overlay, hover, knocking a head out, the PNG export, a bad file', async () => {
  const engine = await createEngine();
  const model = await engine.loadModel({
    config: readFileSync(`${shippedDir}config.json`, 'utf8'), weights: readFileSync(`${shippedDir}model.safetensors`),
    preprocessor: readFileSync(`${shippedDir}preprocessor_config.json`, 'utf8'),
  });
  const sample = png(`${shippedDir}samples/circle.png`);
  const want = model.run({ data: sample.data, width: sample.width, height: sample.height });
  model.dispose();

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
  await page.waitForFunction(() => /Choose a picture/.test(document.querySelector('#run-note').textContent), null, { timeout: 60000 });
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

test('the widget shows a DeiT\'s picture view from its picture attribute', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}fixtures/widget-picture.html`);
  await page.waitForFunction(() => Number(document.getElementById('picture').dataset.runs ?? 0) >= 1, null, { timeout: 60000 });
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
