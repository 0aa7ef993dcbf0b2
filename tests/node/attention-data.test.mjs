// The page's attention transforms on small tensors whose answers are worked
// out by hand: head selection, head means, bertviz pair filters, hiding
// special tokens, word aggregation (sum over key pieces, mean over query
// pieces) and exBERT pruning.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  aggregateWords, filterPairs, headMap, meanMap, pruneByMass, wordGroups, withoutSpecialTokens,
} from '../../web/attention/attention-data.js';

const close = (actual, expected) => {
  assert.equal(actual.length, expected.length);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < 1e-6, `[${i}] ${v} vs ${expected[i]}`));
};

// [L=1, H=2, T=3, T=3]
const attentions = {
  shape: [1, 2, 3, 3],
  data: Float32Array.from([
    1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5, // head 0 (causal)
    1, 0, 0, 0.1, 0.9, 0, 0.6, 0.2, 0.2, // head 1
  ]),
};

test('headMap and meanMap', () => {
  close([...headMap(attentions, 0, 1).data], [1, 0, 0, 0.1, 0.9, 0, 0.6, 0.2, 0.2]);
  close([...meanMap(attentions, 0, [0, 1]).data], [1, 0, 0, 0.3, 0.7, 0, 0.4, 0.25, 0.35]);
  assert.throws(() => headMap(attentions, 1, 0), RangeError);
  assert.throws(() => meanMap(attentions, 0, []), RangeError);
});

// [CLS] a1 a2 [SEP] b1 [SEP] with a uniform bidirectional map (the added special tokens cover no text).
const pairTokens = [
  { special: true, typeId: 0, start: 0, end: 0 }, { special: false, typeId: 0, start: 0, end: 2 }, { special: false, typeId: 0, start: 3, end: 5 },
  { special: true, typeId: 0, start: 0, end: 0 }, { special: false, typeId: 1, start: 0, end: 2 }, { special: true, typeId: 1, start: 0, end: 0 },
];
const uniform6 = { shape: [1, 1, 6, 6], data: new Float32Array(36).fill(1 / 6) };

test('bertviz pair filters pick query and key segments', () => {
  const map = headMap(uniform6, 0, 0);
  const ab = filterPairs(map, pairTokens, 'a-b');
  assert.deepEqual(ab.rows, [0, 1, 2, 3]);
  assert.deepEqual(ab.cols, [4, 5]);
  const ba = filterPairs(map, pairTokens, 'b-a');
  assert.deepEqual(ba.rows, [4, 5]);
  assert.deepEqual(ba.cols, [0, 1, 2, 3]);
  assert.equal(filterPairs(map, pairTokens, 'all'), map);
  assert.throws(() => filterPairs(map, pairTokens, 'a-c'), RangeError);
});

test('hiding special tokens renormalises rows over the remaining keys', () => {
  const hidden = withoutSpecialTokens(headMap(uniform6, 0, 0), pairTokens);
  assert.deepEqual(hidden.rows, [1, 2, 4]);
  close([...hidden.data], Array(9).fill(1 / 3));
  // A special token written in the text ([MASK] at characters 3-9) is the reader's, and stays.
  const withMask = pairTokens.with(2, { special: true, typeId: 0, start: 3, end: 9 });
  assert.deepEqual(withoutSpecialTokens(headMap(uniform6, 0, 0), withMask).rows, [1, 2, 4]);
});

test('word groups: pieces without a gap join, whitespace/punctuation/specials split', () => {
  const text = 'unbelievable, Mr. Darcy';
  // "un" "believ" "able" "," " Mr" "." " Darcy"
  const spans = [[0, 2], [2, 8], [8, 12], [12, 13], [13, 16], [16, 17], [17, 23]];
  const tokens = [{ special: true, typeId: 0, start: 0, end: 0 }, ...spans.map(([start, end]) => ({ special: false, typeId: 0, start, end }))];
  assert.deepEqual(wordGroups(tokens, [text]), [[0], [1, 2, 3], [4], [5], [6], [7]]);
});

test('word aggregation sums over key pieces and averages over query pieces', () => {
  // tokens 0 | 1 2 (one word) ; T=3
  const map = headMap({ shape: [1, 1, 3, 3], data: Float32Array.from([0.2, 0.3, 0.5, 0.6, 0.1, 0.3, 0.0, 0.4, 0.6]) }, 0, 0);
  const words = aggregateWords(map, [[0], [1, 2]]);
  assert.deepEqual(words.shape, [2, 2]);
  // row 0: [0.2, 0.3+0.5]; row 1: mean([0.6, 0.1+0.3], [0.0, 0.4+0.6]) = [0.3, 0.7]
  close([...words.data], [0.2, 0.8, 0.3, 0.7]);
});

test('exBERT pruning keeps each row\'s strongest weights up to the cumulative mass', () => {
  const map = { data: Float32Array.from([0.1, 0.5, 0.25, 0.15]), shape: [1, 4], rows: [3], cols: [0, 1, 2, 3] };
  close([...pruneByMass(map, 0.5).data], [0, 0.5, 0, 0]);
  close([...pruneByMass(map, 0.7).data], [0, 0.5, 0.25, 0]);
  close([...pruneByMass(map, 1).data], [0.1, 0.5, 0.25, 0.15]);
});
