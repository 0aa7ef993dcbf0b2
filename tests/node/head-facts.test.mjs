// The head facts the views print (web/attention/head-facts.js): the key/value head a
// query head reads is the one the model computes with (heads of one group get
// identical k from the engine's trace, heads of different groups do not, on
// the golden GQA and MQA checkpoints), and the sink score is the mean weight
// on the first token, against a plain loop over the engine's attention.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { kvGroup, kvHeadOf, sharesKeyValues, sinkScore, sinkText } from '../../dist/attention/head-facts.js';
import { modelFiles } from './model-golden.mjs';

const engine = await createEngine();

for (const name of ['llama-gqa-llama3-bf16', 'llama-mqa-bias-linear-f32', 'gpt2-l2-h12-k8-f16']) {
  test(`key/value groups follow the model's own k (${name})`, async () => {
    const model = await engine.loadModel(modelFiles(name));
    try {
      const { heads, kvHeads } = model.config;
      assert.equal(sharesKeyValues(heads, kvHeads), kvHeads < heads);
      const ids = [5, 17, 42, 7, 99, 3];
      const k = (head) => Array.from(model.forward(ids, { trace: { layer: 1, head } }).trace.k.data);
      const keys = Array.from({ length: heads }, (_, head) => k(head));
      for (let a = 0; a < heads; a += 1) {
        assert.deepEqual(kvGroup(a, heads, kvHeads).includes(a), true);
        for (let b = a + 1; b < heads; b += 1) {
          const same = kvHeadOf(a, heads, kvHeads) === kvHeadOf(b, heads, kvHeads);
          assert.equal(JSON.stringify(keys[a]) === JSON.stringify(keys[b]), same, `heads ${a} and ${b}`);
        }
      }
      const r = model.forward(ids);
      const [L, H, T] = r.attentions.shape;
      for (let layer = 0; layer < L; layer += 1) {
        for (let head = 0; head < H; head += 1) {
          let sum = 0;
          for (let q = 1; q < T; q += 1) sum += r.attentions.data[((layer * H + head) * T + q) * T];
          assert.ok(Math.abs(sinkScore(r.attentions, layer, head) - sum / (T - 1)) < 1e-12);
        }
      }
    } finally {
      model.dispose();
    }
  });
}

test('sink score of a single query is undefined, and reads as a percentage', () => {
  assert.equal(sinkScore({ data: new Float32Array([1]), shape: [1, 1, 1, 1] }, 0, 0), null);
  assert.equal(sinkText(null), '');
  assert.equal(sinkText(0.8249), 'sink 82%');
  assert.deepEqual(kvGroup(5, 9, 3), [3, 4, 5]); // SmolLM2-135M: 9 query heads, 3 key/value heads
  assert.equal(kvHeadOf(13, 14, 2), 1); // Qwen2.5-0.5B: 14 and 2
});
