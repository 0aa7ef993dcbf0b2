// Vision transformers (ViT, DeiT, DINOv2 with and without registers) in WASM
// through the JS engine, against tests/golden/make_vision_goldens.py: the
// picture preprocessed in WASM equals Pillow's (seen.png), and every layer's
// and head's attention, the token names and the top-5 labels equal PyTorch's.
// The pictures are decoded by pngjs (exact for these 8-bit PNGs). The CLI's
// `attention --image` against the same goldens: its JSON carries the seen
// picture (a PNG equal to Pillow's), the attention, the labels (and with
// --ablate the intact ones), and the widget's data mode reads it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { before, test } from 'node:test';

import { PNG } from 'pngjs';

import { AttnplayError, ImageModel, createEngine } from '../../dist/engine/engine.js';
import { parseNpy, readAttentionData } from '../../web/attention/attention-data-source.js';
import { golden, maxAbsDiff, modelsDir } from './model-golden.mjs';

const VISION_MODELS = ['vit-classifier-nonsquare-f32', 'vit-bare-pooler-f16', 'deit-distilled-teacher-bf16',
  'dinov2-518-to-224-f32', 'dinov2-registers-swiglu-bf16'];

const file = (name, path) => readFileSync(new URL(`${name}/${path}`, modelsDir));

// A PNG file -> { data: RGBA bytes, width, height } (what a canvas's ImageData holds).
function picture(bytes) {
  const png = PNG.sync.read(bytes);
  return { data: new Uint8Array(png.data.buffer, png.data.byteOffset, png.data.length), width: png.width, height: png.height };
}

let engine;
before(async () => {
  engine = await createEngine();
});

async function load(name) {
  return engine.loadModel({
    config: file(name, 'config.json').toString('utf8'), weights: file(name, 'model.safetensors'),
    preprocessor: file(name, 'preprocessor_config.json').toString('utf8'),
  });
}

for (const name of VISION_MODELS) {
  test(`${name}: Pillow's preprocessing, PyTorch's attention and labels, in WASM`, async (t) => {
    const model = await load(name);
    try {
      assert.ok(model instanceof ImageModel);
      assert.equal(model.config.imageModel, true);
      const g = golden(name);
      const result = model.run(picture(file(name, 'picture.png')));
      // The picture as the model saw it: Pillow's resize and transformers' crop, byte for byte.
      const seen = picture(file(name, 'seen.png'));
      assert.equal(result.seen.width, seen.width);
      assert.equal(result.seen.height, seen.height);
      assert.equal(maxAbsDiff(result.seen.data, seen.data), 0);
      const reference = parseNpy(file(name, 'attentions.npy'));
      assert.deepEqual(result.attentions.shape, reference.shape);
      const error = maxAbsDiff(result.attentions.data, reference.data);
      t.diagnostic(`${result.tokens.length} tokens; max |attention - PyTorch| ${error.toExponential(1)}`);
      assert.ok(error < 1e-5);
      assert.deepEqual([result.grid.rows, result.grid.columns], g.grid);
      const { vision } = model.config;
      assert.equal(result.tokens.length, g.tokens);
      assert.equal(result.tokens[0], '[CLS]');
      assert.equal(result.tokens[vision.prefixTokens], '(0, 0)');
      assert.equal(result.tokens.at(-1), `(${g.grid[0] - 1}, ${g.grid[1] - 1})`);
      if (g.top5) {
        const k = Math.min(5, vision.labels.length);
        assert.deepEqual([...result.topK.ids], g.top5.slice(0, k));
        assert.deepEqual(result.topK.labels, g.top5.slice(0, k).map((id) => vision.labels[id]));
      } else {
        assert.equal(vision.hasClassifier, false);
        assert.equal(result.topK, undefined);
      }
    } finally {
      model.dispose();
    }
  });
}

test('a vision model: heads knocked out change later layers only; pixels run as given; bad input is refused by name', async () => {
  const name = 'vit-classifier-nonsquare-f32';
  const model = await load(name);
  try {
    const input = picture(file(name, 'picture.png'));
    const intact = model.run(input, { trace: { layer: 1, head: 2 }, hiddenStates: true });
    const ablated = model.run(input, { ablate: [{ layer: 0, head: 1 }] });
    const T = intact.tokens.length;
    const layerSize = model.config.heads * T * T;
    assert.equal(maxAbsDiff(ablated.attentions.data.subarray(0, layerSize), intact.attentions.data.subarray(0, layerSize)), 0);
    assert.ok(maxAbsDiff(ablated.attentions.data.subarray(layerSize), intact.attentions.data.subarray(layerSize)) > 1e-4);
    assert.deepEqual(intact.trace.weights.shape, [T, T]);
    assert.deepEqual(intact.hiddenStates.shape, [model.config.layers + 1, T, model.config.width]);
    // The same pixels through forward(): the same attention.
    const { data, width, height } = intact.seen;
    const pixels = new Float32Array(3 * width * height);
    for (let i = 0; i < width * height; i += 1) {
      for (let c = 0; c < 3; c += 1) pixels[c * width * height + i] = Math.fround(Math.fround(data[i * 4 + c] / 255) - 0.5) / 0.5;
    }
    const direct = model.forward({ data: pixels, shape: [3, height, width] });
    assert.ok(maxAbsDiff(direct.attentions.data, intact.attentions.data) < 1e-6);
    assert.throws(() => model.run({ data: new Uint8Array(7), width: 2, height: 1 }),
      (e) => e instanceof AttnplayError && /7 bytes of RGBA for 2×1 pixels \(8 expected\)/.test(e.message));
    assert.throws(() => model.run({ data: new Uint8Array(0), width: 0, height: 0 }), /at least 1×1 pixels/);
    assert.throws(() => model.forward({ data: new Float32Array(3 * 32 * 32), shape: [3, 32, 32] }),
      /the picture is 32×32 pixels, but ViT reads 48×32/);
  } finally {
    model.dispose();
  }
  assert.equal(engine.loadedModels(), 0);
});

const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));

test("the CLI's attention --image: PyTorch's attention, Pillow's seen picture and the labels in one JSON that the widget's data mode reads", () => {
  for (const name of ['vit-classifier-nonsquare-f32', 'dinov2-registers-swiglu-bf16']) {
    const folder = fileURLToPath(new URL(name, modelsDir));
    const json = JSON.parse(execFileSync(cli, ['attention', '--model', folder, '--image', `${folder}/picture.png`], { maxBuffer: 1 << 28 }));
    const reference = parseNpy(file(name, 'attentions.npy'));
    const [L, H, T] = reference.shape;
    const flat = new Float32Array(json.attentions.flat(3));
    assert.deepEqual([json.attentions.length, json.attentions[0].length, json.attentions[0][0].length], [L, H, T]);
    assert.ok(maxAbsDiff(flat, reference.data) < 1e-5, `${name}: the CLI's attention is PyTorch's`);
    const seen = PNG.sync.read(Buffer.from(json.image.seen.png, 'base64'));
    const pillow = PNG.sync.read(file(name, 'seen.png'));
    assert.deepEqual([seen.width, seen.height], [pillow.width, pillow.height]);
    assert.equal(maxAbsDiff(seen.data, pillow.data), 0, `${name}: the JSON's picture is Pillow's seen.png`);
    const g = golden(name);
    assert.deepEqual([json.image.grid.rows, json.image.grid.columns], g.grid);
    if (g.top5) assert.deepEqual(json.top_k[0].ids, g.top5.slice(0, json.top_k[0].ids.length));
    else assert.equal(json.top_k, undefined);

    const { parts } = readAttentionData(json);
    const { picture, tokens, attentions } = parts.self.result;
    assert.deepEqual(picture.grid, json.image.grid);
    assert.equal(picture.prefixTokens, T - g.grid[0] * g.grid[1]);
    assert.deepEqual(tokens.map((t) => t.special), tokens.map((_, i) => i < picture.prefixTokens));
    assert.deepEqual([...picture.seen.png], [...Buffer.from(json.image.seen.png, 'base64')]);
    assert.equal(maxAbsDiff(attentions.data, reference.data) < 1e-5, true);
    if (g.top5) assert.deepEqual(picture.topK.labels, json.top_k[0].labels);
  }
  // --ablate: the labels after, and before (the intact run's, which the plain command prints).
  const name = 'vit-classifier-nonsquare-f32';
  const folder = fileURLToPath(new URL(name, modelsDir));
  const args = ['attention', '--model', folder, '--image', `${folder}/picture.png`];
  const intact = JSON.parse(execFileSync(cli, args, { maxBuffer: 1 << 28 }));
  const ablated = JSON.parse(execFileSync(cli, [...args, '--ablate', '0:0,0:1,1:2'], { maxBuffer: 1 << 28 }));
  assert.deepEqual(ablated.top_k_before, intact.top_k);
  assert.notDeepEqual(ablated.top_k[0].probabilities, intact.top_k[0].probabilities);
  const read = readAttentionData(ablated).parts.self.result.picture;
  assert.deepEqual(read.topKBefore.labels, intact.top_k[0].labels);
});
