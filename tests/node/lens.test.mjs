// The logit lens (cpp/analysis/logit_lens.*) through the WASM engine and the
// CLI, against the float64 goldens of tests/golden/models/*/lens.json (made by
// tests/golden/make_lens_goldens.py from PyTorch's float64 hidden states, read
// through the final norm and unembedding, or BERT's masked-LM head): top-5
// probabilities of every layer × position within 1e-5, the same ids except at
// a near tie of the reference. `attnplay lens` prints what the engine
// computes (within 1e-5: native and WASM kernels round differently); on the
// shipped models the last row is the model's own predictions (ids, display
// strings; probabilities within 1e-6); a BERT without its MLM head and a bad k
// are refused by name.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { before, test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { MODELS, golden, modelFiles, modelsDir } from './model-golden.mjs';

const K = 5;
const TOLERANCE = 1e-5;
const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const shippedDir = (name) => fileURLToPath(new URL(`../../models/${name}`, import.meta.url));
const lensGolden = (name) => JSON.parse(readFileSync(new URL(`${name}/lens.json`, modelsDir), 'utf8'));
const WITH_HEAD = MODELS.filter((name) => !['bert-l3-h6-k16-f16', 'distilbert-l1-h2-k16-bf16', 'electra-discriminator-l1-h4-k8-bf16', 'roberta-l1-h2-k8-f16'].includes(name)); // no masked-LM head

let engine;
before(async () => { engine = await createEngine(); });

// lens { ids, probabilities, shape: [R, T, k] } -> cell (r, t) as { ids, probabilities } arrays.
function cell(lens, r, t) {
  const [, T, k] = lens.shape;
  const at = (r * T + t) * k;
  return { ids: Array.from(lens.ids.subarray(at, at + k)), probabilities: Array.from(lens.probabilities.subarray(at, at + k)) };
}

function assertCellMatches(ours, ref, what) {
  for (let i = 0; i < K; i += 1) {
    assert.ok(Math.abs(ours.probabilities[i] - ref.probabilities[i]) <= TOLERANCE, `${what} #${i}: ${ours.probabilities[i]} vs ${ref.probabilities[i]}`);
    const tied = (i > 0 && ref.probabilities[i - 1] - ref.probabilities[i] < TOLERANCE) || ref.probabilities[i] - ref.probabilities[i + 1] < TOLERANCE;
    if (!tied) assert.equal(ours.ids[i], ref.ids[i], `${what} #${i} id`);
  }
}

for (const name of WITH_HEAD) {
  test(`${name}: the WASM logit lens equals the float64 reference`, async () => {
    const model = await engine.loadModel(modelFiles(name));
    try {
      for (const c of lensGolden(name).cases) {
        const { lens } = model.forward(c.ids, { typeIds: c.type_ids, lens: K });
        assert.deepEqual(lens.shape, [model.config.layers + 1, c.ids.length, K]);
        c.layers.forEach((row, r) => row.forEach((ref, t) => assertCellMatches(cell(lens, r, t), ref, `${c.text} layer ${r} position ${t}`)));
      }
    } finally {
      model.dispose();
    }
  });
}

test('attnplay lens prints the engine\'s lens: ids, display strings and probabilities of every layer × position', async () => {
  for (const name of ['gpt2-l4-h4-k8-bf16', 'bert-l2-h2-k32-f32', 'llama-mqa-bias-linear-f32']) {
    const c = golden(name).cases[0];
    const r = spawnSync(cli, ['lens', '--model', fileURLToPath(new URL(name, modelsDir)), '--ids', c.ids.join(','), '--top-k', '3'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    const model = await engine.loadModel(modelFiles(name));
    try {
      const { lens } = model.forward(c.ids, { lens: 3 });
      assert.deepEqual(out.ids, c.ids);
      assert.equal(out.top_k, 3);
      assert.equal(out.layers.length, lens.shape[0]);
      out.layers.forEach((row, r) => row.forEach((printed, t) => {
        const ours = cell(lens, r, t);
        assert.deepEqual(printed.ids, ours.ids, `${name} ${r}/${t}`);
        printed.probabilities.forEach((p, i) => assert.ok(Math.abs(p - ours.probabilities[i]) < TOLERANCE, `${name} ${r}/${t} #${i}: native ${p} vs WASM ${ours.probabilities[i]}`));
        assert.equal(printed.tokens.length, 3);
      }));
    } finally {
      model.dispose();
    }
  }
});

test('shipped models: the last lens row is the model\'s own predictions, named by its tokenizer', async () => {
  for (const name of ['austen-gpt', 'austen-bert']) {
    const dir = new URL(`../../models/${name}/`, import.meta.url);
    const model = await engine.loadModel({
      config: readFileSync(new URL('config.json', dir), 'utf8'),
      weights: readFileSync(new URL('model.safetensors', dir)),
      tokenizer: readFileSync(new URL('tokenizer.json', dir), 'utf8'),
    });
    try {
      const text = model.config.causal ? 'It is a truth universally acknowledged' : 'It is a [MASK] universally acknowledged.';
      const run = model.run(text, { lens: K, topK: K });
      const [rows, T, k] = run.lens.shape;
      assert.equal(rows, model.config.layers + 1);
      assert.equal(T, run.tokens.length);
      const positions = model.config.causal ? [...Array(T).keys()] : [...run.maskPositions];
      positions.forEach((position, n) => {
        const last = cell(run.lens, rows - 1, position);
        assert.deepEqual(last.ids, Array.from(run.topK.ids.subarray(n * k, (n + 1) * k)), `${name} position ${position}`);
        // The same float32 arithmetic, up to the kernel's rounding (the lens reads a copy of the hidden state).
        Array.from(run.topK.probabilities.subarray(n * k, (n + 1) * k)).forEach((p, i) => assert.ok(Math.abs(last.probabilities[i] - p) < 1e-6, `${name} ${position} #${i}`));
        assert.deepEqual(run.lens.displays.slice(((rows - 1) * T + position) * k, ((rows - 1) * T + position + 1) * k),
          run.topK.displays.slice(n * k, (n + 1) * k));
      });
      const printed = JSON.parse(spawnSync(cli, ['lens', '--model', shippedDir(name), '--text', text, '--top-k', String(K)], { encoding: 'utf8' }).stdout);
      assert.deepEqual(printed.tokens, run.tokens.map((token) => token.display));
      positions.forEach((position, n) => assert.deepEqual(printed.layers.at(-1)[position].tokens, run.topK.displays.slice(n * k, (n + 1) * k)));
    } finally {
      model.dispose();
    }
  }
});

test('the lens refuses a BERT without its masked-LM head and a k below 1, with a message', async () => {
  const model = await engine.loadModel(modelFiles('bert-l3-h6-k16-f16'));
  try {
    assert.throws(() => model.forward([2, 5, 3], { lens: 3 }), /no masked-LM head/);
  } finally {
    model.dispose();
  }
  const gpt = await engine.loadModel(modelFiles('gpt2-l1-h1-k64-f32'));
  try {
    assert.throws(() => gpt.forward([1, 2], { lens: 0 }), /lens: expected the number of predictions per cell/);
  } finally {
    gpt.dispose();
  }
  const r = spawnSync(cli, ['lens', '--model', fileURLToPath(new URL('bert-l3-h6-k16-f16', modelsDir)), '--ids', '2,5,3'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^attnplay lens: this BERT checkpoint has no masked-LM head/);
});
