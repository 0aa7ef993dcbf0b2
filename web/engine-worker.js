// Web Worker that owns the engine and the loaded models, so computation never
// blocks the page. Protocol: { id, method, args } -> { id, result } |
// { id, error: { name, message } }, plus { id, progress } while a model loads
// and after each token of a translation.
// Typed arrays in results are transferred, not copied. Not here: any UI.
import { createEngine } from './engine.js';

const enginePromise = createEngine();
const models = new Map(); // key -> { model, tokenizer }

function transferables(value, found = new Set()) {
  if (ArrayBuffer.isView(value)) {
    found.add(value.buffer);
  } else if (value && typeof value === 'object') {
    for (const item of Object.values(value)) transferables(item, found);
  }
  return [...found];
}

function loaded(key) {
  const entry = models.get(key);
  if (!entry) throw new Error(`no model "${key}" is loaded`);
  return entry;
}

// Display strings of the top-k ids: [{ position, top: [{ id, display, probability }] }].
function predictions(entry, result) {
  if (!result.topK || !entry.tokenizer) return [];
  const [rows, k] = result.topK.shape;
  const positions = result.maskPositions?.length ? [...result.maskPositions] : [...Array(rows).keys()];
  return positions.map((position, r) => ({
    position,
    top: Array.from({ length: k }, (_, j) => {
      const id = result.topK.ids[r * k + j];
      return { id, display: entry.tokenizer.display(id), probability: result.topK.probabilities[r * k + j] };
    }),
  }));
}

const METHODS = {
  info: (engine) => ({ version: engine.version, simd: engine.simd }),
  attention: (engine, spec) => engine.attention(spec),
  attend: (engine, spec) => engine.attend(spec),
  parameterFreeAttention: (engine, spec) => engine.parameterFreeAttention(spec),
  positionalEncoding: (engine, positions, d) => engine.positionalEncoding(positions, d),
  layerNorm: (engine, spec) => engine.layerNorm(spec),
  gelu: (engine, spec) => engine.gelu(spec),
  matmul: (engine, spec) => engine.matmul(spec),

  /**
   * source: a base URL string, or an array of Files; -> { config, hasTokenizer }.
   * The model loaded before under `key` is replaced only once this one loads.
   */
  async loadModel(engine, key, source, report) {
    const model = await engine.loadModel(source, { onProgress: report });
    let tokenizer = null;
    try {
      tokenizer = model.tokenizerJson ? engine.loadTokenizer(model.tokenizerJson) : null;
    } catch (error) {
      model.dispose();
      throw error;
    }
    METHODS.disposeModel(engine, key);
    models.set(key, { model, tokenizer });
    return { config: model.config, hasTokenizer: tokenizer !== null };
  },

  /** { text, textB, topK, trace } -> run result + predictions + milliseconds */
  run(engine, key, options) {
    const entry = loaded(key);
    const started = performance.now();
    const result = entry.model.run(options.text, options);
    const ms = performance.now() - started;
    return { ...result, predictions: predictions(entry, result), ms };
  },

  analyzeHeads: (engine, key) => loaded(key).model.analyzeHeads(),

  /**
   * Encoder-decoders: { text, target } -> Seq2SeqModel.run's result + ms.
   */
  runSeq2Seq(engine, key, options) {
    const { model } = loaded(key);
    if (!model.config.encoderDecoder) throw new Error(`model "${key}" is not an encoder-decoder`);
    const started = performance.now();
    const result = model.run(options.text, { target: options.target });
    return { ...result, ms: performance.now() - started };
  },

  /**
   * Encoder-decoders: { text | sourceIds, beams, maxNewTokens } -> Seq2SeqModel.translate's
   * result + ms; each greedy step is reported as progress { step } (the
   * onStep object) as soon as it is decoded.
   */
  translate(engine, key, options, report) {
    const { model } = loaded(key);
    if (!model.config.encoderDecoder) throw new Error(`model "${key}" is not an encoder-decoder`);
    const started = performance.now();
    const result = model.translate(options.sourceIds ?? options.text, { beams: options.beams ?? 1, maxNewTokens: options.maxNewTokens },
      (step) => { report({ step }); });
    return { ...result, ms: performance.now() - started };
  },

  disposeModel(engine, key) {
    models.get(key)?.model.dispose();
    models.get(key)?.tokenizer?.dispose();
    models.delete(key);
    return true;
  },
};

self.onmessage = async ({ data: { id, method, args } }) => {
  try {
    if (!Object.hasOwn(METHODS, method)) throw new Error(`unknown engine method "${method}"`);
    const engine = await enginePromise;
    const report = (progress) => self.postMessage({ id, progress });
    const result = await METHODS[method](engine, ...args, report);
    self.postMessage({ id, result }, transferables(result));
  } catch (error) {
    self.postMessage({ id, error: { name: error.name, message: error.message } });
  }
};
