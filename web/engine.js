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
   * Loads a GPT-2 or BERT model (Hugging Face layout: config.json,
   * model.safetensors, optional tokenizer.json) and returns a Model.
   * source:
   *   - a base URL (string or URL) of the model folder, e.g. 'models/gpt2/';
   *   - { config, weights, tokenizer? }, each an ArrayBuffer, typed array,
   *     Blob/File, URL (fetched) or, for the JSON files, a string of JSON;
   *   - an array or FileList of Files (a dropped folder), matched by name.
   * options.onProgress({ file, loaded, total }): bytes read so far of all
   *   files, total = their sum (null while a size is unknown).
   * options.fetch: the fetch function to use (default: globalThis.fetch).
   * The weights are streamed straight into WASM memory.
   */
  async loadModel(source, options = {}) {
    const files = modelSources(source, (name) => this.#module.pickleCheckpointMessage(name));
    const fetchImpl = options.fetch ?? globalThis.fetch;
    const opened = {};
    await Promise.all(Object.entries(files).map(async ([key, src]) => {
      opened[key] = await openSource(src, MODEL_FILES[key], fetchImpl, key === 'tokenizer', (name) => this.#module.pickleCheckpointMessage(name));
    }));
    const sizes = Object.values(opened).filter(Boolean).map((o) => o.size);
    const total = sizes.every((n) => n != null) ? sizes.reduce((a, b) => a + b, 0) : null;
    let loaded = 0;
    const progress = (file) => (n) => {
      loaded += n;
      options.onProgress?.({ file, loaded, total });
    };
    const config = await readText(opened.config, progress(MODEL_FILES.config));
    const tokenizer = opened.tokenizer ? await readText(opened.tokenizer, progress(MODEL_FILES.tokenizer)) : null;
    const weights = await this.#readIntoHeap(opened.weights, progress(MODEL_FILES.weights));
    try {
      const { handle, config: modelConfig } = unwrap(this.#module.loadModel(config, weights.address, weights.size));
      return new Model(this.#module, handle, modelConfig, tokenizer);
    } finally {
      this.#module.freeBytes(weights.address);
    }
  }

  /** Number of models loaded and not yet disposed. */
  loadedModels() {
    return this.#module.loadedModels();
  }

  // Copies an opened source into fresh WASM memory -> { address, size }.
  async #readIntoHeap(opened, onBytes) {
    const module = this.#module;
    if (opened.size == null) { // unknown length: gather first, then copy
      const bytes = await readAll(opened, onBytes);
      return this.#readIntoHeap({ size: bytes.length, bytes }, () => {});
    }
    const { address } = unwrap(module.allocateBytes(opened.size));
    try {
      if (opened.bytes) {
        module.HEAPU8.set(opened.bytes, address);
        onBytes(opened.bytes.length);
        return { address, size: opened.size };
      }
      let offset = 0;
      for (const reader = opened.stream.getReader(); ;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (offset + value.length > opened.size) {
          await reader.cancel();
          throw new AttnplayError(`${opened.name}: received more than the announced ${opened.size} bytes`);
        }
        module.HEAPU8.set(value, address + offset); // HEAPU8 re-read: memory may have grown meanwhile
        offset += value.length;
        onBytes(value.length);
      }
      if (offset !== opened.size) {
        throw new AttnplayError(`${opened.name}: download ended after ${offset} of ${opened.size} bytes`);
      }
      return { address, size: opened.size };
    } catch (error) {
      module.freeBytes(address);
      throw error;
    }
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

const MODEL_FILES = { config: 'config.json', weights: 'model.safetensors', tokenizer: 'tokenizer.json' };

/**
 * A loaded GPT-2 or BERT model. Holds WASM memory until dispose().
 * config: { modelType, layers, heads, width, headWidth, inner, positions,
 *           vocabSize, typeVocabSize, causal, hasMlmHead, parameters }
 * tokenizerJson: the text of tokenizer.json, or null when there was none.
 */
export class Model {
  #module;
  #handle;

  constructor(module, handle, config, tokenizerJson) {
    this.#module = module;
    this.#handle = handle;
    this.config = Object.freeze(config);
    this.tokenizerJson = tokenizerJson;
  }

  /**
   * Runs every layer over token ids and returns copies (safe to keep):
   *   attentions: { data: Float32Array, shape: [layers, heads, T, T] }, rows sum to 1;
   *   trace (when options.trace = { layer, head }): that head's q, k, v [T, d_k],
   *     scores (Q·Kᵀ), scaled, masked (-Infinity where hidden), weights [T, T], divisor;
   *   hiddenStates (options.hiddenStates): [layers + 1, T, width], as in Hugging Face;
   *   logits (options.logits): [T, vocab] (GPT-2) or [maskPositions, vocab] (BERT);
   *   topK (options.topK = k > 0): { ids: Int32Array, probabilities: Float32Array,
   *     shape: [N, k] }, the next token at every position (GPT-2) or the
   *     predictions at options.maskPositions (BERT), best first.
   * options.typeIds: BERT segment ids [T]; options.attentionMask: [T], 0 = padding key.
   */
  forward(ids, options = {}) {
    if (this.#handle === null) throw new AttnplayError('this model was disposed');
    const spec = { ids: int32Array(ids, 'ids') };
    if (options.typeIds != null) spec.typeIds = int32Array(options.typeIds, 'typeIds');
    if (options.attentionMask != null) spec.attentionMask = Uint8Array.from(options.attentionMask, (v) => (v ? 1 : 0));
    if (options.maskPositions != null) spec.maskPositions = int32Array(options.maskPositions, 'maskPositions');
    if (options.trace != null) {
      const { layer, head } = options.trace;
      if (!Number.isInteger(layer) || !Number.isInteger(head)) throw new AttnplayError('trace: expected { layer, head } integers');
      spec.trace = { layer, head };
    }
    if (options.topK != null) {
      if (!Number.isInteger(options.topK)) throw new AttnplayError('topK: expected an integer');
      spec.topK = options.topK;
    }
    spec.hiddenStates = Boolean(options.hiddenStates);
    spec.logits = Boolean(options.logits);
    return unwrap(this.#module.modelForward(this.#handle, spec));
  }

  /** Frees the model's WASM memory. The model cannot be used afterwards. */
  dispose() {
    if (this.#handle !== null) this.#module.disposeModel(this.#handle);
    this.#handle = null;
  }

  get disposed() {
    return this.#handle === null;
  }
}

function int32Array(values, name) {
  if (values == null || typeof values.length !== 'number') throw new AttnplayError(`${name}: expected an array of integers`);
  const out = new Int32Array(values.length);
  for (let i = 0; i < values.length; i += 1) {
    const v = values[i];
    if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) {
      throw new AttnplayError(`${name}: ${String(v)} at index ${i} is not a 32-bit integer`);
    }
    out[i] = v;
  }
  return out;
}

// The three model files of a loadModel() source: { config, weights, tokenizer? }.
function modelSources(source, pickleMessage) {
  if (typeof source === 'string' || source instanceof URL) {
    const base = new URL(String(source).endsWith('/') ? String(source) : `${source}/`, globalThis.location?.href);
    return {
      config: new URL(MODEL_FILES.config, base),
      weights: new URL(MODEL_FILES.weights, base),
      tokenizer: new URL(MODEL_FILES.tokenizer, base),
    };
  }
  const isFileList = Array.isArray(source) || (typeof FileList !== 'undefined' && source instanceof FileList);
  if (isFileList) {
    const byName = new Map(Array.from(source, (file) => [file.name, file]));
    if (!byName.has(MODEL_FILES.weights) && byName.has('pytorch_model.bin')) {
      throw new AttnplayError(pickleMessage('pytorch_model.bin'));
    }
    for (const key of ['config', 'weights']) {
      if (!byName.has(MODEL_FILES[key])) throw new AttnplayError(`${MODEL_FILES[key]} is missing from the given files`);
    }
    return { config: byName.get(MODEL_FILES.config), weights: byName.get(MODEL_FILES.weights), tokenizer: byName.get(MODEL_FILES.tokenizer) };
  }
  if (source && source.config != null && source.weights != null) {
    return { config: source.config, weights: source.weights, tokenizer: source.tokenizer };
  }
  throw new AttnplayError('loadModel: expected a base URL, { config, weights, tokenizer? } or a list of files');
}

// -> { name, size (bytes or null), and either bytes or stream }, or null for
// an optional file that is absent.
async function openSource(source, name, fetchImpl, optional, pickleMessage) {
  if (source == null) return null;
  if (typeof source === 'string') {
    const bytes = new TextEncoder().encode(source);
    return { name, size: bytes.length, bytes };
  }
  if (source instanceof ArrayBuffer) return { name, size: source.byteLength, bytes: new Uint8Array(source) };
  if (ArrayBuffer.isView(source)) {
    const bytes = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    return { name, size: bytes.length, bytes };
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) return { name, size: source.size, stream: source.stream() };
  if (source instanceof URL) {
    let response;
    try {
      response = await fetchImpl(source);
    } catch (error) {
      throw new AttnplayError(`cannot fetch ${source.href}: ${error.message}`);
    }
    if (!response.ok) {
      if (optional && response.status === 404) return null;
      const hint = name === MODEL_FILES.weights ? ` (if the model only has pytorch_model.bin: ${pickleMessage('pytorch_model.bin')})` : '';
      throw new AttnplayError(`cannot fetch ${source.href}: HTTP ${response.status}${hint}`);
    }
    const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
    const length = Number(response.headers.get('content-length'));
    return { name, size: !encoded && Number.isSafeInteger(length) && length >= 0 && response.headers.has('content-length') ? length : null, stream: response.body };
  }
  throw new AttnplayError(`${name}: expected an ArrayBuffer, typed array, Blob, URL or string`);
}

async function readAll(opened, onBytes) {
  if (opened.bytes) {
    onBytes(opened.bytes.length);
    return opened.bytes;
  }
  const chunks = [];
  let length = 0;
  for (const reader = opened.stream.getReader(); ;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    length += value.length;
    onBytes(value.length);
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

async function readText(opened, onBytes) {
  return new TextDecoder().decode(await readAll(opened, onBytes));
}

/**
 * Loads the WASM module and returns an Engine.
 * options.wasmBinary: the .wasm bytes, if the caller has them already.
 */
export async function createEngine(options = {}) {
  const { default: createModule } = await import('./wasm/attnplay_core.mjs');
  const moduleOptions = {};
  const wasmUrl = new URL('./wasm/attnplay_core.wasm', import.meta.url);
  if (options.wasmBinary) {
    moduleOptions.wasmBinary = options.wasmBinary;
  } else if (isNode) {
    // Emscripten's web loader would fetch() a file path, which Node cannot do.
    const { readFile } = await import('node:fs/promises');
    moduleOptions.wasmBinary = await readFile(wasmUrl);
  } else {
    moduleOptions.locateFile = (path) => new URL(path, wasmUrl).href;
  }
  return new Engine(await createModule(moduleOptions));
}
