// web/attention/rollout.js against a direct float64 implementation of Abnar & Zuidema's
// definitions (rollout-reference.mjs): Ā_l = ½·mean_h(A_l) + ½·I (rows renormalised),
// rollout = Ā_L · … · Ā_1 by plain matrix products, and flow = max flow from
// (L, i) to (0, j) by Edmonds–Karp on an explicit edge list of the layered
// graph. Random row-stochastic tensors of several sizes (causal and not), and
// known cases: identity attention rolls out to the identity; one layer of
// uniform attention gives ½·uniform + ½·I; flow never exceeds the capacity of
// a cut; bad shapes and too much flow work are refused with a message.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { MAX_FLOW_WORK, attentionFlow, attentionFlowRow, attentionRollout, residualAttention, rolledOut } from '../../web/attention/rollout.js';
import { randomAttention as randomRows } from './reference.mjs';
import { refFlow, refRollout } from './rollout-reference.mjs';

// Row-stochastic { data, shape: [L, H, T, T] } (float32, as the views hold it).
function randomAttention([layers, heads, t], seed, causal) {
  const shape = [layers, heads, t, t];
  return { data: randomRows(shape, seed, causal), shape };
}

function assertClose(actual, expected, tolerance, what) {
  const [t] = actual.shape;
  assert.equal(actual.data.length, t * t);
  assert.ok(actual.data instanceof Float64Array, `${what}: float64`);
  for (let i = 0; i < t; i += 1) {
    for (let j = 0; j < t; j += 1) {
      const got = actual.data[i * t + j];
      assert.ok(Math.abs(got - expected[i][j]) <= tolerance, `${what} [${i}][${j}]: ${got} vs ${expected[i][j]}`);
    }
  }
}

const SIZES = [[1, 1, 1], [1, 3, 5], [2, 4, 7], [3, 2, 9], [4, 4, 12], [6, 3, 16]];

test('rollout equals Ā_L · … · Ā_1 computed by plain loops, causal or not', () => {
  SIZES.forEach((shape, n) => {
    for (const causal of [false, true]) {
      const attentions = randomAttention(shape, 100 + n, causal);
      const rolled = attentionRollout(attentions);
      assert.deepEqual(rolled.shape, [shape[2], shape[2]]);
      assertClose(rolled, refRollout(attentions), 1e-12, `rollout ${shape} causal=${causal}`);
      for (let i = 0; i < shape[2]; i += 1) {
        const row = rolled.data.subarray(i * shape[2], (i + 1) * shape[2]);
        assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-12, 'rows of a product of row-stochastic matrices sum to 1');
        if (causal) row.forEach((v, j) => assert.ok(j <= i || v === 0, `causal rollout [${i}][${j}] is 0`));
      }
    }
  });
});

test('flow equals Edmonds–Karp max flow on the layered graph, causal or not', () => {
  SIZES.slice(0, 5).forEach((shape, n) => {
    for (const causal of [false, true]) {
      const attentions = randomAttention(shape, 200 + n, causal);
      assertClose(attentionFlow(attentions), refFlow(attentions), 1e-9, `flow ${shape} causal=${causal}`);
    }
  });
});

test('one row of flow, a token at a time (the Picture tab\'s), equals Edmonds–Karp; it is not limited as the whole map is', () => {
  SIZES.slice(1, 5).forEach((shape, n) => {
    const attentions = randomAttention(shape, 300 + n, false);
    const reference = refFlow(attentions);
    for (const query of [0, shape[2] - 1]) {
      const row = [...attentionFlowRow(attentions, query)];
      assert.equal(row.length, shape[2]);
      row.forEach((v, j) => assert.ok(Math.abs(v - reference[query][j]) <= 1e-9, `flow row ${shape} [${query}][${j}]: ${v} vs ${reference[query][j]}`));
    }
  });
  // A vision transformer's size, which attentionFlow refuses: its first values come at once (the rest follow lazily).
  const big = randomAttention([4, 2, 65], 7, false);
  assert.throws(() => attentionFlow(big), /too much to compute/);
  const values = attentionFlowRow(big, 0);
  const first = values.next().value;
  assert.ok(first > 0 && first <= 1);
  assert.throws(() => attentionFlowRow(big, 65).next(), /token 65 is not one of the 65 tokens/);
});

test('known cases: identity attention, one layer of uniform attention, flow bounded by the cuts', () => {
  const t = 5;
  const identity = { data: new Float32Array(3 * 2 * t * t), shape: [3, 2, t, t] };
  for (let m = 0; m < 3 * 2; m += 1) for (let i = 0; i < t; i += 1) identity.data[(m * t + i) * t + i] = 1;
  for (const method of ['rollout', 'flow']) {
    const out = rolledOut(identity, method);
    out.data.forEach((v, k) => assert.equal(v, Math.floor(k / t) === k % t ? 1 : 0, `${method} of identity attention at ${k}`));
  }

  const uniform = { data: new Float32Array(1 * 4 * t * t).fill(1 / t), shape: [1, 4, t, t] };
  const rolled = attentionRollout(uniform);
  rolled.data.forEach((v, k) => assert.ok(Math.abs(v - (0.5 / t + (Math.floor(k / t) === k % t ? 0.5 : 0))) < 1e-7, `uniform rollout at ${k}`));
  // With one layer the graph is a single edge (1, i) → (0, j): flow is its capacity, the rollout.
  const flowed = attentionFlow(uniform);
  flowed.data.forEach((v, k) => assert.ok(Math.abs(v - rolled.data[k]) < 1e-12, `one-layer flow at ${k}`));

  // The flow from (L, i) is at most the capacity out of it (1) and into (0, j) (the column sum of Ā_1).
  const attentions = randomAttention([3, 2, 6], 9, false);
  const flow = attentionFlow(attentions);
  const first = residualAttention(attentions);
  for (let i = 0; i < 6; i += 1) {
    for (let j = 0; j < 6; j += 1) {
      let into = 0;
      for (let a = 0; a < 6; a += 1) into += first.data[a * 6 + j];
      assert.ok(flow.data[i * 6 + j] <= Math.min(1, into) + 1e-12);
    }
  }
});

test('bad input is refused with a message', () => {
  assert.throws(() => attentionRollout({ data: new Float32Array(2 * 3), shape: [1, 1, 2, 3] }), /defined for self-attention/);
  assert.throws(() => attentionRollout({ data: new Float32Array(4), shape: [2, 2] }), /shape \[layers, heads, T, T\]/);
  assert.throws(() => attentionRollout({ data: new Float32Array(3), shape: [1, 1, 2, 2] }), /3 values, shape \[1, 1, 2, 2\] needs 4/);
  assert.throws(() => rolledOut(randomAttention([1, 1, 2], 1, false), 'mean'), /unknown rollout method "mean"/);
  const t = Math.ceil((MAX_FLOW_WORK / 2) ** 0.25) + 1;
  assert.throws(() => attentionFlow({ data: new Float32Array(2 * t * t), shape: [2, 1, t, t] }), /attention flow over 2 layers of \d+ tokens is too much/);
});
