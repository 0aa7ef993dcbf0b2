// What a new reader of the default model meets first, checked on the shipped
// files through the page's WASM engine against PyTorch's figures for the same
// weights (tests/golden/models/austen-gpt-heldout.json, written by
// models/train/measure_gpt.py): on held-out paragraphs of the validation split,
// its top prediction is a line break (↵) at under 5% of positions, and after the
// opening of Pride and Prejudice its top 5 are PyTorch's (not yet " wife": the
// card says where it ranks). The head criteria (previous-token > 0.8,
// induction > 0.5) are checked in shipped-models.test.mjs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { createEngine } from '../../dist/engine.js';

const read = (path, encoding) => readFileSync(new URL(path, import.meta.url), encoding);
const golden = JSON.parse(read('../golden/models/austen-gpt-heldout.json', 'utf8'));

async function loadGpt() {
  const engine = await createEngine();
  const model = await engine.loadModel({
    config: read('../../models/austen-gpt/config.json', 'utf8'),
    weights: read('../../models/austen-gpt/model.safetensors'),
    tokenizer: read('../../models/austen-gpt/tokenizer.json', 'utf8'),
  });
  return { engine, model };
}

test('austen-gpt predicts ↵ as its top token at under 5% of held-out positions, as PyTorch does', async () => {
  const { engine, model } = await loadGpt();
  const tokenizer = engine.loadTokenizer(read('../../models/austen-gpt/tokenizer.json', 'utf8'));
  assert.deepEqual(Array.from(tokenizer.encodeIds(golden.text)), golden.ids);
  tokenizer.dispose();
  const context = model.config.positions;
  let newlines = 0;
  for (let start = 0; start < golden.ids.length; start += context) { // windows as the page runs a long text
    const { topK } = model.forward(golden.ids.slice(start, start + context), { topK: 1 });
    newlines += topK.ids.filter((id) => id === golden.newline_id).length;
  }
  model.dispose();
  const rate = newlines / golden.ids.length;
  assert.ok(Math.abs(rate - golden.newline_top1_rate) <= 2 / golden.ids.length, `WASM ${rate}, PyTorch ${golden.newline_top1_rate}`);
  assert.ok(rate < 0.05, `↵ is the top prediction at ${(100 * rate).toFixed(1)}% of ${golden.ids.length} held-out positions`);
});

test('austen-gpt\'s top 5 after "…must be in want of a" are PyTorch\'s, and no line break', async () => {
  const { model } = await loadGpt();
  const r = model.run(golden.prompt, { topK: 5 });
  const last = r.topK.shape[0] - 1;
  const top5 = Array.from(r.topK.ids.slice(5 * last, 5 * last + 5));
  model.dispose();
  assert.deepEqual(top5, golden.prompt_top5_ids);
  assert.ok(!top5.includes(golden.newline_id), `top 5: ${top5}`);
});
