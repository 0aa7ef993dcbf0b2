// Generation in WASM through the JS engine (model.generate): the same ids as
// the native CLI (`attnplay generate`) for greedy decoding and for seeded
// sampling, on causal golden checkpoints of every family; each step's
// attention row equals the row of an uncached forward pass over the prefix
// (1e-5 absolute); the KV-cached generation gives the tokens of an uncached
// loop (a full forward pass over each prefix, greedy argmax, or this file's
// own JavaScript sampler: SplitMix64 and the top-k / nucleus rule of
// cpp/model/generate.h), and each step's probabilities (the chosen token's
// and its rivals') equal the softmax of the uncached logits; the callback and
// step-by-step generation stop where asked; bad options are errors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { before, test } from 'node:test';

import { AttnplayError, createEngine } from '../../dist/engine/engine.js';
import { maxAbsDiff, modelFiles } from './model-golden.mjs';

const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const dirOf = (name) => fileURLToPath(new URL(`../golden/models/${name}`, import.meta.url));
const PROMPT = [40, 50, 60, 70];

let engine;
before(async () => {
  engine = await createEngine();
});

function nativeIds(name, args) {
  const r = spawnSync(cli, ['generate', '--model', dirOf(name), '--ids', PROMPT.join(','), ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.tokens.length, out.ids.length);
  assert.equal(typeof out.text, 'string');
  return out.ids;
}

for (const name of ['gpt2-l2-h12-k8-f16', 'llama-gqa-llama3-bf16', 'mistral-window3-f16', 'qwen3-qknorm-bf16', 'pythia-parallel-f16']) {
  test(`${name}: WASM generate equals the native CLI, with the predicting rows`, async () => {
    const model = await engine.loadModel(modelFiles(name));
    try {
      const steps = [];
      const greedy = model.generate(PROMPT, { maxNewTokens: 8 }, (step) => { steps.push(step); });
      assert.deepEqual(Array.from(greedy), nativeIds(name, ['--max-new-tokens', '8']));
      assert.ok(steps.length >= 1 && steps.length <= 8);
      for (const step of steps) {
        const prefix = Array.from(greedy.subarray(0, step.position + 1));
        assert.equal(greedy[step.position + 1], step.token);
        const { attentions } = model.forward(prefix);
        const [L, H, T] = attentions.shape;
        assert.deepEqual(step.attention.shape, [L, H, T]);
        const lastRows = new Float32Array(L * H * T);
        for (let lh = 0; lh < L * H; lh += 1) lastRows.set(attentions.data.subarray((lh * T + T - 1) * T, (lh * T + T) * T), lh * T);
        assert.ok(maxAbsDiff(step.attention.data, lastRows) < 1e-5);
      }
      const sampling = { maxNewTokens: 8, temperature: 1.5, topK: 50, topP: 0.95, seed: 12345 };
      const sampled = model.generate(PROMPT, sampling);
      assert.deepEqual(Array.from(sampled),
        nativeIds(name, ['--max-new-tokens', '8', '--temperature', '1.5', '--top-k', '50', '--top-p', '0.95', '--seed', '12345']));
    } finally {
      model.dispose();
    }
  });
}

// SplitMix64 over BigInt: uniform draws in [0, 1) from the top 53 bits.
function splitMix64(seed) {
  let state = BigInt.asUintN(64, BigInt(seed));
  return () => {
    state = BigInt.asUintN(64, state + 0x9E3779B97F4A7C15n);
    let z = state;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94D049BB133111EBn);
    z ^= z >> 31n;
    return Number(z >> 11n) / 2 ** 53;
  };
}

// The documented sampling rule on one row of logits -> { id, probability (its share of the nucleus) }.
function sample(logits, { temperature, topK, topP }, uniform) {
  const t = Math.fround(temperature); // the core holds these as float32
  const order = [...logits.keys()].sort((a, b) => logits[b] - logits[a] || a - b).slice(0, topK > 0 ? topK : logits.length);
  const max = logits[order[0]];
  const p = order.map((id) => Math.exp((logits[id] - max) / t));
  const sum = p.reduce((a, b) => a + b, 0);
  let nucleus = 0;
  let mass = 0;
  while (nucleus < p.length && (nucleus === 0 || mass < Math.fround(topP) * sum)) mass += p[nucleus++];
  const u = uniform() * mass;
  let cumulative = 0;
  for (let i = 0; i < nucleus; i += 1) {
    cumulative += p[i];
    if (u < cumulative) return { id: order[i], probability: p[i] / mass };
  }
  return { id: order[nucleus - 1], probability: p[nucleus - 1] / mass };
}

function softmax(row) {
  const max = Math.max(...row);
  const e = Array.from(row, (x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

for (const name of ['gpt2-l2-h12-k8-f16', 'llama-gqa-llama3-bf16', 'qwen3-qknorm-bf16', 'pythia-parallel-f16']) {
  test(`${name}: KV-cached generation gives the tokens and probabilities of an uncached loop`, async () => {
    const model = await engine.loadModel(modelFiles(name));
    try {
      const V = model.config.vocabSize;
      for (const settings of [{ greedy: true }, { greedy: false, temperature: 1.3, topK: 40, topP: 0.9, seed: 2024 }, { greedy: false, temperature: 0.7, topK: 0, topP: 1, seed: 7 }]) {
        const generation = model.startGeneration(PROMPT, { maxNewTokens: 8, rivals: 5, ...settings });
        const uniform = splitMix64(settings.seed ?? 0);
        const prefix = [...PROMPT];
        try {
          for (let step = generation.step(); step !== null; step = generation.step()) {
            const { logits } = model.forward(prefix, { logits: true }); // no cache: the whole prefix again
            const row = logits.data.subarray((prefix.length - 1) * V, prefix.length * V);
            const expected = settings.greedy ? { id: row.indexOf(Math.max(...row)), probability: 1 } : sample(row, settings, uniform);
            assert.equal(step.token, expected.id, `step ${prefix.length - PROMPT.length + 1}, ${JSON.stringify(settings)}`);
            assert.ok(Math.abs(step.samplingProbability - expected.probability) < 1e-5);
            const p = softmax(row);
            assert.ok(Math.abs(step.probability - p[step.token]) < 1e-5);
            assert.equal(step.top.ids.length, 5);
            assert.equal(step.top.displays.length, 5);
            const best = [...p.keys()].sort((a, b) => p[b] - p[a] || a - b).slice(0, 5);
            step.top.ids.forEach((id, j) => {
              assert.ok(Math.abs(step.top.probabilities[j] - p[id]) < 1e-5);
              assert.ok(Math.abs(p[id] - p[best[j]]) < 1e-6); // the five most probable (ties in either order)
            });
            prefix.push(step.token);
          }
          assert.deepEqual(Array.from(generation.ids), prefix);
          assert.ok(prefix.length > PROMPT.length);
        } finally {
          generation.dispose();
        }
      }
    } finally {
      model.dispose();
    }
  });
}

test('step by step: a generation ends, is disposed, and ends with its model', async () => {
  const model = await engine.loadModel(modelFiles('gpt2-l1-h1-k64-f32'));
  const generation = model.startGeneration(PROMPT, { maxNewTokens: 3 });
  assert.notEqual(generation.step(), null);
  assert.equal(generation.ids.length, PROMPT.length + 1);
  const rest = [generation.step(), generation.step(), generation.step()];
  assert.equal(rest[2], null); // three tokens, then done
  generation.dispose();
  assert.throws(() => generation.step(), /this generation was disposed/);
  const open = model.startGeneration(PROMPT, { maxNewTokens: 3 });
  model.dispose();
  assert.throws(() => open.step(), /disposed/);
  open.dispose();
});

test('the step callback can stop generation; bad options are errors', async () => {
  const model = await engine.loadModel(modelFiles('llama-mqa-bias-linear-f32'));
  try {
    let calls = 0;
    const ids = model.generate(PROMPT, { maxNewTokens: 10 }, () => { calls += 1; return calls < 3; });
    assert.equal(calls, 3);
    assert.equal(ids.length, PROMPT.length + 3);
    assert.throws(() => model.generate(PROMPT, { topP: 0 }), (e) => e instanceof AttnplayError && /top_p must be in \(0, 1\]/.test(e.message));
    assert.throws(() => model.generate([], {}), /at least one token/);
    assert.throws(() => model.generate(PROMPT, { temperature: 'hot' }), /temperature must be a number/);
    assert.equal(model.generate(PROMPT, { maxNewTokens: 2 }).length, PROMPT.length + 2); // still usable
  } finally {
    model.dispose();
  }
  const bert = await engine.loadModel(modelFiles('bert-l2-h2-k32-f32'));
  assert.throws(() => bert.generate([2, 3]), /generation needs a causal model/);
  bert.dispose();
});
