// Vision transformers (ViT, DeiT, DINOv2 with and without registers) in WASM
// through the JS engine, against tests/golden/make_vision_goldens.py: the
// picture preprocessed in WASM equals Pillow's (seen.png), and every layer's
// and head's attention, the token names and the top-5 labels equal PyTorch's.
// The pictures are decoded by pngjs (exact for these 8-bit PNGs).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';

import { PNG } from 'pngjs';

import { AttnplayError, ImageModel, createEngine } from '../../dist/engine/engine.js';
import { parseNpy } from '../../web/attention/attention-data-source.js';
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
