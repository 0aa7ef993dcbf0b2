// Main-thread proxy of the engine running in engine-worker.js. Every method
// returns a Promise of what the Engine method of the same name returns.
// One worker per page, shared by every view and widget (getEngineClient()).
// Not here: the engine itself (engine.js), or any view logic.
import { startEngineWorker } from './engine-worker-start.js';
import { AttnplayError } from './errors.js';

export class EngineClient {
  #worker;
  #pending = new Map();
  #nextId = 1;

  constructor(worker) {
    this.#worker = worker;
    this.#worker.onmessage = ({ data }) => {
      const request = this.#pending.get(data.id);
      if (!request) return;
      if (data.progress) {
        request.onProgress?.(data.progress);
        return;
      }
      this.#pending.delete(data.id);
      if (data.error) request.reject(Object.assign(new AttnplayError(data.error.message), { cancelled: data.error.name === 'AbortError' }));
      else request.resolve(data.result);
    };
    this.#worker.onerror = (event) => {
      const error = new AttnplayError(`the engine worker failed: ${event.message ?? 'unknown error'}`);
      for (const request of this.#pending.values()) request.reject(error);
      this.#pending.clear();
    };
  }

  call(method, ...args) {
    return this.#request(method, args);
  }

  #request(method, args, onProgress = null, signal = null) {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, onProgress });
      this.#worker.postMessage({ id, method, args });
      signal?.addEventListener('abort', () => this.#worker.postMessage({ cancel: id }), { once: true });
    });
  }

  /**
   * { version, simd, threads, memoryBytes } of the loaded core (threads: 1
   * unless the page is cross-origin isolated; memoryBytes: the WASM memory's
   * size, which never shrinks, so its peak so far).
   */
  info() { return this.call('info'); }
  attention(spec) { return this.call('attention', spec); }
  attend(spec) { return this.call('attend', spec); }
  parameterFreeAttention(spec) { return this.call('parameterFreeAttention', spec); }
  positionalEncoding(positions, d) { return this.call('positionalEncoding', positions, d); }
  layerNorm(spec) { return this.call('layerNorm', spec); }
  gelu(spec) { return this.call('gelu', spec); }
  /** { a [m,k], b [k,n], transposeB?, bias? } -> A·B (Engine.matmul). */
  matmul(spec) { return this.call('matmul', spec); }
  /**
   * Attention rollout or flow computed in the worker (Engine.rollout): attentions
   * { data, shape: [L, H, T, T] } (copied to the worker), method 'rollout' | 'flow'
   * -> { data: Float64Array [T·T], shape: [T, T] }.
   */
  rollout(attentions, method) { return this.call('rollout', attentions, method); }

  /**
   * Loads a model into the worker under `key`. source: base URL of a model
   * folder, an array of Files (a dropped folder), or a hub model { hub, id,
   * revision } (hub.js). onProgress({ file, loaded, total, files? }); an
   * abort of `signal` cancels every download of the load (the promise then
   * rejects with an error whose `cancelled` is true). Resolves to { config,
   * hasTokenizer, fromCache, kept } (engine-worker.js).
   */
  loadModel(key, source, onProgress, signal) { return this.#request('loadModel', [key, source], onProgress, signal); }

  /**
   * Runs the model on text: options { text, textB, topK, trace: { layer, head }, lens }.
   * Resolves to TextModel.run's result (with lens: the logit lens, see engine.js)
   * plus predictions [{ position, top: [{ id, display, probability }] }] and
   * ms (time of the forward pass in the worker).
   */
  run(key, options) { return this.call('run', key, options); }

  /**
   * Vision models (config.imageModel): runs the picture, options { picture:
   * ImageData or { data (RGBA), width, height }, topK, trace, hiddenStates,
   * ablate, ablation }. Resolves to ImageModel.run's result (attentions,
   * tokens, grid, seen, topK, ...) plus ms.
   */
  runImage(key, options) { return this.call('runImage', key, options); }

  /**
   * Encoder-decoders (config.encoderDecoder): runs both sides on options
   * { text, target? }. Resolves to TranslationModel.run's result (encoderAttentions,
   * decoderAttentions, crossAttentions, sourceTokens, decoderTokens, ...) plus ms.
   */
  runSeq2Seq(key, options) { return this.call('runSeq2Seq', key, options); }

  /**
   * Encoder-decoders: translates options { text | sourceIds, beams = 1, maxNewTokens, ablate, ablation, attentions }.
   * onStep({ index, token, display, special, crossAttention: { data, shape:
   * [decoderLayers, decoderHeads, S] } }) runs as each greedy token arrives
   * from the worker. Resolves to TranslationModel.translate's result plus ms.
   */
  translate(key, options, onStep) {
    return this.#request('translate', [key, options], onStep && (({ step }) => onStep(step)));
  }

  /**
   * Causal models: continues options.text with { maxNewTokens, greedy,
   * temperature, topK, topP, seed } (engine.js TextModel.startGeneration).
   * onPrompt(TextModel.run's result over the text) runs first, then onStep(step)
   * as each token arrives (Generation.step's object). An abort of `signal`
   * stops after the current step. Resolves to { ids, stopped, ms }.
   */
  generate(key, options, { onPrompt, onStep }, signal) {
    return this.#request('generate', [key, options], ({ prompt, step }) => (prompt ? onPrompt(prompt) : onStep(step)), signal);
  }

  /** Encoder-decoders: one head's q and k and the decoder's logit lens ({ sourceIds, decoderIds, trace?, lens? } -> { trace, lens }; engine.js TranslationModel.forward). */
  forwardSeq2Seq(key, spec) { return this.call('forwardSeq2Seq', key, spec); }

  /** T5: { part, span } -> TranslationModel.positionBias's { span, bias, buckets }. */
  positionBias(key, spec) { return this.call('positionBias', key, spec); }

  /** Runs the model on token ids: TextModel.forward(ids, options) (e.g. options.trace = { layer, head }). */
  forward(key, ids, options) { return this.call('forward', key, ids, options); }

  /**
   * The text intact and with heads knocked out, in one round trip: options
   * { text, textB, topK, ablate: [{ layer, head }], ablation: 'zero' | 'mean' },
   * or { ids, ... } (causal models: token ids, such as a generation step's).
   * Resolves to the ablated run (as run()'s, its attentions reflecting the
   * ablation) plus before { predictions, tokenLoss } of the intact run,
   * tokenLoss and lossPositions (engine-worker.js). Encoder–decoders:
   * { sourceIds, decoderIds, topK, ablate: [{ part, layer, head }], ablation }
   * -> { before, after, lossPositions } (engine-worker.js's ablateSeq2Seq).
   */
  ablate(key, options) { return this.call('ablate', key, options); }

  /**
   * Every head ranked by the loss increase its ablation alone causes on the
   * text: options { text, textB, ablation } (encoder–decoders: { sourceIds,
   * decoderIds, ablation }). Resolves to TextModel.rankHeads's (TranslationModel.rankHeads's)
   * result plus ms.
   */
  rankHeads(key, options) { return this.call('rankHeads', key, options); }

  /** Head-pattern scores of every head of the model. */
  analyzeHeads(key) { return this.call('analyzeHeads', key); }

  disposeModel(key) { return this.call('disposeModel', key); }
}

let shared = null;

/** The page's engine client (created on first use). */
export function getEngineClient() {
  shared ??= new EngineClient(startEngineWorker());
  return shared;
}
