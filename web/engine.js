// The attnplay engine: the only module that touches the raw WASM module.
// It loads the Emscripten build (wasm/attnplay_core.mjs next to this file, in
// the browser, a worker or Node), converts inputs to the { data, shape }
// matrices the bindings take, and turns binding errors into AttnplayError.
// Not here: drawing, page state, anything that knows about the DOM.

/** Error raised for invalid input or a failure inside the C++ core. */
export class AttnplayError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AttnplayError';
  }
}

const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null;

/**
 * A row-major float32 matrix as the core takes and returns it.
 * @typedef {{ data: Float32Array, shape: [number, number] }} Matrix
 */

/** Accepts a Matrix or nested number arrays (rows) and returns a Matrix. */
export function toMatrix(value, name = 'matrix') {
  if (value && value.data && value.shape) {
    return { data: value.data instanceof Float32Array ? value.data : Float32Array.from(value.data), shape: value.shape };
  }
  if (!Array.isArray(value) || value.length === 0 || !Array.isArray(value[0])) {
    throw new AttnplayError(`${name}: expected { data, shape } or a non-empty array of rows`);
  }
  const rows = value.length;
  const cols = value[0].length;
  const data = new Float32Array(rows * cols);
  value.forEach((row, r) => {
    if (!Array.isArray(row) || row.length !== cols) {
      throw new AttnplayError(`${name}: row ${r} does not have ${cols} numbers`);
    }
    data.set(row, r * cols);
  });
  return { data, shape: [rows, cols] };
}

/** Rows of a Matrix as plain arrays (for display and tests). */
export function toRows(matrix) {
  const [rows, cols] = matrix.shape;
  return Array.from({ length: rows }, (_, r) => Array.from(matrix.data.subarray(r * cols, (r + 1) * cols)));
}

function unwrap(result) {
  if (result && typeof result.error === 'string') throw new AttnplayError(result.error);
  return result;
}

const MATRIX_KEYS = ['x', 'q', 'k', 'v', 'wq', 'wk', 'wv', 'wo'];

function attentionSpec(spec) {
  const out = { ...spec };
  for (const key of MATRIX_KEYS) {
    if (spec[key] !== undefined) out[key] = toMatrix(spec[key], key);
  }
  if (spec.keyMask !== undefined) out.keyMask = Uint8Array.from(spec.keyMask, (v) => (v ? 1 : 0));
  return out;
}

export class Engine {
  #module;

  constructor(module) {
    this.#module = module;
    /** Version of the C++ core. */
    this.version = module.version();
    /** Whether the WASM build uses SIMD128. */
    this.simd = module.simdEnabled();
  }

  /**
   * Attention of given queries, keys and values, every step kept.
   * spec: { q [Tq,dk], k [Tk,dk], v [Tk,dv], scale = true, temperature = 1, causal = false, keyMask? [Tk] }
   * returns { q, k, v, scores, scaled, masked, weights, output, divisor }
   */
  attend(spec) {
    return unwrap(this.#module.attend(attentionSpec(spec)));
  }

  /**
   * Multi-head self-attention with every intermediate.
   * spec: { x [T,d], wq [d,H·dk], wk [d,H·dk], wv [d,H·dv], wo? [H·dv,dout],
   *         heads = 1, scale = true, temperature = 1, causal = false, keyMask? [T] }
   * returns { q, k, v, heads: [{ q, k, v, scores, scaled, masked, weights, output, divisor }], concat, output }
   */
  attention(spec) {
    return unwrap(this.#module.attention(attentionSpec(spec)));
  }

  /** softmax(X·Xᵀ)·X (scale defaults to false here, as in the tutorials). */
  parameterFreeAttention(spec) {
    return unwrap(this.#module.parameterFreeAttention(attentionSpec({ scale: false, ...spec })));
  }

  /** Sinusoidal positional encoding, [positions, d]. */
  positionalEncoding(positions, d) {
    return unwrap(this.#module.positionalEncoding(positions, d));
  }

  /** Layer normalisation of each row: { x, gamma, beta, eps = 1e-5 }. */
  layerNorm({ x, gamma, beta, eps }) {
    return unwrap(this.#module.layerNorm({ x: toMatrix(x, 'x'), gamma: Float32Array.from(gamma), beta: Float32Array.from(beta), eps }));
  }

  /** GELU of every entry: { x, approximation: 'erf' | 'tanh' }. */
  gelu({ x, approximation = 'erf' }) {
    return unwrap(this.#module.gelu({ x: toMatrix(x, 'x'), approximation }));
  }

  /**
   * Matrix product: { a [m,k], b [k,n] } -> A·B; with transposeB: true,
   * b [n,k] -> A·Bᵀ; with bias [n]: A·B + bias on every row.
   */
  matmul({ a, b, transposeB = false, bias }) {
    const spec = { a: toMatrix(a, 'a'), b: toMatrix(b, 'b'), transposeB };
    if (bias !== undefined) spec.bias = Float32Array.from(bias);
    return unwrap(this.#module.matmul(spec));
  }

  /**
   * A product whose operands stay inside the WASM module, for timing the
   * kernel alone: { a, b, transposeB? } -> { run(), result(), dispose() }.
   * run() recomputes A·B (or A·Bᵀ); call dispose() when done.
   */
  residentProduct({ a, b, transposeB = false }) {
    const product = unwrap(this.#module.residentProduct({ a: toMatrix(a, 'a'), b: toMatrix(b, 'b'), transposeB }));
    return {
      run: () => product.run(),
      result: () => product.result(),
      dispose: () => product.delete(),
    };
  }

  /** Threads the matrix products use (1 in the single-threaded build). */
  get threads() {
    return this.#module.threadCount();
  }

  /** Caps the threads used (1 to the pool size); returns the number now used. */
  setThreads(n) {
    return this.#module.setThreadCount(n);
  }

  /** Bytes malloc'd in the WASM heap now (diagnostics and leak tests). */
  heapBytesInUse() {
    return this.#module.heapBytesInUse();
  }

  /** Size of the WASM memory in bytes. */
  memoryBytes() {
    return this.#module.HEAPU8.length;
  }

  /** Number of live JS handles held by the bindings (should stay 0 between calls). */
  liveHandles() {
    return this.#module.count_emval_handles();
  }
}

/**
 * Loads the WASM module and returns an Engine.
 * options.threads: 'auto' (default) loads the pthreads build when the page is
 *   cross-origin isolated (SharedArrayBuffer available), the single-threaded
 *   build otherwise; true or false forces one (true also works in Node).
 * options.wasmBinary: the .wasm bytes, if the caller has them already.
 */
export async function createEngine(options = {}) {
  const threads = options.threads ?? 'auto';
  const useThreads = threads === true || (threads === 'auto' && globalThis.crossOriginIsolated === true);
  const name = useThreads ? 'attnplay_core_mt' : 'attnplay_core';
  const wasmUrl = new URL(`./wasm/${name}.wasm`, import.meta.url);
  const moduleOptions = {};
  if (options.wasmBinary) {
    moduleOptions.wasmBinary = options.wasmBinary;
  } else if (isNode) {
    // Emscripten's web loader would fetch() a file path, which Node cannot do.
    const { readFile } = await import('node:fs/promises');
    moduleOptions.wasmBinary = await readFile(wasmUrl);
  } else {
    moduleOptions.locateFile = (path) => new URL(path, wasmUrl).href;
  }
  const nodeWorkers = useThreads && isNode ? await installNodeWorkers() : null;
  const { default: createModule } = await import(`./wasm/${name}.mjs`);
  const module = await createModule(moduleOptions);
  // The pool's workers must not keep a Node process alive once it is done.
  if (nodeWorkers) for (const worker of nodeWorkers) worker.unref();
  return new Engine(module);
}

/**
 * Node 20 has no Web Worker and no navigator; the pthreads build starts its
 * workers with new Worker(url) and sizes its pool from
 * navigator.hardwareConcurrency. Installs a minimal Worker on top of
 * worker_threads and that navigator field (once), and returns the list of
 * workers it creates.
 */
async function installNodeWorkers() {
  if (globalThis.Worker?.attnplayNodeWorkers) return globalThis.Worker.attnplayNodeWorkers;
  const threads = await import('node:worker_threads');
  const os = await import('node:os');
  globalThis.navigator ??= { hardwareConcurrency: os.availableParallelism() };
  // Runs inside the worker thread: gives the Emscripten worker script the
  // self/postMessage/onmessage it expects, then loads it.
  const bootstrap = `
    const { parentPort, workerData } = require('node:worker_threads');
    globalThis.self = globalThis;
    globalThis.postMessage = (message, transfer) => parentPort.postMessage(message, transfer);
    const early = [];
    let loaded = false;
    parentPort.on('message', (data) => (loaded ? self.onmessage({ data }) : early.push(data)));
    import(workerData.url).then(() => {
      loaded = true;
      for (const data of early) self.onmessage({ data });
    });`;
  const created = [];
  class NodeWorker {
    #thread;
    constructor(url) {
      this.#thread = new threads.Worker(bootstrap, { eval: true, workerData: { url: String(url) } });
      this.#thread.on('message', (data) => this.onmessage?.({ data }));
      this.#thread.on('error', (error) => this.onerror?.(error));
      created.push(this);
    }
    postMessage(message, transfer) {
      this.#thread.postMessage(message, transfer);
    }
    terminate() {
      return this.#thread.terminate();
    }
    unref() {
      this.#thread.unref();
    }
    static attnplayNodeWorkers = created;
  }
  globalThis.Worker = NodeWorker;
  return created;
}
