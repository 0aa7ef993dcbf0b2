// The WASM build through the JS engine (dist/engine/engine.js, the shipped file):
// the same cases as the native suites, against the seeds and a double-
// precision JS reference, plus readable errors.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';

import { AttnplayError, createEngine, toRows } from '../../dist/engine/engine.js';
import { attention, matmul, maxAbs, maxAbsDiff, randomSource } from './reference.mjs';

const golden = JSON.parse(readFileSync(new URL('../golden/seed_numpy_example.json', import.meta.url)));
let engine;

before(async () => {
  engine = await createEngine();
});

const identity = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (__, j) => (i === j ? 1 : 0)));
const saturatedFraction = (m) => m.data.reduce((n, w) => n + (w < 0.01 || w > 0.99 ? 1 : 0), 0) / m.data.length;
const meanRowMax = (m) => toRows(m).reduce((s, row) => s + Math.max(...row), 0) / m.shape[0];

test('the engine reports its version and SIMD', () => {
  assert.match(engine.version, /^\d+\.\d+\.\d+$/);
  assert.equal(engine.simd, true);
});

test('seed 004: the NumPy worked example reproduces the printed attention to 1e-6', () => {
  const result = engine.attention(golden);
  assert.deepEqual(result.output.shape, [4, 3]);
  assert.ok(maxAbsDiff(result.output, golden.expected_output) < 1e-6, JSON.stringify(toRows(result.output)));
  const head = result.heads[0];
  assert.equal(head.scores.data[0], 8); // q_1·k_1 = [2,0,2]·[2,2,2]
  assert.ok(Math.abs(head.divisor - Math.sqrt(3)) < 1e-6);
});

test('seed 000: scores x100 saturate the softmax; dividing by sqrt(d_k) prevents it', () => {
  const rand = randomSource(7);
  // Keys = values = identity: each weight row is the softmax of a query row.
  const eye = identity(8);
  const scores = rand.matrix(2000, 8);
  const soft = engine.attend({ q: scores, k: eye, v: eye, scale: false }).weights;
  const hard = engine.attend({ q: scores, k: eye, v: eye, scale: false, temperature: 0.01 }).weights;
  assert.ok(saturatedFraction(soft) < 0.2);
  assert.ok(saturatedFraction(hard) > 0.95);
  assert.ok(meanRowMax(soft) < 0.5);
  assert.ok(meanRowMax(hard) > 0.97);
  // q·k of random d_k = 10000 vectors has standard deviation 100 = √d_k.
  const q = rand.matrix(16, 10000);
  const k = rand.matrix(16, 10000);
  const v = rand.matrix(16, 4);
  assert.ok(saturatedFraction(engine.attend({ q, k, v, scale: false }).weights) > 0.95);
  assert.ok(saturatedFraction(engine.attend({ q, k, v }).weights) < 0.2);
});

test('causal mask: weights above the diagonal are exactly 0, masked scores are -Infinity, rows sum to 1', () => {
  const rand = randomSource(3);
  for (const t of [1, 2, 5, 17, 33]) {
    const head = engine.attention({ x: rand.matrix(t, 8), wq: rand.matrix(8, 4), wk: rand.matrix(8, 4), wv: rand.matrix(8, 4), causal: true }).heads[0];
    const weights = toRows(head.weights);
    const masked = toRows(head.masked);
    weights.forEach((row, i) => {
      assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-6);
      row.forEach((w, j) => {
        if (j > i) {
          assert.equal(w, 0);
          assert.equal(masked[i][j], -Infinity);
        } else {
          assert.ok(Number.isFinite(masked[i][j]));
        }
      });
    });
  }
});

test('padding mask: padded keys get weight 0', () => {
  const x = randomSource(5).matrix(6, 8);
  const head = engine.parameterFreeAttention({ x, keyMask: [1, 1, 1, 1, 0, 0] });
  for (const row of toRows(head.weights)) {
    assert.equal(row[4], 0);
    assert.equal(row[5], 0);
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-6);
  }
});

test('seed 002: permutation equivariance without positional encoding, broken with it', () => {
  const rand = randomSource(11);
  const [t, d] = [7, 16];
  const x = rand.matrix(t, d);
  const weights = { wq: rand.matrix(d, d, 0.3), wk: rand.matrix(d, d, 0.3), wv: rand.matrix(d, d, 0.3), wo: rand.matrix(d, d, 0.3), heads: 4 };
  const perm = [3, 0, 6, 1, 5, 2, 4];
  const px = perm.map((i) => x[i]);
  const out = toRows(engine.attention({ x, ...weights }).output);
  const pout = engine.attention({ x: px, ...weights }).output;
  assert.ok(maxAbsDiff(pout, perm.map((i) => out[i])) < 1e-5);

  const pe = toRows(engine.positionalEncoding(t, d));
  const addPe = (m) => m.map((row, i) => row.map((v, j) => v + pe[i][j]));
  const outPe = toRows(engine.attention({ x: addPe(x), ...weights }).output);
  const poutPe = engine.attention({ x: addPe(px), ...weights }).output;
  assert.ok(maxAbsDiff(poutPe, perm.map((i) => outPe[i])) > 1e-2);
});

test('single head against the double-precision reference, sizes around the SIMD width', () => {
  const rand = randomSource(42);
  const sizes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 64, 65];
  for (const t of sizes) {
    for (const d of [1, 3, 4, 5, 8, 9, 16, 17, 31, 64, 65]) {
      const x = rand.matrix(t, d);
      const w = { wq: rand.matrix(d, d, 0.2), wk: rand.matrix(d, d, 0.2), wv: rand.matrix(d, d, 0.2) };
      const options = { causal: (t + d) % 2 === 0, temperature: 0.5 + (t % 3) };
      const head = engine.attention({ x, ...w, ...options }).heads[0];
      const want = attention(matmul(x, w.wq), matmul(x, w.wk), matmul(x, w.wv), options);
      const where = `T=${t} d=${d}`;
      assert.ok(maxAbsDiff(head.scores, want.scores) / (1 + maxAbs(want.scores)) < 1e-5, where);
      assert.ok(maxAbsDiff(head.weights, want.weights) < 1e-5, where);
      assert.ok(maxAbsDiff(head.output, want.output) / (1 + maxAbs(want.output)) < 1e-5, where);
    }
  }
});

test('multi-head: per-head attention on column slices, concat, output projection', () => {
  const rand = randomSource(9);
  for (const heads of [1, 2, 3, 4, 6, 12]) {
    const [t, d] = [9, 48];
    const dk = d / heads;
    const x = rand.matrix(t, d);
    const w = { wq: rand.matrix(d, d, 0.15), wk: rand.matrix(d, d, 0.15), wv: rand.matrix(d, d, 0.15), wo: rand.matrix(d, 10, 0.15) };
    const got = engine.attention({ x, ...w, heads, causal: true });
    assert.equal(got.heads.length, heads);
    const [q, k, v] = [matmul(x, w.wq), matmul(x, w.wk), matmul(x, w.wv)];
    const slice = (m, h) => m.map((row) => row.slice(h * dk, (h + 1) * dk));
    const concat = Array.from({ length: t }, () => []);
    for (let h = 0; h < heads; h += 1) {
      const want = attention(slice(q, h), slice(k, h), slice(v, h), { causal: true });
      assert.ok(maxAbsDiff(got.heads[h].weights, want.weights) < 1e-5);
      want.output.forEach((row, i) => concat[i].push(...row));
    }
    assert.ok(maxAbsDiff(got.concat, concat) / (1 + maxAbs(concat)) < 1e-5);
    const output = matmul(concat, w.wo);
    assert.ok(maxAbsDiff(got.output, output) / (1 + maxAbs(output)) < 1e-5);
  }
});

test('positional encoding, layer norm and GELU match their formulas', () => {
  const pe = toRows(engine.positionalEncoding(20, 6));
  pe.forEach((row, pos) => row.forEach((value, c) => {
    const angle = pos / 10000 ** ((c - (c % 2)) / 6);
    assert.ok(Math.abs(value - (c % 2 ? Math.cos(angle) : Math.sin(angle))) < 1e-6);
  }));
  const x = [[1, 2, 3, 4], [-1, 0, 5, 0.5]];
  const ln = toRows(engine.layerNorm({ x, gamma: [1, 2, 1, 1], beta: [0, 0, 1, 0] }));
  x.forEach((row, r) => {
    const mean = row.reduce((a, b) => a + b) / 4;
    const variance = row.reduce((a, b) => a + (b - mean) ** 2, 0) / 4;
    row.forEach((value, c) => {
      const want = ((value - mean) / Math.sqrt(variance + 1e-5)) * [1, 2, 1, 1][c] + [0, 0, 1, 0][c];
      assert.ok(Math.abs(ln[r][c] - want) < 1e-5);
    });
  });
  assert.ok(Math.abs(engine.gelu({ x: [[1]] }).data[0] - 0.8413447460685429) < 1e-6);
  assert.ok(Math.abs(engine.gelu({ x: [[1]], approximation: 'tanh' }).data[0] - 0.8411919906082768) < 1e-6);
});

test('bad input gives readable AttnplayErrors and the module stays usable', () => {
  const x = [[1, 2, 3, 4], [5, 6, 7, 8]];
  const bad = [
    [() => engine.attention({ x, wq: [[1]], wk: [[1]], wv: [[1]] }), /Wq, Wk and Wv need 4 rows/],
    [() => engine.attention({ x, wq: identity(4), wk: identity(4), wv: identity(4), heads: 3 }), /not divisible by 3 heads/],
    [() => engine.attention({ x, wq: identity(4), wk: identity(4), wv: identity(4), temperature: 0 }), /temperature must be a positive/],
    [() => engine.attention({ x: { data: new Float32Array(3), shape: [2, 2] }, wq: [[1]], wk: [[1]], wv: [[1]] }), /data has 3 values but shape is \[2, 2\]/],
    [() => engine.attention({ wq: [[1]] }), /expected \{ data: Float32Array, shape/],
    [() => engine.attend({ q: x, k: x, v: x, keyMask: [1] }), /padding mask has 1 entries for 2 keys/],
    [() => engine.gelu({ x, approximation: 'sigmoid' }), /approximation must be/],
    [() => engine.positionalEncoding(4, 0), /need n_positions >= 0 and d > 0/],
  ];
  for (const [call, message] of bad) {
    assert.throws(call, (error) => error instanceof AttnplayError && message.test(error.message));
  }
  assert.ok(maxAbsDiff(engine.attention(golden).output, golden.expected_output) < 1e-6);
});
