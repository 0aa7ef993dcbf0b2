// `attnplay attention --ablate L:H,... [--ablation zero|mean] --top-k K --token-loss
// --rank-heads` on the golden checkpoints against the PyTorch ablation goldens
// (tests/golden/make_ablation_goldens.py): top-k probabilities within 1e-5,
// the per-token loss within 1e-5 relative; and its errors for bad heads and
// options. Encoder-decoders: the same with --ablate PART:L:H against the same
// goldens, and `attnplay translate --ablate` writing the engine's translation
// without the heads.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { maxAbsDiff, modelFiles } from './model-golden.mjs';

const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const dirOf = (name) => fileURLToPath(new URL(`../golden/models/${name}`, import.meta.url));
const ablationGolden = (name) => JSON.parse(readFileSync(new URL(`../golden/models/${name}/ablation.json`, import.meta.url), 'utf8'));
const run = (args) => spawnSync(cli, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
const lossError = (ours, ref) => Math.max(...ref.map((r, i) => Math.abs(ours[i] - r) / Math.max(1, Math.abs(r))));

for (const name of ['gpt2-l2-h12-k8-f16', 'llama-gqa-llama3-bf16', 'bert-l2-h2-k32-f32']) {
  test(`attention --ablate matches the PyTorch ablation goldens: ${name}`, () => {
    const g = ablationGolden(name);
    const bert = 'mask_positions' in g;
    for (const c of g.cases) {
      const args = ['attention', '--model', dirOf(name), '--ids', g.ids.join(','), '--top-k', '5'];
      if (bert) args.push('--type-ids', g.type_ids.join(','));
      else args.push('--token-loss');
      if (c.ablate.length) args.push('--ablate', c.ablate.map(([l, h]) => `${l}:${h}`).join(','), '--ablation', c.mode);
      const r = run(args);
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.equal(out.top_k.length, c.top_k.length);
      out.top_k.forEach((row, i) => {
        assert.deepEqual(row.ids, c.top_k[i].ids);
        assert.ok(maxAbsDiff(row.probabilities, c.top_k[i].probabilities) < 1e-5);
      });
      if (bert) assert.deepEqual(out.mask_positions, g.mask_positions);
      else assert.ok(lossError(out.token_loss, c.token_loss) < 1e-5);
      if (c.ablate.length) {
        assert.deepEqual(out.ablate, c.ablate);
        assert.equal(out.ablation, c.mode);
      }
    }
  });
}

test('attention --prediction-positions: the top-k rows of those positions alone, named', () => {
  const g = ablationGolden('gpt2-l2-h12-k8-f16');
  const args = ['attention', '--model', dirOf('gpt2-l2-h12-k8-f16'), '--ids', g.ids.join(','), '--top-k', '5'];
  const all = JSON.parse(run(args).stdout);
  const r = run([...args, '--prediction-positions', '0,-1']);
  assert.equal(r.status, 0, r.stderr);
  const some = JSON.parse(r.stdout);
  assert.deepEqual(some.prediction_positions, [0, g.ids.length - 1]);
  [all.top_k[0], all.top_k.at(-1)].forEach((row, i) => {  // the same rows (the product summed in another order)
    assert.deepEqual(some.top_k[i].ids, row.ids);
    assert.ok(maxAbsDiff(some.top_k[i].probabilities, row.probabilities) < 1e-6);
  });
  assert.deepEqual(all.prediction_positions, g.ids.map((_, i) => i));
  const bad = run([...args, '--prediction-positions', String(g.ids.length)]);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /prediction position \d+ is outside the \d+ positions run/);
});

test('attention --rank-heads ranks every head by the golden loss increase', () => {
  const g = ablationGolden('gpt2-l2-h12-k8-f16');
  const r = run(['attention', '--model', dirOf('gpt2-l2-h12-k8-f16'), '--ids', g.ids.join(','), '--rank-heads']);
  assert.equal(r.status, 0, r.stderr);
  const ranking = JSON.parse(r.stdout).head_ranking;
  assert.equal(ranking.heads.length, 2 * 12);
  const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
  const intact = mean(g.cases[0].token_loss);
  const single = g.cases.find((c) => c.ablate.length === 1 && c.mode === 'zero');
  const entry = ranking.heads.find((e) => e.layer === single.ablate[0][0] && e.head === single.ablate[0][1]);
  assert.ok(Math.abs(entry.delta - (mean(single.token_loss) - intact)) < 1e-5 * intact);
  ranking.heads.slice(1).forEach((e, i) => assert.ok(e.delta <= ranking.heads[i].delta));
});

test('attention --ablate rejects bad heads and options with clear messages', () => {
  const model = dirOf('gpt2-l2-h12-k8-f16');
  const cases = [
    [['--ablate', '2:0'], 1, /ablated head 2:0 \(layer:head, from 0\) does not exist: the model has 2 layers of 12 heads/],
    [['--ablate', '0:12'], 1, /ablated head 0:12 .* 2 layers of 12 heads/],
    [['--ablate', '1'], 1, /--ablate: '1' is not LAYER:HEAD/],
    [['--ablate', '0:-1'], 1, /--ablate: '0:-1' is not LAYER:HEAD/],
    [['--ablate', 'a:b'], 1, /is not LAYER:HEAD/],
    [['--ablate', '0:1', '--ablation', 'max'], 2, /--ablation is zero or mean, not 'max'/],
    [['--top-k', '0'], 1, /--top-k: give one number from 1/],
    [['--top-k', '3', '--format', 'npy', '--out', '/dev/null'], 2, /add to the JSON output/],
  ];
  for (const [extra, status, message] of cases) {
    const r = run(['attention', '--model', model, '--ids', '1,2,3', ...extra]);
    assert.equal(r.status, status, `${extra.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
  const bert = run(['attention', '--model', dirOf('bert-l2-h2-k32-f32'), '--ids', '2,5,3', '--token-loss']);
  assert.equal(bert.status, 2);
  assert.match(bert.stderr, /--token-loss is for causal models/);
});

test('an encoder–decoder\'s attention --ablate PART:L:H --token-loss --top-k --rank-heads matches the PyTorch goldens', () => {
  for (const name of ['marian-l2-h4-f32', 'bart-scaled-l1-l3-f32']) {
    const g = ablationGolden(name);
    for (const c of g.cases) {
      const args = ['attention', '--model', dirOf(name), '--ids', g.ids.join(','), '--decoder-ids', g.decoder_ids.join(','), '--top-k', '5', '--token-loss'];
      if (c.ablate.length) args.push('--ablate', c.ablate.map((h) => h.join(':')).join(','), '--ablation', c.mode);
      const r = run(args);
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      out.top_k.forEach((row, i) => {
        assert.deepEqual(row.ids, c.top_k[i].ids);
        assert.ok(maxAbsDiff(row.probabilities, c.top_k[i].probabilities) < 1e-5);
      });
      assert.ok(lossError(out.token_loss, c.token_loss) < 1e-5, `${name} ${JSON.stringify(c.ablate)} ${c.mode}`);
      if (c.ablate.length) assert.deepEqual([out.ablate, out.ablation], [c.ablate, c.mode]);
    }
    const r = run(['attention', '--model', dirOf(name), '--ids', g.ids.join(','), '--decoder-ids', g.decoder_ids.join(','), '--rank-heads']);
    assert.equal(r.status, 0, r.stderr);
    const ranking = JSON.parse(r.stdout).head_ranking;
    assert.equal(ranking.heads.length, g.ranking.length);
    for (const e of g.ranking) {
      const ours = ranking.heads.find((x) => x.part === e.part && x.layer === e.layer && x.head === e.head);
      assert.ok(Math.abs(ours.loss - e.loss) < 1e-5 * Math.max(1, e.loss), `${name} ${e.part}:${e.layer}:${e.head}`);
    }
  }
});

test('translate --ablate knocks heads out of every decoding step; bad heads get clear messages', async () => {
  const engine = await createEngine();
  const model = await engine.loadModel(modelFiles('marian-l2-h4-f32'));
  const text = 'The cat sat.';
  const heads = [{ part: 'cross', layer: 0, head: 1 }, { part: 'decoder', layer: 1, head: 1 }];
  const wanted = model.translate(text, { ablate: heads, maxNewTokens: 6 }).decoderTokens.slice(1).map((t) => t.display);
  const intact = model.translate(text, { maxNewTokens: 6 }).decoderTokens.slice(1).map((t) => t.display);
  model.dispose();
  assert.notDeepEqual(wanted, intact, 'these heads change the translation');
  const r = run(['translate', '--model', dirOf('marian-l2-h4-f32'), '--text', text, '--max-new-tokens', '6', '--ablate', 'cross:0:1,decoder:1:1']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.target_tokens, wanted);
  assert.deepEqual(out.ablate, [['cross', 0, 1], ['decoder', 1, 1]]);
  for (const [extra, status, message] of [
    [['--ablate', 'cross:2:0'], 1, /ablated cross head 2:0 \(layer:head, from 0\) does not exist: that part has 2 layers of 4 heads/],
    [['--ablate', '0:1'], 1, /--ablate: '0:1' is not PART:LAYER:HEAD \(PART: encoder, decoder or cross/],
    [['--ablate', 'self:0:1'], 1, /'self:0:1' is not PART:LAYER:HEAD/],
    [['--ablate', 'cross:0:1', '--ablation', 'max'], 2, /--ablation is zero or mean, not 'max'/],
  ]) {
    const bad = run(['translate', '--model', dirOf('marian-l2-h4-f32'), '--text', text, ...extra]);
    assert.equal(bad.status, status, `${extra.join(' ')}: ${bad.stderr}`);
    assert.match(bad.stderr, message);
  }
});
