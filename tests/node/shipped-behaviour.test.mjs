// What a new reader of the shipped models meets first, checked on the shipped
// files through the page's WASM engine against PyTorch's figures for the same
// weights (tests/golden/models/austen-gpt-heldout.json and
// austen-bert-heldout.json, written by models/train/measure_gpt.py and
// measure_bert.py). austen-gpt: on held-out paragraphs of the validation split
// its top prediction is a line break (↵) at under 5% of positions, and after
// the opening of Pride and Prejudice " wife" is in its top 5, which are
// PyTorch's. austen-bert: on a sample of its validation examples it predicts
// the masked tokens PyTorch predicts, at PyTorch's accuracy, and PyTorch's
// accuracy over the whole validation split is at least 35%. The head criteria
// (previous-token > 0.8, induction > 0.5) are checked in shipped-models.test.mjs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';

const read = (path, encoding) => readFileSync(new URL(path, import.meta.url), encoding);
const golden = JSON.parse(read('../golden/models/austen-gpt-heldout.json', 'utf8'));
const bertGolden = JSON.parse(read('../golden/models/austen-bert-heldout.json', 'utf8'));

async function loadShipped(name) {
  const engine = await createEngine();
  const model = await engine.loadModel({
    config: read(`../../models/${name}/config.json`, 'utf8'),
    weights: read(`../../models/${name}/model.safetensors`),
    tokenizer: read(`../../models/${name}/tokenizer.json`, 'utf8'),
  });
  return { engine, model };
}

test('austen-gpt predicts ↵ as its top token at under 5% of held-out positions, as PyTorch does', async () => {
  const { engine, model } = await loadShipped('austen-gpt');
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

test('austen-gpt\'s top 5 after "…must be in want of a" are PyTorch\'s and include " wife", and no line break', async () => {
  const { model } = await loadShipped('austen-gpt');
  const r = model.run(golden.prompt, { topK: 5 });
  const last = r.topK.shape[0] - 1;
  const top5 = Array.from(r.topK.ids.slice(5 * last, 5 * last + 5));
  const displays = r.topK.displays.slice(5 * last, 5 * last + 5);
  model.dispose();
  assert.deepEqual(top5, golden.prompt_top5_ids);
  assert.ok(top5.includes(golden.wife_id), `top 5: ${displays.join(' | ')}`);
  assert.ok(!top5.includes(golden.newline_id), `top 5: ${displays.join(' | ')}`);
});

test('austen-bert predicts the masked tokens of held-out examples as PyTorch does, at PyTorch\'s accuracy', async () => {
  const { model } = await loadShipped('austen-bert');
  let total = 0;
  let agree = 0;
  let correct = 0;
  for (const row of bertGolden.rows) {
    const { topK } = model.forward(row.ids, { typeIds: row.type_ids, maskPositions: row.positions, topK: 1 });
    Array.from(topK.ids).forEach((id, i) => {
      total += 1;
      agree += id === row.predicted[i];
      correct += id === row.labels[i];
    });
  }
  model.dispose();
  // F16 weights in both; float32 sums in a different order may flip a near tie.
  assert.ok(agree >= total - 2, `${total - agree} of ${total} top predictions differ from PyTorch's`);
  const accuracy = correct / total;
  assert.ok(Math.abs(accuracy - bertGolden.sample_accuracy) <= 2 / total, `WASM ${accuracy}, PyTorch ${bertGolden.sample_accuracy}`);
  assert.ok(bertGolden.validation_mlm_accuracy >= 0.35, `PyTorch's validation accuracy ${bertGolden.validation_mlm_accuracy}`);
});
