// How the page and the widget continue a text with a causal model: the
// generation settings (their link form, "20" greedy or
// "20:t0.8:k40:p0.95:s7" sampled), running a generation in the engine worker
// with each token reported as it arrives, and the views' result at any step
// of the timeline: the text up to the position that predicted the step's
// token, whose attention row (the KV-cached step's own) is the last row.
// Rows of the prompt come from one uncached pass over it; rows from the
// prompt's last position on are the generation steps' rows.
// Not here: loading models, DOM, drawing (generation-panel.js draws the
// settings, the timeline and the step's probabilities).
import { readTokens } from '../attention/attention-data-source.js';
import { truncationText, viewTrace } from './run-loop.js';

/** Defaults of the settings: greedy, 20 new tokens (sampling fields used when greedy is false). */
export const DEFAULT_SETTINGS = Object.freeze({ maxNewTokens: 20, greedy: true, temperature: 1, topK: 40, topP: 0.95, seed: 1 });
export const MAX_NEW_TOKENS = 512;

const FIELDS = { t: 'temperature', k: 'topK', p: 'topP', s: 'seed' };

/**
 * Settings -> their link form: "N" (greedy, N new tokens) or
 * "N:tT:kK:pP:sS" (sampling with temperature T, top-k K (0 = all), top-p P, seed S).
 */
export function formatSettings(settings) {
  const s = checkSettings(settings);
  if (s.greedy) return String(s.maxNewTokens);
  return [s.maxNewTokens, ...Object.entries(FIELDS).map(([letter, key]) => `${letter}${s[key]}`)].join(':');
}

/** The link form -> settings; throws an Error that says what is wrong. */
export function parseSettings(text) {
  const [count, ...rest] = String(text).split(':');
  if (!/^\d+$/.test(count)) throw new Error(`"${text}" does not start with the number of new tokens`);
  const settings = { ...DEFAULT_SETTINGS, maxNewTokens: Number(count), greedy: rest.length === 0 };
  for (const part of rest) {
    const key = FIELDS[part[0]];
    if (!key || part.length < 2 || !Number.isFinite(Number(part.slice(1)))) throw new Error(`"${part}" in "${text}" is not t<temperature>, k<top-k>, p<top-p> or s<seed>`);
    settings[key] = Number(part.slice(1));
  }
  return checkSettings(settings);
}

/** Settings with their ranges checked: an Error names the first field out of range. */
export function checkSettings(settings) {
  const s = { ...DEFAULT_SETTINGS, ...settings };
  const problem = (field, range) => new Error(`${field} must be ${range} (it is ${s[field]})`);
  if (!Number.isInteger(s.maxNewTokens) || s.maxNewTokens < 1 || s.maxNewTokens > MAX_NEW_TOKENS) throw problem('maxNewTokens', `a whole number from 1 to ${MAX_NEW_TOKENS}`);
  if (!s.greedy) {
    if (!(s.temperature > 0) || !Number.isFinite(s.temperature)) throw problem('temperature', 'a positive number');
    if (!Number.isInteger(s.topK) || s.topK < 0) throw problem('topK', 'a whole number, 0 for all');
    if (!(s.topP > 0 && s.topP <= 1)) throw problem('topP', 'in (0, 1]');
    if (!Number.isSafeInteger(s.seed) || s.seed < 0) throw problem('seed', 'a whole number from 0');
  }
  return s;
}

/** The engine's options for settings (greedy runs carry no sampling fields). */
export function engineOptions(settings) {
  const s = checkSettings(settings);
  if (s.greedy) return { maxNewTokens: s.maxNewTokens, greedy: true };
  return { maxNewTokens: s.maxNewTokens, greedy: false, temperature: s.temperature, topK: s.topK, topP: s.topP, seed: s.seed };
}

/**
 * The views' result at step `index` of a generation (0 = the first new
 * token): tokens 0..p, p = steps[index].position (the query that predicted
 * the step's token; the views lock it), attentions [L, H, p + 1, p + 1].
 * prompt: TextModel.run's result over the prompt ({ tokens, attentions [L, H, Tp, Tp] });
 * steps: Generation.step objects in order. Returns { result, query: p }.
 */
export function stepResult(prompt, steps, index, config) {
  const [layers, heads, tp] = prompt.attentions.shape;
  const n = steps[index].position + 1; // = tp + index
  const data = new Float32Array(layers * heads * n * n);
  const promptData = prompt.attentions.data;
  for (let m = 0; m < layers * heads; m += 1) {
    for (let q = 0; q < tp - 1; q += 1) data.set(promptData.subarray((m * tp + q) * tp, (m * tp + q + 1) * tp), (m * n + q) * n);
    for (let j = 0; j <= index; j += 1) {
      const row = steps[j].attention; // [L, H, tp + j]
      const keys = row.shape[2];
      data.set(row.data.subarray(m * keys, (m + 1) * keys), (m * n + tp - 1 + j) * n);
    }
  }
  const shown = [...prompt.tokens, ...steps.slice(0, index).map(stepToken)]; // the tokens of stepIds
  const { tokens, text } = readTokens(shown.map(({ id, display, special }) => ({ token: display, id, special })), 'the generated text');
  return {
    result: { tokens, attentions: { data, shape: [layers, heads, n, n] }, texts: [text], causal: true, modelType: config.modelType, kvHeads: config.kvHeads,
      slidingWindow: config.slidingWindow, slidingLayers: config.slidingLayers },
    query: n - 1,
  };
}

/** The ids of the text shown at step `index` (stepResult's tokens): the prompt and the tokens before the step's. */
export const stepIds = (prompt, steps, index) => [...prompt.tokens.map((token) => token.id), ...steps.slice(0, index).map((step) => step.token)];

/**
 * Q and K of one head over the text shown at a step, for the neuron view (as
 * run-loop.js's traceHead gives them for a text). Throws an Error naming the head.
 */
export async function traceStep(client, key, ids, { layer, head }) {
  try {
    const r = await client.forward(key, ids, { trace: { layer, head } });
    return viewTrace(r.trace);
  } catch (error) {
    throw new Error(`Cannot trace head ${head + 1} of layer ${layer + 1}: ${error.message}`);
  }
}

/** A generation step's token as the views name tokens. */
export const stepToken = (step) => ({ id: step.token, display: step.display ?? `#${step.token}`, special: false });

/**
 * Runs a generation with the causal model held in the worker under `key`:
 * settings (checkSettings), onPrompt(prompt) once the prompt has run,
 * onStep(step, steps) after each token; an abort of `signal` stops after the
 * current step. Returns { prompt, steps, ids, stopped, ms, note }. Throws an
 * Error that says what went wrong, also for an empty text.
 */
export async function runGeneration(client, key, config, text, settings, { onPrompt = () => {}, onStep = () => {}, signal } = {}) {
  if (text.trim() === '') throw new Error('Write a prompt to continue.');
  if (!config.causal) throw new Error('Only causal (GPT-style) models continue a text: this model reads the whole text at once.');
  let prompt = null;
  const steps = [];
  try {
    const done = await client.generate(key, { text, ...engineOptions(settings) }, {
      onPrompt: (p) => { prompt = p; onPrompt(p); },
      onStep: (step) => { steps.push(step); onStep(step, steps); },
    }, signal);
    return { prompt, steps, ids: done.ids, stopped: done.stopped, ms: done.ms, note: truncationText(prompt, config) };
  } catch (error) {
    throw new Error(`Cannot continue this text: ${error.message}`);
  }
}
