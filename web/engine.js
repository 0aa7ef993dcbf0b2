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

// Node's built-in modules, imported only when running under Node. The
// specifier is not a literal so that browser bundlers (esbuild, Vite, webpack)
// leave these imports alone instead of failing to resolve them.
const importNode = (name) => import(/* webpackIgnore: true */ /* @vite-ignore */ `node:${name}`);

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

// A matmul's right-hand operand: a float32 matrix, or half-precision bit
// patterns { dtype, bits, shape } passed as they are.
function rightOperand(b) {
  if (b && b.dtype !== undefined) return { dtype: b.dtype, bits: b.bits instanceof Uint16Array ? b.bits : Uint16Array.from(b.bits), shape: b.shape };
  return toMatrix(b, 'b');
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

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** Text as UTF-8 bytes; a Uint8Array passes as it is (any bytes, even invalid UTF-8). */
function utf8(text, name) {
  if (text instanceof Uint8Array) return text;
  if (typeof text !== 'string') throw new AttnplayError(`${name}: expected a string or a Uint8Array`);
  return utf8Encoder.encode(text);
}

// Frees the C++ tokenizer of a Tokenizer that was garbage-collected without dispose().
const tokenizerRegistry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((handle) => handle.delete()) : null;

/**
 * A tokenizer held by the WASM module (GPT-2 byte-level BPE or BERT WordPiece).
 * Call dispose() when done (it is also freed when garbage-collected).
 */
export class Tokenizer {
  #handle;

  constructor(handle) {
    this.#handle = handle;
    tokenizerRegistry?.register(this, handle, this);
  }

  #live() {
    if (!this.#handle) throw new AttnplayError('tokenizer: used after dispose()');
    return this.#handle;
  }

  /**
   * Tokens of a text (or a pair of texts), the post-processor applied when addSpecialTokens.
   * options: { pair?: string, addSpecialTokens = true, matchSpecialTokens = true }
   * returns { ids: Int32Array, typeIds: Int32Array, segments: Int32Array (0 text, 1 pair, -1 added by the
   *   post-processor), offsets: Uint32Array (byte [begin, end) pairs), utf16Offsets: Uint32Array (same in
   *   string indices, for highlighting), special: Uint8Array, pieces: string[], displays: string[], length }
   */
  encode(text, { pair, addSpecialTokens = true, matchSpecialTokens = true } = {}) {
    const result = unwrap(this.#live().encode(utf8(text, 'text'), pair === undefined || pair === null ? null : utf8(pair, 'pair'),
      addSpecialTokens, matchSpecialTokens));
    result.length = result.ids.length;
    return result;
  }

  /** Ids only (fast path): Int32Array. options: { addSpecialTokens = true, matchSpecialTokens = true } */
  encodeIds(text, { addSpecialTokens = true, matchSpecialTokens = true } = {}) {
    return unwrap(this.#live().encodeIds(utf8(text, 'text'), addSpecialTokens, matchSpecialTokens));
  }

  /** Text of ids (invalid UTF-8 shown as U+FFFD; decodeBytes gives the exact bytes). */
  decode(ids, { skipSpecialTokens = false } = {}) {
    return utf8Decoder.decode(this.decodeBytes(ids, { skipSpecialTokens }));
  }

  /** Bytes of ids: Uint8Array. */
  decodeBytes(ids, { skipSpecialTokens = false } = {}) {
    return unwrap(this.#live().decode(Int32Array.from(ids), skipSpecialTokens));
  }

  /** Readable string of one vocabulary entry ("␣the", "##ing", "<0xF0>"); render it as text, never HTML. */
  display(id) {
    return unwrap(this.#live().display(id));
  }

  /** Id of a vocabulary piece, or null. */
  tokenToId(piece) {
    return this.#live().tokenToId(String(piece));
  }

  /** Vocabulary piece of an id, or null. */
  idToToken(id) {
    return this.#live().idToToken(id);
  }

  /** Number of ids (model vocabulary and added tokens). */
  get vocabSize() {
    return this.#live().vocabSize();
  }

  /** "BPE" or "WordPiece". */
  get modelType() {
    return this.#live().modelType();
  }

  /** Hugging Face tokenizer.json text of this tokenizer. */
  toJson() {
    return utf8Decoder.decode(unwrap(this.#live().toJson()));
  }

  /** Frees the C++ tokenizer. */
  dispose() {
    if (!this.#handle) return;
    tokenizerRegistry?.unregister(this);
    this.#handle.delete();
    this.#handle = null;
  }
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
   * b [n,k] -> A·Bᵀ; with bias [n]: A·B + bias on every row. b may be a
   * weight stored in half precision, { dtype: 'f16' | 'bf16', bits:
   * Uint16Array, shape }, widened inside the kernel (bias then works with
   * transposeB too).
   */
  matmul({ a, b, transposeB = false, bias }) {
    const spec = { a: toMatrix(a, 'a'), b: rightOperand(b), transposeB };
    if (bias !== undefined) spec.bias = Float32Array.from(bias);
    return unwrap(this.#module.matmul(spec));
  }

  /**
   * A product whose operands stay inside the WASM module, for timing the
   * kernel alone: { a, b, transposeB? } -> { run(), result(), dispose() }.
   * run() recomputes A·B (or A·Bᵀ); call dispose() when done.
   */
  residentProduct({ a, b, transposeB = false }) {
    const product = unwrap(this.#module.residentProduct({ a: toMatrix(a, 'a'), b: rightOperand(b), transposeB }));
    return {
      run: () => product.run(),
      result: () => product.result(),
      dispose: () => product.delete(),
    };
  }

  /** A half-precision weight { dtype: 'f16' | 'bf16', bits, shape } widened to float32 (exactly). */
  widenWeights({ dtype, bits, shape }) {
    return unwrap(this.#module.widenWeights({ dtype, bits: Uint16Array.from(bits), shape }));
  }

  /** Threads the matrix products use (1 in the single-threaded build). */
  get threads() {
    return this.#module.threadCount();
  }

  /** Caps the threads used (1 to the pool size); returns the number now used. */
  setThreads(n) {
    return this.#module.setThreadCount(n);
  }

  /** Tokenizer from a Hugging Face tokenizer.json (string, bytes or parsed object). */
  loadTokenizer(tokenizerJson) {
    const text = typeof tokenizerJson === 'object' && !(tokenizerJson instanceof Uint8Array)
      ? JSON.stringify(tokenizerJson) : tokenizerJson;
    return this.#tokenizer(this.#module.tokenizerFromJson(utf8(text, 'tokenizer.json')));
  }

  /** Tokenizer from GPT-2's vocab.json (encoder.json) and merges.txt (vocab.bpe) texts. */
  loadGpt2Tokenizer(vocabJson, mergesTxt) {
    return this.#tokenizer(this.#module.tokenizerFromGpt2Files(utf8(vocabJson, 'vocab.json'), utf8(mergesTxt, 'merges.txt')));
  }

  /** Tokenizer from BERT's vocab.txt text. */
  loadBertTokenizer(vocabTxt, { lowercase = true } = {}) {
    return this.#tokenizer(this.#module.tokenizerFromBertVocab(utf8(vocabTxt, 'vocab.txt'), lowercase));
  }

  /** Trains a tokenizer on a corpus: { vocabSize, model: 'bpe' | 'wordpiece' = 'bpe', minFrequency = 2 }. */
  trainTokenizer(corpus, { vocabSize, model = 'bpe', minFrequency } = {}) {
    if (!Number.isInteger(vocabSize)) throw new AttnplayError('trainTokenizer: vocabSize must be an integer');
    const spec = { vocabSize, model };
    if (minFrequency !== undefined) spec.minFrequency = minFrequency;
    return this.#tokenizer(this.#module.trainTokenizer(utf8(corpus, 'corpus'), spec));
  }

  #tokenizer(result) {
    return new Tokenizer(unwrap(result).tokenizer);
  }

  /**
   * Loads a model (Hugging Face layout: config.json, model.safetensors,
   * optional tokenizer.json) and returns a Model, or a Seq2SeqModel when
   * config.json describes an encoder-decoder (model_type marian or bart).
   * source:
   *   - a base URL (string or URL) of the model folder, e.g. 'models/gpt2/'
   *     (model.safetensors, or when that is not found a sharded checkpoint:
   *     model.safetensors.index.json and the shards it names);
   *   - { config, weights, tokenizer?, index? }, each an ArrayBuffer, typed
   *     array, Blob/File, URL (fetched) or, for the JSON files, a string of
   *     JSON; with index (model.safetensors.index.json), weights is the array
   *     of shards in the order of their file names (model-00001-of-0000N, ...);
   *   - an array or FileList of Files (a dropped folder), matched by name.
   * options.onProgress({ file, loaded, total }): bytes read so far of all
   *   files, total = their sum (null while a size is unknown).
   * options.fetch: the fetch function to use (default: globalThis.fetch).
   * The weights are streamed straight into WASM memory.
   */
  async loadModel(source, options = {}) {
    const pickleMessage = (name) => this.#module.pickleCheckpointMessage(name);
    const files = modelSources(source, pickleMessage);
    const fetchImpl = options.fetch ?? globalThis.fetch;
    const opened = {};
    await Promise.all(['config', 'weights', 'tokenizer'].map(async (key) => {
      // A folder URL's model.safetensors is absent when the checkpoint is sharded.
      const optional = key === 'tokenizer' || (key === 'weights' && files.index instanceof URL);
      opened[key] = await openSource(files[key], MODEL_FILES[key], fetchImpl, optional, pickleMessage);
    }));
    // The JSON files are small: read now, so that no response waits unread
    // while the shards are looked up (progress is reported below).
    const configBytes = await readAll(opened.config, () => {});
    const tokenizerBytes = opened.tokenizer ? await readAll(opened.tokenizer, () => {}) : null;
    // Sharded: the index names the shards (the core reads and checks it).
    let index = null;
    let shards = [opened.weights];
    if (!opened.weights) {
      const indexFile = await openSource(files.index, MODEL_FILES.index, fetchImpl, files.index instanceof URL, pickleMessage);
      if (!indexFile) {
        throw new AttnplayError(`cannot fetch ${files.weights.href} nor ${MODEL_FILES.index}: HTTP 404 ` +
          `(if the model only has pytorch_model.bin: ${pickleMessage('pytorch_model.bin')})`);
      }
      index = await readText(indexFile, () => {});
      const names = unwrap(this.#module.shardFiles(index));
      shards = await Promise.all(names.map((name, i) => {
        const src = files.shards instanceof Map ? files.shards.get(name)
          : Array.isArray(files.shards) ? files.shards[i] : new URL(name, files.index);
        if (src == null) throw new AttnplayError(`shard '${name}' is missing (${MODEL_FILES.index} places tensors in it)`);
        return openSource(src, name, fetchImpl, false, pickleMessage);
      }));
    }
    const sizes = [opened.config, opened.tokenizer, ...shards].filter(Boolean).map((o) => o.size);
    const total = sizes.every((n) => n != null) ? sizes.reduce((a, b) => a + b, 0) : null;
    let loaded = 0;
    const progress = (file) => (n) => {
      loaded += n;
      options.onProgress?.({ file, loaded, total });
    };
    progress(MODEL_FILES.config)(configBytes.length);
    const config = new TextDecoder().decode(configBytes);
    if (tokenizerBytes) progress(MODEL_FILES.tokenizer)(tokenizerBytes.length);
    const tokenizer = tokenizerBytes ? new TextDecoder().decode(tokenizerBytes) : null;
    const buffers = [];
    try {
      for (const shard of shards) buffers.push({ name: shard.name, ...await this.#readIntoHeap(shard, progress(shard.name)) });
    } catch (error) {
      for (const { address } of buffers) this.#module.freeBytes(address);
      throw error;
    }
    // loadModel owns the buffers from here on, and frees them.
    const { handle, config: modelConfig } = unwrap(this.#module.loadModel(config, buffers, index, tokenizer));
    if (modelConfig.encoderDecoder) return new Seq2SeqModel(this.#module, handle, modelConfig, tokenizer);
    return new Model(this.#module, handle, modelConfig, tokenizer);
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

const MODEL_FILES = {
  config: 'config.json', weights: 'model.safetensors', index: 'model.safetensors.index.json', tokenizer: 'tokenizer.json',
};

/**
 * A loaded model (GPT-2, BERT, Llama, Mistral, Qwen2/3, GPT-NeoX). Holds WASM memory until dispose().
 * config: { modelType, layers, heads, kvHeads, width, headWidth, inner, positions,
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
    if (options.trace != null) spec.trace = traceSpec(options.trace);
    if (options.topK != null) {
      if (!Number.isInteger(options.topK)) throw new AttnplayError('topK: expected an integer');
      spec.topK = options.topK;
    }
    spec.hiddenStates = Boolean(options.hiddenStates);
    spec.logits = Boolean(options.logits);
    return unwrap(this.#module.modelForward(this.#handle, spec));
  }

  /**
   * Tokenizes text (and an optional second text, BERT) with the model's
   * tokenizer.json and runs every layer. Returns what forward() returns plus
   *   tokens: [{ id, piece, display, start, end, byteStart, byteEnd, typeId, segment, special }]
   *     (start/end: UTF-16 offsets into the text of `segment`, 0 = text, 1 = textB, -1 = added);
   *   maskPositions: Int32Array (BERT: [MASK] tokens; topK rows follow them);
   *   truncated, inputTokens: whether the text had more tokens than the model's positions.
   * options: { textB, trace: { layer, head }, topK, hiddenStates }.
   */
  run(text, options = {}) {
    if (this.#handle === null) throw new AttnplayError('this model was disposed');
    if (typeof text !== 'string') throw new AttnplayError('run: text must be a string');
    const spec = { text };
    if (options.textB != null && options.textB !== '') spec.textB = String(options.textB);
    if (options.trace != null) spec.trace = traceSpec(options.trace);
    if (options.topK != null) spec.topK = options.topK;
    spec.hiddenStates = Boolean(options.hiddenStates);
    const result = unwrap(this.#module.modelRun(this.#handle, spec));
    return { ...result, tokens: tokenObjects(result.tokens) };
  }

  /**
   * Head-pattern scores of every head (see cpp/analysis/head_analysis.h):
   * [{ layer, head, previousToken, nextToken, induction, sink, self, local, broad, labels }].
   */
  analyzeHeads() {
    if (this.#handle === null) throw new AttnplayError('this model was disposed');
    return unwrap(this.#module.modelAnalyzeHeads(this.#handle));
  }

  /**
   * Continues the prompt `ids` (causal models), one token's work per step (KV
   * cache), and returns the prompt and generated ids as an Int32Array.
   * options: { maxNewTokens = 16, greedy (default unless a sampling option is
   * given), temperature, topK, topP, seed } (sampling: see cpp/model/generate.h;
   * the same seed gives the same tokens as `attnplay generate`). Stops early
   * at the config's eos_token_id or the last position.
   * onStep({ token, position, attention: { data, shape: [layers, heads, position + 1] } })
   * runs after each new token with the attention row of the position that
   * predicted it; returning false stops generation.
   */
  generate(ids, options = {}, onStep = () => {}) {
    if (this.#handle === null) throw new AttnplayError('this model was disposed');
    if (typeof onStep !== 'function') throw new AttnplayError('generate: onStep must be a function');
    const spec = { ids: int32Array(ids, 'ids') };
    const sampling = ['temperature', 'topK', 'topP', 'seed'].filter((key) => options[key] != null);
    for (const key of ['maxNewTokens', ...sampling]) {
      if (options[key] == null) continue;
      if (typeof options[key] !== 'number' || !Number.isFinite(options[key])) throw new AttnplayError(`generate: ${key} must be a number`);
      spec[key] = options[key];
    }
    spec.greedy = options.greedy ?? sampling.length === 0;
    return unwrap(this.#module.modelGenerate(this.#handle, spec, onStep));
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

/**
 * A loaded encoder-decoder (Marian / opus-mt, BART), what Engine.loadModel
 * returns when config.json's model_type is marian or bart. Holds WASM memory
 * until dispose().
 * config: { modelType, encoderDecoder: true, encoderLayers, decoderLayers, encoderHeads,
 *           decoderHeads, width, positions, vocabSize, decoderStartTokenId,
 *           eosTokenIds: Int32Array, numBeams, parameters }
 * Attention tensors are { data: Float32Array, shape }, row-major, rows sum to 1:
 *   encoderAttentions [encoderLayers, encoderHeads, S, S] (source over source),
 *   decoderAttentions [decoderLayers, decoderHeads, T, T] (causal, decoder input over itself),
 *   crossAttentions   [decoderLayers, decoderHeads, T, S] (each decoder input position over the source).
 * Decoder inputs start with the start token (config.decoderStartTokenId), so
 * row t of the decoder's tensors is the position that predicts target token t.
 */
export class Seq2SeqModel {
  #module;
  #handle;

  constructor(module, handle, config, tokenizerJson) {
    this.#module = module;
    this.#handle = handle;
    this.config = Object.freeze(config);
    this.tokenizerJson = tokenizerJson;
  }

  #live() {
    if (this.#handle === null) throw new AttnplayError('this model was disposed');
    return this.#handle;
  }

  /**
   * Encoder over sourceIds [S] and decoder over decoderIds [T] (default: the
   * start token alone) -> { encoderAttentions, decoderAttentions, crossAttentions,
   * logits? ([T, vocab], with options.logits) }.
   */
  forward(sourceIds, decoderIds = [], options = {}) {
    const handle = this.#live();
    return unwrap(this.#module.seq2seqForward(handle, {
      sourceIds: int32Array(sourceIds, 'sourceIds'), decoderIds: int32Array(decoderIds, 'decoderIds'), logits: Boolean(options.logits),
    }));
  }

  /**
   * Tokenizes the source text (with the tokenizer's closing </s>) and an
   * optional target text (after the start token), and runs both sides. Returns
   * forward()'s tensors plus
   *   sourceTokens: [{ id, piece, display, start, end, byteStart, byteEnd, special, ... }] (as Model.run's tokens),
   *   decoderTokens: [{ id, display, special }] (the start token first),
   *   truncated, inputTokens: whether the source had more tokens than the model's positions.
   */
  run(text, { target } = {}) {
    const handle = this.#live();
    if (typeof text !== 'string') throw new AttnplayError('run: text must be a string');
    const spec = { text };
    if (target != null) spec.target = String(target);
    const result = unwrap(this.#module.seq2seqRun(handle, spec));
    return { ...result, sourceTokens: tokenObjects(result.sourceTokens), decoderTokens: idTokens(result.decoderTokens) };
  }

  /**
   * Translates a source: a text (tokenized with the closing </s>) or an array
   * of source ids; greedy (beams = 1, the default) or beam search (beams = N),
   * at most maxNewTokens tokens (default: config.json's max_length or the positions).
   * onStep({ index, token, display, special, crossAttention: { data, shape: [decoderLayers, decoderHeads, S] } })
   * runs after each greedy token, with the cross-attention row of the position
   * that produced it, so a page can show tokens as they appear; returning false
   * stops there (beam search calls it not at all: its tokens are known at the end).
   * Returns { text (null without a tokenizer), sourceTokens, decoderTokens (start token,
   *   target tokens, </s> when produced), score, logProbability, truncated, inputTokens }
   *   plus forward()'s tensors over the decoder input = decoderTokens without the
   *   last, so that row i of crossAttentions is the step that produced target
   *   token i (decoderTokens[i + 1]).
   */
  translate(source, { beams = 1, maxNewTokens } = {}, onStep = () => {}) {
    const handle = this.#live();
    if (typeof onStep !== 'function') throw new AttnplayError('translate: onStep must be a function');
    if (!Number.isInteger(beams)) throw new AttnplayError('translate: beams must be an integer');
    const spec = { beams };
    if (typeof source === 'string') spec.text = source;
    else spec.sourceIds = int32Array(source, 'translate: source (a text or an array of ids)');
    if (maxNewTokens != null) {
      if (!Number.isInteger(maxNewTokens)) throw new AttnplayError('translate: maxNewTokens must be an integer');
      spec.maxNewTokens = maxNewTokens;
    }
    const { textBytes, ...result } = unwrap(this.#module.seq2seqTranslate(handle, spec, onStep));
    const sourceTokens = spec.text !== undefined ? tokenObjects(result.sourceTokens) : idTokens(result.sourceTokens);
    const text = textBytes === null ? null : utf8Decoder.decode(textBytes);  // invalid UTF-8 as U+FFFD
    return { ...result, text, sourceTokens, decoderTokens: idTokens(result.decoderTokens) };
  }

  /** Frees the model's WASM memory. The model cannot be used afterwards. */
  dispose() {
    if (this.#handle !== null) this.#module.disposeSeq2SeqModel(this.#handle);
    this.#handle = null;
  }

  get disposed() {
    return this.#handle === null;
  }
}

// { ids, displays, special } of the bindings -> [{ id, display, special }].
function idTokens(t) {
  return Array.from(t.ids, (id, i) => ({ id, display: t.displays[i], special: Boolean(t.special[i]) }));
}

function traceSpec({ layer, head }) {
  if (!Number.isInteger(layer) || !Number.isInteger(head)) throw new AttnplayError('trace: expected { layer, head } integers');
  return { layer, head };
}

// Parallel arrays of the bindings -> one object per token.
function tokenObjects(t) {
  return Array.from(t.ids, (id, i) => ({
    id,
    piece: t.pieces[i],
    display: t.displays[i],
    start: t.utf16Offsets[2 * i],
    end: t.utf16Offsets[2 * i + 1],
    byteStart: t.offsets[2 * i],
    byteEnd: t.offsets[2 * i + 1],
    typeId: t.typeIds[i],
    segment: t.segments[i],
    special: t.special[i] === 1,
  }));
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

// The model files of a loadModel() source: { config, weights, tokenizer? }
// or, sharded, { config, index, shards, tokenizer? } (shards: a Map by file
// name, an array in file-name order, or absent: next to the index URL). A
// folder URL gives both weights and index; the index is read only when
// model.safetensors is not found.
function modelSources(source, pickleMessage) {
  if (typeof source === 'string' || source instanceof URL) {
    const base = new URL(String(source).endsWith('/') ? String(source) : `${source}/`, globalThis.location?.href);
    return {
      config: new URL(MODEL_FILES.config, base),
      weights: new URL(MODEL_FILES.weights, base),
      index: new URL(MODEL_FILES.index, base),
      tokenizer: new URL(MODEL_FILES.tokenizer, base),
    };
  }
  const isFileList = Array.isArray(source) || (typeof FileList !== 'undefined' && source instanceof FileList);
  if (isFileList) {
    const byName = new Map(Array.from(source, (file) => [file.name, file]));
    const sharded = !byName.has(MODEL_FILES.weights) && byName.has(MODEL_FILES.index);
    if (!byName.has(MODEL_FILES.weights) && !sharded && byName.has('pytorch_model.bin')) {
      throw new AttnplayError(pickleMessage('pytorch_model.bin'));
    }
    for (const key of ['config', sharded ? 'index' : 'weights']) {
      if (!byName.has(MODEL_FILES[key])) throw new AttnplayError(`${MODEL_FILES[key]} is missing from the given files`);
    }
    const tokenizer = byName.get(MODEL_FILES.tokenizer);
    if (sharded) return { config: byName.get(MODEL_FILES.config), index: byName.get(MODEL_FILES.index), shards: byName, tokenizer };
    return { config: byName.get(MODEL_FILES.config), weights: byName.get(MODEL_FILES.weights), tokenizer };
  }
  if (source && source.config != null && source.weights != null && source.index != null) {
    if (!Array.isArray(source.weights)) throw new AttnplayError('loadModel: with an index, weights is the array of shards');
    return { config: source.config, index: source.index, shards: source.weights, tokenizer: source.tokenizer };
  }
  if (source && source.config != null && source.weights != null) {
    return { config: source.config, weights: source.weights, tokenizer: source.tokenizer };
  }
  throw new AttnplayError('loadModel: expected a base URL, { config, weights, tokenizer? } or a list of files');
}

// -> { name, size (bytes or null), and either bytes or stream (with the
// response that owns it) }, or null for an optional file that is absent.
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
      await response.body?.cancel(); // an unread body would hold the connection
      if (optional && response.status === 404) return null;
      const hint = name === MODEL_FILES.weights ? ` (if the model only has pytorch_model.bin: ${pickleMessage('pytorch_model.bin')})` : '';
      throw new AttnplayError(`cannot fetch ${source.href}: HTTP ${response.status}${hint}`);
    }
    const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
    const length = Number(response.headers.get('content-length'));
    // `response` is kept: Node's fetch cancels the body of a Response that is
    // garbage-collected before its body is read (the body then reads as empty).
    return { name, size: !encoded && Number.isSafeInteger(length) && length >= 0 && response.headers.has('content-length') ? length : null, stream: response.body, response };
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
    const { readFile } = await importNode('fs/promises');
    moduleOptions.wasmBinary = await readFile(wasmUrl);
  } else {
    moduleOptions.locateFile = (path) => new URL(path, wasmUrl).href;
  }
  const nodeWorkers = useThreads && isNode ? await installNodeWorkers() : null;
  // A URL, not a relative path, so that bundlers leave the WASM glue beside the module (as they do the .wasm).
  const { default: createModule } = await import(/* webpackIgnore: true */ /* @vite-ignore */ new URL(`./wasm/${name}.mjs`, import.meta.url).href);
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
  const threads = await importNode('worker_threads');
  const os = await importNode('os');
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
