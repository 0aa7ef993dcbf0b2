// Leak check of the bindings: 10,000 attention calls (and failing calls) must
// leave the WASM heap, its malloc'd bytes and the live JS handles unchanged.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { randomSource } from './reference.mjs';

test('10,000 calls do not grow the WASM heap or leak handles', async () => {
  const engine = await createEngine();
  const rand = randomSource(1);
  const spec = { x: rand.matrix(12, 16), wq: rand.matrix(16, 16), wk: rand.matrix(16, 16), wv: rand.matrix(16, 16), heads: 4, causal: true };
  const call = (i) => {
    engine.attention(spec);
    if (i % 10 === 0) assert.throws(() => engine.attention({ ...spec, heads: 5 }));
  };
  for (let i = 0; i < 100; i += 1) call(i); // warm up allocator pools
  const memory = engine.memoryBytes();
  const inUse = engine.heapBytesInUse();
  for (let i = 0; i < 10000; i += 1) call(i);
  assert.equal(engine.heapBytesInUse(), inUse, 'malloc bytes in use changed');
  assert.equal(engine.memoryBytes(), memory, 'WASM memory grew');
  assert.equal(engine.liveHandles(), 0, 'JS handles leaked');
});
