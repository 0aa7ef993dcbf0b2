// SentencePiece .model files in the WASM build, against the goldens that
// Google's sentencepiece wrote (tests/tokenizer/sentencepiece/make.sh): ids,
// pieces, byte offsets and decoded text of five spm_train models (Unigram and
// BPE, with and without byte fallback, nmt_nfkc / identity / custom rules,
// dummy prefix on and off, user-defined symbols) on the parity texts, invalid
// UTF-8 included, and the ids of 300 KB of Austen (count and hash).
// Also loading: a model folder with tokenizer.model and no tokenizer.json
// (served over HTTP, and as dropped files), the CLI's `tokenize --tokenizer
// x.model` and `attention --model DIR` with tokenizer.model, and the errors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { createEngine } from '../../dist/engine/engine.js';

const dir = new URL('../tokenizer/sentencepiece/', import.meta.url);
const goldens = JSON.parse(readFileSync(new URL('goldens.json', dir), 'utf8'));
const modelBytes = (name) => new Uint8Array(readFileSync(new URL(name, dir)));
const textOf = (entry) => (entry.text !== undefined ? entry.text : Uint8Array.from(Buffer.from(entry.hex, 'hex')));
const engine = await createEngine();

// Paragraphs first_line..last_line of the Austen corpus, joined by newlines.
const longText = readFileSync(new URL('../../../shared/corpus/austen-paragraphs.txt', import.meta.url), 'utf8')
  .split('\n').slice(goldens.long.first_line, goldens.long.last_line + 1).join('\n');

// 64-bit FNV-1a of the ids' little-endian uint32 bytes, as make_goldens.py.
function fnv1a64(ids) {
  let h = 0xcbf29ce484222325n;
  for (const id of ids) {
    for (let k = 0; k < 4; k += 1) h = ((h ^ BigInt((id >>> (8 * k)) & 0xff)) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

test('every model: ids, pieces, offsets and decoded text equal sentencepiece on the parity texts', () => {
  for (const [name, golden] of Object.entries(goldens.models)) {
    const tokenizer = engine.loadTokenizer(modelBytes(name));
    assert.equal(tokenizer.vocabSize, golden.vocab.length, name);
    assert.equal(tokenizer.modelType, name.startsWith('bpe') ? 'BPE' : 'Unigram');
    golden.vocab.forEach(([piece], id) => assert.equal(tokenizer.idToToken(id), piece, `${name} piece ${id}`));
    goldens.texts.forEach((entry, i) => {
      const want = golden.results[i];
      const where = `${name}, text ${i}`;
      const e = tokenizer.encode(textOf(entry), { addSpecialTokens: false });
      assert.deepEqual(Array.from(e.ids), want.ids, where);
      assert.deepEqual(Array.from(tokenizer.encodeIds(textOf(entry), { addSpecialTokens: false })), want.ids, where);
      e.pieces.forEach((piece, k) => {
        if (e.ids[k] !== golden.unk_id) assert.equal(piece, want.pieces[k], `${where}, piece ${k}`);
      });
      if (want.offsets) {
        for (let k = 0; k < e.length; k += 1) {
          if (/^<0x[0-9A-F]{2}>$/.test(e.pieces[k])) continue;  // byte pieces: exact bytes here, sentencepiece's differ
          const [begin, end] = [e.offsets[2 * k], e.offsets[2 * k + 1]];
          // A character normalized into several, split between two tokens: both cover it here.
          const split = k + 1 < e.length && end > e.offsets[2 * k + 2];
          assert.deepEqual([begin, split ? e.offsets[2 * k + 2] : end], want.offsets[k], `${where}, offsets of ${k}`);
        }
      }
      assert.equal(tokenizer.decode(want.ids), want.decoded, where);
    });
    // <s> in front with special tokens (sentencepiece's add_bos), shown as special.
    const withBos = tokenizer.encode(goldens.texts[0].text);
    assert.deepEqual(Array.from(withBos.ids), golden.ids_bos_eos.slice(0, -1), name);
    assert.equal(withBos.special[0], 1);
    assert.equal(withBos.displays[0], '<s>');
    const longIds = tokenizer.encodeIds(longText, { addSpecialTokens: false });
    assert.deepEqual({ count: longIds.length, fnv1a64: fnv1a64(longIds) }, golden.long, `${name}, long text`);
    tokenizer.dispose();
  }
});

test('display strings, decode of special pieces, no tokenizer.json form', () => {
  const tokenizer = engine.loadTokenizer(modelBytes('bpe-identity-bytes.model').buffer);
  const e = tokenizer.encode('a 😀', { addSpecialTokens: false });
  assert.deepEqual(e.displays.slice(0, 2), ['␣a', '␣']);
  assert.deepEqual(e.displays.slice(2), ['<0xF0>', '<0x9F>', '<0x98>', '<0x80>']);
  assert.equal(tokenizer.decode([1, ...e.ids, 2]), 'a 😀');  // control pieces decode to nothing, as in sentencepiece
  assert.throws(() => tokenizer.toJson(), /no tokenizer.json form/);
  tokenizer.dispose();
});

test('malformed and unsupported files: clear errors, the engine stays usable', () => {
  const bytes = modelBytes('unigram-rules-cased.model');
  assert.throws(() => engine.loadTokenizer(bytes.subarray(0, 3)), /SentencePiece model: ModelProto at byte \d+: .*claims/);
  assert.throws(() => engine.loadTokenizer(new Uint8Array([0x0b])), /group, which is not supported/);
  assert.throws(() => engine.loadTokenizer(new Uint8Array(0)), /no pieces/);
  const tokenizer = engine.loadTokenizer(bytes);
  assert.equal(tokenizer.decode(tokenizer.encodeIds('Hello', { addSpecialTokens: false })), 'Hello');
  tokenizer.dispose();
});

// A model folder with SentencePiece's tokenizer.model and no tokenizer.json:
// austen-gpt's config and weights (vocabulary 4,096) with the 1,000-piece BPE model.
const modelDir = new URL('../../models/austen-gpt/', import.meta.url);
const folder = new Map([
  ['config.json', readFileSync(new URL('config.json', modelDir))],
  ['model.safetensors', readFileSync(new URL('model.safetensors', modelDir))],
  ['tokenizer.model', readFileSync(new URL('bpe-identity-bytes.model', dir))],
]);
const bpe = goldens.models['bpe-identity-bytes.model'];
let server;
let baseUrl;
before(async () => {
  server = createServer((request, response) => {
    const body = folder.get(decodeURIComponent(request.url).split('/').pop());
    if (body === undefined) response.writeHead(404).end();
    else response.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${server.address().port}/folder/`;
});
after(() => server?.close());

test('loadModel: tokenizer.model is read when the folder has no tokenizer.json (URL and dropped files)', async () => {
  const files = [...folder].map(([name, bytes]) => new File([bytes], name));
  for (const source of [baseUrl, files]) {
    const model = await engine.loadModel(source);
    assert.equal(model.tokenizerJson, null);
    const r = model.run(goldens.texts[0].text);
    assert.deepEqual(r.tokens.map((t) => t.id), bpe.ids_bos_eos.slice(0, -1));
    assert.equal(r.tokens[1].display, '␣It');
    const tokenizer = engine.loadTokenizer(model.tokenizerFile);
    assert.deepEqual(Array.from(tokenizer.encodeIds('Hello world', { addSpecialTokens: false })), bpe.results[1].ids);
    tokenizer.dispose();
    model.dispose();
  }
});

test('CLI: tokenize --tokenizer x.model, and attention on a folder with tokenizer.model', () => {
  const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
  const spm = fileURLToPath(new URL('unigram-nmt-nfkc.model', dir));
  const tokenize = spawnSync(cli, ['tokenize', '--tokenizer', spm, '--text', 'Hello world', '--no-special'], { encoding: 'utf8' });
  assert.equal(tokenize.status, 0, tokenize.stderr);
  const out = JSON.parse(tokenize.stdout);
  assert.deepEqual(out.ids, goldens.models['unigram-nmt-nfkc.model'].results[1].ids);
  assert.deepEqual(out.offsets, goldens.models['unigram-nmt-nfkc.model'].results[1].offsets);
  const tmp = mkdtempSync(join(tmpdir(), 'attnplay-spm-'));
  try {
    for (const name of ['config.json', 'model.safetensors']) copyFileSync(new URL(name, modelDir), join(tmp, name));
    copyFileSync(new URL('bpe-identity-bytes.model', dir), join(tmp, 'tokenizer.model'));
    const attention = spawnSync(cli, ['attention', '--model', tmp, '--text', 'Hello world'], { encoding: 'utf8', maxBuffer: 1 << 26 });
    assert.equal(attention.status, 0, attention.stderr);
    const tokens = JSON.parse(attention.stdout).tokens;
    assert.deepEqual(tokens.map((t) => t.id), [bpe.bos_id, ...bpe.results[1].ids]);
    const info = spawnSync(cli, ['info', '--model', tmp], { encoding: 'utf8' });
    assert.match(info.stdout, /tokenizer: tokenizer\.model/);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
