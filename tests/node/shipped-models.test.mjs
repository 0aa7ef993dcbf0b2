// Fidelity of the shipped models (those models/catalog.json lists) in WASM:
// the page's engine, loading models/<name>/ as the page does, reproduces PyTorch's attention (1e-5) and
// logits (1e-4 relative) saved by the training scripts, and tokenizes the
// fixed sentences to the same ids. Its head analysis gives the scores of the
// model card's heads.json (written by the native CLI), and the default model
// keeps the heads its card promises.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { PNG } from 'pngjs';

import { createEngine } from '../../dist/engine/engine.js';
import { VISION_MODEL_TYPES } from '../../web/hub/hub.js';
import { DEFAULT_STATE } from '../../web/run/state.js';

const read = (path, encoding) => readFileSync(new URL(path, import.meta.url), encoding);

// Every model the catalog lists must be shipped and faithful; encoder–decoders
// (gettext-en-fr) have their own suite, tests/node/gettext-en-fr.test.mjs;
// vision models (shapes-vit) read their sample pictures.
const catalog = JSON.parse(read('../../models/catalog.json', 'utf8'));
const configOf = (name) => JSON.parse(read(`../../models/${name}/config.json`, 'utf8'));
const vision = catalog.filter(({ name }) => VISION_MODEL_TYPES.includes(configOf(name).model_type));
const singleStack = catalog.filter(({ name }) => !configOf(name).is_encoder_decoder && !vision.some((m) => m.name === name));
test('the catalog lists at least the default model; each text model has an example, the default model\'s the page\'s first text; each vision model sample pictures', () => {
  assert.equal(catalog.find((m) => m.name === 'austen-gpt')?.example, DEFAULT_STATE.text);
  for (const { name, example } of catalog.filter((m) => !vision.includes(m))) assert.ok(typeof example === 'string' && example.trim() !== '', `${name}: an example text`);
  for (const { name, samples } of vision) assert.ok(samples?.length > 0 && samples.every((file) => read(`../../models/${name}/${file}`).length > 0), `${name}: sample pictures`);
  assert.match(catalog.find((m) => m.name === 'austen-bert').example, /\[MASK\]/);
});

// A shipped model's golden file (tests/golden/models/NAME.json): its cases, and floats(entry) reading a tensor of its data file.
function shippedGolden(name) {
  const golden = JSON.parse(read(`../golden/models/${name}.json`, 'utf8'));
  const data = read(`../golden/models/${golden.data}`);
  const floats = ({ shape, offset }) => new Float32Array(data.buffer.slice(data.byteOffset + offset, data.byteOffset + offset + 4 * shape.reduce((a, b) => a * b, 1)));
  return { cases: golden.cases, floats };
}

// One golden case against a run `r` (with logits): attention within 1e-5, logits within 1e-4 of the largest.
function assertGoldenCase(c, r, floats, what) {
  const attention = floats(c.attentions);
  assert.equal(r.attentions.data.length, attention.length);
  let worst = 0;
  attention.forEach((v, i) => { worst = Math.max(worst, Math.abs(v - r.attentions.data[i])); });
  assert.ok(worst < 1e-5, `${what}: attention differs by ${worst}`);
  const logits = floats(c.logits);
  let largest = 0;
  let error = 0;
  logits.forEach((v, i) => { largest = Math.max(largest, Math.abs(v)); error = Math.max(error, Math.abs(v - r.logits.data[i])); });
  assert.ok(error / largest < 1e-4, `${what}: logits differ by ${error / largest} (relative)`);
}

async function loadShipped(name) {
  const engine = await createEngine();
  return engine.loadModel({
    config: read(`../../models/${name}/config.json`, 'utf8'),
    weights: read(`../../models/${name}/model.safetensors`),
    tokenizer: read(`../../models/${name}/tokenizer.json`, 'utf8'),
  });
}

for (const { name } of singleStack) {
  test(`${name} reproduces PyTorch's attention and logits`, async () => {
    const model = await loadShipped(name);
    const { cases, floats } = shippedGolden(name);
    for (const c of cases) {
      assert.deepEqual(model.run(c.text, { textB: c.text_b }).tokens.map((t) => t.id), c.ids);
      const bert = model.config.modelType === 'bert';
      const r = model.forward(c.ids, bert ? { typeIds: c.type_ids, logits: true, maskPositions: c.ids.map((_, i) => i) } : { logits: true });
      assertGoldenCase(c, r, floats, c.text);
    }
    model.dispose();
  });
}

for (const { name } of vision) {
  test(`${name} reproduces PyTorch's attention and logits on its sample pictures`, async () => {
    const engine = await createEngine();
    const model = await engine.loadModel({
      config: read(`../../models/${name}/config.json`, 'utf8'), weights: read(`../../models/${name}/model.safetensors`),
      preprocessor: read(`../../models/${name}/preprocessor_config.json`, 'utf8'),
    });
    const { cases, floats } = shippedGolden(name);
    assert.deepEqual(cases.map((c) => c.picture), catalog.find((m) => m.name === name).samples);
    for (const c of cases) {
      const png = PNG.sync.read(read(`../../models/${name}/${c.picture}`));
      const r = model.run({ data: png.data, width: png.width, height: png.height }, { logits: true });
      assertGoldenCase(c, r, floats, c.picture);
    }
    model.dispose();
  });
}

const SCORES = [['previousToken', 'previous_token'], ['nextToken', 'next_token'], ['induction', 'induction'], ['sink', 'sink'], ['self', 'self'], ['local', 'local'], ['broad', 'broad']];

for (const { name } of singleStack) {
  test(`${name}: the WASM head analysis gives the scores of the card's heads.json`, async () => {
    const model = await loadShipped(name);
    const card = JSON.parse(read(`../../models/${name}/heads.json`, 'utf8'));
    const heads = model.analyzeHeads();
    assert.equal(heads.length, card.length);
    heads.forEach((h, i) => {
      assert.deepEqual([h.layer, h.head, h.labels], [card[i].layer, card[i].head, card[i].labels]);
      for (const [ours, theirs] of SCORES) assert.ok(Math.abs(h[ours] - card[i][theirs]) < 1e-4, `${name} ${h.layer}.${h.head} ${ours}: ${h[ours]} vs ${card[i][theirs]}`);
    });
    model.dispose();
  });
}

// The card's scores, which the WASM analysis must give (test above).
test('austen-gpt has a previous-token head above 0.8 and an induction head above 0.5, as its card says', () => {
  const heads = JSON.parse(read('../../models/austen-gpt/heads.json', 'utf8'));
  const best = (key) => Math.max(...heads.map((h) => h[key]));
  assert.ok(best('previous_token') > 0.8, `best previous-token score ${best('previous_token')}`);
  assert.ok(best('induction') > 0.5, `best induction score ${best('induction')}`);
});
