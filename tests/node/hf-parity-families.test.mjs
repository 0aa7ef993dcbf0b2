// Parity of the WASM tokenizer with Hugging Face's Rust tokenizers for the
// tokenizer.json shapes of Llama 3, Qwen2, SmolLM2, Pythia, RoBERTa, Llama 2 /
// TinyLlama / Mistral, T5 / Marian's Unigram and GPT-4o's o200k pattern
// (tests/tokenizer/families.mjs), on the >= 1 MB parity corpus: ids,
// code-point offsets and decode, zero mismatches (hf-parity.mjs). Every Split
// behaviour and normalizer: hf-parity-sweeps.test.mjs.
import { test } from 'node:test';
import * as families from '../tokenizer/families.mjs';
import { assertParity, corpus, lines } from './hf-parity.mjs';

test('Llama 3 shape (Split cl100k, ByteLevel without regex, ignore_merges, [ByteLevel, template])', () => assertParity('llama3', families.llama3(), { offsets: false }));
test('Qwen2 shape (NFC, Split Qwen2)', () => assertParity('qwen2', families.qwen2(), { offsets: false }));
test('o200k pattern', () => assertParity('o200k', families.o200k(), { offsets: false }));
test('SmolLM2 shape (Digits, ByteLevel)', () => assertParity('smollm2', families.smollm2(), { offsets: false }));
test('Pythia shape (NFC, ByteLevel)', () => assertParity('pythia', families.pythia(), { offsets: false }));
test('GPT-2 regex as an explicit Split, ByteLevel add_prefix_space', () => assertParity('gpt2 split', families.gpt2Split(), { offsets: false }));
test('RoBERTa shape (ByteLevel, <mask> taking the spaces before it, RobertaProcessing), with masks and pads written in the text', () => {
  // Every 40th word replaced by <mask> (after one, two or no spaces) and a few by <pad>, as readers write them.
  let n = 0;
  const text = corpus.replace(/ +\S+/g, (word) => (++n % 40 === 0 ? `${' '.repeat(n % 3)}<mask>` : n % 97 === 0 ? '<pad>' : word));
  return assertParity('roberta', families.roberta(), { text, offsets: false }); // ours are never trimmed (cpp/README.md)
});
test('Llama 2 / TinyLlama shape (Prepend, Replace, byte fallback, decoders)', () => assertParity('llama2', families.llama2()));
test('Llama 2 shape without byte fallback: fused unknowns', () => assertParity('llama2 unk', families.llama2Unknowns()));
test('Metaspace pre-tokenizer and decoder, each prepend scheme and split', async () => {
  for (const prepend_scheme of ['first', 'always', 'never']) {
    for (const split of [false, true]) {
      await assertParity(`metaspace ${prepend_scheme} ${split}`, families.metaspace({ prepend_scheme, split }), { text: lines.join('\n') });
    }
  }
});
// T5's, XLM-R's and mBART's files carry SentencePiece's charsmap (Precompiled): Hugging Face applies it to each
// extended grapheme cluster whole (under 6 bytes, the shortest rule winning), else per character. The corpus,
// and clusters where that differs from applying it per character: marks after a letter with a rule of its own,
// stacked marks, emoji ZWJ sequences, flags, Hangul jamo, CR LF, ligatures and fullwidth forms, lone marks.
const CLUSTERS = 'Ａ\u0301 ｅ\u0301\u0302 e\u0301 e\u0301\u0301 ﬁ\u0301 ﬁx ①\u20dd ㈱ 👨\u200d👩\u200d👧 🇫🇷🇩🇪🇺 \u1100\u1161\u11a8 \r\n \u0301start ' +
  'Å ﬀﬃ ｶﾞ ℌ ⅷ ｱ\u3099 \u0e01\u0e33 क\u094d\u0937 \u200b \ufeffx \u00a0y ';
test('Unigram with the Precompiled normalizer (T5 / XLM-R files): ids, offsets and decode as Hugging Face', async () => {
  await assertParity('unigram precompiled', families.unigram({ precompiled: true }));
  await assertParity('unigram precompiled clusters', families.unigram({ precompiled: true }), { text: CLUSTERS.repeat(3) + lines.slice(0, 50).join('\n') });
});
test('Unigram (T5 / Marian shape), with and without byte fallback', async () => {
  // Offsets not compared: behind NFKC, Hugging Face's ranges of characters composed from several
  // marks follow its own alignment rules, which ours match only for single compositions (cpp/README.md).
  await assertParity('unigram', families.unigram(), { offsets: false });
  await assertParity('unigram without byte fallback', families.unigram({ byteFallback: false }), { offsets: false });
});
