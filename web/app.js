// Page bootstrap: loads the engine, reports its status, and computes the
// seed's worked example with the WASM core. Not here: the engine internals
// (engine.js) or table rendering (matrix-table.js).
import { createEngine } from './engine.js';
import './matrix-table.js';
import { numpySeedExample } from './presets.js';

const status = document.getElementById('engine-status');

function show(id, matrix, options) {
  document.getElementById(id).show(matrix, options);
}

try {
  const started = performance.now();
  const engine = await createEngine();
  const loadMs = performance.now() - started;
  status.textContent = `Engine loaded: attnplay core ${engine.version}, WASM SIMD ${engine.simd ? 'on' : 'off'}, ${loadMs.toFixed(0)} ms.`;
  status.dataset.state = 'ready';

  const example = numpySeedExample;
  const result = engine.attention(example);
  const head = result.heads[0];
  const labels = example.tokens;
  show('seed-weights', head.weights, { rowLabels: labels, colLabels: labels });
  show('seed-output', result.output, { rowLabels: labels, colLabels: ['0', '1', '2'], digits: 8 });
  document.getElementById('seed-example').hidden = false;
} catch (error) {
  status.textContent = `The engine could not start: ${error.message}`;
  status.dataset.state = 'error';
}
