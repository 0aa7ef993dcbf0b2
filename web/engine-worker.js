// Web Worker that owns the engine, so computation never blocks the page.
// Protocol: { id, method, args } -> { id, result } | { id, error: { name, message } }.
// Typed arrays in results are transferred, not copied. Not here: any UI.
import { createEngine } from './engine.js';

const ALLOWED = new Set(['attention', 'attend', 'parameterFreeAttention', 'positionalEncoding', 'layerNorm', 'gelu', 'info']);
const enginePromise = createEngine();

function transferables(value, found = new Set()) {
  if (ArrayBuffer.isView(value)) {
    found.add(value.buffer);
  } else if (value && typeof value === 'object') {
    for (const item of Object.values(value)) transferables(item, found);
  }
  return [...found];
}

self.onmessage = async ({ data: { id, method, args } }) => {
  try {
    if (!ALLOWED.has(method)) throw new Error(`unknown engine method "${method}"`);
    const engine = await enginePromise;
    const result = method === 'info' ? { version: engine.version, simd: engine.simd } : engine[method](...args);
    self.postMessage({ id, result }, transferables(result));
  } catch (error) {
    self.postMessage({ id, error: { name: error.name, message: error.message } });
  }
};
