// The widget's data mode, reading side (web/attention/attention-data-source.js): every
// accepted format gives back exactly the weights our CLI computed (its JSON,
// its .npy, PyTorch's per-layer [batch, heads, T, T] shape, base64 float32,
// the playground's JSON export), encoder–decoder parts with cross-attention
// (and the decoding view's head mean, web/attention/encoder-decoder.js), one-map data,
// target_tokens labelling cross rows, head labels, word structure of Hugging
// Face pieces, and each validation
// message: shapes that disagree, rows that do not sum to 1 (a warning), NaN,
// negative weights, a batch larger than 1, too large, missing tokens.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

import {
  AttentionDataError, MAX_VALUES, parseJsonText, parseNpy, readAttentionData, readTensor,
} from '../../web/attention/attention-data-source.js';
import { wordGroups } from '../../web/attention/attention-data.js';
import { crossMap } from '../../web/attention/encoder-decoder.js';
import { attentionJson } from '../../web/export/export.js';

const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const modelDir = (name) => fileURLToPath(new URL(`../../models/${name}`, import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'attnplay-data-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function attention(model, args) {
  const r = spawnSync(cli, ['attention', '--model', modelDir(model), ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}
const TEXT = 'It is a truth universally acknowledged, that a single man';
const gpt = JSON.parse(attention('austen-gpt', ['--text', TEXT])); // tokens, attentions [L][H][T][T]
const gptFlat = Float32Array.from(gpt.attentions.flat(3));
const gptShape = [gpt.attentions.length, gpt.attentions[0].length, gpt.tokens.length, gpt.tokens.length];

function assertSame(result, flat, shape) {
  assert.deepEqual(result.attentions.shape, shape);
  assert.equal(result.attentions.data.length, flat.length);
  for (let i = 0; i < flat.length; i += 1) assert.equal(result.attentions.data[i], flat[i], `value ${i}`);
}
const throwsData = (fn, pattern) => assert.throws(fn, (error) => error instanceof AttentionDataError && pattern.test(error.message), `expected ${pattern}`);

test('the CLI\'s JSON ([layer][head][query][key], token objects) reads back exactly, causal detected', () => {
  const { parts, order } = readAttentionData(gpt);
  assert.deepEqual(order, ['self']);
  const { result, layers, heads, warning } = parts.self;
  assertSame(result, gptFlat, gptShape);
  assert.equal(layers, 4);
  assert.equal(heads, 4);
  assert.equal(warning, null);
  assert.equal(result.causal, true);
  assert.deepEqual(result.tokens.map((t) => t.display), gpt.tokens.map((t) => t.token));
  assert.deepEqual(result.tokens.map((t) => t.id), gpt.tokens.map((t) => t.id));
});

test('PyTorch\'s output_attentions shape (a list per layer of [1, heads, T, T]) reads as the same tensor', () => {
  const torchShaped = { tokens: gpt.tokens.map((t) => t.token), attentions: gpt.attentions.map((layer) => [layer]) };
  assertSame(readAttentionData(torchShaped).parts.self.result, gptFlat, gptShape);
  const batch2 = { tokens: torchShaped.tokens, attentions: gpt.attentions.map((layer) => [layer, layer]) };
  throwsData(() => readAttentionData(batch2), /batch of 2 .*give one example/);
});

test('the CLI\'s .npy with a tokens list, and base64 float32, read back exactly', () => {
  const path = join(tmp, 'attn.npy');
  attention('austen-gpt', ['--text', TEXT, '--format', 'npy', '--out', path]);
  const bytes = readFileSync(path);
  const tokens = gpt.tokens.map((t) => t.token);
  assertSame(readAttentionData({ attentions: new Uint8Array(bytes), tokens }).parts.self.result, gptFlat, gptShape);
  const base64 = Buffer.from(gptFlat.buffer).toString('base64');
  assertSame(readAttentionData({ tokens, attentions: { dtype: 'float32', shape: gptShape, base64 } }).parts.self.result, gptFlat, gptShape);
  throwsData(() => readTensor({ dtype: 'float32', shape: [2, 2], base64 }, 'attentions'), /has 1\d+ bytes; shape \[2, 2\] of float32 needs 16/);
  throwsData(() => parseNpy(bytes.subarray(0, bytes.length - 4)), /should hold \d+ values .* but has \d+ bytes/);
  throwsData(() => parseNpy(new TextEncoder().encode('{"attentions": []}')), /not a \.npy file/);
});

test('the compact base64 forms: float16 by IEEE 754 binary16, uint8 times its row\'s scale', () => {
  const b64 = (typed) => Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength).toString('base64');
  // IEEE 754 binary16 bit patterns and their values (one, a half, the smallest and largest subnormal, the largest finite, a third, -0).
  const halves = new Uint16Array([0x3c00, 0x3800, 0x0001, 0x03ff, 0x7bff, 0x3555, 0x8000, 0xc000]);
  const want = [1, 0.5, 2 ** -24, 1023 * 2 ** -24, 65504, 0.333251953125, -0, -2];
  assert.deepEqual([...readTensor({ dtype: 'float16', shape: [2, 4], base64: b64(halves) }, 'a').data], want);
  assert.ok(Number.isNaN(readTensor({ dtype: 'float16', shape: [1], base64: b64(new Uint16Array([0x7e00])) }, 'a').data[0]));
  const scales = new Float32Array([0.5, 1 / 255]);
  const got = readTensor({ dtype: 'uint8', shape: [2, 3], base64: b64(new Uint8Array([0, 255, 128, 255, 1, 0])), scales: b64(scales) }, 'a');
  assert.deepEqual([...got.data], [0, 127.5, 64, Math.fround(255 * scales[1]), scales[1], 0]);
  throwsData(() => readTensor({ dtype: 'uint8', shape: [2, 3], base64: b64(new Uint8Array(6)) }, 'a'), /a\.scales is missing/);
  throwsData(() => readTensor({ dtype: 'uint8', shape: [2, 3], base64: b64(new Uint8Array(6)), scales: b64(new Float32Array(1)) }, 'a'), /a\.scales has 4 bytes; 2 rows need 8/);
  throwsData(() => readTensor({ dtype: 'float16', shape: [3], base64: b64(halves) }, 'a'), /has 16 bytes; shape \[3\] of float16 needs 6/);
  throwsData(() => readTensor({ dtype: 'int8', shape: [1], base64: 'AA==' }, 'a'), /a\.dtype is "int8"; base64 tensors must be "float32", "float16", "uint8"/);
  // 8 bits per weight move a row's sum by up to width · scale / 2: within that, no warning; beyond it, the warning.
  const rows = (codes, rowScales) => ({ tokens: ['a', 'b', 'c'], attentions: { dtype: 'uint8', shape: [1, 1, 3, 3], base64: b64(new Uint8Array(codes)), scales: b64(new Float32Array(rowScales)) } });
  // Row 0: three 0.334s (sum 1.002; slack 3 · 0.334 / 510 ≈ 0.00196 beside the 0.001 tolerance); then three 0.34s (sum 1.02).
  assert.equal(readAttentionData(rows([255, 255, 255, 255, 0, 0, 255, 0, 0], [0.334 / 255, 1 / 255, 1 / 255])).parts.self.warning, null);
  assert.match(readAttentionData(rows([255, 255, 255, 255, 0, 0, 255, 0, 0], [0.34 / 255, 1 / 255, 1 / 255])).parts.self.warning, /1 of 3 rows of attentions do not sum to 1/);
  // Weights a model computed in bfloat16: rows within 2^-8 (+ 0.001) of 1 pass; float16's room is 2^-10.
  const halfRows = (sum, precision) => ({ tokens: ['a'], attentions: { dtype: 'float32', shape: [1, 1, 1, 1], base64: b64(new Float32Array([sum])), precision } });
  assert.equal(readAttentionData(halfRows(1.004, 'bfloat16')).parts.self.warning, null);
  assert.match(readAttentionData(halfRows(1.004, 'float16')).parts.self.warning, /1 of 1 rows/);
  assert.match(readAttentionData(halfRows(1.006, 'bfloat16')).parts.self.warning, /1 of 1 rows/);
  throwsData(() => readTensor({ dtype: 'float32', shape: [1], base64: b64(new Float32Array(1)), precision: 'fp8' }, 'a'), /a\.precision is "fp8"; it may be "bfloat16" or "float16"/);
  // triangle: "lower": each matrix's lower triangle, row by row; zeros above the diagonal.
  const lower = readTensor({ dtype: 'float32', shape: [2, 3, 3], base64: b64(new Float32Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])), triangle: 'lower' }, 'a');
  assert.deepEqual([...lower.data], [1, 0, 0, 2, 3, 0, 4, 5, 6, 7, 0, 0, 8, 9, 0, 10, 11, 12]);
  const lowerBytes = readTensor({ dtype: 'uint8', shape: [1, 2, 2], base64: b64(new Uint8Array([255, 255, 1])), scales: b64(new Float32Array([1 / 255, 0.5 / 255])), triangle: 'lower' }, 'a');
  assert.deepEqual([...lowerBytes.data], [1, 0, 0.5, Math.fround(0.5 / 255)].map(Math.fround));
  throwsData(() => readTensor({ dtype: 'float32', shape: [2, 3, 3], base64: b64(new Float32Array(18)), triangle: 'lower' }, 'a'), /has 72 bytes; shape \[2, 3, 3\] \(lower triangles\) of float32 needs 48/);
  throwsData(() => readTensor({ dtype: 'float32', shape: [2, 3], base64: b64(new Float32Array(6)), triangle: 'lower' }, 'a'), /a\.triangle may only be "lower", for a tensor whose last two sizes are equal/);
});

test('a float64 .npy of PyTorch\'s 5-D shape is read (converted to float32)', () => {
  const shape = [1, 1, 1, 2, 2];
  const values = [1, 0, 0.25, 0.75];
  let header = `{'descr': '<f8', 'fortran_order': False, 'shape': (${shape.join(', ')}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const bytes = Buffer.alloc(10 + header.length + 8 * values.length);
  bytes.write('\x93NUMPY\x01\x00', 0, 'latin1');
  bytes.writeUInt16LE(header.length, 8);
  bytes.write(header, 10, 'latin1');
  values.forEach((v, i) => bytes.writeDoubleLE(v, 10 + header.length + 8 * i));
  const { result } = readAttentionData({ attentions: new Uint8Array(bytes), tokens: ['a', 'b'] }).parts.self;
  assert.deepEqual(result.attentions.shape, [1, 1, 2, 2]);
  assert.deepEqual([...result.attentions.data], values);
});

test('the playground\'s JSON export reads back exactly', () => {
  const tokens = gpt.tokens.map((t) => ({ display: t.token, id: t.id }));
  const text = attentionJson({ modelName: 'austen-gpt', modelType: 'gpt2', tokens, attentions: { data: gptFlat, shape: gptShape } });
  const { result } = readAttentionData(JSON.parse(text)).parts.self;
  assertSame(result, gptFlat, gptShape);
  assert.deepEqual(result.tokens.map((t) => t.id), gpt.tokens.map((t) => t.id));
});

test('BERT from the CLI: not causal, [CLS] and [SEP] special, type ids kept', () => {
  const bert = JSON.parse(attention('austen-bert', ['--text', 'Emma was happy.', '--pair', 'She was rich.']));
  const { result } = readAttentionData(bert).parts.self;
  assert.equal(result.causal, false);
  assert.deepEqual(result.tokens.map((t) => t.special), bert.tokens.map((t) => t.special));
  assert.deepEqual(result.tokens.map((t) => t.typeId), bert.tokens.map((t) => t.type_id));
  assert.ok(result.tokens[0].special && result.tokens[0].display === '[CLS]');
});

test('encoder–decoder data: encoder, decoder and cross parts; cross-attention is the decoder → encoder block', () => {
  const rows = (t, k, seed) => Array.from({ length: t }, (_, q) => {
    const raw = Array.from({ length: k }, (__, j) => 1 + ((q * 7 + j * 3 + seed) % 5));
    const sum = raw.reduce((a, b) => a + b, 0);
    return raw.map((v) => v / sum);
  });
  const causalRows = (t, seed) => rows(t, t, seed).map((row, q) => {
    const kept = row.map((v, j) => (j <= q ? v : 0));
    const sum = kept.reduce((a, b) => a + b, 0);
    return kept.map((v) => v / sum);
  });
  const S = 4;
  const T = 3;
  const layers = [0, 1].map((l) => [0, 1].map((h) => l * 2 + h));
  const data = {
    encoder_tokens: ['▁Hello', '▁world', '!', '</s>'],
    decoder_tokens: ['<pad>', '▁Bonjour', '▁monde'],
    encoder_attentions: layers.map((heads) => [heads.map((s) => rows(S, S, s))]),
    decoder_attentions: layers.map((heads) => [heads.map((s) => causalRows(T, s))]),
    cross_attentions: layers.map((heads) => [heads.map((s) => rows(T, S, s))]),
    head_labels: { cross: [['align', ''], [['copy', 'align'], 'other']] },
  };
  const { parts, order } = readAttentionData(data);
  assert.deepEqual(order, ['encoder', 'decoder', 'cross']);
  assert.equal(parts.encoder.result.causal, false);
  assert.equal(parts.decoder.result.causal, true);
  const cross = parts.cross.result;
  assert.equal(cross.filter, 'b-a');
  assert.deepEqual(cross.attentions.shape, [2, 2, S + T, S + T]);
  assert.deepEqual(cross.tokens.map((t) => t.typeId), [0, 0, 0, 0, 1, 1, 1]);
  assert.ok(cross.tokens[3].special && cross.tokens[4].special, '</s> and <pad> are special');
  const n = S + T;
  for (let l = 0; l < 2; l += 1) {
    for (let h = 0; h < 2; h += 1) {
      for (let q = 0; q < n; q += 1) {
        for (let k = 0; k < n; k += 1) {
          const want = q >= S && k < S ? data.cross_attentions[l][0][h][q - S][k] : 0;
          assert.equal(cross.attentions.data[((l * 2 + h) * n + q) * n + k], Math.fround(want));
        }
      }
    }
  }
  assert.deepEqual(parts.cross.headScores.map((s) => s.labels), [['align'], [], ['copy', 'align'], ['other']]);
  throwsData(() => readAttentionData({ ...data, decoder_tokens: ['a', 'b'] }), /shapes disagree: decoder_tokens has 2 tokens/);
  throwsData(() => readAttentionData({ ...data, encoder_tokens: undefined }), /encoder_tokens is missing/);
  // The decoding view's map: the mean of the selected heads' [T, S] weights, against a float64 mean.
  assert.deepEqual(cross.cross.attentions.shape, [2, 2, T, S]);
  const mean = crossMap(cross, { layer: 1, heads: [0, 1] });
  assert.deepEqual([mean.shape, mean.heads], [[T, S], [0, 1]]);
  mean.data.forEach((w, i) => {
    const [q, k] = [Math.floor(i / S), i % S];
    const want = (data.cross_attentions[1][0][0][q][k] + data.cross_attentions[1][0][1][q][k]) / 2;
    assert.ok(Math.abs(w - want) < 1e-7, `mean [${q}][${k}]: ${w} vs ${want}`);
  });
  assert.deepEqual(Array.from(crossMap(cross, { layer: 0, heads: [1] }).data), data.cross_attentions[0][0][1].flat().map(Math.fround));
  assert.equal(crossMap(cross, { layer: 2, heads: null }), null);
  assert.equal(crossMap(cross, { layer: 0, heads: [] }), null);
});

test('a hand-made alignment: one map [target][source] is one layer and one head', () => {
  const alignment = [[0.05, 0.1, 0.85], [0.1, 0.8, 0.1], [0.85, 0.1, 0.05]];
  const { parts } = readAttentionData({ encoder_tokens: ['European', 'Economic', 'Area'], decoder_tokens: ['zone', 'économique', 'européenne'], cross_attentions: alignment });
  assert.deepEqual([parts.cross.layers, parts.cross.heads, parts.cross.warning], [1, 1, null]);
  assert.deepEqual(parts.cross.result.cross.attentions.shape, [1, 1, 3, 3]);
  assert.deepEqual(Array.from(parts.cross.result.cross.attentions.data), alignment.flat().map(Math.fround));
  const { self } = readAttentionData({ tokens: ['a', 'b'], attentions: [[1, 0], [0.5, 0.5]] }).parts;
  assert.deepEqual(self.result.attentions.shape, [1, 1, 2, 2]);
  throwsData(() => readAttentionData({ encoder_tokens: ['a'], decoder_tokens: ['b'], cross_attentions: [[0.5, 0.5]] }), /shapes disagree: cross_attentions is \[1, 1, 1, 2\]/);
  // target_tokens (the playground's export): cross-attention rows labelled by the token each wrote.
  const written = readAttentionData({ encoder_tokens: ['European', 'Economic', 'Area'], decoder_tokens: ['<pad>', 'zone', 'économique'], target_tokens: ['zone', 'économique', 'européenne'], cross_attentions: alignment });
  assert.deepEqual(written.parts.cross.result.tokens.filter((t) => t.typeId === 1).map((t) => t.display), ['zone', 'économique', 'européenne']);
  throwsData(() => readAttentionData({ encoder_tokens: ['a', 'b'], decoder_tokens: ['<pad>'], target_tokens: ['x', 'y'], cross_attentions: [[0.5, 0.5]] }), /there are 2 target tokens \(queries\)/);
});

test('word structure of Hugging Face pieces: "Ġ"/"▁" start a word, "##" continues one', () => {
  const read = (tokens) => {
    const attentions = [[tokens.map((_, q) => tokens.map((__, k) => (q === k ? 1 : 0)))]];
    const { result } = readAttentionData({ tokens, attentions }).parts.self;
    return wordGroups(result.tokens, result.texts);
  };
  assert.deepEqual(read(['The', 'Ġcat', 'Ġsat', 'ting', '.']), [[0], [1], [2, 3], [4]]);
  assert.deepEqual(read(['▁Hel', 'lo', '▁world']), [[0, 1], [2]]);
  assert.deepEqual(read(['[CLS]', 'play', '##ing', 'cards', '[SEP]']), [[0], [1, 2], [3], [4]]);
});

test('a vision transformer\'s picture: its grid, learned tokens, labels and norms; each problem in it named', () => {
  const T = 1 + 2 * 3;
  const attentions = Array.from({ length: 2 }, () => [Array.from({ length: T }, () => Array(T).fill(1 / T))]);
  const tokens = ['[CLS]', ...Array.from({ length: 6 }, (_, p) => `(${Math.floor(p / 3)}, ${p % 3})`)];
  const png = Buffer.from('\x89PNG fake bytes, decoded by the DOM side', 'latin1').toString('base64');
  const image = { seen: { width: 24, height: 16, png }, grid: { rows: 2, columns: 3 }, patch: { height: 8, width: 8 } };
  const norms = Array.from({ length: 3 }, (_, l) => Array.from({ length: T }, (__, t) => l + t / 10));
  const data = { tokens, attentions, image, top_k: [{ ids: [3, 1], labels: ['cat', 'dog'], probabilities: [0.75, 0.25] }], top_k_before: [{ labels: ['dog'], probabilities: [0.5] }], norms };
  const { picture, tokens: read } = readAttentionData(data).parts.self.result;
  assert.equal(picture.prefixTokens, 1);
  assert.deepEqual(picture.grid, { rows: 2, columns: 3 });
  assert.deepEqual(picture.patch, { height: 8, width: 8 });
  assert.deepEqual(Buffer.from(picture.seen.png).toString('base64'), png);
  assert.deepEqual([picture.seen.width, picture.seen.height], [24, 16]);
  assert.deepEqual(picture.topK, { ids: [3, 1], labels: ['cat', 'dog'], probabilities: [0.75, 0.25] });
  assert.deepEqual(picture.topKBefore.labels, ['dog']);
  assert.deepEqual([...picture.norms[2]].map((v) => Math.round(v * 10) / 10), norms[2]);
  assert.deepEqual(read.map((t) => t.special), [true, false, false, false, false, false, false]);
  assert.equal(readAttentionData({ tokens, attentions }).parts.self.result.picture, undefined, 'no image, no picture');
  const bad = (patch, message) => assert.throws(() => readAttentionData({ ...data, ...patch }), (e) => e instanceof AttentionDataError && message.test(e.message), JSON.stringify(patch).slice(0, 80));
  bad({ image: 'cat.png' }, /image must be an object/);
  bad({ image: { ...image, seen: { width: 24, height: 16 } } }, /image.seen.png is missing/);
  bad({ image: { ...image, seen: { ...image.seen, png: '***' } } }, /image.seen.png is not valid base64/);
  bad({ image: { ...image, seen: { ...image.seen, width: 0 } } }, /image.seen.width must be a whole number of at least 1/);
  bad({ image: { ...image, grid: { rows: 3, columns: 3 } } }, /a 3 × 3 grid of patches needs at least 9 tokens; the attention has 7/);
  bad({ image: { ...image, patch: { height: 16, width: 8 } } }, /2 × 3 patches of 16 × 8 pixels do not fit in the 24 × 16 picture/);
  bad({ top_k: [{ labels: ['cat'], probabilities: [0.5, 0.5] }] }, /top_k must be \[\{ labels, probabilities \}\]/);
  bad({ top_k_before: [{ labels: ['cat'], probabilities: [2] }] }, /top_k_before must be/);
  bad({ norms: norms.slice(1) }, /norms must be \[3\]\[7\]/);
});

test('validation: each problem has its own clear message', () => {
  const tokens = ['a', 'b'];
  const ok = [[[[1, 0], [0.5, 0.5]]]];
  throwsData(() => readAttentionData({ tokens: ['a', 'b', 'c'], attentions: ok }), /shapes disagree: tokens has 3 tokens, attentions is \[1, 1, 2, 2\]/);
  throwsData(() => readAttentionData({ tokens, attentions: [[[[1, 0], [0.5, 0.5]]], [[[1, 0], [1]]]] }), /shapes disagree: attentions\[1\]\[0\]\[1\] has 1 entries where attentions\[0\]\[0\]\[0\] has 2/);
  throwsData(() => readAttentionData({ tokens, attentions: [[[[1, 0, 0], [0.5, 0.5, 0]]]] }), /self-attention has as many keys as queries/);
  throwsData(() => readAttentionData({ tokens, attentions: [[[1, 0], [0.5, 0.5]]] }), /has 3 dimensions/);
  throwsData(() => readAttentionData({ tokens, attentions: [[[[1, 0], [null, 0.5]]]] }), /attentions\[0\]\[0\]\[1\]\[0\] is null, not a number/);
  throwsData(() => readAttentionData({ tokens, attentions: { data: new Float32Array([1, 0, NaN, 1]), shape: [1, 1, 2, 2] } }), /NaN at layer 0, head 0, query 1, key 0/);
  throwsData(() => readAttentionData({ tokens, attentions: { data: new Float32Array([1, 0, -0.5, 1.5]), shape: [1, 1, 2, 2] } }), /negative \(-0\.5\) at layer 0, head 0, query 1, key 0/);
  throwsData(() => readAttentionData({ attentions: ok }), /tokens is missing/);
  throwsData(() => readAttentionData({ tokens }), /no attention found/);
  throwsData(() => readAttentionData({ tokens, attentions: ok, head_labels: [['x', 'y']] }), /head_labels must have 1 layers of 1 labels/);
  throwsData(() => parseJsonText('{"tokens": ["a"], "attentions": [[[[NaN]]]]}', 'attn.json'), /attn\.json contains NaN or Infinity/);
  throwsData(() => parseJsonText('{"tokens": ', 'attn.json'), /attn\.json is not valid JSON/);
  // Too large: refused from the shape, before anything is allocated.
  const side = Math.ceil(Math.sqrt(MAX_VALUES / 144)) + 1;
  throwsData(() => readTensor({ dtype: 'float32', shape: [12, 12, side, side], base64: '' }, 'attentions'), /too large to draw: shape \[12, 12, \d+, \d+\] is [\d,]+ values; the widget draws at most 67,108,864/);
  // Rows that do not sum to 1: drawn, with a warning that counts them.
  const { warning, result } = readAttentionData({ tokens, attentions: [[[[0.5, 0], [0.5, 0.5]]], [[[0.9, 0.2], [0.5, 0.5]]]] }).parts.self;
  assert.match(warning, /^Warning: 2 of 4 rows of attentions do not sum to 1 \(e\.g\. layer 0, head 0, query 0 sums to 0\.5000\); they are drawn as given\.$/);
  assert.equal(result.attentions.data[0], 0.5);
});
