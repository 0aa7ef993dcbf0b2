// The model runtime in WASM through the JS engine (dist/engine/engine.js): every
// golden checkpoint against PyTorch (attention within 1e-5 absolute; logits,
// hidden states, q/k/v/scores within 1e-4 relative; RoPE families: q and k
// before the rotation within 1e-5 relative), loading from buffers,
// from Files and from a base URL over HTTP with progress, and readable errors.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { AttnplayError, createEngine } from '../../dist/engine/engine.js';
import { MODELS, flat, golden, maxAbsDiff, modelFiles, modelsDir, relativeError } from './model-golden.mjs';

let engine;
let server;
let baseUrl;

before(async () => {
  engine = await createEngine();
  server = createServer((request, response) => {
    try {
      const body = readFileSync(new URL(`.${decodeURIComponent(request.url)}`, modelsDir));
      response.writeHead(200, { 'content-length': body.length }).end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${server.address().port}/`;
});
after(() => server?.close());

for (const name of MODELS) {
  test(`${name}: WASM forward matches PyTorch`, async (t) => {
    const model = await engine.loadModel(modelFiles(name));
    let worst = 0;
    try {
      for (const c of golden(name).cases) {
        const T = c.ids.length;
        const bert = !model.config.causal; // BERT or DistilBERT: logits at [MASK] positions
        const options = { typeIds: c.type_ids, trace: { layer: c.trace.layer, head: c.trace.head }, hiddenStates: true, topK: 2 };
        if (c.logits) options.logits = true;
        if (bert && c.logits) options.maskPositions = c.ids.map((_, i) => i);
        const r = model.forward(c.ids, options);
        assert.deepEqual(r.attentions.shape, [model.config.layers, model.config.heads, T, T]);
        const attentionError = maxAbsDiff(r.attentions.data, flat(c.attentions));
        assert.ok(attentionError < 1e-5, `attention differs by ${attentionError}`);
        worst = Math.max(worst, attentionError);
        for (const key of ['q', 'k', 'v', 'scores']) {
          const e = relativeError(r.trace[key].data, flat(c.trace[key]));
          assert.ok(e < 1e-4, `trace ${key} differs by ${e}`);
        }
        // RoPE families: q and k before the rotation, and the rotation's frequencies.
        assert.equal(r.trace.rotary !== undefined, c.trace.rotary !== undefined, 'rotary trace present exactly for RoPE models');
        if (c.trace.rotary) {
          const dk = r.trace.q.shape[1];
          for (const key of ['q', 'k']) {
            assert.deepEqual(r.trace.rotary[key].shape, [T, dk]);
            const e = relativeError(r.trace.rotary[key].data, flat(c.trace.rotary[key]));
            assert.ok(e < 1e-5, `${key} before RoPE differs by ${e}`);
          }
          assert.ok(r.trace.rotary.inverseFrequencies instanceof Float64Array);
          assert.ok(maxAbsDiff(r.trace.rotary.inverseFrequencies, c.trace.rotary.inverse_frequencies) < 1e-9);
          assert.equal(r.trace.rotary.firstPosition, 0);
        }
        assert.deepEqual(r.hiddenStates.shape, [model.config.layers + 1, T, model.config.width]);
        assert.ok(relativeError(r.hiddenStates.data, flat(c.hidden_states)) < 1e-4);
        if (c.logits) {
          assert.deepEqual(r.logits.shape, [T, model.config.vocabSize]);
          const e = relativeError(r.logits.data, flat(c.logits));
          assert.ok(e < 1e-4, `logits differ by ${e}`);
          assert.deepEqual(r.topK.shape, [T, 2]);
          c.logits.forEach((row, i) => assert.equal(r.topK.ids[2 * i], row.indexOf(Math.max(...row))));
          if (!bert) {  // the output layer at some positions alone: the same rows
            const some = model.forward(c.ids, { logits: true, topK: 2, predictionPositions: [0, -1] });
            assert.deepEqual(Array.from(some.predictionPositions), [0, T - 1]);
            assert.deepEqual(some.logits.shape, [2, model.config.vocabSize]);
            assert.ok(relativeError(some.logits.data, flat([c.logits[0], c.logits[T - 1]])) < 1e-4);
            assert.deepEqual(Array.from(some.topK.ids), [...r.topK.ids.slice(0, 2), ...r.topK.ids.slice(2 * T - 2)]);
          }
        }
      }
      t.diagnostic(`max |attention - PyTorch float64| ${worst.toExponential(2)} over ${golden(name).cases.length} text(s)`);
    } finally {
      model.dispose();
    }
  });
}

test('model.config describes the architecture', async () => {
  const model = await engine.loadModel(modelFiles('bert-l2-h2-k32-f32'));
  assert.deepEqual({ ...model.config }, {
    modelType: 'bert', layers: 2, heads: 2, kvHeads: 2, width: 64, headWidth: 32, inner: 128, positions: 24,
    vocabSize: 28, typeVocabSize: 2, segmentInput: true, causal: false, slidingWindow: 0, slidingLayers: null, hasMlmHead: true,
    maskToken: '[MASK]', parameters: 74844,
  });
  assert.equal(JSON.parse(model.tokenizerJson).model.type, 'WordPiece');
  model.dispose();
});

test('loading from a base URL reports progress up to the total bytes', async () => {
  const name = 'gpt2-l1-h1-k64-f32';
  const events = [];
  const model = await engine.loadModel(`${baseUrl}${name}`, { onProgress: (e) => events.push(e) });
  const dir = new URL(`${name}/`, modelsDir);
  const total = ['config.json', 'model.safetensors', 'tokenizer.json'].reduce((n, f) => n + statSync(new URL(f, dir)).size, 0);
  assert.ok(events.length >= 3);
  assert.ok(events.every((e) => e.total === total));
  assert.ok(events.every((e, i) => i === 0 || e.loaded > events[i - 1].loaded));
  assert.equal(events.at(-1).loaded, total);
  assert.ok(events.some((e) => e.file === 'model.safetensors'));
  const c = golden(name).cases[0];
  assert.ok(maxAbsDiff(model.forward(c.ids).attentions.data, flat(c.attentions)) < 1e-5);
  model.dispose();

  await assert.rejects(engine.loadModel(`${baseUrl}no-such-model/`), /HTTP 404/);
});

test('a tokenizer the core cannot read is refused before the weights are read, and their download is cancelled', async () => {
  const f = modelFiles('gpt2-l1-h1-k64-f32');
  let pulled = false;
  let cancelled = false;
  const body = new ReadableStream({ pull() { pulled = true; }, cancel() { cancelled = true; } }, { highWaterMark: 0 });
  const weights = new Response(body, { headers: { 'content-length': String(f.weights.length) } });
  const tokenizer = { ...JSON.parse(f.tokenizer), normalizer: { type: 'ByteLevel' } };
  await assert.rejects(engine.loadModel({ config: f.config, weights, tokenizer: JSON.stringify(tokenizer) }),
    (e) => e instanceof AttnplayError && /normalizer: type "ByteLevel" is not supported/.test(e.message));
  assert.equal(pulled, false, 'no weight byte was asked for');
  assert.equal(cancelled, true, 'the weights download was cancelled');
  assert.equal(engine.loadedModels(), 0);
});

// model.safetensors bytes with one more F32 tensor [2] named `name`.
function withExtraTensor(weights, name) {
  const n = Number(weights.readBigUInt64LE(0));
  const header = JSON.parse(weights.subarray(8, 8 + n).toString('utf8'));
  const data = weights.subarray(8 + n);
  header[name] = { dtype: 'F32', shape: [2], data_offsets: [data.length, data.length + 8] };
  const text = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(text.length));
  return Buffer.concat([length, text, data, Buffer.alloc(8)]);
}

test('the buffers exports carry load (each family\'s known extras); any other unused tensor is refused', async () => {
  const harmless = [
    ['bert-l2-h2-k32-f32', 'bert.embeddings.position_ids'], ['distilbert-l2-h4-k8-f32', 'distilbert.embeddings.position_ids'],
    ['roberta-l2-h2-k16-f32', 'roberta.embeddings.position_ids'], ['roberta-l2-h2-k16-f32', 'lm_head.decoder.bias'],
    ['llama-gqa-llama3-bf16', 'model.layers.0.self_attn.rotary_emb.inv_freq'], ['llama-gqa-llama3-bf16', 'lm_head.weight'],
    ['pythia-parallel-f16', 'gpt_neox.layers.0.attention.masked_bias'], ['gpt2-l2-h12-k8-f16', 'transformer.h.1.attn.masked_bias'],
  ];
  for (const [name, extra] of harmless) {
    const f = modelFiles(name);
    const model = await engine.loadModel({ ...f, weights: withExtraTensor(f.weights, extra) });
    const c = golden(name).cases[0];
    assert.ok(maxAbsDiff(model.forward(c.ids, { typeIds: model.config.segmentInput ? c.type_ids : undefined }).attentions.data, flat(c.attentions)) < 1e-5, `${name} + ${extra}`);
    model.dispose();
  }
  const unexpected = [
    ['llama-gqa-llama3-bf16', 'model.layers.x.self_attn.rotary_emb.inv_freq'], ['llama-gqa-llama3-bf16', 'model.layers.0.self_attn.rotary_emb.inv_freq2'],
    ['llama-mqa-bias-linear-f32', 'model.lm_head.weight'], ['bert-l2-h2-k32-f32', 'pooler.dense.weight'],
  ];
  for (const [name, extra] of unexpected) {
    const f = modelFiles(name);
    await assert.rejects(engine.loadModel({ ...f, weights: withExtraTensor(f.weights, extra) }),
      new RegExp(`1 unexpected tensor\\(s\\) for this architecture: '${extra.replaceAll('.', '\\.')}'`), `${name} + ${extra}`);
  }
});

test('loading from Files (a dropped folder) matches by name; pickle-only folders are refused', async () => {
  const name = 'bert-l1-h3-k8-bf16';
  const f = modelFiles(name);
  const files = [new File([f.tokenizer], 'tokenizer.json'), new File([f.weights], 'model.safetensors'), new File([f.config], 'config.json')];
  const model = await engine.loadModel(files);
  const c = golden(name).cases[0];
  assert.ok(maxAbsDiff(model.forward(c.ids, { typeIds: c.type_ids }).attentions.data, flat(c.attentions)) < 1e-5);
  model.dispose();
  await assert.rejects(engine.loadModel([new File([f.config], 'config.json'), new File(['x'], 'pytorch_model.bin')]),
    (e) => e instanceof AttnplayError && /pickle.*safe_serialization=True/.test(e.message));
  await assert.rejects(engine.loadModel([new File([f.config], 'config.json')]), /model.safetensors is missing/);
});

test('bad requests and disposed models raise AttnplayError; the engine stays usable', async () => {
  {
    const gpt = await engine.loadModel(modelFiles('gpt2-l1-h1-k64-f32'));
    assert.throws(() => gpt.forward([1, 2, 3], { topK: 1, predictionPositions: [-4] }),
      (e) => e instanceof AttnplayError && /prediction position -4 is outside the 3 positions run/.test(e.message));
    assert.throws(() => gpt.forward([1, 2, 3], { topK: 1, predictionPositions: [2, 1] }), /increasing order/);
    assert.throws(() => gpt.forward([1, 2, 3], { tokenLoss: true, predictionPositions: [-1] }), /every position/);
    gpt.dispose();
    const bert = await engine.loadModel(modelFiles('bert-l2-h2-k32-f32'));
    assert.throws(() => bert.forward([2, 5, 3], { topK: 1, predictionPositions: [0] }), /prediction positions are for causal models/);
    bert.dispose();
  }
  const model = await engine.loadModel(modelFiles('gpt2-l1-h1-k64-f32'));
  const cases = [
    [[], {}, /no tokens to run/],
    [[1, 257], {}, /token id 257 at position 1 is outside the vocabulary/],
    [[1, 2.5], {}, /ids: 2.5 at index 1 is not a 32-bit integer/],
    [Array(17).fill(1), {}, /17 tokens are more than the model's 16 positions/],
    [[1, 2], { trace: { layer: 3, head: 0 } }, /does not exist/],
    [[1, 2], { maskPositions: [0] }, /mask positions are for encoders/],
    [[1, 2], { trace: { part: 'cross', layer: 0, head: 0 } }, /the traced head names the part 'cross', but GPT-2 has one attention/],
    [[1, 2], { ablate: [{ part: 'encoder', layer: 0, head: 0 }] }, /an ablated head names the part 'encoder'/],
    [[1, 2], { sourceIds: [1] }, /source ids are for encoder-decoders/],
  ];
  for (const [ids, options, message] of cases) {
    assert.throws(() => model.forward(ids, options), (e) => e instanceof AttnplayError && message.test(e.message));
  }
  const r = model.forward([1, 2, 3], { topK: 5 });
  assert.deepEqual(r.topK.shape, [3, 5]);
  for (let i = 0; i < 3; i += 1) {
    const p = r.topK.probabilities.subarray(5 * i, 5 * i + 5);
    assert.ok(p.every((v, j) => j === 0 || v <= p[j - 1]));
  }
  model.dispose();
  assert.equal(model.disposed, true);
  assert.throws(() => model.forward([1]), /this model was disposed/);
});
