// Head ablation in WASM through the JS engine (dist/engine/engine.js): zero and mean
// ablation of GPT-2, BERT, Llama with GQA, Qwen3 and GPT-NeoX heads against the
// PyTorch goldens of tests/golden/make_ablation_goldens.py (top-k, the last
// row's distribution and the last layer's attention within 1e-5 absolute, the
// per-token loss within 1e-5 relative), the head ranking against the goldens'
// single-head losses, readable errors; BERT's loss at [MASK] from run() with
// mask labels (one pass, as the page's click uses); and on the shipped austen-gpt, that
// knocking out the heads heads.json labels "induction" stops the copying of a
// repeated random sequence far more than knocking out a random other head.
// Encoder–decoders (Marian, BART): heads of each part knocked out against the
// same goldens (top-k at every decoder position, the teacher-forced loss of
// each target token, the greedy translation without the heads, the ranking
// of every head of the three parts) and their errors.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';

import { AttnplayError, createEngine } from '../../dist/engine/engine.js';
import { maxAbsDiff, modelFiles } from './model-golden.mjs';

const read = (path, encoding) => readFileSync(new URL(path, import.meta.url), encoding);
const ablationGolden = (name) => JSON.parse(read(`../golden/models/${name}/ablation.json`, 'utf8'));
const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
const lossError = (ours, ref) => Math.max(...ref.map((r, i) => Math.abs(ours[i] - r) / Math.max(1, Math.abs(r))));
const heads = (pairs) => pairs.map(([layer, head]) => ({ layer, head }));

function softmaxRow(logits, row) { // float64 softmax of one row of { data, shape: [N, V] }
  const V = logits.shape[1];
  const x = Array.from(logits.data.subarray(row * V, (row + 1) * V));
  const max = Math.max(...x);
  const e = x.map((v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

function textOptions(g) { // BERT: type ids, mask positions and labels
  return 'mask_positions' in g ? { typeIds: g.type_ids, maskPositions: g.mask_positions, maskLabels: g.mask_labels } : {};
}

let engine;
const loadShipped = (name) => engine.loadModel({
  config: read(`../../models/${name}/config.json`, 'utf8'),
  weights: read(`../../models/${name}/model.safetensors`),
  tokenizer: read(`../../models/${name}/tokenizer.json`, 'utf8'),
});
before(async () => {
  engine = await createEngine();
});

for (const name of ['gpt2-l2-h12-k8-f16', 'bert-l2-h2-k32-f32', 'llama-gqa-llama3-bf16', 'qwen3-qknorm-bf16', 'pythia-parallel-f16']) {
  test(`${name}: zero and mean ablation in WASM match PyTorch`, async () => {
    const model = await engine.loadModel(modelFiles(name));
    const g = ablationGolden(name);
    try {
      for (const c of g.cases) {
        const at = `${JSON.stringify(c.ablate)} ${c.mode}`;
        const r = model.forward(g.ids, { ...textOptions(g), ablate: heads(c.ablate), ablation: c.mode, tokenLoss: true, logits: true, topK: 5 });
        assert.deepEqual(r.topK.shape, [c.top_k.length, 5]);
        c.top_k.forEach((row, i) => {
          assert.deepEqual(Array.from(r.topK.ids.subarray(5 * i, 5 * i + 5)), row.ids, at);
          assert.ok(maxAbsDiff(r.topK.probabilities.subarray(5 * i, 5 * i + 5), row.probabilities) < 1e-5, at);
        });
        assert.ok(maxAbsDiff(softmaxRow(r.logits, r.logits.shape[0] - 1), c.last_row_probabilities) < 1e-5, at);
        assert.ok(lossError(r.tokenLoss, c.token_loss) < 1e-5, `${at}: loss differs by ${lossError(r.tokenLoss, c.token_loss)}`);
        const [L, H, T] = r.attentions.shape;
        const lastRows = [];
        for (let h = 0; h < H; h += 1) {
          const start = (((L - 1) * H + h) * T + (T - 1)) * T;
          lastRows.push(...r.attentions.data.subarray(start, start + T));
        }
        assert.ok(maxAbsDiff(lastRows, c.last_layer_last_row_attention.flat()) < 1e-5, at);
      }
    } finally {
      model.dispose();
    }
  });
}

test('rankHeads in WASM: every head, largest loss increase first, equal to the golden single-head ablations', async () => {
  for (const name of ['gpt2-l2-h12-k8-f16', 'llama-gqa-llama3-bf16', 'bert-l2-h2-k32-f32']) {
    const model = await engine.loadModel(modelFiles(name));
    const g = ablationGolden(name);
    for (const mode of ['zero', 'mean']) {
      const ranking = model.rankHeads(g.ids, { ...textOptions(g), ablation: mode });
      assert.equal(ranking.heads.length, model.config.layers * model.config.heads);
      ranking.heads.slice(1).forEach((e, i) => assert.ok(e.delta <= ranking.heads[i].delta));
      const intact = mean(g.cases[0].token_loss);
      assert.ok(Math.abs(ranking.baseLoss - intact) < 1e-5 * Math.max(1, intact));
      for (const c of g.cases.filter((x) => x.ablate.length === 1 && x.mode === mode)) {
        const e = ranking.heads.find((x) => x.layer === c.ablate[0][0] && x.head === c.ablate[0][1]);
        assert.ok(Math.abs(e.delta - (mean(c.token_loss) - intact)) < 1e-5 * Math.max(1, intact), `${name} ${mode}`);
      }
    }
    if ('mask_positions' in g) { // without labels: the intact model's own top predictions
      const own = model.rankHeads(g.ids, { typeIds: g.type_ids, maskPositions: g.mask_positions });
      const top = model.forward(g.ids, { typeIds: g.type_ids, maskPositions: g.mask_positions, topK: 1 });
      assert.deepEqual(Array.from(own.maskLabels), Array.from(top.topK.ids));
    }
    model.dispose();
  }
});

test('run() with ablation equals forward() on the same ids; bad ablations get readable errors', async () => {
  const model = await engine.loadModel(modelFiles('gpt2-l2-h12-k8-f16'));
  try {
    const options = { ablate: [{ layer: 0, head: 3 }, { layer: 1, head: 0 }], ablation: 'mean', topK: 3, tokenLoss: true };
    const ran = model.run('The cat sat. The cat sat.', options);
    const direct = model.forward(ran.tokens.map((t) => t.id), options);
    assert.deepEqual(Array.from(ran.tokenLoss), Array.from(direct.tokenLoss));
    assert.deepEqual(Array.from(ran.topK.probabilities), Array.from(direct.topK.probabilities));
    assert.throws(() => model.forward([1, 2, 3], { ablate: [{ layer: 2, head: 0 }] }),
      (e) => e instanceof AttnplayError && /ablated head 2:0 \(layer:head, from 0\) does not exist: the model has 2 layers of 12 heads/.test(e.message));
    assert.throws(() => model.forward([1, 2], { ablate: [{ layer: 0 }] }), /ablate: entry 0 is not \{ layer, head \} integers/);
    assert.throws(() => model.forward([1, 2], { ablate: [{ layer: 0, head: 1 }], ablation: 'max' }), /ablation: 'zero' or 'mean', not 'max'/);
    assert.throws(() => model.rankHeads([5]), /at least two tokens/);
  } finally {
    model.dispose();
  }
});

test('BERT: run() with mask labels gives the ablated loss at each [MASK] in the same pass, equal to forward()', async () => {
  const model = await loadShipped('austen-bert');
  try {
    const text = 'She was a [MASK] woman, and he walked to the [MASK] at once.';
    const intact = model.run(text, { topK: 3 });
    assert.equal(intact.maskPositions.length, 2);
    const maskLabels = [intact.topK.ids[0], intact.topK.ids[3]];
    const options = { topK: 3, tokenLoss: true, maskLabels, ablate: [{ layer: 0, head: 1 }, { layer: 2, head: 3 }], ablation: 'mean' };
    const ran = model.run(text, options);
    const direct = model.forward(ran.tokens.map((t) => t.id), {
      ...options, typeIds: ran.tokens.map((t) => t.typeId), maskPositions: [...ran.maskPositions],
    });
    assert.equal(ran.tokenLoss.length, 2);
    assert.deepEqual(Array.from(ran.tokenLoss), Array.from(direct.tokenLoss));
    assert.deepEqual(Array.from(ran.topK.probabilities), Array.from(direct.topK.probabilities));
    // The loss is -log of the label's probability, which the top-k of the same pass also gives when the label is its top.
    const unablated = model.run(text, { topK: 3, tokenLoss: true, maskLabels });
    unablated.tokenLoss.forEach((loss, m) => assert.ok(Math.abs(loss + Math.log(unablated.topK.probabilities[3 * m])) < 1e-5));
    assert.throws(() => model.run(text, { topK: 3, tokenLoss: true, maskLabels: [maskLabels[0]] }),
      (e) => e instanceof AttnplayError && /one true token per mask position: 1 labels for 2 mask positions/.test(e.message));
  } finally {
    model.dispose();
  }
});

test('austen-gpt: ablating its induction heads stops the copying of a repeated random sequence; a random other head does not', async (t) => {
  const model = await loadShipped('austen-gpt');
  const reports = JSON.parse(read('../../models/austen-gpt/heads.json', 'utf8'));
  const labelled = (label) => reports.filter((r) => r.labels.includes(label)).map(({ layer, head }) => ({ layer, head }));
  const induction = labelled('induction');
  // The previous-token heads are the other half of the induction circuit (their output is what
  // the induction heads' keys read), so "another head" is drawn from the heads with neither label.
  const circuit = [...induction, ...labelled('previous-token')];
  const others = reports.filter((r) => !circuit.some((c) => c.layer === r.layer && c.head === r.head));
  assert.ok(induction.length > 0 && others.length > 0, 'heads.json labels induction heads and leaves others');
  let seed = 12345; // mulberry32: the same draws on every run
  const next = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const other = others[next() % others.length];
  const P = 40;
  const specials = new Set(JSON.parse(read('../../models/austen-gpt/tokenizer.json', 'utf8')).added_tokens.map((t) => t.id));
  const secondCopy = { intact: [], induction: [], other: [] };
  for (let row = 0; row < 4; row += 1) {
    const half = [];
    while (half.length < P) {
      const id = next() % model.config.vocabSize;
      if (!specials.has(id)) half.push(id);
    }
    const ids = [...half, ...half];
    const loss = (ablate) => Array.from(model.forward(ids, { ablate, tokenLoss: true }).tokenLoss.subarray(P)); // positions P.. predict copied tokens
    secondCopy.intact.push(...loss([]));
    secondCopy.induction.push(...loss(induction));
    secondCopy.other.push(...loss([{ layer: other.layer, head: other.head }]));
  }
  model.dispose();
  const intact = mean(secondCopy.intact);
  const inductionRise = mean(secondCopy.induction) - intact;
  const otherRise = mean(secondCopy.other) - intact;
  const figures = `second-copy loss ${intact.toFixed(2)} nats; +${inductionRise.toFixed(2)} without the induction heads, ` +
    `${otherRise >= 0 ? '+' : ''}${otherRise.toFixed(2)} without head ${other.layer}:${other.head}`;
  t.diagnostic(figures);
  assert.ok(intact < 1, `the intact model copies: ${figures}`);
  assert.ok(inductionRise > 2, `the copying stops: ${figures}`);
  assert.ok(inductionRise > 5 * Math.max(otherRise, 0.05), `far more than another head: ${figures}`);
});

// ---- encoder–decoders: heads of the encoder, decoder self-attention and cross-attention
const SEQ2SEQ = ['marian-l2-h4-f32', 'marian-stored-positions-unshared-f16', 'bart-l2-h4-bf16', 'bart-scaled-l1-l3-f32',
  't5-l2-h4-relu-tied-f32', 't5-gated-gelu-dkv12-untied-bf16', 'mt5-gated-silu-l1-f16'];
const partHeads = (triples) => triples.map(([part, layer, head]) => ({ part, layer, head }));

for (const name of SEQ2SEQ) {
  test(`${name}: ablating encoder, decoder and cross heads in WASM matches PyTorch, in a pass and in translation`, async () => {
    const model = await engine.loadModel(modelFiles(name));
    const g = ablationGolden(name);
    try {
      for (const c of g.cases) {
        const at = `${JSON.stringify(c.ablate)} ${c.mode}`;
        const options = { ablate: partHeads(c.ablate), ablation: c.mode };
        const r = model.forward(g.ids, g.decoder_ids, { ...options, topK: 5, tokenLoss: true, logits: true });
        assert.deepEqual(r.topK.shape, [g.decoder_ids.length, 5]);
        assert.equal(r.topK.displays.length, 5 * g.decoder_ids.length);
        c.top_k.forEach((row, i) => {
          assert.deepEqual(Array.from(r.topK.ids.subarray(5 * i, 5 * i + 5)), row.ids, at);
          assert.ok(maxAbsDiff(r.topK.probabilities.subarray(5 * i, 5 * i + 5), row.probabilities) < 1e-5, at);
        });
        assert.ok(maxAbsDiff(softmaxRow(r.logits, r.logits.shape[0] - 1), c.last_row_probabilities) < 1e-5, at);
        assert.ok(lossError(r.tokenLoss, c.token_loss) < 1e-5, `${at}: loss differs by ${lossError(r.tokenLoss, c.token_loss)}`);
        const translated = model.translate(g.ids, { maxNewTokens: 6, ...options });
        assert.deepEqual(translated.decoderTokens.map((t) => t.id), c.greedy, at);
        const bare = model.translate(g.ids, { maxNewTokens: 6, ...options, attentions: false }); // the translation alone
        assert.deepEqual(bare.decoderTokens.map((t) => t.id), c.greedy, at);
        assert.equal(bare.crossAttentions, undefined);
      }
      const ranking = model.rankHeads(g.ids, g.decoder_ids);
      assert.ok(Math.abs(ranking.baseLoss - g.base_loss) < 1e-5 * Math.max(1, g.base_loss));
      assert.equal(ranking.heads.length, g.ranking.length);
      for (let i = 1; i < ranking.heads.length; i += 1) assert.ok(ranking.heads[i - 1].delta >= ranking.heads[i].delta);
      for (const e of g.ranking) {
        const ours = ranking.heads.find((x) => x.part === e.part && x.layer === e.layer && x.head === e.head);
        assert.ok(ours && Math.abs(ours.loss - e.loss) < 1e-5 * Math.max(1, e.loss), `${e.part} ${e.layer}:${e.head}`);
      }
    } finally {
      model.dispose();
    }
  });
}

test('encoder–decoder ablation: bad heads, parts and requests get readable errors', async () => {
  const model = await engine.loadModel(modelFiles('bart-scaled-l1-l3-f32')); // encoder 1 × 2, decoder 3 × 2
  try {
    const ids = [3, 4, 2];
    assert.throws(() => model.forward(ids, [2, 5], { ablate: [{ part: 'encoder', layer: 1, head: 0 }] }),
      (e) => e instanceof AttnplayError && /ablated encoder head 1:0 \(layer:head, from 0\) does not exist: that part has 1 layers of 2 heads/.test(e.message));
    assert.throws(() => model.forward(ids, [2, 5], { ablate: [{ part: 'self', layer: 0, head: 0 }] }),
      (e) => e instanceof AttnplayError && /entry 0 is not \{ part, layer, head \} \(part: encoder, decoder, cross; layer and head integers\)/.test(e.message));
    assert.throws(() => model.translate(ids, { ablate: [{ part: 'cross', layer: 0, head: 2 }] }),
      (e) => e instanceof AttnplayError && /ablated cross head 0:2/.test(e.message));
    assert.throws(() => model.rankHeads(ids, [2]), (e) => e instanceof AttnplayError && /needs a target/.test(e.message));
    assert.throws(() => model.forward(ids, [2, 5], { ablation: 'half' }), (e) => e instanceof AttnplayError && /'zero' or 'mean', not 'half'/.test(e.message));
  } finally {
    model.dispose();
  }
});
