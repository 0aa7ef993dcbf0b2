// Generation in WASM through the JS engine (model.generate): the same ids as
// the native CLI (`attnplay generate`) for greedy decoding and for seeded
// sampling, on causal golden checkpoints of every family; each step's
// attention row equals the row of an uncached forward pass over the prefix
// (1e-5 absolute); the callback can stop generation; bad options are errors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { before, test } from 'node:test';

import { AttnplayError, createEngine } from '../../dist/engine.js';
import { maxAbsDiff, modelFiles } from './model-golden.mjs';

const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const dirOf = (name) => fileURLToPath(new URL(`../golden/models/${name}`, import.meta.url));
const PROMPT = [40, 50, 60, 70];

let engine;
before(async () => {
  engine = await createEngine();
});

function nativeIds(name, args) {
  const r = spawnSync(cli, ['generate', '--model', dirOf(name), '--ids', PROMPT.join(','), ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.tokens.length, out.ids.length);
  assert.equal(typeof out.text, 'string');
  return out.ids;
}

for (const name of ['gpt2-l2-h12-k8-f16', 'llama-gqa-llama3-bf16', 'mistral-window3-f16', 'qwen3-qknorm-bf16', 'pythia-parallel-f16']) {
  test(`${name}: WASM generate equals the native CLI, with the predicting rows`, async () => {
    const model = await engine.loadModel(modelFiles(name));
    try {
      const steps = [];
      const greedy = model.generate(PROMPT, { maxNewTokens: 8 }, (step) => { steps.push(step); });
      assert.deepEqual(Array.from(greedy), nativeIds(name, ['--max-new-tokens', '8']));
      assert.ok(steps.length >= 1 && steps.length <= 8);
      for (const step of steps) {
        const prefix = Array.from(greedy.subarray(0, step.position + 1));
        assert.equal(greedy[step.position + 1], step.token);
        const { attentions } = model.forward(prefix);
        const [L, H, T] = attentions.shape;
        assert.deepEqual(step.attention.shape, [L, H, T]);
        const lastRows = new Float32Array(L * H * T);
        for (let lh = 0; lh < L * H; lh += 1) lastRows.set(attentions.data.subarray((lh * T + T - 1) * T, (lh * T + T) * T), lh * T);
        assert.ok(maxAbsDiff(step.attention.data, lastRows) < 1e-5);
      }
      const sampling = { maxNewTokens: 8, temperature: 1.5, topK: 50, topP: 0.95, seed: 12345 };
      const sampled = model.generate(PROMPT, sampling);
      assert.deepEqual(Array.from(sampled),
        nativeIds(name, ['--max-new-tokens', '8', '--temperature', '1.5', '--top-k', '50', '--top-p', '0.95', '--seed', '12345']));
    } finally {
      model.dispose();
    }
  });
}

test('the step callback can stop generation; bad options are errors', async () => {
  const model = await engine.loadModel(modelFiles('llama-mqa-bias-linear-f32'));
  try {
    let calls = 0;
    const ids = model.generate(PROMPT, { maxNewTokens: 10 }, () => { calls += 1; return calls < 3; });
    assert.equal(calls, 3);
    assert.equal(ids.length, PROMPT.length + 3);
    assert.throws(() => model.generate(PROMPT, { topP: 0 }), (e) => e instanceof AttnplayError && /top_p must be in \(0, 1\]/.test(e.message));
    assert.throws(() => model.generate([], {}), /at least one token/);
    assert.throws(() => model.generate(PROMPT, { temperature: 'hot' }), /temperature must be a number/);
    assert.equal(model.generate(PROMPT, { maxNewTokens: 2 }).length, PROMPT.length + 2); // still usable
  } finally {
    model.dispose();
  }
  const bert = await engine.loadModel(modelFiles('bert-l2-h2-k32-f32'));
  assert.throws(() => bert.generate([2, 3]), /generation needs a causal model/);
  bert.dispose();
});
