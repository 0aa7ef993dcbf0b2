// Sharded checkpoints in WASM through the JS engine: a golden model split into
// shards with model.safetensors.index.json loads from buffers ({ config,
// weights: [...], index }), from a dropped folder's Files and from a folder
// URL over HTTP (where model.safetensors is absent), and runs exactly as its
// single file does (itself checked against PyTorch); inconsistent shards get
// the core's messages; the shards' buffers are freed with the model; a
// garbage collection between opening a file and reading it loses nothing.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { AttnplayError, createEngine } from '../../dist/engine/engine.js';
import { flat, golden, maxAbsDiff, modelFiles } from './model-golden.mjs';

// A safetensors file's tensors dealt round-robin into `n` shards:
// -> { index (JSON text), shards: [{ name, bytes }] } in file-name order.
function splitCheckpoint(bytes, n) {
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8'));
  const data = bytes.subarray(8 + headerLength);
  const names = Array.from({ length: n }, (_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`);
  const parts = names.map(() => ({ header: {}, chunks: [], size: 0 }));
  const weightMap = {};
  Object.keys(header).filter((k) => k !== '__metadata__').forEach((name, i) => {
    const part = parts[i % n];
    const [begin, end] = header[name].data_offsets;
    part.header[name] = { ...header[name], data_offsets: [part.size, part.size + end - begin] };
    part.chunks.push(data.subarray(begin, end));
    part.size += end - begin;
    weightMap[name] = names[i % n];
  });
  const shards = parts.map((part, i) => {
    const text = Buffer.from(JSON.stringify(part.header));
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(text.length));
    return { name: names[i], bytes: Buffer.concat([length, text, ...part.chunks]) };
  });
  return { index: JSON.stringify({ metadata: { total_size: data.length }, weight_map: weightMap }), shards };
}

const NAME = 'gpt2-l4-h4-k8-bf16';
const files = modelFiles(NAME);
const { index, shards } = splitCheckpoint(files.weights, 3);
const served = new Map([['config.json', files.config], ['tokenizer.json', files.tokenizer],
  ['model.safetensors.index.json', index], ...shards.map((s) => [s.name, s.bytes])]);

let engine;
let server;
let baseUrl;
before(async () => {
  engine = await createEngine();
  server = createServer((request, response) => {
    // /sharded/FILE: the sharded folder; /config-only/: a folder with config.json alone.
    const [, folder, file] = decodeURIComponent(request.url).split('/');
    const body = folder === 'sharded' || file === 'config.json' ? served.get(file) : undefined;
    if (body === undefined) response.writeHead(404).end();
    else response.writeHead(200, { 'content-length': Buffer.byteLength(body) }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${server.address().port}/sharded/`;
});
after(() => server?.close());

function sameAsSingleFile(model) {
  const c = golden(NAME).cases[0];
  const got = model.forward(c.ids, { logits: true });
  assert.ok(maxAbsDiff(got.attentions.data, flat(c.attentions)) < 1e-5);
  const single = engine.loadModel(files);
  return single.then((reference) => {
    const want = reference.forward(c.ids, { logits: true });
    assert.deepEqual(got.attentions.data, want.attentions.data);
    assert.deepEqual(got.logits.data, want.logits.data);
    reference.dispose();
  });
}

test('a sharded checkpoint loads from buffers, Files and a folder URL and runs as its single file', async () => {
  const fromBuffers = await engine.loadModel({ config: files.config, tokenizer: files.tokenizer, index, weights: shards.map((s) => s.bytes) });
  await sameAsSingleFile(fromBuffers);
  fromBuffers.dispose();
  const before = engine.heapBytesInUse(); // after a first load, so that allocator pools are warm

  const dropped = [...served].map(([name, body]) => new File([body], name));
  const fromFiles = await engine.loadModel(dropped);
  await sameAsSingleFile(fromFiles);
  fromFiles.dispose();

  const events = [];
  const fromUrl = await engine.loadModel(baseUrl, { onProgress: (e) => events.push(e) });
  await sameAsSingleFile(fromUrl);
  fromUrl.dispose();
  const total = Buffer.byteLength(files.config) + Buffer.byteLength(files.tokenizer) + shards.reduce((n, s) => n + s.bytes.length, 0);
  assert.equal(events.at(-1).loaded, total);
  assert.ok(events.every((e) => e.total === total));
  assert.ok(shards.every((s) => events.some((e) => e.file === s.name)));
  assert.equal(engine.heapBytesInUse(), before, 'shard buffers not freed');
});

test('inconsistent or missing shards are refused with the core\'s messages', async () => {
  const weights = shards.map((s) => s.bytes);
  await assert.rejects(engine.loadModel({ config: files.config, index: '{"weight_map": [', weights }),
    (e) => e instanceof AttnplayError && /model.safetensors.index.json: not valid JSON/.test(e.message));
  await assert.rejects(engine.loadModel({ config: files.config, index, weights: weights.slice(0, 2) }),
    /shard 'model-00003-of-00003.safetensors' is missing/);
  await assert.rejects(engine.loadModel({ config: files.config, index, weights: [weights[1], weights[0], weights[2]] }),
    /is in shard 'model-00001-of-00003.safetensors' but model.safetensors.index.json places it in 'model-00002-of-00003.safetensors'/);
  const dropped = [...served].filter(([name]) => name !== shards[1].name).map(([name, body]) => new File([body], name));
  await assert.rejects(engine.loadModel(dropped), /shard 'model-00002-of-00003.safetensors' is missing/);
  served.delete(shards[2].name);
  await assert.rejects(engine.loadModel(baseUrl), /model-00003-of-00003.safetensors: HTTP 404/);
  await assert.rejects(engine.loadModel(new URL('../config-only/', baseUrl)), /model.safetensors nor model.safetensors.index.json: HTTP 404.*pytorch_model.bin/);
  assert.equal(engine.loadedModels(), 0);
});

test('a garbage collection while other files are still being fetched does not empty a fetched body', async () => {
  // Node's fetch cancels the body of a Response that is collected unread: the
  // engine must keep each Response until its body is read. Here every fetch
  // but the first returns only after a full collection.
  setFlagsFromString('--expose-gc');
  const collectGarbage = runInNewContext('gc');
  let fetches = 0;
  const collectingFetch = async (url) => {
    const response = await fetch(url);
    if (fetches++ > 0) {
      collectGarbage();
      await new Promise((resolve) => setTimeout(resolve, 10)); // finalizers run
    }
    return response;
  };
  served.set(shards[2].name, shards[2].bytes); // the test above removed it
  const model = await engine.loadModel(baseUrl, { fetch: collectingFetch });
  await sameAsSingleFile(model);
  model.dispose();
});
