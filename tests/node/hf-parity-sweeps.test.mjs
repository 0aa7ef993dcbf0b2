// Parity of the WASM tokenizer with Hugging Face's Rust tokenizers for every
// Split behaviour, Digits and every normalizer (tests/tokenizer/families.mjs)
// on a quarter of the parity corpus (hf-parity.mjs); NFC/NFKC/NFD/NFKD also
// against V8's String.prototype.normalize on every code point of Unicode 15.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as families from '../tokenizer/families.mjs';
import { assertParity, corpus, engine, firstDifference, sweepText } from './hf-parity.mjs';

test('Split behaviours and Digits', async () => {
  for (const [name, json] of families.splitBehaviours()) await assertParity(name, json, { text: sweepText, offsets: false });
});
test('normalizers', async () => {
  for (const [name, json] of families.normalizers()) await assertParity(name, json, { text: sweepText, offsets: false });
});

test('NFC, NFD, NFKC, NFKD equal String.prototype.normalize on every code point of Unicode 15 and on the corpus', () => {
  // Code points assigned by Unicode 15.0 (DerivedAge.txt): normalization of those is stable across later versions.
  const assigned = [];
  for (const line of readFileSync('/usr/share/unicode/DerivedAge.txt', 'utf8').split('\n')) {
    const m = line.match(/^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*(\d+)\.(\d+)/);
    if (!m || Number(m[3]) > 15) continue;
    for (let c = parseInt(m[1], 16); c <= parseInt(m[2] ?? m[1], 16); c++) {
      if ((c >= 0xd800 && c <= 0xdfff) || (c >= 0xe000 && c <= 0xf8ff) || c >= 0xf0000) continue;  // surrogates, private use
      assigned.push(c);
    }
  }
  // Each code point alone and followed by a few combining marks, so compositions and reordering are exercised.
  const text = assigned.map((c) => String.fromCodePoint(c) + (c % 7 === 0 ? '\u0301\u0323' : c % 11 === 0 ? '\u0308' : '')).join(' ');
  for (const form of ['NFC', 'NFD', 'NFKC', 'NFKD']) {
    const json = { ...families.pythia(), normalizer: { type: form }, pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }, post_processor: null };
    const t = engine.loadTokenizer(json);
    try {
      for (const sample of [text, corpus]) {
        const got = t.decode(Array.from(t.encodeIds(sample)));
        const want = sample.normalize(form);
        const i = firstDifference(got, want);
        assert.equal(i, -1, `${form}: differs at ${i}: ${JSON.stringify(got.slice(i, i + 8))} vs ${JSON.stringify(want.slice(i, i + 8))}`);
      }
    } finally {
      t.dispose();
    }
  }
});

test('an unknown Split regex is refused, quoting it', () => {
  const json = families.llama3();
  json.pre_tokenizer.pretokenizers[0].pattern = { Regex: '\\p{L}+|\\s' };
  assert.throws(() => engine.loadTokenizer(json), /Split regex "\\\\p\{L\}\+\|\\\\s" is not supported/);
});

