// Parity of the WASM tokenizers with the references on a deterministic mixed
// corpus of >= 1 MB (tests/tokenizer/fixtures.mjs): GPT-2 ids equal to
// tiktoken's gpt2 (WASM build of OpenAI's Rust original) and to Hugging Face's
// Rust tokenizers (@anush008/tokenizers); GPT-2's files read as OPT's and
// RoBERTa's tokenizers read them equal to the tokenizer.json transformers'
// converters make; BERT (bert-base-uncased) ids, type ids and offsets equal to
// Hugging Face's. Zero mismatches allowed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { get_encoding } from 'tiktoken';
import hf from '@anush008/tokenizers';
import { createEngine } from '../../dist/engine/engine.js';
import * as fx from '../tokenizer/fixtures.mjs';

const engine = await createEngine();
const corpus = fx.parityCorpus();
const corpusBytes = Buffer.from(corpus);

// First index where the arrays differ, with context for the failure message.
function assertSameIds(ours, ref, what, offsetsOf) {
  const a = Array.from(ours);
  const b = Array.from(ref);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (i === a.length && i === b.length) return;
  const where = offsetsOf ? JSON.stringify(corpusBytes.subarray(Math.max(0, offsetsOf(i) - 40), offsetsOf(i) + 40).toString()) : '';
  assert.fail(`${what}: first mismatch at token ${i} of ${a.length}/${b.length}: ours ${a.slice(i, i + 6)} vs ${b.slice(i, i + 6)} near ${where}`);
}

test('the parity corpus is at least 1 MB and mixes scripts, emoji, whitespace oddities', () => {
  assert.ok(corpusBytes.length >= 1_000_000, `${corpusBytes.length} bytes`);
  for (const probe of ['\ufeff', '\u0085', '\u200d', '🏽', '中', 'ا', 'ह', '\u0301', '<|endoftext|>', '\r\n', "'ll"]) {
    assert.ok(corpus.includes(probe), `corpus lacks ${JSON.stringify(probe)}`);
  }
});

test('GPT-2: ids equal tiktoken gpt2 on the whole corpus (special tokens allowed and not)', () => {
  const tokenizer = engine.loadTokenizer(fx.gpt2TokenizerJson());
  const enc = get_encoding('gpt2');
  try {
    const ours = tokenizer.encode(corpusBytes, { addSpecialTokens: false });
    assertSameIds(ours.ids, enc.encode(corpus, 'all'), 'gpt2 vs tiktoken', (i) => ours.offsets[2 * i]);
    // <|endoftext|> as plain text (tiktoken's encode_ordinary).
    assertSameIds(tokenizer.encodeIds(corpusBytes, { matchSpecialTokens: false }), enc.encode_ordinary(corpus), 'gpt2 ordinary vs tiktoken');
  } finally {
    enc.free();
    tokenizer.dispose();
  }
});

test('GPT-2: ids equal Hugging Face tokenizers; vocab.json + merges.txt load the same', async () => {
  const json = fx.gpt2TokenizerJson();
  const tokenizer = engine.loadTokenizer(json);
  const { vocabJson, mergesTxt } = fx.gpt2Files();
  const fromFiles = engine.loadGpt2Tokenizer(vocabJson, mergesTxt);
  try {
    const ref = await hf.Tokenizer.fromString(JSON.stringify(json)).encode(corpus, null, { addSpecialTokens: false });
    const ours = tokenizer.encodeIds(corpusBytes);
    assertSameIds(ours, ref.getIds(), 'gpt2 vs HF');
    assertSameIds(fromFiles.encodeIds(corpusBytes), ours, 'gpt2 files vs tokenizer.json');
  } finally {
    tokenizer.dispose();
    fromFiles.dispose();
  }
});

// GPT-2's BPE with fairseq's dictionary order, as OPT's and RoBERTa's vocab.json
// have it: <s> <pad> </s> <unk>, GPT-2's tokens one place each after them, <mask> last.
function fairseqGpt2Files() {
  const { vocabJson, mergesTxt } = fx.gpt2Files();
  const vocab = { '<s>': 0, '<pad>': 1, '</s>': 2, '<unk>': 3 };
  for (const [piece, id] of Object.entries(JSON.parse(vocabJson))) if (id < 50256) vocab[piece] = id + 4;
  vocab['<mask>'] = Object.keys(vocab).length;
  return { vocab, vocabJson: JSON.stringify(vocab), mergesTxt };
}

// tokenizer.json as transformers' converters make it from those files (convert_slow_tokenizer.py):
// GPT2Converter with add_bos_token (OPT's tokenizer), RobertaConverter.
function convertedTokenizerJson(vocab, mergesTxt, kind) {
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  const special = (content, lstrip = false) => ({ id: vocab[content], content, single_word: false, lstrip, rstrip: false, normalized: false, special: true });
  const item = (id, typeId = 0) => (id === 'A' || id === 'B' ? { Sequence: { id, type_id: typeId } } : { SpecialToken: { id, type_id: typeId } });
  const post = kind === 'opt'
    ? { type: 'TemplateProcessing', single: [item('</s>'), item('A')], pair: [item('</s>'), item('A'), item('B', 1)],
        special_tokens: { '</s>': { id: '</s>', ids: [vocab['</s>']], tokens: ['</s>'] } } }
    : { type: 'RobertaProcessing', sep: ['</s>', vocab['</s>']], cls: ['<s>', vocab['<s>']], trim_offsets: true, add_prefix_space: false };
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: kind === 'opt' ? [special('<pad>'), special('</s>')]
      : [special('<s>'), special('<pad>'), special('</s>'), special('<unk>'), special('<mask>', true)],
    normalizer: null, pre_tokenizer: byteLevel, post_processor: post, decoder: byteLevel,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false,
      byte_fallback: false, vocab, merges: mergesTxt.split('\n').slice(1).filter((line) => line.length > 0) },
  };
}

test('OPT and RoBERTa from vocab.json + merges.txt: ids equal Hugging Face tokenizers built as transformers\' converters build them', async () => {
  const { vocab, vocabJson, mergesTxt } = fairseqGpt2Files();
  const lines = corpus.split('\n').filter((line) => line.length > 0).slice(0, 400);
  const written = ['Hello </s> world<pad>', 'A <mask> here <s> and <unk>', ' spaced  <mask>', ''];
  for (const [kind, modelType] of [['opt', 'opt'], ['roberta', 'roberta'], ['roberta', 'bart']]) {
    const ours = engine.loadGpt2Tokenizer(vocabJson, mergesTxt, { modelType });
    const ref = hf.Tokenizer.fromString(JSON.stringify(convertedTokenizerJson(vocab, mergesTxt, kind)));
    try {
      assert.equal(ours.vocabSize, Object.keys(vocab).length);
      for (const text of [...lines, ...written]) {
        assertSameIds(ours.encodeIds(text), (await ref.encode(text)).getIds(), `${modelType}: ${JSON.stringify(text.slice(0, 60))}`);
      }
      const [a, b] = ['What does it see?', 'A dog ran!'];
      assertSameIds(ours.encode(a, { pair: b }).ids, (await ref.encode(a, b)).getIds(), `${modelType} pair`);
      const whole = await ref.encode(corpus, null, { addSpecialTokens: false });
      assertSameIds(ours.encodeIds(corpusBytes, { addSpecialTokens: false }), whole.getIds(), `${modelType} corpus`);
    } finally {
      ours.dispose();
    }
  }
});

test('BERT: ids, type ids, offsets equal Hugging Face tokenizers; vocab.txt loads the same', async () => {
  const json = fx.bertTokenizerJson();
  const tokenizer = engine.loadTokenizer(json);
  const fromVocab = engine.loadBertTokenizer(fx.bertVocabTxt());
  const ref = hf.Tokenizer.fromString(JSON.stringify(json));
  try {
    const r = await ref.encode(corpus, null, { addSpecialTokens: false });
    const ours = tokenizer.encode(corpusBytes, { addSpecialTokens: false });
    assertSameIds(ours.ids, r.getIds(), 'bert vs HF', (i) => ours.offsets[2 * i]);
    assertSameIds(fromVocab.encodeIds(corpusBytes, { addSpecialTokens: false }), ours.ids, 'bert vocab.txt vs tokenizer.json');
    // HF's JS offsets count code points: map our UTF-16 offsets to code points.
    const codePointAt = fx.codePointIndex(corpus);
    const refOffsets = r.getOffsets();
    for (let i = 0; i < ours.length; i++) {
      const [b, e] = refOffsets[i];
      const ob = codePointAt[ours.utf16Offsets[2 * i]];
      const oe = codePointAt[ours.utf16Offsets[2 * i + 1]];
      if (b !== ob || e !== oe) assert.fail(`offset mismatch at token ${i} (${ours.pieces[i]}): ours ${[ob, oe]} vs ${[b, e]}`);
    }
    // Sentence pairs with the post-processor, line by line over a sample.
    const lines = corpus.split('\n').filter((l) => l.trim()).slice(0, 300);
    for (let k = 0; k + 1 < lines.length; k += 2) {
      const p = await ref.encode(lines[k], lines[k + 1]);
      const o = tokenizer.encode(lines[k], { pair: lines[k + 1] });
      assert.deepEqual(Array.from(o.ids), p.getIds(), `pair ${k}`);
      assert.deepEqual(Array.from(o.typeIds), p.getTypeIds(), `pair types ${k}`);
    }
  } finally {
    tokenizer.dispose();
    fromVocab.dispose();
  }
});

test('decode equals Hugging Face decode (GPT-2 and BERT) on corpus lines', async () => {
  const sample = corpus.split('\n').filter((l) => l.trim()).slice(0, 200);
  for (const json of [fx.gpt2TokenizerJson(), fx.bertTokenizerJson()]) {
    const tokenizer = engine.loadTokenizer(json);
    const ref = hf.Tokenizer.fromString(JSON.stringify(json));
    try {
      for (const line of sample) {
        const ids = Array.from(tokenizer.encodeIds(line, { addSpecialTokens: false }));
        assert.equal(tokenizer.decode(ids, { skipSpecialTokens: true }), await ref.decode(ids, true), JSON.stringify(line));
      }
    } finally {
      tokenizer.dispose();
    }
  }
});
