// Exports: the .npy writer's bytes parse back (header layout per NumPy's
// format spec, shape, little-endian float32 data), and the attention JSON is
// nested [layer][head][query][key].
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { attentionJson, toNpy } from '../../web/export/export.js';

function parseNpy(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const headerLength = view.getUint16(8, true);
  const header = new TextDecoder('latin1').decode(bytes.subarray(10, 10 + headerLength));
  assert.equal((10 + headerLength) % 64, 0, 'data is 64-byte aligned');
  assert.ok(header.endsWith('\n'));
  const shape = /'shape': \(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  assert.match(header, /'descr': '<f4'/);
  assert.match(header, /'fortran_order': False/);
  const count = shape.reduce((a, b) => a * b, 1);
  const data = Array.from({ length: count }, (_, i) => view.getFloat32(10 + headerLength + i * 4, true));
  assert.equal(bytes.length, 10 + headerLength + count * 4);
  return { shape, data };
}

test('.npy round trip for 1-d and 4-d tensors', () => {
  const values = [0.5, -1.25, 3e-8, 1 / 3, 7, 0, -0, 2.5];
  const four = parseNpy(toNpy({ data: Float32Array.from(values), shape: [1, 2, 2, 2] }));
  assert.deepEqual(four.shape, [1, 2, 2, 2]);
  four.data.forEach((v, i) => assert.equal(v, Math.fround(values[i])));
  const one = parseNpy(toNpy({ data: Float32Array.from([1, 2, 3]), shape: [3] }));
  assert.deepEqual(one.shape, [3]);
  assert.deepEqual(one.data, [1, 2, 3]);
});

test('attention JSON is nested [layer][head][query][key] with token strings', () => {
  const data = Float32Array.from({ length: 2 * 3 * 2 * 2 }, (_, i) => i);
  const tokens = [{ id: 5, display: 'a', segment: 0, start: 0, end: 1 }, { id: 9, display: '␣<b>', segment: 0, start: 1, end: 5 }, { id: 0, display: '[SEP]', segment: -1, start: 0, end: 0 }];
  const json = JSON.parse(attentionJson({ modelName: 'm', modelType: 'gpt2', tokens, texts: ['a <b>'], attentions: { data, shape: [2, 3, 2, 2] } }));
  assert.equal(json.attentions.length, 2);
  assert.equal(json.attentions[0].length, 3);
  assert.deepEqual(json.attentions[1][2], [[20, 21], [22, 23]]);
  assert.deepEqual(json.tokens, ['a', '␣<b>', '[SEP]']);
  assert.deepEqual(json.token_text, ['a', ' <b>', ''], 'the raw text beside the display form; nothing for an added token');
  assert.deepEqual(json.texts, ['a <b>']);
  assert.deepEqual(json.ids, [5, 9, 0]);
});
