// How the page (app.js) and the widget (attention-view.js) run a model on
// the reader's text, in one place: the debounced run loop (the latest text
// runs; changes during a run queue exactly one more run), sentence-pair
// detection, the result the views take, the truncation and loading-progress
// messages, the neuron view's trace requests, ablated heads (every view then
// shows the ablated model; the ablation view also gets the intact run to
// compare with, on a text or on a generation step's ids) and the ablation
// view's head ranking.
// Not here: loading models and their caches (the callers), the engine worker
// (engine-client.js), DOM and drawing.

/** Quiet time after the last keystroke before a run, ms. */
export const TYPING_DEBOUNCE = 150;

/** Whether the model reads textB as a second sentence: bidirectional models with a non-empty B. */
export const isPair = (config, textB) => !config.causal && textB.trim() !== '';

/** Predictions kept per cell of the logit lens (the lens view's hover list). */
export const LENS_TOP_K = 5;

/** The loading line for a download's progress ({ loaded, total? } in bytes): "Loading gpt2: 120.0 of 548.1 MB (21%)". */
export function loadingText(name, { loaded, total }) {
  return `Loading ${name}: ${(loaded / 1e6).toFixed(1)}${total ? ` of ${(total / 1e6).toFixed(1)}` : ''} MB${total ? ` (${Math.floor((100 * loaded) / total)}%)` : ''}`;
}

/** The note for a run whose text was cut to the model's positions, or ''. */
export function truncationText(raw, config) {
  return raw.truncated ? `The text has ${raw.inputTokens} tokens; the model reads ${config.positions}, so the rest was cut off.` : '';
}

/** The state's ablated heads that the model has, as the engine takes them: [{ layer, head }] (an encoder–decoder's heads, with a part, are not this model's). */
export function ablatedHeads(config, ablate = []) {
  return ablate.filter(([l, h, part]) => !part && l < config.layers && h < config.heads).map(([layer, head]) => ({ layer, head }));
}

// The ablation view's before → after, from the worker's ablate answer.
const comparison = (raw, heads, mode) => ({
  heads, mode, before: raw.before, after: { predictions: raw.predictions, tokenLoss: raw.tokenLoss }, lossPositions: raw.lossPositions,
});

/**
 * Runs the model held in the worker under `key` on a text (and B), with the
 * state's ablated heads knocked out (state.ablate, state.ablation).
 * config: the model's config from loadModel; options: { topK? (predictions:
 * a causal model's at the last token alone, the output layer's cost being
 * a layer's or more per token with a large vocabulary; predictionsAt gives
 * them at another), lens? (k of the logit lens; 0 or absent: none), compare?
 * (also run the intact model: the ablation view's before → after) }.
 * Returns { raw (the engine's answer: tokens, attentions, predictions, ...),
 * result (what the views take: { tokens, attentions [L, H, T, T], texts,
 * causal, modelType, kvHeads (key/value heads: fewer than heads with GQA),
 * lens (the logit lens, engine.js; null unless asked),
 * ablation: { heads, mode, before: { predictions, tokenLoss }, after: {
 * predictions, tokenLoss }, lossPositions } with compare }), note
 * (truncationText) }. Throws an Error that says what went wrong, also for an empty text.
 */
export async function runText(client, key, config, { text, textB = '', ablate = [], ablation = 'zero' }, { topK, lens, compare = false } = {}) {
  if (text.trim() === '') throw new Error('Write some text to see its attention.');
  const pair = isPair(config, textB);
  const heads = ablatedHeads(config, ablate);
  const lastOnly = topK && config.causal && !compare ? { predictionPositions: [-1] } : {};
  const options = { text, textB: pair ? textB : undefined, ...(topK ? { topK, ...lastOnly } : {}), ...(lens ? { lens } : {}) };
  let raw;
  try {
    if (compare) raw = await client.ablate(key, { ...options, ablate: heads, ablation });
    else raw = await client.run(key, heads.length ? { ...options, ablate: heads, ablation } : options);
  } catch (error) {
    throw new Error(`Cannot run the model on this text: ${error.message}`);
  }
  const result = { tokens: raw.tokens, attentions: raw.attentions, texts: pair ? [text, textB] : [text], causal: config.causal, maskToken: config.hasMlmHead ? config.maskToken : null, modelType: config.modelType, kvHeads: config.kvHeads,
    slidingWindow: config.slidingWindow, slidingLayers: config.slidingLayers, lens: raw.lens ?? null };
  if (compare) result.ablation = comparison(raw, heads, ablation);
  const outside = ablate.length - heads.length;
  const ablationNote = outside ? `${outside} ablated head${outside > 1 ? 's are' : ' is'} not in this model (${config.layers} layers × ${config.heads} heads) and ${outside > 1 ? 'were' : 'was'} left out.` : '';
  return { raw, result, note: [truncationText(raw, config), ablationNote].filter(Boolean).join(' ') };
}

/**
 * A causal model's top-k predictions after token `position` of the state's
 * text (runText gives the last token's alone): [{ position, top }]. Throws an
 * Error that says why not.
 */
export async function predictionsAt(client, key, config, { text, textB = '', ablate = [], ablation = 'zero' }, position, { topK = 5 } = {}) {
  const heads = ablatedHeads(config, ablate);
  try {
    const raw = await client.run(key, { text, topK, predictionPositions: [position], ...(heads.length ? { ablate: heads, ablation } : {}),
      ...(isPair(config, textB) ? { textB } : {}) });
    return raw.predictions;
  } catch (error) {
    throw new Error(`Cannot predict after token ${position + 1}: ${error.message}`);
  }
}

/**
 * The ablation view's comparison (result.ablation's form, runText's) on token
 * ids instead of a text: a generation step's (causal models), with the
 * state's ablated heads. Throws an Error that says why not.
 */
export async function ablateIds(client, key, config, ids, { ablate = [], ablation = 'zero' }, { topK = 5 } = {}) {
  const heads = ablatedHeads(config, ablate);
  try {
    return comparison(await client.ablate(key, { ids, topK, ablate: heads, ablation }), heads, ablation);
  } catch (error) {
    throw new Error(`Cannot run the ablation on this step: ${error.message}`);
  }
}

/** The ablation view's "Most important heads": the ranking of every head on the state's text. Throws an Error that says why not. */
export async function rankHeads(client, key, config, { text, textB = '', ablation = 'zero' }) {
  try {
    return await client.rankHeads(key, { text, textB: isPair(config, textB) ? textB : undefined, ablation });
  } catch (error) {
    throw new Error(`Cannot rank the heads: ${error.message}`);
  }
}

/**
 * Q and K of one head for the neuron view: { layer, head, q [T, d_k], k
 * [T, d_k], scores, rotary } (rotary: RoPE models' q and k before the
 * rotation and its frequencies, see engine.js; null otherwise). Throws an
 * Error naming the head when the run fails.
 */
/**
 * What the neuron view reads of an engine trace: { layer, head, q, k, scores,
 * divisor (√d_k, or Gemma 2/3's √query_pre_attn_scalar), softcap (Gemma 2; 0:
 * none), rotary (RoPE models; else null) }.
 */
export function viewTrace({ layer, head, q, k, scores, divisor, softcap = 0, rotary = null }) {
  return { layer, head, q, k, scores, divisor, softcap, rotary };
}

export async function traceHead(client, key, config, { text, textB = '' }, { layer, head }) {
  const pair = isPair(config, textB);
  try {
    const r = await client.run(key, { text, textB: pair ? textB : undefined, trace: { layer, head } });
    return viewTrace(r.trace);
  } catch (error) {
    throw new Error(`Cannot trace head ${head + 1} of layer ${layer + 1}: ${error.message}`);
  }
}

/**
 * The run loop: schedule() after a change runs `step` once the changes
 * pause; a schedule() during a run queues exactly one more run, so the
 * latest text always runs and runs never overlap. step: async () =>
 * boolean|void; returning false stops the loop until the next schedule().
 */
export class RunLoop {
  #step;
  #pending = false;
  #running = false;
  #debounce = null;

  constructor(step) {
    this.#step = step;
  }

  /** Runs after `delay` ms without another schedule() (0: at the next task). */
  schedule(delay = TYPING_DEBOUNCE) {
    clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => this.runNow(), delay);
  }

  /** Queues a run now (after the current one, if any). */
  runNow() {
    clearTimeout(this.#debounce);
    this.#pending = true;
    if (!this.#running) this.#drain();
  }

  async #drain() {
    this.#running = true;
    try {
      while (this.#pending) {
        this.#pending = false;
        if (await this.#step() === false) break;
      }
    } finally {
      this.#running = false;
    }
  }
}
