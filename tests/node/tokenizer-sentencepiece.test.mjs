// SentencePiece .model files in the WASM build, against the goldens that
// Google's sentencepiece wrote (tests/tokenizer/sentencepiece/make.sh): ids,
// pieces, byte offsets and decoded text of five spm_train models (Unigram and
// BPE, with and without byte fallback, nmt_nfkc / identity / custom rules,
// dummy prefix on and off, user-defined symbols) on the parity texts, invalid
// UTF-8 included, and the ids of 300 KB of Austen (count and hash).
// T5's and XLM-R's ways of wrapping a SentencePiece model (T5Tokenizer: "$A
// </s>" and the <extra_id_N> sentinels; XLMRobertaTokenizer: fairseq's ids and
// "<s> $A </s>"), checked against sentencepiece's ids with those classes' rules.
// Also loading: a model folder with tokenizer.model, spiece.model (T5) or
// sentencepiece.bpe.model (XLM-R) and no tokenizer.json (served over HTTP, and
// as dropped files), the CLI's `tokenize --tokenizer x.model` and `attention
// --model DIR` with them, and the errors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { createEngine } from '../../dist/engine/engine.js';
import { widenVocabulary } from '../hub/fake-hub.mjs';
import { modelsDir } from './model-golden.mjs';

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

// The ids transformers' tokenizer classes give with a SentencePiece model
// whose pieces start <unk>, <s>, </s> (as T5's and XLM-R's do, and spm_train's):
// T5Tokenizer appends </s> and numbers the 100 sentinels after the pieces,
// <extra_id_0> last; XLMRobertaTokenizer (fairseq's dictionary) puts <s>,
// <pad>, </s>, <unk> at 0..3, every other piece one place later than in the
// model, <mask> after them, and wraps the text in <s> ... </s>.
const nmt = goldens.models['unigram-nmt-nfkc.model'];
const PIECES = nmt.vocab.length;
const t5Ids = (ids) => [...ids, nmt.eos_id];
const fairseqId = (id) => (id === nmt.unk_id ? 3 : id + 1);
const xlmRobertaIds = (ids) => [0, ...ids.map(fairseqId), 2];
// The parity texts that write no special token of either class.
const plainTexts = goldens.texts.map((entry, i) => ({ entry, i })).filter(({ entry }) => !/<(s|\/s|unk|pad|mask)>/.test(entry.text ?? ''));

test('T5\'s and XLM-R\'s conventions: T5Tokenizer\'s and XLMRobertaTokenizer\'s ids from sentencepiece\'s, on the parity texts', () => {
  assert.equal(nmt.unk_id, 0);
  assert.deepEqual([nmt.bos_id, nmt.eos_id], [1, 2]);
  assert.ok(plainTexts.length >= 30, `${plainTexts.length} texts`);
  const t5 = engine.loadTokenizer(modelBytes('unigram-nmt-nfkc.model'), { modelType: 't5' });
  const xlmr = engine.loadTokenizer(modelBytes('unigram-nmt-nfkc.model'), { modelType: 'xlm-roberta' });
  try {
    assert.equal(t5.vocabSize, PIECES + 100);
    assert.equal(xlmr.vocabSize, PIECES + 2);
    for (const { entry, i } of plainTexts) {
      const { ids } = nmt.results[i];
      assert.deepEqual(Array.from(t5.encodeIds(textOf(entry))), t5Ids(ids), `T5, text ${i}`);
      assert.deepEqual(Array.from(t5.encodeIds(textOf(entry), { addSpecialTokens: false })), ids, `T5 without specials, text ${i}`);
      assert.deepEqual(Array.from(xlmr.encodeIds(textOf(entry))), xlmRobertaIds(ids), `XLM-R, text ${i}`);
      assert.equal(xlmr.decode(ids.map(fairseqId)), nmt.results[i].decoded, `XLM-R decode, text ${i}`);
    }
    assert.equal(xlmr.decode(xlmRobertaIds(nmt.results[1].ids), { skipSpecialTokens: true }), 'Hello world');
    // Pairs: "$A </s> $B </s>" and "<s> $A </s> </s> $B </s>".
    const [a, b] = [nmt.results[1].ids, nmt.results[20].ids];
    assert.deepEqual(Array.from(t5.encode(goldens.texts[1].text, { pair: goldens.texts[20].text }).ids), [...a, 2, ...b, 2]);
    assert.deepEqual(Array.from(xlmr.encode(goldens.texts[1].text, { pair: goldens.texts[20].text }).ids),
      [0, ...a.map(fairseqId), 2, 2, ...b.map(fairseqId), 2]);
    // Special tokens written in the text are matched: T5's sentinels (the
    // spaces around them dropped) and </s>; XLM-R's <mask> (with the space before it).
    const hello = nmt.results[1].ids;
    const t5Masked = t5.encode('Hello world <extra_id_0> Hello world</s><extra_id_99>');
    assert.deepEqual(Array.from(t5Masked.ids), [...hello, PIECES + 99, ...hello, 2, PIECES, 2]);
    assert.deepEqual([t5.idToToken(PIECES + 99), t5.idToToken(PIECES)], ['<extra_id_0>', '<extra_id_99>']);
    assert.equal(t5.decode(t5Masked.ids, { skipSpecialTokens: true }), 'Hello world Hello world');
    const xlmrMasked = xlmr.encode('Hello world <mask>');
    assert.deepEqual(Array.from(xlmrMasked.ids), [0, ...hello.map(fairseqId), PIECES + 1, 2]);
    assert.deepEqual(xlmrMasked.pieces.at(-2), '<mask>');
    assert.deepEqual([0, 1, 2, 3, PIECES + 1].map((id) => xlmr.idToToken(id)), ['<s>', '<pad>', '</s>', '<unk>', '<mask>']);
  } finally {
    t5.dispose();
    xlmr.dispose();
  }
  assert.throws(() => engine.loadTokenizer(modelBytes('bpe-rules.model'), { modelType: 'xlm-roberta' }), /Unigram model; this one is BPE/);
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

// Folders as T5's and XLM-R's hub repositories without tokenizer.json hold
// them: a golden checkpoint of the family grown to the nmt model's ids (T5:
// the pieces and 100 sentinels; XLM-R: the pieces, <pad> and <mask>), and the
// model under the family's file name.
function conventionFolder(golden, sentencepieceName, vocabSize) {
  const dir = new URL(`${golden}/`, modelsDir);
  const config = JSON.parse(readFileSync(new URL('config.json', dir), 'utf8'));
  return new Map([
    ['config.json', Buffer.from(JSON.stringify({ ...config, vocab_size: vocabSize }))],
    ['model.safetensors', widenVocabulary(readFileSync(new URL('model.safetensors', dir)), config.vocab_size, vocabSize)],
    [sentencepieceName, Buffer.from(modelBytes('unigram-nmt-nfkc.model'))],
  ]);
}
const folders = {
  folder,
  t5: conventionFolder('t5-gated-gelu-dkv12-untied-bf16', 'spiece.model', PIECES + 100),
  xlmr: conventionFolder('xlm-roberta-l1-h4-k8-bf16', 'sentencepiece.bpe.model', PIECES + 2),
};
const droppedFiles = (files) => [...files].map(([name, bytes]) => new File([bytes], name));

let server;
let baseUrl;
before(async () => {
  server = createServer((request, response) => {
    const [name, file] = decodeURIComponent(request.url).split('/').slice(-2);
    const body = folders[name]?.get(file);
    if (body === undefined) response.writeHead(404).end();
    else response.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${server.address().port}/`;
});
after(() => server?.close());

test('loadModel: tokenizer.model is read when the folder has no tokenizer.json (URL and dropped files)', async () => {
  for (const source of [`${baseUrl}folder/`, droppedFiles(folder)]) {
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

test('loadModel: spiece.model (T5) and sentencepiece.bpe.model (XLM-R) without tokenizer.json read text as T5Tokenizer and XLMRobertaTokenizer', async () => {
  const hello = nmt.results[1].ids;
  for (const source of [`${baseUrl}t5/`, droppedFiles(folders.t5)]) {
    const model = await engine.loadModel(source);
    try {
      assert.equal(model.tokenizerJson, null);
      assert.deepEqual(model.run('Hello world').sourceTokens.map((t) => t.id), t5Ids(hello));
      assert.deepEqual(model.run('Hello world <extra_id_0>').sourceTokens.map((t) => t.display), ['␣He', 'll', 'o', '␣world', '<extra_id_0>', '</s>']);
    } finally {
      model.dispose();
    }
  }
  for (const source of [`${baseUrl}xlmr/`, droppedFiles(folders.xlmr)]) {
    const model = await engine.loadModel(source);
    try {
      assert.equal(model.config.maskToken, '<mask>');
      const r = model.run('Hello world <mask>', { topK: 3 });
      assert.deepEqual(r.tokens.map((t) => t.id), [0, ...hello.map(fairseqId), PIECES + 1, 2]);
      assert.equal(r.topK.shape[0], 1, 'one masked position predicted');
      const tokenizer = engine.loadTokenizer(model.tokenizerFile, { modelType: model.config.modelType });
      assert.deepEqual(Array.from(tokenizer.encodeIds('Hello world')), xlmRobertaIds(hello));
      tokenizer.dispose();
    } finally {
      model.dispose();
    }
  }
  // CamembertTokenizer numbers a SentencePiece model's pieces its own way: refused by name, not misread.
  const camembert = new Map(folders.xlmr);
  camembert.set('config.json', Buffer.from(JSON.stringify({ ...JSON.parse(folders.xlmr.get('config.json')), model_type: 'camembert' })));
  await assert.rejects(engine.loadModel(droppedFiles(camembert)), /CamemBERT model's SentencePiece file is not read .*give the model's tokenizer\.json/);
});

test('CLI: tokenize --tokenizer x.model, and attention on a folder with tokenizer.model or sentencepiece.bpe.model', () => {
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
    // XLM-R's sentencepiece.bpe.model, read with fairseq's ids.
    rmSync(join(tmp, 'tokenizer.model'));
    for (const [name, bytes] of folders.xlmr) writeFileSync(join(tmp, name), bytes);
    const xlmr = spawnSync(cli, ['attention', '--model', tmp, '--text', 'Hello world'], { encoding: 'utf8', maxBuffer: 1 << 26 });
    assert.equal(xlmr.status, 0, xlmr.stderr);
    assert.deepEqual(JSON.parse(xlmr.stdout).tokens.map((t) => t.id), xlmRobertaIds(nmt.results[1].ids));
    assert.match(spawnSync(cli, ['info', '--model', tmp], { encoding: 'utf8' }).stdout, /tokenizer: sentencepiece\.bpe\.model/);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
