// Leak check of the model bindings: loading and disposing a model many times
// (and failing loads and forwards in between) leaves the malloc'd bytes of the
// WASM heap, its size and the live JS handles unchanged.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { modelFiles } from './model-golden.mjs';

test('repeated load/forward/dispose does not leak the WASM heap', async () => {
  const engine = await createEngine();
  const files = modelFiles('gpt2-l2-h12-k8-f16');
  const broken = { ...files, config: files.config.replace('"n_head": 12', '"n_head": 7') };
  const cycle = async () => {
    const model = await engine.loadModel(files);
    model.forward([1, 2, 3, 4, 5, 6, 7, 8], { trace: { layer: 1, head: 3 }, hiddenStates: true, topK: 5, logits: true });
    assert.throws(() => model.forward([1, 9999]));
    model.dispose();
    await assert.rejects(engine.loadModel(broken), /not divisible by the number of heads/);
  };
  for (let i = 0; i < 5; i += 1) await cycle(); // warm up allocator pools
  const memory = engine.memoryBytes();
  const inUse = engine.heapBytesInUse();
  for (let i = 0; i < 100; i += 1) await cycle();
  assert.equal(engine.heapBytesInUse(), inUse, 'malloc bytes in use changed');
  assert.equal(engine.memoryBytes(), memory, 'WASM memory grew');
  assert.equal(engine.loadedModels(), 0);
  assert.equal(engine.liveHandles(), 0, 'JS handles leaked');
});
