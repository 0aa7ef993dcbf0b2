// Encoder-decoders (Marian, BART, T5 / mT5) in WASM through the JS engine and in the
// native CLI, against the float64 PyTorch goldens of tests/golden/models/
// (tests/golden/make_seq2seq_goldens.py): encoder self-, decoder self- and
// cross-attention within 1e-5, logits within 1e-4 relative, greedy and 3-beam
// translations equal to the reference search; the step callback's rows equal
// the whole decoder's rows; a traced head's q and k give its weights; the
// decoder's logit lens equals make_lens_goldens.py's reference;
// `attnplay attention` and `attnplay translate` print the same numbers; bad
// input gets readable errors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { before, test } from 'node:test';

import { AttnplayError, TranslationModel, createEngine } from '../../dist/engine/engine.js';
import { flat, golden, maxAbsDiff, modelFiles, relativeError } from './model-golden.mjs';

const SEQ2SEQ = ['marian-l2-h4-f32', 'marian-stored-positions-unshared-f16', 'bart-l2-h4-bf16', 'bart-scaled-l1-l3-f32',
  't5-l2-h4-relu-tied-f32', 't5-gated-gelu-dkv12-untied-bf16', 'mt5-gated-silu-l1-f16', 'bart-untied-legacy-keys-f32'];
const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const dirOf = (name) => fileURLToPath(new URL(`../golden/models/${name}`, import.meta.url));

let engine;
before(async () => {
  engine = await createEngine();
});

function runCli(args) {
  const r = spawnSync(cli, args, { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

for (const name of SEQ2SEQ) {
  test(`${name}: WASM attentions, logits and translations equal the PyTorch golden`, async () => {
    const model = await engine.loadModel(modelFiles(name));
    try {
      assert.ok(model instanceof TranslationModel);
      assert.equal(model.config.encoderDecoder, true);
      for (const c of golden(name).cases) {
        const r = model.forward(c.ids, c.decoder_ids, { logits: true });
        const S = c.ids.length;
        const T = c.decoder_ids.length;
        assert.deepEqual(r.encoderAttentions.shape, [model.config.encoderLayers, model.config.encoderHeads, S, S]);
        assert.deepEqual(r.crossAttentions.shape, [model.config.decoderLayers, model.config.decoderHeads, T, S]);
        assert.ok(maxAbsDiff(r.encoderAttentions.data, flat(c.encoder_attentions)) < 1e-5, c.source);
        assert.ok(maxAbsDiff(r.decoderAttentions.data, flat(c.decoder_attentions)) < 1e-5, c.source);
        assert.ok(maxAbsDiff(r.crossAttentions.data, flat(c.cross_attentions)) < 1e-5, c.source);
        assert.ok(relativeError(r.logits.data, flat(c.logits)) < 1e-4, c.source);

        const steps = [];
        const greedy = model.translate(c.ids, { maxNewTokens: 6 }, (step) => { steps.push(step); });
        assert.deepEqual(greedy.decoderTokens.map((t) => t.id), c.greedy);
        assert.equal(steps.length, c.greedy.length - 1);
        const [L, H, rows, keys] = greedy.crossAttentions.shape;
        assert.deepEqual([rows, keys], [c.greedy.length - 1, S]);
        steps.forEach((step, i) => {  // each step's row is row i of the whole decoder's cross-attention
          assert.equal(step.index, i);
          assert.equal(step.token, c.greedy[i + 1]);
          assert.deepEqual(step.crossAttention.shape, [L, H, S]);
          const whole = [];
          for (let lh = 0; lh < L * H; lh += 1) whole.push(...greedy.crossAttentions.data.subarray((lh * rows + i) * S, (lh * rows + i + 1) * S));
          assert.ok(maxAbsDiff(step.crossAttention.data, whole) < 1e-5);
        });
        const beam = model.translate(c.ids, { beams: 3, maxNewTokens: 6 }, () => assert.fail('beam search reports no steps'));
        assert.deepEqual(beam.decoderTokens.map((t) => t.id), c.beam3);
      }
    } finally {
      model.dispose();
    }
  });
}

test('translate: a false return from onStep stops after that token', async () => {
  const model = await engine.loadModel(modelFiles('marian-l2-h4-f32'));
  try {
    let calls = 0;
    const r = model.translate([40, 41, 0], { maxNewTokens: 6 }, () => { calls += 1; return calls < 2; });
    assert.equal(calls, 2);
    assert.equal(r.decoderTokens.length, 3);
  } finally {
    model.dispose();
  }
});

// The neuron view's vectors: a traced head's q and k (WASM) give the PyTorch golden weights of that head
// through softmax(q·kᵀ/√d_k), for the encoder, the decoder (causal) and cross-attention.
test('a traced encoder, decoder or cross-attention head\'s q and k give the PyTorch weights', async () => {
  const name = 'marian-l2-h4-f32';
  const model = await engine.loadModel(modelFiles(name));
  try {
    const c = golden(name).cases[0];
    const [S, T] = [c.ids.length, c.decoder_ids.length];
    for (const [part, key, rows, keys] of [['encoder', 'encoder_attentions', S, S], ['decoder', 'decoder_attentions', T, T], ['cross', 'cross_attentions', T, S]]) {
      for (const [layer, head] of [[0, 0], [1, 3]]) {
        const { trace } = model.forward(c.ids, c.decoder_ids, { trace: { part, layer, head } });
        const dk = trace.q.shape[1];
        assert.deepEqual([trace.q.shape[0], trace.k.shape[0], trace.k.shape[1]], [rows, keys, dk], part);
        for (let q = 0; q < rows; q += 1) {
          const last = part === 'decoder' ? q : keys - 1;
          const scaled = Array.from({ length: last + 1 }, (_, k) => {
            let dot = 0;
            for (let d = 0; d < dk; d += 1) dot += trace.q.data[q * dk + d] * trace.k.data[k * dk + d];
            return dot / Math.sqrt(dk);
          });
          const top = Math.max(...scaled);
          const sum = scaled.reduce((total, x) => total + Math.exp(x - top), 0);
          scaled.forEach((x, k) => assert.ok(Math.abs(Math.exp(x - top) / sum - c[key][layer][head][q][k]) < 1e-5, `${part} L${layer} H${head} [${q}][${k}]`));
        }
        // The same trace as a text model's (one request, one response shape): the head named, and its weights the golden's.
        assert.deepEqual([trace.part, trace.layer, trace.head, trace.weights.shape], [part, layer, head, [rows, keys]]);
        for (let q = 0; q < rows; q += 1) {
          for (let k = 0; k < keys; k += 1) assert.ok(Math.abs(trace.weights.data[q * keys + k] - c[key][layer][head][q][k]) < 1e-5);
        }
      }
    }
    // Options of the one request that belong to other models get the core's messages.
    assert.throws(() => model.forward(c.ids, c.decoder_ids, { typeIds: [0] }), /are for BERT/);
    assert.throws(() => model.forward(c.ids, c.decoder_ids, { trace: { layer: 0, head: 0 } }), /traced head 0:0 names no part: an encoder-decoder's heads are encoder, decoder or cross heads/);
    assert.throws(() => model.forward(c.ids, c.decoder_ids, { trace: { part: 'cross', layer: 2, head: 0 } }), /traced cross head 2:0 \(layer:head, from 0\) does not exist: that part has 2 layers of 4 heads/);
    assert.throws(() => model.forward(c.ids, c.decoder_ids, { trace: { part: 'both', layer: 0, head: 0 } }), /trace.part must be encoder, decoder or cross, not 'both'/);
  } finally {
    model.dispose();
  }
});

// T5: the learned relative position bias by distance equals the golden's (transformers' buckets over
// relative_attention_bias, -150..150 past every bucket boundary), and a traced head's scores are q·k
// unscaled plus its bias, which is that table read at key - query: softmax gives the PyTorch weights.
test('T5: the position bias by distance and in a traced head equal the PyTorch reference', async () => {
  for (const name of ['t5-l2-h4-relu-tied-f32', 't5-gated-gelu-dkv12-untied-bf16']) {
    const model = await engine.loadModel(modelFiles(name));
    try {
      const config = JSON.parse(modelFiles(name).config);
      // Parameters as transformers counts them: every stored tensor (the tied lm_head is not stored).
      const weights = modelFiles(name).weights;
      const header = JSON.parse(weights.subarray(8, 8 + Number(weights.readBigUInt64LE(0))).toString('utf8'));
      delete header.__metadata__;
      assert.equal(model.config.parameters, Object.values(header).reduce((sum, t) => sum + t.shape.reduce((a, x) => a * x, 1), 0));
      assert.deepEqual(model.config.relativePositions, { buckets: config.relative_attention_num_buckets, maxDistance: config.relative_attention_max_distance });
      const c = golden(name).cases[3];  // the long source: distances past 16, 32 and 64
      const reference = golden(name).cases[0];
      for (const [part, key, rows] of [['encoder', 'encoder_attentions', c.ids.length], ['decoder', 'decoder_attentions', c.decoder_ids.length]]) {
        const want = reference[`${part}_position_bias`];
        const byDistance = model.positionBias(part, want.span);
        assert.deepEqual(Array.from(byDistance.buckets), want.buckets, `${name} ${part} buckets`);
        assert.ok(maxAbsDiff(byDistance.bias.data, flat(want.bias)) < 1e-6, `${name} ${part} bias`);
        const H = byDistance.bias.shape[0];
        const { trace } = model.forward(c.ids, c.decoder_ids, { trace: { part, layer: 1, head: H - 1 } });
        assert.equal(trace.divisor, 1, 'T5 leaves q·k unscaled');
        const dk = trace.q.shape[1];
        for (let q = 0; q < rows; q += 1) {
          const last = part === 'decoder' ? q : rows - 1;
          const scores = Array.from({ length: last + 1 }, (_, k) => {
            const bias = trace.bias.data[q * rows + k];
            assert.equal(bias, byDistance.bias.data[(H - 1) * (2 * want.span + 1) + want.span + k - q], `bias at ${q}, ${k}`);
            let dot = 0;
            for (let d = 0; d < dk; d += 1) dot += trace.q.data[q * dk + d] * trace.k.data[k * dk + d];
            return dot + bias;
          });
          const top = Math.max(...scores);
          const sum = scores.reduce((total, x) => total + Math.exp(x - top), 0);
          scores.forEach((x, k) => assert.ok(Math.abs(Math.exp(x - top) / sum - c[key][1][H - 1][q][k]) < 1e-5, `${name} ${part} [${q}][${k}]`));
        }
      }
      // Without max_length in its config a translation stops after transformers' default of 20 tokens.
      assert.equal(config.max_length, undefined);
      const translated = model.translate(c.ids);
      assert.ok(translated.decoderTokens.length - 1 <= 20, `${translated.decoderTokens.length - 1} tokens written`);
      const { trace: cross } = model.forward(c.ids, c.decoder_ids, { trace: { part: 'cross', layer: 0, head: 0 } });
      assert.equal(cross.bias, undefined, 'cross-attention has no position bias');
      assert.throws(() => model.positionBias('cross', 4), /only the encoder's and the decoder's self-attention have a position bias/);
      assert.throws(() => model.positionBias('encoder', 5000), /the span of distances must be within 0..4096/);
    } finally {
      model.dispose();
    }
  }
  const marian = await engine.loadModel(modelFiles('marian-l2-h4-f32'));
  try {
    assert.equal(marian.config.relativePositions, undefined);
    assert.throws(() => marian.positionBias('encoder', 4), /model_type "marian" has no relative position bias/);
  } finally {
    marian.dispose();
  }
});

// The decoder's logit lens in WASM against tests/golden/make_lens_goldens.py's float64 reference (lens.json).
test('the decoder\'s logit lens equals the float64 reference', async () => {
  for (const name of ['marian-l2-h4-f32', 'bart-l2-h4-bf16', 't5-gated-gelu-dkv12-untied-bf16']) {
    const model = await engine.loadModel(modelFiles(name));
    try {
      const reference = JSON.parse(readFileSync(fileURLToPath(new URL(`../golden/models/${name}/lens.json`, import.meta.url)), 'utf8'));
      for (const c of reference.cases) {
        const { lens } = model.forward(c.ids, c.decoder_ids, { lens: 5 });
        const [rows, T, k] = lens.shape;
        assert.deepEqual([rows, T, k], [model.config.decoderLayers + 1, c.decoder_ids.length, 5]);
        c.layers.forEach((row, r) => row.forEach((cell, t) => {
          for (let i = 0; i < k; i += 1) {
            const at = (r * T + t) * k + i;
            const p = cell.probabilities;
            assert.ok(Math.abs(lens.probabilities[at] - p[i]) <= 1e-5, `${name} row ${r} position ${t} rank ${i}`);
            const tied = (i > 0 && p[i - 1] - p[i] < 1e-5) || p[i] - p[i + 1] < 1e-5;
            if (!tied) assert.equal(lens.ids[at], cell.ids[i], `${name} row ${r} position ${t} rank ${i}`);
          }
        }));
      }
    } finally {
      model.dispose();
    }
  }
});

test('encoder-decoder errors are readable, never a crash', async () => {
  const model = await engine.loadModel(modelFiles('bart-l2-h4-bf16'));
  try {
    assert.throws(() => model.forward([], [256]), (e) => e instanceof AttnplayError && /no source tokens/.test(e.message));
    assert.throws(() => model.forward([1, 99999]), /source token id 99999 at position 1 is outside the vocabulary/);
    assert.throws(() => model.translate([1, 0], { beams: 0 }), /beams must be from 1 to 64/);
    assert.throws(() => model.run(''), /the source text is empty/);
  } finally {
    model.dispose();
  }
  assert.equal(engine.loadedModels(), 0);
  const files = modelFiles('marian-l2-h4-f32');
  const config = JSON.parse(files.config);
  config.decoder_start_token_id = null;
  await assert.rejects(engine.loadModel({ ...files, config: JSON.stringify(config) }), /"decoder_start_token_id" is null and there is no "bos_token_id"/);
  await assert.rejects(engine.loadModel({ ...files, config: JSON.stringify({ ...JSON.parse(files.config), model_type: 'umt5' }) }),
    /"umt5" is not supported: its layers each learn their own relative position bias/);
  await assert.rejects(engine.loadModel({ ...files, config: JSON.stringify({ ...JSON.parse(files.config), model_type: 't5' }) }),
    /tensor 'shared.weight' \(or 'encoder.embed_tokens.weight'\) is missing: not a t5 checkpoint/);
});

test('CLI: attention and translate print the engine\'s numbers', async () => {
  const name = 'bart-l2-h4-bf16';
  const c = golden(name).cases[0];
  const r = runCli(['attention', '--model', dirOf(name), '--ids', c.ids.join(','), '--decoder-ids', c.decoder_ids.join(',')]);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.model_type, 'bart');
  assert.deepEqual(out.encoder_tokens.map((t) => t.id), c.ids);
  assert.deepEqual(out.decoder_tokens.map((t) => t.id), c.decoder_ids);
  for (const key of ['encoder_attentions', 'decoder_attentions', 'cross_attentions']) {
    assert.ok(maxAbsDiff(flat(out[key]), flat(c[key])) < 1e-5, key);
  }
  const text = runCli(['attention', '--model', dirOf(name), '--text', c.source, '--target', c.target]);
  assert.equal(text.status, 0, text.stderr);
  const fromText = JSON.parse(text.stdout);
  assert.deepEqual(fromText.decoder_tokens.map((t) => t.id), c.decoder_ids);
  assert.equal(fromText.cross_attentions[0][0].length, c.decoder_ids.length);

  const model = await engine.loadModel(modelFiles(name));
  try {
    for (const beams of [1, 3]) {
      const t = runCli(['translate', '--model', dirOf(name), '--text', c.source, '--beams', String(beams), '--max-new-tokens', '5', '--all-layers']);
      assert.equal(t.status, 0, t.stderr);
      const line = JSON.parse(t.stdout.trim());
      const ours = model.translate(c.source, { beams, maxNewTokens: 5 });
      assert.equal(line.source, c.source);
      assert.equal(line.translation, ours.text);
      assert.deepEqual(line.source_tokens, ours.sourceTokens.map((tok) => tok.display));
      assert.deepEqual(line.target_tokens, ours.decoderTokens.slice(1).map((tok) => tok.display));
      assert.ok(maxAbsDiff(flat(line.cross_attentions), ours.crossAttentions.data) < 1e-5);
    }
  } finally {
    model.dispose();
  }
  const usage = runCli(['attention', '--model', dirOf(name), '--ids', '1,2', '--format', 'npy', '--out', '/dev/null']);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /encoder-decoder takes --format json only/);
  const notSeq2Seq = runCli(['attention', '--model', dirOf('gpt2-l1-h1-k64-f32'), '--ids', '1,2', '--decoder-ids', '3']);
  assert.equal(notSeq2Seq.status, 2);
  assert.match(notSeq2Seq.stderr, /--target and --decoder-ids are for encoder-decoder models/);
});
