// Text in, attention out in WASM: model.run(text [, textB]) tokenizes with the
// folder's tokenizer.json and must give the golden ids (tokenized in Python by
// the golden script) and PyTorch's attention; tokens carry offsets into the
// text; [MASK] fills, named by the core; explicit truncation; hostile token text stays text;
// head analysis equals the native CLI's.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { before, test } from 'node:test';

import { AttnplayError, createEngine } from '../../dist/engine/engine.js';
import { MODELS, flat, golden, maxAbsDiff, modelFiles, modelsDir } from './model-golden.mjs';

let engine;
before(async () => {
  engine = await createEngine();
});

test('run(text) gives the golden ids, offsets that cover the text, and PyTorch\'s attention', async () => {
  for (const name of MODELS) {
    const model = await engine.loadModel(modelFiles(name));
    try {
      for (const c of golden(name).cases) {
        const r = model.run(c.text, { textB: c.text_pair });
        assert.deepEqual(r.tokens.map((t) => t.id), c.ids, `${name}: ${c.text}`);
        if (model.config.modelType === 'bert') assert.deepEqual(r.tokens.map((t) => t.typeId), c.type_ids);
        assert.ok(maxAbsDiff(r.attentions.data, flat(c.attentions)) < 1e-5, name);
        for (const token of r.tokens.filter((t) => t.segment >= 0)) {
          const text = token.segment === 0 ? c.text : c.text_pair;
          assert.ok(token.start <= token.end && token.end <= text.length, `${name}: offsets of ${token.display}`);
        }
        assert.equal(r.truncated, false);
      }
    } finally {
      model.dispose();
    }
  }
});

test('RoBERTa: config.maskToken is <mask>, its positions are filled; a pair ranks its heads without segment ids', async () => {
  const roberta = await engine.loadModel(modelFiles('roberta-l2-h2-k16-f32'));
  try {
    assert.equal(roberta.config.maskToken, '<mask>');
    assert.equal(roberta.config.segmentInput, false);
    const r = roberta.run('The cat <mask> on the mat.', { topK: 5 });
    assert.deepEqual([...r.maskPositions], [8]);
    assert.deepEqual(r.topK.shape, [1, 5]);
    const pair = roberta.run('What?', { textB: 'A <mask>!', topK: 2 });
    assert.deepEqual(pair.tokens.map((t) => t.display).slice(0, 9), ['<s>', 'W', 'h', 'a', 't', '?', '</s>', '</s>', 'A']);
    // The ranking reads the pair as the run did: segment 0 throughout (typeIds would be refused: one token type).
    const ranking = roberta.rankHeads(pair.tokens.map((t) => t.id), { maskPositions: [...pair.maskPositions] });
    assert.equal(ranking.heads.length, 4);
  } finally {
    roberta.dispose();
  }
  const bert = await engine.loadModel(modelFiles('bert-l2-h2-k32-f32'));
  assert.equal(bert.config.maskToken, '[MASK]');
  assert.equal(bert.config.segmentInput, true);
  bert.dispose();
});

test('[MASK] positions are filled; long text is truncated and says so', async () => {
  const bert = await engine.loadModel(modelFiles('bert-l2-h2-k32-f32'));
  const r = bert.run('The cat [MASK] on the mat.', { topK: 5 });
  assert.deepEqual([...r.maskPositions], [3]);
  assert.deepEqual(r.topK.shape, [1, 5]);
  // The core names the fills as the tokenizer names its entries (the page shows these strings).
  const tokenizer = engine.loadTokenizer(bert.tokenizerJson);
  assert.deepEqual(r.topK.displays, Array.from(r.topK.ids, (id) => tokenizer.display(id)));
  tokenizer.dispose();
  bert.dispose();

  const gpt = await engine.loadModel(modelFiles('gpt2-l1-h1-k64-f32')); // 16 positions, a token per byte
  const long = gpt.run('abcdefghijklmnopqrstuvwxyz', { topK: 1 });
  assert.equal(long.truncated, true);
  assert.equal(long.inputTokens, 26);
  assert.deepEqual(long.attentions.shape, [1, 1, 16, 16]);
  assert.equal(long.topK.displays.length, 16);
  // forward() on the same ids names its top-k as run() does (the ablation view reads a generation step through it).
  const ids = long.tokens.map((token) => token.id).slice(0, 16);
  const forward = gpt.forward(ids, { topK: 1 });
  assert.deepEqual(Array.from(forward.topK.ids), Array.from(long.topK.ids));
  assert.deepEqual(forward.topK.displays, long.topK.displays);
  const gptTokenizer = engine.loadTokenizer(gpt.tokenizerJson);
  assert.deepEqual(forward.topK.displays, Array.from(forward.topK.ids, (id) => gptTokenizer.display(id)));
  gptTokenizer.dispose();
  assert.throws(() => gpt.run('', {}), (e) => e instanceof AttnplayError && /the text is empty/.test(e.message));
  assert.throws(() => gpt.run('a', { textB: 'b' }), /GPT-2 models take one text, not a pair/);
  gpt.dispose();
});

test('a token that looks like HTML is just a string', async () => {
  const gpt = await engine.loadModel(modelFiles('gpt2-l2-h12-k8-f16'));
  const hostile = '<img src=x onerror=alert(1)>';
  const r = gpt.run(hostile);
  assert.equal(r.tokens.map((t) => t.display).join('').replaceAll('␣', ' '), hostile); // ␣ marks a space
  assert.equal(r.tokens.map((t) => hostile.slice(t.start, t.end)).join(''), hostile);
  gpt.dispose();
});

test('head analysis in WASM equals the native CLI', async () => {
  const name = 'gpt2-l4-h4-k8-bf16';
  const model = await engine.loadModel(modelFiles(name));
  const wasm = model.analyzeHeads();
  model.dispose();
  const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
  const native = JSON.parse(spawnSync(cli, ['heads', '--model', fileURLToPath(new URL(`${name}/`, modelsDir))], { encoding: 'utf8' }).stdout);
  assert.equal(wasm.length, native.heads.length);
  wasm.forEach((h, i) => {
    const n = native.heads[i];
    for (const [js, c] of [['previousToken', 'previous_token'], ['nextToken', 'next_token'], ['induction', 'induction'], ['sink', 'sink'], ['self', 'self'], ['local', 'local'], ['broad', 'broad']]) {
      assert.ok(Math.abs(h[js] - n[c]) < 1e-4, `${h.layer}.${h.head} ${js}: ${h[js]} vs ${n[c]}`);
    }
    assert.deepEqual(h.labels, n.labels);
  });
});
