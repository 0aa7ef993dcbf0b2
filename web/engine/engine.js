// The attnplay engine: the only module that touches the raw WASM module.
// It loads the Emscripten build (../wasm/attnplay_core.mjs beside its folder, in
// the browser, a worker or Node) and wraps its bindings: the Engine (attention
// arithmetic, tokenizers, model loading into WASM memory) and the TextModel
// (or TranslationModel) it loads. Its helpers never touch the module: errors.js (AttnplayError),
// engine-inputs.js (JS values -> the arrays the bindings take), tokenizer.js
// (the Tokenizer around a bound C++ tokenizer), model-files.js (where model
// files come from, and streaming them), node-support.js (running under Node).
// Not here: drawing, page state, anything that knows about the DOM.
import { AttnplayError, unwrap } from './errors.js';
import { ablationSpec, attentionSpec, forwardRequestSpec, int32Array, pictureSpec, rightOperand, toMatrix, utf8 } from './engine-inputs.js';
import { MODEL_FILES, cancelUnread, openModelFiles, readAll, streamInto } from './model-files.js';
import { coreFiles } from './core-files.js';
import { importNode, installNodeWorkers, isNode } from './node-support.js';
import { Tokenizer, tokenObjects } from './tokenizer.js';

export { AttnplayError } from './errors.js';
export { toMatrix, toRows } from './engine-inputs.js';
export { Tokenizer } from './tokenizer.js';

const utf8Decoder = new TextDecoder();

// Whether a tokenizer file's bytes are JSON (first non-blank byte '{'), as the core decides.
function isJsonBytes(bytes) {
  for (const b of bytes) {
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return b === 0x7b;
  }
  return false;
}

// The tokenizer fields a Model and a TranslationModel carry (see Model).
function tokenizerFacts(tokenizerFile, hasTokenizer) {
  const tokenizerJson = tokenizerFile && isJsonBytes(tokenizerFile) ? utf8Decoder.decode(tokenizerFile) : null;
  return { tokenizerFile, tokenizerJson, hasTokenizer };
}

// config.json's model_type, or '' when the text is not a JSON object that has
// one (the core says what is wrong with it when the model loads).
function modelTypeOf(configText) {
  try {
    const modelType = JSON.parse(configText)?.model_type;
    return typeof modelType === 'string' ? modelType : '';
  } catch {
    return '';
  }
}

function byteView(source) {
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
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
   * Attention rollout or attention flow (cpp/analysis/rollout.h, the same
   * definitions as rollout.js, computed in the core): attentions { data:
   * Float32Array, shape: [layers, heads, T, T] }, method 'rollout' | 'flow'
   * -> { data: Float64Array [T·T], shape: [T, T] }.
   */
  rollout(attentions, method = 'rollout') {
    if (!attentions || !ArrayBuffer.isView(attentions.data) || !Array.isArray(attentions.shape)) {
      throw new AttnplayError('rollout: attentions must be { data: Float32Array, shape: [layers, heads, T, T] }');
    }
    const data = attentions.data instanceof Float32Array ? attentions.data : Float32Array.from(attentions.data);
    return unwrap(this.#module.rollout({ data, shape: attentions.shape }, String(method)));
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

  /**
   * Tokenizer from a Hugging Face tokenizer.json (string or parsed object), or
   * from a file's bytes (Uint8Array, ArrayBuffer): tokenizer.json or a
   * SentencePiece .model (tokenizer.model, spiece.model, source.spm, ...), told
   * apart by content. options.modelType: a .model's ids and special tokens as
   * that model_type's tokenizer reads them ('t5' and 'mt5': "$A </s>" and the
   * <extra_id_N> sentinels; 'xlm-roberta': fairseq's ids and "<s> $A </s>";
   * default: the model's own ids, <s> first when it has one).
   */
  loadTokenizer(source, { modelType = '' } = {}) {
    if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
      return this.#tokenizer(this.#module.tokenizerFromFileBytes(byteView(source), modelType));
    }
    const text = typeof source === 'object' && source !== null ? JSON.stringify(source) : source;
    return this.#tokenizer(this.#module.tokenizerFromJson(utf8(text, 'tokenizer.json')));
  }

  /** Tokenizer from GPT-2's vocab.json (encoder.json) and merges.txt (vocab.bpe) texts. */
  loadGpt2Tokenizer(vocabJson, mergesTxt, { modelType = '' } = {}) {
    return this.#tokenizer(this.#module.tokenizerFromGpt2Files(utf8(vocabJson, 'vocab.json'), utf8(mergesTxt, 'merges.txt'), modelType));
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
   * optional tokenizer.json) and returns a Model, or a TranslationModel when
   * config.json describes an encoder-decoder (model_type marian or bart).
   * source:
   *   - a base URL (string or URL) of the model folder, e.g. 'models/gpt2/'
   *     (model.safetensors, or when that is not found a sharded checkpoint:
   *     model.safetensors.index.json and the shards it names);
   *   - { config, weights, tokenizer?, sentencepiece?, index? } (sentencepiece:
   *     tokenizer.model; a Marian model without tokenizer.json: sourceSpm,
   *     targetSpm and vocab for source.spm, target.spm, vocab.json), each an ArrayBuffer, typed
   *     array, Blob/File, URL (fetched), a successful fetch Response whose
   *     body is not read yet (hub.js) or, for the JSON files, a string of
   *     JSON; with index (model.safetensors.index.json), weights is the array
   *     of shards in the order of their file names (model-00001-of-0000N, ...);
   *   - an array or FileList of Files (a dropped folder), matched by name.
   * options.onProgress({ file, loaded, total }): bytes read so far of all
   *   files, total = their sum (null while a size is unknown).
   * options.fetch: the fetch function to use (default: globalThis.fetch).
   * The weights are streamed straight into WASM memory, after the tokenizer
   * is read: one the core cannot read is refused before any weight byte is
   * asked for, and the weights' download is cancelled.
   */
  async loadModel(source, options = {}) {
    const files = await openModelFiles(source, {
      fetch: options.fetch ?? globalThis.fetch,
      pickleMessage: (name) => this.#module.pickleCheckpointMessage(name),
      shardNames: (index) => unwrap(this.#module.shardFiles(index)), // the core reads and checks the index
    });
    let loaded = 0;
    const progress = (file) => (n) => {
      loaded += n;
      options.onProgress?.({ file, loaded, total: files.total });
    };
    progress(MODEL_FILES.config)(files.config.length);
    const config = utf8Decoder.decode(files.config);
    if (files.tokenizer) progress(files.tokenizerName)(files.tokenizer.length);
    for (const [key, bytes] of Object.entries({ ...files.marian, ...files.gpt2 })) progress(MODEL_FILES[key])(bytes.length);
    // The tokenizer is read before the weights stream in: one the core cannot read (malformed, or with a
    // section it does not support) is refused before a download that may take gigabytes.
    let tokenizer = null;
    try {
      if (files.tokenizer) tokenizer = unwrap(this.#module.tokenizerFromFileBytes(files.tokenizer, modelTypeOf(config))).tokenizer;
      if (files.gpt2) tokenizer = unwrap(this.#module.tokenizerFromGpt2Files(files.gpt2.vocab, files.gpt2.merges, modelTypeOf(config))).tokenizer;
    } catch (error) {
      await cancelUnread(files.shards);
      throw error;
    }
    try {
      const buffers = [];
      try {
        for (const shard of files.shards) buffers.push({ name: shard.name, ...await this.#readIntoHeap(shard, progress(shard.name)) });
      } catch (error) {
        for (const { address } of buffers) this.#module.freeBytes(address);
        await cancelUnread(files.shards);
        throw error;
      }
      // loadModel owns the buffers from here on, and frees them; it keeps its own copy of the tokenizer.
      const preprocessor = files.preprocessor ? utf8Decoder.decode(files.preprocessor) : null;
      const { handle, config: modelConfig, hasTokenizer } = unwrap(this.#module.loadModel(config, buffers, files.index, tokenizer ?? files.marian, preprocessor));
      if (modelConfig.encoderDecoder) return new TranslationModel(this.#module, handle, modelConfig, files.tokenizer, hasTokenizer);
      if (modelConfig.imageModel) return new ImageModel(this.#module, handle, modelConfig);
      return new TextModel(this.#module, handle, modelConfig, files.tokenizer, hasTokenizer);
    } finally {
      tokenizer?.delete();
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
      return this.#readIntoHeap({ name: opened.name, size: bytes.length, bytes }, () => {});
    }
    const { address } = unwrap(module.allocateBytes(opened.size));
    try {
      // HEAPU8 re-read for each chunk: memory may have grown meanwhile.
      await streamInto(opened, (chunk, offset) => module.HEAPU8.set(chunk, address + offset), onBytes);
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

// A Bound object's method that calls one of its bindings, and its module (not part of the public API).
const CALL = Symbol('call');
const MODULE = Symbol('module');

/**
 * A C++ object held by the WASM module behind a handle (a model, a
 * generation): calls its bindings with the handle, and frees it on dispose();
 * afterwards every call throws "this WHAT was disposed".
 */
class Bound {
  #module;
  #handle;
  #disposeBinding;
  #what;

  constructor(module, handle, disposeBinding, what) {
    this.#module = module;
    this.#handle = handle;
    this.#disposeBinding = disposeBinding;
    this.#what = what;
  }

  /** module[binding](handle, ...args), unwrapped. */
  [CALL](binding, ...args) {
    if (this.#handle === null) throw new AttnplayError(`this ${this.#what} was disposed`);
    return unwrap(this.#module[binding](this.#handle, ...args));
  }

  /** The WASM module (for the objects this one starts). */
  get [MODULE]() {
    return this.#module;
  }

  /** Frees the object's WASM memory. It cannot be used afterwards. */
  dispose() {
    if (this.#handle !== null) this.#module[this.#disposeBinding](this.#handle);
    this.#handle = null;
  }

  get disposed() {
    return this.#handle === null;
  }
}

/**
 * A loaded model (GPT-2, BERT, DistilBERT, ELECTRA, RoBERTa / XLM-R, OPT, Llama, Mistral, Qwen2/3, SmolLM3, Gemma 1–3, OLMo 2, Phi-3, GPT-NeoX). Holds WASM memory until dispose().
 * config: { modelType, layers, heads, kvHeads, width, headWidth, inner, positions,
 *           vocabSize, typeVocabSize, segmentInput (BERT, ELECTRA: a pair's typeIds are an
 *           input; RoBERTa and DistilBERT read segment 0 throughout), causal, slidingWindow (0: none),
 *           slidingLayers (booleans per layer, Gemma 2/3; null: the window is every layer's), hasMlmHead,
 *           maskToken ('[MASK]', '<mask>' or null: what a text writes where an encoder predicts),
 *           parameters }
 * tokenizerFile: the bytes of its tokenizer.json or tokenizer.model (for
 *   engine.loadTokenizer), or null when there was none;
 * tokenizerJson: the text of tokenizer.json, or null when there was none;
 * hasTokenizer: whether it reads text (a Marian model may have source.spm,
 *   target.spm and vocab.json instead of a tokenizer file).
 */
export class TextModel extends Bound {
  constructor(module, handle, config, tokenizerFile, hasTokenizer) {
    super(module, handle, 'disposeModel', 'model');
    this.config = Object.freeze(config);
    Object.assign(this, tokenizerFacts(tokenizerFile, hasTokenizer));
  }

  /**
   * Runs every layer over token ids and returns copies (safe to keep):
   *   attentions: { data: Float32Array, shape: [layers, heads, T, T] }, rows sum to 1;
   *   trace (when options.trace = { layer, head }): that head's q, k, v [T, d_k],
   *     scores (Q·Kᵀ), scaled, masked (-Infinity where hidden), weights [T, T], divisor
   *     (√d_k; Gemma 2/3: √query_pre_attn_scalar); with Gemma 2's attention softcap also
   *     softcap and capped (softcap·tanh(scaled / softcap), the step before the mask);
   *     for RoPE models (llama, mistral, qwen2, qwen3, gpt_neox) also trace.rotary =
   *     { q, k: [T, d_k] before the rotation (q and k above are after it),
   *       inverseFrequencies: Float64Array [r/2], firstPosition }: pair i (dims i
   *       and i + r/2) at position p turned by the angle p·inverseFrequencies[i];
   *       dims r..d_k are not rotated (partial rotary);
   *   hiddenStates (options.hiddenStates): [layers + 1, T, width], as in Hugging Face;
   *   logits (options.logits): [P, vocab] (GPT-2) or [maskPositions, vocab] (BERT);
   *   topK (options.topK = k > 0): { ids: Int32Array, probabilities: Float32Array,
   *     shape: [N, k], displays: [N·k] strings (with a tokenizer) }, the next
   *     token at each prediction position (GPT-2) or the predictions at
   *     options.maskPositions (BERT), best first;
   *   predictionPositions (causal, with logits or topK): Int32Array [P], the
   *     positions of their rows: options.predictionPositions resolved (a
   *     negative one counts from the end, -1 the last), or every position when
   *     not given. The output layer runs at those rows only (with Gemma 3's
   *     262,144-token vocabulary a row costs as much as a layer);
   *   lens (options.lens = k > 0): the logit lens (cpp/analysis/logit_lens.h),
   *     { ids: Int32Array, probabilities: Float32Array, shape: [layers + 1, T, k],
   *     displays: [(layers + 1)·T·k] strings (with a tokenizer) }: row 0 reads the
   *     embeddings, row l the output of layer l through the final norm and the
   *     unembedding (BERT: the masked-LM head), best first; the last row is the
   *     model's own prediction at every position;
   *   tokenLoss (options.tokenLoss): Float32Array, -log p(true token): [T - 1]
   *     (causal: position i predicting ids[i + 1]) or [maskPositions] (BERT,
   *     against options.maskLabels, one true id per mask position).
   * options.typeIds: segment ids [T] where config.segmentInput (BERT, ELECTRA); options.attentionMask: [T], 0 = padding key.
   * options.ablate: heads to knock out, [{ layer, head }] (0-based; a query head
   *   under grouped-query attention); options.ablation: 'zero' (default: the
   *   head's output before the output projection set to zero) or 'mean' (set,
   *   at every position, to its mean over the T positions of this text).
   */
  forward(ids, options = {}) {
    return this[CALL]('modelForward', forwardRequestSpec({ ...options, ids }));
  }

  /**
   * Tokenizes text (and an optional second text, encoders) with the model's
   * tokenizer.json and runs every layer. Returns what forward() returns plus
   *   tokens: [{ id, piece, display, start, end, byteStart, byteEnd, typeId, segment, special }]
   *     (start/end: UTF-16 offsets into the text of `segment`, 0 = text, 1 = textB, -1 = added);
   *   maskPositions: Int32Array (encoders: config.maskToken's tokens; topK rows follow them);
   *   topK.displays (with options.topK): the display string of each top-k id, row by
   *     row [N * k], named by the model's tokenizer as the tokens are;
   *   truncated, inputTokens: whether the text had more tokens than the model's positions.
   *   tokenLoss (options.tokenLoss): as forward()'s; for an encoder at the mask
   *     tokens against options.maskLabels (one id per mask token, in order).
   * options: { textB } and forward()'s options but the ones the text gives
   *   (ids, typeIds, attentionMask, maskPositions).
   */
  run(text, options = {}) {
    if (typeof text !== 'string') throw new AttnplayError('run: text must be a string');
    const spec = { ...forwardRequestSpec(options), text };
    if (options.textB != null && options.textB !== '') spec.textB = String(options.textB);
    const result = this[CALL]('modelRun', spec);
    return { ...result, tokens: tokenObjects(result.tokens) };
  }

  /**
   * Head-pattern scores of every head (see cpp/analysis/head_analysis.h):
   * [{ layer, head, previousToken, nextToken, induction, sink, self, local, broad, labels }].
   */
  analyzeHeads() {
    return this[CALL]('modelAnalyzeHeads');
  }

  /**
   * Every head ranked by how much ablating it alone raises the mean per-token
   * loss of the text `ids` (one forward pass per head; cpp/analysis/head_ablation.h):
   * { baseLoss, heads: [{ layer, head, loss, delta }] largest delta first,
   *   maskLabels: Int32Array }. Causal models: the loss of each next token.
   * BERT: at options.maskPositions, against options.maskLabels, or when those
   * are not given against the intact model's own top predictions (returned as
   * maskLabels). options: { typeIds, maskPositions, maskLabels, ablation: 'zero' | 'mean' }.
   */
  rankHeads(ids, options = {}) {
    const { typeIds, maskPositions, maskLabels, ablation } = options;
    return this[CALL]('modelRankHeads', forwardRequestSpec({ ids, typeIds, maskPositions, maskLabels, ablation }));
  }

  /**
   * Starts continuing the prompt `ids` (causal models), one token's work per
   * step (KV cache), and returns a Generation: step() runs one step.
   * options: { maxNewTokens = 16, greedy (default unless a sampling option is
   * given), temperature, topK, topP, seed, rivals = 10 } (sampling: see
   * cpp/model/generate.h; the same seed gives the same tokens as `attnplay
   * generate`). It ends at maxNewTokens, the config's eos_token_id or the last
   * position. Call dispose() when done with it (disposing the model ends it too).
   */
  startGeneration(ids, options = {}) {
    const spec = { ids: int32Array(ids, 'ids') };
    const sampling = ['temperature', 'topK', 'topP', 'seed'].filter((key) => options[key] != null);
    for (const key of ['maxNewTokens', 'rivals', ...sampling]) {
      if (options[key] == null) continue;
      if (typeof options[key] !== 'number' || !Number.isFinite(options[key])) throw new AttnplayError(`generate: ${key} must be a number`);
      spec[key] = options[key];
    }
    spec.greedy = options.greedy ?? sampling.length === 0;
    return new Generation(this[MODULE], this[CALL]('startGeneration', spec).handle);
  }

  /**
   * Runs a whole generation (startGeneration's options) and returns the
   * prompt and generated ids as an Int32Array. onStep(step) (Generation.step's
   * object) runs after each new token; returning false stops generation.
   */
  generate(ids, options = {}, onStep = () => {}) {
    if (typeof onStep !== 'function') throw new AttnplayError('generate: onStep must be a function');
    const generation = this.startGeneration(ids, options);
    try {
      for (let step = generation.step(); step !== null; step = generation.step()) {
        if (onStep(step) === false) break;
      }
      return generation.ids;
    } finally {
      generation.dispose();
    }
  }

}

/**
 * A loaded vision transformer (ViT, DeiT, DINOv2 with or without registers),
 * what Engine.loadModel returns when config.json's model_type is vit, deit,
 * dinov2 or dinov2_with_registers. Holds WASM memory until dispose().
 * config: TextModel's fields (vocabSize 0, causal false) plus imageModel: true and
 *   vision: { imageHeight, imageWidth, patchHeight, patchWidth, channels,
 *     distillationToken (DeiT), registers (DINOv2 with registers), prefixTokens
 *     (CLS, distillation and registers: the tokens before the patches), labels
 *     (the classifier's, id2label), hasClassifier, processor: { type, resample,
 *     resize (a shortest edge, or [height, width], or null), crop ([height, width] or null) } }.
 * Tokens are CLS, DIST (DeiT), REG1.. (registers), then the patches row by row.
 */
export class ImageModel extends Bound {
  constructor(module, handle, config) {
    super(module, handle, 'disposeImageModel', 'model');
    this.config = Object.freeze(config);
    this.hasTokenizer = false;
  }

  /**
   * Preprocesses the picture as preprocessor_config.json says (resize with
   * Pillow's arithmetic, crop, rescale, normalise) and runs every layer:
   * picture: an ImageData, or { data: RGBA bytes, width, height }. Returns
   *   attentions: { data: Float32Array, shape: [layers, heads, T, T] } over T = prefixTokens + rows · columns tokens;
   *   tokens: their names, '[CLS]', '[DIST]', '[REG1]'.., then '(row, column)' of each patch;
   *   grid: { rows, columns } of patches;
   *   seen: { data: Uint8Array RGBA, width, height }, the picture as the model saw it (resized, cropped);
   *   topK (a classifier, options.topK = k; default 5): { ids, probabilities, labels, shape: [1, k] };
   *   trace, hiddenStates, logits ([1, labels]) as TextModel.forward's.
   * options: TextModel.forward's trace, hiddenStates, logits, topK, ablate, ablation.
   */
  run(picture, options = {}) {
    return this[CALL]('imageRun', { ...this.#request(options), picture: pictureSpec(picture) });
  }

  /**
   * Runs every layer over preprocessed pixels { data, shape: [channels, height, width] }
   * (as transformers' pixel_values, without the batch): run()'s result without seen.
   */
  forward(pixels, options = {}) {
    return this[CALL]('imageForward', this.#request({ ...options, pixels }));
  }

  // The request of run() and forward(): a classifier's top 5 labels unless options.topK says otherwise.
  #request(options) {
    return forwardRequestSpec({ ...options, topK: options.topK ?? (this.config.vision.hasClassifier ? 5 : undefined) });
  }
}

/**
 * A generation in progress (TextModel.startGeneration): the model's KV cache and
 * sampler state between steps, in WASM memory until dispose().
 */
export class Generation extends Bound {
  constructor(module, handle) {
    super(module, handle, 'disposeGeneration', 'generation');
  }

  /**
   * Runs one step -> null once the generation is done, else
   * { token, display, position, attention: { data, shape: [layers, heads, position + 1] },
   *   probability, samplingProbability, top: { ids: Int32Array, probabilities: Float32Array, displays } }:
   * the new token (display: its text as the tokenizer shows it, null without
   * a tokenizer), the attention row of the position that predicted it,
   * its probability under the model (softmax of the logits) and under the
   * sampler (after temperature, top-k and top-p; 1 when greedy), and the
   * model's `rivals` most probable ids at that step, best first.
   */
  step() {
    return this[CALL]('generationStep');
  }

  /** The prompt and the tokens generated so far (Int32Array). */
  get ids() {
    return this[CALL]('generationIds');
  }
}

/**
 * A loaded encoder-decoder (Marian / opus-mt, BART, T5 / mT5 / flan-T5), what
 * Engine.loadModel returns when config.json's model_type is marian, bart, t5
 * or mt5. Holds WASM memory until dispose().
 * config: { modelType, encoderDecoder: true, encoderLayers, decoderLayers, encoderHeads,
 *           decoderHeads, width, positions, vocabSize, decoderStartTokenId,
 *           eosTokenIds: Int32Array, numBeams, parameters,
 *           relativePositions? (T5: { buckets, maxDistance }, see positionBias) }
 * Attention tensors are { data: Float32Array, shape }, row-major, rows sum to 1:
 *   encoderAttentions [encoderLayers, encoderHeads, S, S] (source over source),
 *   decoderAttentions [decoderLayers, decoderHeads, T, T] (causal, decoder input over itself),
 *   crossAttentions   [decoderLayers, decoderHeads, T, S] (each decoder input position over the source).
 * Decoder inputs start with the start token (config.decoderStartTokenId), so
 * row t of the decoder's tensors is the position that predicts target token t.
 * tokenizerFile, tokenizerJson, hasTokenizer: as TextModel's.
 */
export class TranslationModel extends Bound {
  constructor(module, handle, config, tokenizerFile, hasTokenizer) {
    super(module, handle, 'disposeSeq2SeqModel', 'model');
    this.config = Object.freeze(config);
    Object.assign(this, tokenizerFacts(tokenizerFile, hasTokenizer));
  }

  /**
   * Encoder over sourceIds [S] and decoder over decoderIds [T] (default: the
   * start token alone) -> { encoderAttentions, decoderAttentions, crossAttentions,
   * logits? ([T, vocab], with options.logits), trace?, hiddenStates?, lens?, topK?, tokenLoss? }.
   * The options are TextModel.forward's (one request for every model,
   * engine-inputs.js's forwardRequestSpec), each head naming its part.
   * options.trace = { part: 'encoder' | 'decoder' | 'cross', layer, head } traces
   * that head: trace = { part, layer, head, q, k, v, scores, scaled, bias?,
   * masked, weights, divisor } as TextModel.forward's, bias [Tq, Tk] being
   * T5's position bias added to the scores (q: encoder S rows, decoder and
   * cross T; k and v: encoder and cross S rows, decoder T), the neuron view's vectors.
   * options.hiddenStates: the decoder's residual stream, hiddenStates [decoderLayers + 1, T, width].
   * options.lens = k: the decoder's logit lens, lens = { ids, probabilities,
   * displays, shape: [decoderLayers + 1, T, k] } (as TextModel.run's lens).
   * options.ablate = [{ part, layer, head }] knocks those heads out, with
   * options.ablation 'zero' (default) or 'mean' (as TextModel.forward's, per part).
   * options.topK = k: the k most probable next tokens at every decoder
   * position, topK = { ids, probabilities, displays, shape: [T, k] }.
   * options.tokenLoss: the teacher-forced loss of each target token,
   * tokenLoss = Float32Array [T - 1] (position i predicting decoderIds[i + 1]).
   * options.attentions = false leaves the attention tensors out (a trace, a lens or a loss alone).
   */
  forward(sourceIds, decoderIds = [], options = {}) {
    return this[CALL]('seq2seqForward', {
      ...forwardRequestSpec({ ...options, sourceIds, ids: decoderIds }, { withPart: true }),
      ...(options.attentions === false ? { attentions: false } : {}),
    });
  }

  /**
   * Every head of the three parts ranked by how much knocking it out alone
   * raises the mean teacher-forced loss of the target decoderIds[1..]
   * (decoderIds: the start token and at least one target token;
   * cpp/analysis/head_ablation.h): { baseLoss, heads: [{ part, layer, head,
   * loss, delta }] largest delta first }. options: { ablation: 'zero' | 'mean' }.
   */
  rankHeads(sourceIds, decoderIds, options = {}) {
    return this[CALL]('seq2seqRankHeads', forwardRequestSpec({ sourceIds, ids: decoderIds, ablation: options.ablation }, { withPart: true }));
  }

  /**
   * T5's learned relative position bias of a part ('encoder' or 'decoder';
   * config.relativePositions says the model has one): { span, bias: { data,
   * shape: [heads, 2·span + 1] }, buckets: Int32Array [2·span + 1] }, the
   * bias each head adds to the score of a key at distance key − query =
   * −span..span, and the bucket that distance reads (cpp/model/seq2seq.h).
   */
  positionBias(part, span) {
    return this[CALL]('seq2seqPositionBias', String(part), Number(span));
  }

  /**
   * Tokenizes the source text (with the tokenizer's closing </s>) and an
   * optional target text (after the start token), and runs both sides. Returns
   * forward()'s tensors plus
   *   sourceTokens: [{ id, piece, display, start, end, byteStart, byteEnd, special, ... }] (as TextModel.run's tokens),
   *   decoderTokens: as sourceTokens, the start token first (no text of its own:
   *     segment -1), then the target's tokens with their offsets into the target,
   *   truncated, inputTokens: whether the source had more tokens than the model's positions.
   */
  run(text, { target } = {}) {
    if (typeof text !== 'string') throw new AttnplayError('run: text must be a string');
    const spec = { text };
    if (target != null) spec.target = String(target);
    const result = this[CALL]('seq2seqRun', spec);
    return { ...result, sourceTokens: tokenObjects(result.sourceTokens), decoderTokens: tokenObjects(result.decoderTokens) };
  }

  /**
   * Translates a source: a text (tokenized with the closing </s>) or an array
   * of source ids; greedy (beams = 1, the default) or beam search (beams = N),
   * at most maxNewTokens tokens (default: config.json's max_length or the positions),
   * with the heads of ablate ([{ part, layer, head }], ablation: 'zero' | 'mean') knocked out in every pass;
   * attentions: false leaves the attention tensors out (the translation alone).
   * onStep({ index, token, display, special, crossAttention: { data, shape: [decoderLayers, decoderHeads, S] } })
   * runs after each greedy token, with the cross-attention row of the position
   * that produced it, so a page can show tokens as they appear; returning false
   * stops there (beam search calls it not at all: its tokens are known at the end).
   * Returns { text (null without a tokenizer), sourceTokens, decoderTokens (start token,
   *   target tokens, </s> when produced; as TextModel.run's tokens, each target token's
   *   start/end and byteStart/byteEnd the part of `text` it wrote: empty for a
   *   special token), score, logProbability, truncated, inputTokens }
   *   plus forward()'s tensors over the decoder input = decoderTokens without the
   *   last, so that row i of crossAttentions is the step that produced target
   *   token i (decoderTokens[i + 1]).
   */
  translate(source, { beams = 1, maxNewTokens, ablate, ablation, attentions } = {}, onStep = () => {}) {
    if (typeof onStep !== 'function') throw new AttnplayError('translate: onStep must be a function');
    if (!Number.isInteger(beams)) throw new AttnplayError('translate: beams must be an integer');
    const spec = { beams, ...ablationSpec({ ablate, ablation }, { withPart: true }), ...(attentions === false ? { attentions: false } : {}) };
    if (typeof source === 'string') spec.text = source;
    else spec.sourceIds = int32Array(source, 'translate: source (a text or an array of ids)');
    if (maxNewTokens != null) {
      if (!Number.isInteger(maxNewTokens)) throw new AttnplayError('translate: maxNewTokens must be an integer');
      spec.maxNewTokens = maxNewTokens;
    }
    const { textBytes, ...result } = this[CALL]('seq2seqTranslate', spec, onStep);
    const sourceTokens = tokenObjects(result.sourceTokens);
    const text = textBytes === null ? null : utf8Decoder.decode(textBytes);  // invalid UTF-8 as U+FFFD
    return { ...result, text, sourceTokens, decoderTokens: tokenObjects(result.decoderTokens) };
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
  const { createModule, wasmUrl, wasmBinary } = await coreFiles(name);
  const moduleOptions = {};
  if (!wasmUrl) {
    moduleOptions.wasmBinary = wasmBinary;
    moduleOptions.locateFile = (path) => path; // the core is inline: nothing to locate (nor a URL to resolve against)
  } else if (options.wasmBinary) {
    moduleOptions.wasmBinary = options.wasmBinary;
  } else if (isNode) {
    // Emscripten's web loader would fetch() a file path, which Node cannot do.
    const { readFile } = await importNode('fs/promises');
    moduleOptions.wasmBinary = await readFile(wasmUrl);
  } else {
    moduleOptions.locateFile = (path) => new URL(path, wasmUrl).href;
  }
  const nodeWorkers = useThreads && isNode ? await installNodeWorkers() : null;
  const module = await createModule(moduleOptions);
  // The pool's workers must not keep a Node process alive once it is done.
  if (nodeWorkers) for (const worker of nodeWorkers) worker.unref();
  return new Engine(module);
}
