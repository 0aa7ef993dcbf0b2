// Attention rollout and flow in the C++ core (cpp/analysis/rollout.*), through
// `attnplay rollout` and the WASM engine (Engine.rollout), against web/attention/rollout.js
// and the float64 reference of the definitions (rollout-reference.mjs: plain
// matrix products, Edmonds–Karp max flow) on the same attention: the
// attention `attnplay attention` prints for golden checkpoints (causal and
// bidirectional), and random stacks. Bad methods and shapes are refused by name.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { before, test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { rolledOut } from '../../web/attention/rollout.js';
import { golden, modelsDir } from './model-golden.mjs';
import { randomAttention } from './reference.mjs';
import { refFlow, refRollout } from './rollout-reference.mjs';

const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const run = (args) => spawnSync(cli, args, { encoding: 'utf8', maxBuffer: 1 << 26 });

let engine;
before(async () => { engine = await createEngine(); });

function assertMap(actual, expected, tolerance, what) {
  const t = expected.length;
  assert.equal(actual.length, t * t, `${what}: ${t}×${t} values`);
  for (let i = 0; i < t; i += 1) {
    for (let j = 0; j < t; j += 1) {
      assert.ok(Math.abs(actual[i * t + j] - expected[i][j]) <= tolerance, `${what} [${i}][${j}]: ${actual[i * t + j]} vs ${expected[i][j]}`);
    }
  }
}

const rows = (data, t) => Array.from({ length: t }, (_, i) => Array.from(data.subarray(i * t, (i + 1) * t)));

for (const name of ['gpt2-l4-h4-k8-bf16', 'bert-l2-h2-k32-f32', 'llama-gqa-llama3-bf16']) {
  test(`${name}: attnplay rollout equals rollout.js and the float64 reference on the model's attention`, () => {
    const c = golden(name).cases[0];
    const dir = fileURLToPath(new URL(name, modelsDir));
    const printed = run(['attention', '--model', dir, '--ids', c.ids.join(',')]);
    assert.equal(printed.status, 0, printed.stderr);
    const nested = JSON.parse(printed.stdout).attentions; // [L][H][T][T], the float32 weights the CLI computed
    const shape = [nested.length, nested[0].length, c.ids.length, c.ids.length];
    const attentions = { data: Float32Array.from(nested.flat(3)), shape };
    for (const method of ['rollout', 'flow']) {
      const r = run(['rollout', '--model', dir, '--ids', c.ids.join(','), '--method', method]);
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.equal(out.method, method);
      assert.deepEqual(out.ids, c.ids);
      assert.equal(out.tokens.length, c.ids.length);
      const ours = Float64Array.from(out.rollout.flat());
      assertMap(ours, rows(rolledOut(attentions, method).data, shape[2]), 1e-12, `${name} ${method} vs rollout.js`);
      assertMap(ours, method === 'rollout' ? refRollout(attentions) : refFlow(attentions), 1e-9, `${name} ${method} vs reference`);
    }
  });
}

test('Engine.rollout (WASM) equals rollout.js and the reference on random attention, causal or not', () => {
  [[1, 1, 1], [2, 4, 7], [3, 2, 9], [4, 4, 12]].forEach(([layers, heads, t], n) => {
    for (const causal of [false, true]) {
      const shape = [layers, heads, t, t];
      const attentions = { data: randomAttention(shape, 300 + n, causal), shape };
      for (const method of ['rollout', 'flow']) {
        const map = engine.rollout(attentions, method);
        assert.deepEqual(map.shape, [t, t]);
        assert.ok(map.data instanceof Float64Array);
        assertMap(map.data, rows(rolledOut(attentions, method).data, t), 1e-12, `${shape} ${method} vs rollout.js`);
        assertMap(map.data, method === 'rollout' ? refRollout(attentions) : refFlow(attentions), 1e-9, `${shape} ${method} vs reference`);
      }
    }
  });
});

test('unknown methods, bad shapes and too much flow work are refused with a message', () => {
  const attentions = { data: randomAttention([1, 1, 3, 3], 1, false), shape: [1, 1, 3, 3] };
  assert.throws(() => engine.rollout(attentions, 'max'), /unknown rollout method 'max' \(use rollout or flow\)/);
  assert.throws(() => engine.rollout({ data: attentions.data, shape: [1, 1, 3, 4] }), /self-attention of shape \[layers, heads, T, T\]/);
  assert.throws(() => engine.rollout({ data: attentions.data.subarray(1), shape: [1, 1, 3, 3] }), /attention has 8 values/);
  const t = 65;
  assert.throws(() => engine.rollout({ data: new Float32Array(t * t).fill(1 / t), shape: [1, 1, t, t] }, 'flow'), /too much work/);
  const r = run(['rollout', '--model', fileURLToPath(new URL('gpt2-l1-h1-k64-f32', modelsDir)), '--ids', '1,2', '--method', 'max']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^attnplay rollout: unknown rollout method 'max'/);
});
