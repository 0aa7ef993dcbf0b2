// A Marian folder without tokenizer.json (only source.spm, target.spm and
// vocab.json, as Helsinki-NLP's opus-mt folders are): models/gettext-en-fr's
// files less tokenizer.json load in WASM from a folder URL, dropped files and
// the object form, with progress over every file, and tokenize to the ids of
// Hugging Face's MarianTokenizer (tests/tokenizer/marian/goldens.json, made
// with python3-sentencepiece by make_goldens.py) and of the shipped
// tokenizer.json; translations equal the shipped folder's, in WASM and in the
// CLI (translate, attention --text --target) on a copy of the folder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';

const dir = fileURLToPath(new URL('../../models/gettext-en-fr/', import.meta.url));
const read = (name) => readFileSync(join(dir, name));
const MARIAN = ['config.json', 'model.safetensors', 'source.spm', 'target.spm', 'vocab.json'];
const golden = JSON.parse(readFileSync(new URL('../tokenizer/marian/goldens.json', import.meta.url), 'utf8'));
const SENTENCES = ['incorrect binary data format', 'Cannot open file %s', 'No password has been supplied.'];

// A folder URL served by a fetch over the files (404 for the rest, tokenizer.json included).
function folderFetch(files) {
  const requested = [];
  const fetch = async (url) => {
    const name = new URL(url).pathname.split('/').pop();
    requested.push(name);
    if (!files.has(name)) return new Response('not found', { status: 404 });
    const bytes = files.get(name);
    return new Response(bytes, { headers: { 'content-length': String(bytes.length) } });
  };
  return { fetch, requested };
}

let engine;
let shipped;
before(async () => {
  engine = await createEngine();
  shipped = await engine.loadModel({ config: read('config.json'), weights: read('model.safetensors'), tokenizer: read('tokenizer.json') });
});
after(() => shipped.dispose());

// The model reads text as MarianTokenizer and as the shipped tokenizer.json, and translates as the shipped folder.
function checkModel(model) {
  assert.equal(model.hasTokenizer, true);
  assert.equal(model.tokenizerFile, null);
  // Validation texts, then the edge cases (runs of spaces, unknown characters,
  // written specials, language codes), where only MarianTokenizer's ids are the reference.
  golden.cases.slice(0, 60).concat(golden.cases.slice(-8)).forEach((c, i) => {
    const ours = model.run(c.text, { target: c.text });
    assert.deepEqual(ours.sourceTokens.map((t) => t.id), c.shipped.source_ids, c.text);
    assert.deepEqual(ours.decoderTokens.map((t) => t.id).slice(1), c.shipped.target_ids, c.text);
    if (i >= 60) return;
    const reference = shipped.run(c.text, { target: c.text });
    assert.deepEqual(ours.sourceTokens.map((t) => t.display), reference.sourceTokens.map((t) => t.display), c.text);
  });
  for (const text of SENTENCES) {
    const a = model.translate(text);
    const b = shipped.translate(text);
    assert.deepEqual(a.decoderTokens.map((t) => t.id), b.decoderTokens.map((t) => t.id), text);
    assert.equal(a.text, b.text);
    assert.ok(a.text.length > 0);
  }
}

test('a folder URL without tokenizer.json loads source.spm, target.spm and vocab.json, with progress over them', async () => {
  const { fetch, requested } = folderFetch(new Map(MARIAN.map((name) => [name, read(name)])));
  const events = [];
  const model = await engine.loadModel('http://models.test/opus-mt-like/', { fetch, onProgress: (p) => events.push(p) });
  try {
    for (const name of ['tokenizer.json', 'tokenizer.model', 'source.spm', 'target.spm', 'vocab.json']) assert.ok(requested.includes(name), name);
    const total = MARIAN.reduce((sum, name) => sum + read(name).length, 0);
    assert.equal(events.at(-1).loaded, total);
    assert.ok(events.every((e) => e.total === total));
    for (const name of ['source.spm', 'target.spm', 'vocab.json']) assert.ok(events.some((e) => e.file === name), name);
    checkModel(model);
  } finally {
    model.dispose();
  }
});

test('dropped files and the object form load the same', async () => {
  const dropped = await engine.loadModel(MARIAN.map((name) => new File([read(name)], name)));
  try {
    checkModel(dropped);
  } finally {
    dropped.dispose();
  }
  const object = await engine.loadModel({
    config: read('config.json'), weights: read('model.safetensors'),
    sourceSpm: read('source.spm'), targetSpm: read('target.spm'), vocab: read('vocab.json').toString('utf8'),
  });
  try {
    checkModel(object);
  } finally {
    object.dispose();
  }
});

test('broken Marian files: a malformed vocab.json and a missing target.spm are named', async () => {
  const base = { config: read('config.json'), weights: read('model.safetensors'), sourceSpm: read('source.spm'), targetSpm: read('target.spm') };
  await assert.rejects(engine.loadModel({ ...base, vocab: '{"</s>": 0, "<unk>": ' }), /vocab\.json: not valid JSON/);
  await assert.rejects(engine.loadModel({ ...base, vocab: '{"</s>": 0, "a": 1}' }), /vocab\.json: no '<unk>' entry/);
  await assert.rejects(engine.loadModel({ ...base, targetSpm: undefined, vocab: read('vocab.json') }), /target\.spm is missing/);
  await assert.rejects(engine.loadModel(['config.json', 'model.safetensors', 'source.spm', 'vocab.json'].map((name) => new File([read(name)], name))),
    /target\.spm is missing/);
  assert.equal(engine.loadedModels(), 1, 'only the shipped model stays loaded');
});

test('the CLI translates and shows attention on a copy of the folder without tokenizer.json as on the shipped folder', () => {
  const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
  const copy = mkdtempSync(join(tmpdir(), 'attnplay-marian-'));
  try {
    for (const name of MARIAN) {
      if (name === 'model.safetensors') symlinkSync(join(dir, name), join(copy, name));
      else cpSync(join(dir, name), join(copy, name));
    }
    const run = (...args) => {
      const r = spawnSync(cli, args, { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };
    assert.match(run('info', '--model', copy), /tokenizer: source\.spm, target\.spm, vocab\.json \(Marian\)/);
    const text = SENTENCES.join('\n');
    assert.equal(run('translate', '--model', copy, '--text', text), run('translate', '--model', dir, '--text', text));
    const attention = ['--text', 'Cannot open file', '--target', "Impossible d'ouvrir le fichier"];
    assert.equal(run('attention', '--model', copy, ...attention), run('attention', '--model', dir, ...attention));
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});
