// Web Worker that owns the engine and the loaded models, so computation never
// blocks the page. Protocol: { id, method, args } -> { id, result } |
// { id, error: { name, message } }, plus { id, progress } while a model loads
// and after each token of a translation or a generation.
// { cancel: id } aborts every download of that loadModel request, or stops
// that generation after its current step. Typed arrays
// in results are transferred, not copied. Not here: any UI.
import { cachingFetch, DownloadProgress } from '../hub/download.js';
import { createEngine } from './engine.js';
import { openHubModel } from '../hub/hub.js';

const enginePromise = createEngine();
const models = new Map(); // key -> TextModel, TranslationModel or ImageModel
const cancellable = new Map(); // request id -> AbortController of a loadModel or generate in progress
const CANCELLABLE = ['loadModel', 'generate'];
let intactRun = { model: null, request: null, value: null }; // the ablate method's last intact run: a click on a head reruns only the ablated model
const PROGRESS_EVERY = 50; // ms between progress messages

function transferables(value, found = new Set()) {
  if (ArrayBuffer.isView(value)) {
    found.add(value.buffer);
  } else if (value && typeof value === 'object') {
    for (const item of Object.values(value)) transferables(item, found);
  }
  return [...found];
}

function loaded(key) {
  const model = models.get(key);
  if (!model) throw new Error(`no model "${key}" is loaded`);
  return model;
}

// The run's top-k rows, named by the core: [{ position, top: [{ id, display, probability }] }].
function predictions(result) {
  if (!result.topK) return [];
  const [rows, k] = result.topK.shape;
  const positions = result.maskPositions?.length ? [...result.maskPositions]
    : result.predictionPositions ? [...result.predictionPositions] : [...Array(rows).keys()];
  return positions.map((position, r) => ({
    position,
    top: Array.from({ length: k }, (_, j) => ({
      id: result.topK.ids[r * k + j],
      display: result.topK.displays[r * k + j],
      probability: result.topK.probabilities[r * k + j],
    })),
  }));
}

/**
 * An encoder–decoder with and without heads: { sourceIds, decoderIds (the
 * start token and the target), topK, ablate: [{ part, layer, head }],
 * ablation } -> { before, after: { predictions (at every decoder position),
 * tokenLoss (teacher-forced, [T - 1]) }, lossPositions (the target token
 * each loss belongs to: 1..T-1 of decoderIds), ms }. The intact pass is kept
 * for the next call on the same ids, so a click on a head costs one pass.
 * (The translation without the heads: the translate method with ablate.)
 */
function ablateSeq2Seq(model, { sourceIds, decoderIds, topK = 5, ablate = [], ablation }) {
  const started = performance.now();
  const k = Math.max(topK, 1);
  const pass = (heads) => {
    const r = model.forward(sourceIds, decoderIds, { topK: k, tokenLoss: true, ablate: heads, ablation, attentions: false });
    return { predictions: predictions(r), tokenLoss: r.tokenLoss };
  };
  const request = JSON.stringify([Array.from(sourceIds), Array.from(decoderIds), k]);
  if (intactRun.model !== model || intactRun.request !== request) intactRun = { model, request, value: pass([]) };
  const before = { predictions: intactRun.value.predictions, tokenLoss: Float32Array.from(intactRun.value.tokenLoss) };
  return {
    before, after: pass(ablate), lossPositions: Array.from({ length: decoderIds.length - 1 }, (_, i) => i + 1), ms: performance.now() - started,
  };
}

const METHODS = {
  info: (engine) => ({ version: engine.version, simd: engine.simd, threads: engine.threads, memoryBytes: engine.memoryBytes() }),
  attention: (engine, spec) => engine.attention(spec),
  attend: (engine, spec) => engine.attend(spec),
  parameterFreeAttention: (engine, spec) => engine.parameterFreeAttention(spec),
  positionalEncoding: (engine, positions, d) => engine.positionalEncoding(positions, d),
  layerNorm: (engine, spec) => engine.layerNorm(spec),
  gelu: (engine, spec) => engine.gelu(spec),
  matmul: (engine, spec) => engine.matmul(spec),
  rollout: (engine, attentions, method) => engine.rollout(attentions, method),

  /**
   * source: a base URL string, an array of Files, or a hub model { hub, id,
   * revision, token? } (hub.js; token: an access token for gated models, sent
   * to the hub only; its files are kept in Cache Storage, download.js).
   * -> { config, hasTokenizer, fromCache (every file came from the cache),
   * kept (the downloads were stored; false when the storage refused them) }.
   * Progress: { loaded, total, file } (hub models: also files [{ name, size,
   * loaded }]). The model loaded before under `key` is replaced only once this one loads.
   */
  async loadModel(engine, key, source, report, signal) {
    const hub = source !== null && typeof source === 'object' && typeof source.id === 'string';
    const fetchImpl = cachingFetch({ signal, cacheName: hub ? undefined : null });
    // At most one progress message per PROGRESS_EVERY; the latest is always sent (a stalled download shows where it stalled).
    let last = 0;
    let latest = null;
    let timer = null;
    const send = () => {
      timer = null;
      last = performance.now();
      if (!signal.aborted) report(latest);
    };
    const throttled = (progress) => {
      latest = progress;
      if (timer === null) timer = setTimeout(send, Math.max(0, last + PROGRESS_EVERY - performance.now()));
    };
    let modelSource = source;
    let onProgress = throttled;
    if (hub) {
      const { token = '', ...ref } = source;
      const opened = await openHubModel(ref, { fetch: fetchImpl, token });
      const tracker = new DownloadProgress(opened.files);
      report(tracker.snapshot());
      modelSource = opened.source;
      onProgress = (progress) => {
        tracker.update(progress);
        throttled({ ...tracker.snapshot(), file: progress.file });
      };
    }
    const model = await engine.loadModel(modelSource, { fetch: fetchImpl, onProgress });
    clearTimeout(timer); // loaded: no progress after the answer
    METHODS.disposeModel(engine, key);
    models.set(key, model);
    const kept = await fetchImpl.stored().then(() => true, () => false);
    return { config: model.config, hasTokenizer: model.hasTokenizer, fromCache: hub && fetchImpl.fetched.length === 0, kept };
  },

  /** { text, textB, topK, trace, lens } -> run result + predictions + milliseconds */
  run(engine, key, options) {
    const model = loaded(key);
    const started = performance.now();
    const result = model.run(options.text, options);
    const ms = performance.now() - started;
    return { ...result, predictions: predictions(result), ms };
  },

  /**
   * { text, textB, topK, ablate, ablation } -> the ablated run (attentions,
   * tokens, predictions, ...) + before: { predictions, tokenLoss } of the
   * intact model + tokenLoss of the ablated one + lossPositions (the token
   * each loss belongs to) + ms (both passes). Causal models: the loss of each
   * next token; BERT: at the [MASK] positions, against the intact model's top
   * prediction (the text has no true token there). The intact run is kept
   * for the next call on the same text, so a click on a head costs one pass
   * (attention, predictions and loss together). { ids, ... } instead of the
   * text (causal models): token ids, such as a generation step's; the
   * ablated pass is then forward()'s, without tokens. Encoder–decoders:
   * ablateSeq2Seq's answer.
   */
  ablate(engine, key, options) {
    const model = loaded(key);
    if (model.config.encoderDecoder) return ablateSeq2Seq(model, options);
    const started = performance.now();
    const causal = model.config.causal;
    const byIds = options.ids != null;
    if (byIds && !causal) throw new Error(`model "${key}" is not a causal model: ablation on token ids needs one`);
    const pass = (extra) => (byIds ? model.forward(options.ids, extra) : model.run(options.text, { textB: options.textB, ...extra }));
    const topK = Math.max(options.topK ?? 5, 1);
    const request = JSON.stringify(byIds ? [Array.from(options.ids), topK] : [options.text, options.textB, topK]);
    if (intactRun.model !== model || intactRun.request !== request) {
      const run = pass({ topK, tokenLoss: causal });
      const maskPositions = [...(run.maskPositions ?? [])];
      const labels = maskPositions.map((_, r) => run.topK.ids[r * topK]); // BERT: the intact model's own top predictions
      const maskLabels = causal || !maskPositions.length ? undefined : labels;
      const tokenLoss = causal || !maskLabels ? run.tokenLoss ?? new Float32Array(0) : pass({ tokenLoss: true, maskLabels }).tokenLoss;
      const length = byIds ? options.ids.length : run.tokens.length;
      const lossPositions = causal ? Array.from({ length: length - 1 }, (_, i) => i + 1) : maskPositions;
      intactRun = { model, request, value: { predictions: predictions(run), tokenLoss, lossPositions, maskLabels } };
    }
    const intact = intactRun.value;
    const ablated = pass({
      topK, tokenLoss: causal || Boolean(intact.maskLabels), maskLabels: intact.maskLabels,
      ablate: options.ablate, ablation: options.ablation,
    });
    return {
      ...ablated, predictions: predictions(ablated), tokenLoss: ablated.tokenLoss ?? new Float32Array(0), lossPositions: intact.lossPositions,
      before: { predictions: intact.predictions, tokenLoss: Float32Array.from(intact.tokenLoss) }, ms: performance.now() - started,
    };
  },

  /**
   * { text, textB, ablation } -> TextModel.rankHeads's ranking over the text's tokens + ms.
   * Encoder–decoders: { sourceIds, decoderIds, ablation } -> TranslationModel.rankHeads's + ms.
   */
  rankHeads(engine, key, options) {
    const model = loaded(key);
    const started = performance.now();
    if (model.config.encoderDecoder) {
      return { ...model.rankHeads(options.sourceIds, options.decoderIds, { ablation: options.ablation }), ms: performance.now() - started };
    }
    const { tokens, maskPositions } = model.run(options.text, { textB: options.textB });
    const ranking = model.rankHeads(tokens.map((t) => t.id), {
      typeIds: model.config.segmentInput ? tokens.map((t) => t.typeId) : undefined, maskPositions: model.config.causal ? undefined : [...maskPositions], ablation: options.ablation,
    });
    return { ...ranking, ms: performance.now() - started };
  },

  analyzeHeads: (engine, key) => loaded(key).analyzeHeads(),

  /** Token ids (and TextModel.forward's options: trace, topK, ...) -> TextModel.forward's result. */
  forward: (engine, key, ids, options) => loaded(key).forward(ids, options),

  /**
   * Vision models: { picture: ImageData or { data (RGBA), width, height }, topK, trace, hiddenStates, ablate,
   * ablation } -> ImageModel.run's result (attentions, tokens, grid, seen, topK, ...) + ms.
   */
  runImage(engine, key, options) {
    const model = loaded(key);
    if (!model.config.imageModel) throw new Error(`model "${key}" reads text, not pictures`);
    const started = performance.now();
    const { picture, ...request } = options;
    const result = model.run(picture, request);
    return { ...result, ms: performance.now() - started };
  },

  /**
   * Encoder-decoders: { text, target } -> TranslationModel.run's result + ms.
   */
  runSeq2Seq(engine, key, options) {
    const model = loaded(key);
    if (!model.config.encoderDecoder) throw new Error(`model "${key}" is not an encoder-decoder`);
    const started = performance.now();
    const result = model.run(options.text, { target: options.target });
    return { ...result, ms: performance.now() - started };
  },

  /**
   * Encoder-decoders: { sourceIds, decoderIds, trace?: { part, layer, head }, lens?: k } ->
   * { trace, lens } of TranslationModel.forward (null where not asked for), without the attention tensors.
   */
  forwardSeq2Seq(engine, key, { sourceIds, decoderIds, trace, lens }) {
    const model = loaded(key);
    if (!model.config.encoderDecoder) throw new Error(`model "${key}" is not an encoder-decoder`);
    const r = model.forward(sourceIds, decoderIds, { trace, lens, attentions: false });
    return { trace: r.trace ?? null, lens: r.lens ?? null };
  },

  /** T5: { part, span } -> TranslationModel.positionBias's { span, bias, buckets }. */
  positionBias(engine, key, { part, span }) {
    const model = loaded(key);
    if (!model.config.relativePositions) throw new Error(`model "${key}" has no relative position bias`);
    return model.positionBias(part, span);
  },

  /**
   * Encoder-decoders: { text | sourceIds, beams, maxNewTokens, ablate, ablation, attentions } -> TranslationModel.translate's
   * result + ms; each greedy step is reported as progress { step } (the
   * onStep object) as soon as it is decoded.
   */
  translate(engine, key, options, report) {
    const model = loaded(key);
    if (!model.config.encoderDecoder) throw new Error(`model "${key}" is not an encoder-decoder`);
    const started = performance.now();
    const { beams = 1, maxNewTokens, ablate, ablation, attentions } = options;
    const result = model.translate(options.sourceIds ?? options.text, { beams, maxNewTokens, ablate, ablation, attentions },
      (step) => { report({ step }); });
    return { ...result, ms: performance.now() - started };
  },

  /**
   * Causal models: { text, maxNewTokens, greedy, temperature, topK, topP, seed }
   * -> { ids, stopped (cancelled before the end), ms }. Reported first as
   * progress { prompt: TextModel.run's result over the text }, then { step } (a
   * Generation.step object) after each token; between steps the worker
   * answers messages, so { cancel } stops it.
   */
  async generate(engine, key, options, report, signal) {
    const model = loaded(key);
    if (!model.config.causal) throw new Error(`model "${key}" is not a causal model: it cannot continue a text`);
    const { text, ...settings } = options;
    const prompt = model.run(text);
    report({ prompt }, transferables(prompt));
    const started = performance.now();
    const generation = model.startGeneration(prompt.tokens.map((token) => token.id), settings);
    try {
      for (let step = generation.step(); step !== null; step = generation.step()) {
        report({ step }, transferables(step));
        await new Promise((resolve) => setTimeout(resolve, 0)); // a { cancel } message can arrive here
        if (signal.aborted) return { ids: generation.ids, stopped: true, ms: performance.now() - started };
      }
      return { ids: generation.ids, stopped: false, ms: performance.now() - started };
    } finally {
      generation.dispose();
    }
  },

  disposeModel(engine, key) {
    if (intactRun.model === models.get(key)) intactRun = { model: null, request: null, value: null };
    models.get(key)?.dispose();
    models.delete(key);
    return true;
  },
};

self.onmessage = async ({ data }) => {
  if (data.cancel !== undefined) {
    cancellable.get(data.cancel)?.abort();
    return;
  }
  const { id, method, args } = data;
  const controller = new AbortController();
  if (CANCELLABLE.includes(method)) cancellable.set(id, controller);
  try {
    if (!Object.hasOwn(METHODS, method)) throw new Error(`unknown engine method "${method}"`);
    const engine = await enginePromise;
    const report = (progress, transfer = []) => self.postMessage({ id, progress }, transfer);
    const result = await METHODS[method](engine, ...args, report, controller.signal);
    self.postMessage({ id, result }, transferables(result));
  } catch (error) {
    const cancelled = controller.signal.aborted && method === 'loadModel';
    controller.abort(); // a failed load leaves no request running
    self.postMessage({ id, error: { name: cancelled ? 'AbortError' : error.name, message: cancelled ? 'the download was cancelled' : error.message } });
  } finally {
    cancellable.delete(id);
  }
};
