// The WASM matrix products (the SIMD GEMM kernel behind engine.matmul) in the
// single-threaded and the pthreads build, against the naive double reference
// of reference.mjs: sizes around the 4x8 register tile and the cache blocks,
// A·B, A·Bᵀ, the fused bias, errors, resident products, and threaded results
// equal to single-threaded ones; right-hand operands stored as IEEE half and
// bfloat16 (widened inside the kernel; one and two rows read in place), and
// the widening of every 16-bit pattern against the formula.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttnplayError, createEngine, toMatrix } from '../../dist/engine/engine.js';
import {
  bfloat16Value, halfValue, matmul, maxAbsDiff, randomHalfWeight, randomSource, transpose,
} from './reference.mjs';

const EDGE = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65, 127, 129];
const tolerance = (k) => 1e-5 * (1 + 2 * Math.sqrt(k));

const single = await createEngine({ threads: false });
const threaded = await createEngine({ threads: true });

for (const [name, engine] of [['single-threaded', single], ['pthreads', threaded]]) {
  test(`${name}: A·B and A·Bᵀ match the reference for every size around the tile`, () => {
    const rand = randomSource(21);
    for (const m of EDGE) {
      for (const k of [1, 3, 4, 8, 9, 17, 64, 65, 129]) {
        for (const n of [1, 4, 7, 8, 9, 17, 31, 65]) {
          const a = rand.matrix(m, k);
          const b = rand.matrix(k, n);
          const want = matmul(a, b);
          const where = `m=${m} k=${k} n=${n}`;
          assert.ok(maxAbsDiff(engine.matmul({ a, b }), want) < tolerance(k), `A·B ${where}`);
          assert.ok(maxAbsDiff(engine.matmul({ a, b: transpose(b), transposeB: true }), want) < tolerance(k), `A·Bᵀ ${where}`);
        }
      }
    }
  });

  test(`${name}: shapes across the cache blocks and attention shapes, with and without bias`, () => {
    const rand = randomSource(22);
    for (const [m, k, n] of [[129, 300, 257], [65, 513, 129], [128, 64, 128], [1, 768, 130], [200, 64, 200]]) {
      const a = rand.matrix(m, k);
      const b = rand.matrix(k, n);
      const bias = rand.matrix(1, n)[0];
      const want = matmul(a, b);
      const where = `m=${m} k=${k} n=${n}`;
      assert.ok(maxAbsDiff(engine.matmul({ a, b }), want) < tolerance(k), `A·B ${where}`);
      assert.ok(maxAbsDiff(engine.matmul({ a, b: transpose(b), transposeB: true }), want) < tolerance(k), `A·Bᵀ ${where}`);
      const withBias = want.map((row) => row.map((v, j) => v + bias[j]));
      assert.ok(maxAbsDiff(engine.matmul({ a, b, bias }), withBias) < tolerance(k), `A·B + bias ${where}`);
    }
  });

  test(`${name}: a resident product reruns on its operands and frees them on dispose`, () => {
    const rand = randomSource(23);
    const a = rand.matrix(70, 40);
    const b = rand.matrix(33, 40);
    const before = engine.heapBytesInUse();
    const product = engine.residentProduct({ a, b, transposeB: true });
    product.run();
    product.run();
    assert.ok(maxAbsDiff(product.result(), matmul(a, transpose(b))) < tolerance(40));
    product.dispose();
    assert.equal(engine.heapBytesInUse(), before);
  });

  test(`${name}: half-precision weights (f16, bf16) as B and Bᵀ, with bias, match the reference`, () => {
    const rand = randomSource(25);
    for (const dtype of ['f16', 'bf16']) {
      for (const [m, k, n] of [[1, 1, 1], [1, 64, 37], [2, 40, 33], [1, 300, 20], [3, 5, 7], [4, 8, 8], [5, 9, 17], [17, 31, 9], [2, 257, 129], [64, 576, 192]]) {
        const a = rand.matrix(m, k);
        const bias = rand.matrix(1, n)[0];
        const where = `${dtype} m=${m} k=${k} n=${n}`;
        const kn = randomHalfWeight(rand, dtype, k, n);
        const want = matmul(a, kn.values);
        assert.ok(maxAbsDiff(engine.matmul({ a, b: kn.weight }), want) < tolerance(k), `A·B ${where}`);
        const withBias = want.map((row) => row.map((v, j) => v + bias[j]));
        assert.ok(maxAbsDiff(engine.matmul({ a, b: kn.weight, bias }), withBias) < tolerance(k), `A·B + bias ${where}`);
        const nk = randomHalfWeight(rand, dtype, n, k);
        const wantT = matmul(a, transpose(nk.values)).map((row) => row.map((v, j) => v + bias[j]));
        assert.ok(maxAbsDiff(engine.matmul({ a, b: nk.weight, transposeB: true, bias }), wantT) < tolerance(k), `A·Bᵀ + bias ${where}`);
      }
    }
  });

  test(`${name}: one-row products read every IEEE half exactly, finite weights and weights holding infinities or NaN`, () => {
    // x = [1] times B [1, 65536]: each output is 0 + 1·b, the half itself (a
    // zero's sign aside). Finite weights take the cheaper route, the others
    // the general conversion (tensor/gemv.h).
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const finite = all.map((b) => ((b & 0x7c00) === 0x7c00 ? 0 : b));
    for (const [label, bits] of [['finite', finite], ['with infinities and NaN', all]]) {
      const got = engine.matmul({ a: [[1]], b: { dtype: 'f16', bits, shape: [1, 65536] } }).data;
      let wrong = 0;
      for (let i = 0; i < 65536; i++) {
        const want = halfValue(bits[i]);
        if (Number.isNaN(want) ? !Number.isNaN(got[i]) : got[i] !== want) wrong++;
      }
      assert.equal(wrong, 0, `${label}: ${wrong} halves read wrongly`);
    }
  });

  test(`${name}: every IEEE half and bfloat16 bit pattern widens exactly (sign of zero, infinities, NaN payloads)`, () => {
    const bits = Uint16Array.from({ length: 65536 }, (_, i) => i);
    for (const [dtype, value, shift, mantissa] of [['f16', halfValue, 13, 0x3ff], ['bf16', bfloat16Value, 16, 0x7f]]) {
      const got = engine.widenWeights({ dtype, bits, shape: [256, 256] });
      const gotBits = new Uint32Array(got.data.buffer, got.data.byteOffset, got.data.length);
      let wrong = 0;
      for (let i = 0; i < 65536; i++) {
        const want = value(i);
        const signOk = gotBits[i] >>> 31 === i >>> 15;
        if (Number.isNaN(want)) {
          if (!Number.isNaN(got.data[i]) || !signOk || (gotBits[i] & 0x7fffff) !== (i & mantissa) << shift) wrong++;
        } else if (got.data[i] !== want || !signOk) {
          wrong++;
        }
      }
      assert.equal(wrong, 0, `${dtype}: ${wrong} patterns widened wrongly`);
    }
  });

  test(`${name}: mismatched shapes raise AttnplayError with the shapes`, () => {
    const a = [[1, 2, 3]];
    assert.throws(() => engine.matmul({ a, b: [[1], [2]] }), (e) => e instanceof AttnplayError && /inner dimensions differ \(1x3 · 2x1\)/.test(e.message));
    assert.throws(() => engine.matmul({ a, b: [[1, 2]], transposeB: true }), /widths differ \(3 vs 2\)/);
    assert.throws(() => engine.matmul({ a, b: [[1], [2], [3]], bias: [1, 2] }), /bias has 2 entries for 1 outputs/);
    assert.throws(() => engine.residentProduct({ a, b: [[1], [2]] }), AttnplayError);
    assert.throws(() => engine.matmul({ a, b: { dtype: 'f16', bits: new Uint16Array(2), shape: [2, 1] } }), /linear: input width 3 but the weight takes 2/);
    assert.throws(() => engine.matmul({ a, b: { dtype: 'f8', bits: new Uint16Array(3), shape: [3, 1] } }), /dtype must be "f16" or "bf16"/);
    assert.throws(() => engine.widenWeights({ dtype: 'bf16', bits: new Uint16Array(3), shape: [2, 2] }), /3 bit patterns for shape \[2, 2\]/);
  });
}

test('the pthreads build uses more than one thread here and gives bit-identical results', () => {
  assert.equal(single.threads, 1);
  assert.ok(threaded.threads >= Math.min(2, (globalThis.navigator?.hardwareConcurrency ?? 1)), `threads: ${threaded.threads}`);
  const rand = randomSource(24);
  const a = toMatrix(rand.matrix(300, 520));
  const b = toMatrix(rand.matrix(520, 270));
  const one = single.matmul({ a, b });
  const many = threaded.matmul({ a, b });
  assert.deepEqual(many.shape, one.shape);
  assert.ok(one.data.every((v, i) => Object.is(v, many.data[i])), 'threaded result differs from single-threaded');
  assert.equal(threaded.setThreads(1), 1);
  assert.ok(threaded.matmul({ a, b }).data.every((v, i) => Object.is(v, one.data[i])));
  threaded.setThreads(64);
});
