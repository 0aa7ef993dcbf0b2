// Page bootstrap: starts the engine worker, reports its status, and hosts the
// from-scratch lessons. Not here: the engine (engine.js, engine-worker.js) or
// the lessons themselves (scratch-view.js).
import { getEngineClient } from './engine-client.js';
import './scratch-view.js';

const status = document.getElementById('engine-status');

try {
  const started = performance.now();
  const { version, simd } = await getEngineClient().info();
  const loadMs = performance.now() - started;
  status.textContent = `Engine loaded: attnplay core ${version}, WASM SIMD ${simd ? 'on' : 'off'}, ${loadMs.toFixed(0)} ms.`;
  status.dataset.state = 'ready';
} catch (error) {
  status.textContent = `The engine could not start: ${error.message}`;
  status.dataset.state = 'error';
}
