// How the page and the widget run an encoder–decoder model (config.encoderDecoder:
// Marian, BART, T5) on the reader's text: the model's own translation, decoded
// greedily in the engine worker with each target token reported as it is
// written (with its cross-attention row), or a target text the reader gives
// (teacher-forced); then the views' results of the three attention parts.
// Rows of the decoder's attention are the steps of decoding: row i is the
// decoder at its input token i (the start token first), which wrote target
// token i; cross-attention rows are labelled by the token they wrote, as in
// the tutorials' alignment matrix, decoder self-attention rows by the input.
// The Ablation tab's comparison: the target's teacher-forced loss and
// predictions with and without heads of any part, and the translation the
// model writes without them.
// Not here: loading models, DOM, drawing.
import { readTokens } from '../attention/attention-data-source.js';
import { crossResult } from '../attention/encoder-decoder.js';
import { truncationText } from './run-loop.js';

/** Layers × heads of a decoder step's rows: [L, H, S] each -> one tensor [L, H, t, S] (t = rows.length). */
export function stackRows(rows) {
  const [layers, heads, keys] = rows[0].shape;
  const t = rows.length;
  const data = new Float32Array(layers * heads * t * keys);
  rows.forEach((row, q) => {
    for (let m = 0; m < layers * heads; m += 1) data.set(row.data.subarray(m * keys, (m + 1) * keys), (m * t + q) * keys);
  });
  return { data, shape: [layers, heads, t, keys] };
}

/** The first `n` rows and columns of each [T, T] map of a [L, H, T, T] tensor. */
function leadingSquare({ data, shape: [layers, heads, t] }, n) {
  const out = new Float32Array(layers * heads * n * n);
  for (let m = 0; m < layers * heads; m += 1) {
    for (let q = 0; q < n; q += 1) out.set(data.subarray((m * t + q) * t, (m * t + q) * t + n), (m * n + q) * n);
  }
  return { data: out, shape: [layers, heads, n, n] };
}

/** The first `n` query rows of each [T, S] map of a [L, H, T, S] tensor. */
function leadingRows({ data, shape: [layers, heads, t, keys] }, n) {
  const out = new Float32Array(layers * heads * n * keys);
  for (let m = 0; m < layers * heads; m += 1) out.set(data.subarray(m * t * keys, (m * t + n) * keys), m * n * keys);
  return { data: out, shape: [layers, heads, n, keys] };
}

// Engine tokens { id, display, special } -> the views' tokens and a text they cover (segment 0).
const viewTokens = (tokens, where) => readTokens(tokens.map(({ id, display, special }) => ({ token: display, id, special })), where);

/**
 * The source as the views take it: { tokens, text } (the engine's tokens
 * carry their offsets into the text).
 */
const sourceOf = (tokens, text) => ({ tokens: tokens.map((token) => ({ ...token, segment: 0, typeId: 0 })), text });

/**
 * The cross part while decoding: source tokens, the tokens written so far
 * and their rows ([{ display, id, special, crossAttention [L, H, S] }]).
 */
export function partialCross(source, steps, modelType) {
  return crossResult(source, viewTokens(steps, 'the translation'), stackRows(steps.map((step) => step.crossAttention)), modelType);
}

/**
 * The three parts of an encoder–decoder run:
 * { parts: { encoder, decoder, cross: { result, layers, heads } }, order }.
 * Each result is marked decoderLensPending: the lens view shows the decoder's
 * lens (translationLens) once it is read, not the lens a part lacks.
 * raw: the engine's answer (sourceTokens, decoderTokens = start token,
 * target tokens; encoder [L, H, S, S], decoder [L, H, T, T] and cross
 * [L, H, T, S] attention over decoderTokens less the last), config: the model's.
 */
export function translationParts(raw, source, config) {
  const { modelType } = config;
  const inputs = raw.decoderTokens.slice(0, -1);
  const written = raw.decoderTokens.slice(1);
  const decoder = viewTokens(inputs, 'the decoder input');
  const encoderPart = { tokens: source.tokens, attentions: raw.encoderAttentions, texts: [source.text], causal: false, modelType, decoderLensPending: true };
  const decoderPart = { tokens: decoder.tokens, attentions: raw.decoderAttentions, texts: [decoder.text], causal: true, modelType, decoderLensPending: true };
  const crossPart = { ...crossResult(source, viewTokens(written, 'the translation'), raw.crossAttentions, modelType), decoderLensPending: true };
  const parts = {
    encoder: { result: encoderPart, layers: config.encoderLayers, heads: config.encoderHeads },
    decoder: { result: decoderPart, layers: config.decoderLayers, heads: config.decoderHeads },
    cross: { result: crossPart, layers: config.decoderLayers, heads: config.decoderHeads },
  };
  return { parts, order: ['encoder', 'decoder', 'cross'] };
}

/**
 * Runs the encoder–decoder held in the worker under `key` on { text, target }.
 * Without a target the model translates: onSource(source) runs once the
 * source tokens are known, onStep(partial cross result, steps so far) after
 * each target token. Returns { parts, order, translation (text), source,
 * raw, ms, note, relativePositions (T5's config.relativePositions, else null) }
 * (translationLens adds `lens`, the promise of its decoder's lens). Throws an Error that says what went wrong, also for an empty text.
 */
export async function runTranslation(client, key, config, { text, target = '' }, { onSource = () => {}, onStep = () => {} } = {}) {
  if (text.trim() === '') throw new Error('Write some text to translate.');
  try {
    if (target.trim() !== '') {
      // The reader's target: one teacher-forced pass over the start token and the target; the last position wrote nothing shown.
      const raw = await client.runSeq2Seq(key, { text, target });
      const source = sourceOf(raw.sourceTokens, text);
      const rows = raw.decoderTokens.length - 1;
      const forced = { ...raw, decoderAttentions: leadingSquare(raw.decoderAttentions, rows), crossAttentions: leadingRows(raw.crossAttentions, rows) };
      return { ...translationParts(forced, source, config), translation: target, source, raw, ms: raw.ms, note: truncationText(raw, config),
        relativePositions: config.relativePositions ?? null };
    }
    // The source's tokens first (one cheap pass), so the steps can be drawn against them as they come.
    const first = await client.runSeq2Seq(key, { text });
    const source = sourceOf(first.sourceTokens, text);
    onSource(source);
    const steps = [];
    const raw = await client.translate(key, { text }, (step) => {
      steps.push(step);
      onStep(partialCross(source, steps, config.modelType), steps);
    });
    return { ...translationParts(raw, source, config), translation: raw.text, source, raw, ms: raw.ms, note: truncationText(raw, config),
      relativePositions: config.relativePositions ?? null };
  } catch (error) {
    throw new Error(`Cannot run the model on this text: ${error.message}`);
  }
}

// The ids a run's parts are over: the source and the decoder input (the decoder tokens without the last).
const runIds = (run) => ({
  sourceIds: run.raw.sourceTokens.map((token) => token.id),
  decoderIds: run.raw.decoderTokens.slice(0, -1).map((token) => token.id),
});

/**
 * The neuron view's trace of one head of `part` ('encoder', 'decoder' or
 * 'cross') in a run of runTranslation's: { layer, head, q, k, divisor,
 * rotary: null, positionBias }. T5's self-attention parts: positionBias =
 * { part, bias [Tq, Tk] (the trace's), byDistance: TranslationModel.positionBias's
 * over the distances of this text, at least to the model's max distance, maxDistance },
 * else null. Throws an Error that says which head could not be traced.
 */
export async function traceTranslation(client, key, run, part, { layer, head }) {
  try {
    const ids = runIds(run);
    const { trace } = await client.forwardSeq2Seq(key, { ...ids, trace: { part, layer, head } });
    const relative = run.relativePositions;
    let positionBias = null;
    if (trace.bias && relative) {
      const tokens = part === 'encoder' ? ids.sourceIds.length : ids.decoderIds.length;
      const byDistance = await client.positionBias(key, { part, span: Math.max(tokens, relative.maxDistance + 1) });
      positionBias = { part, bias: trace.bias, byDistance, maxDistance: relative.maxDistance };
    }
    return { layer, head, q: trace.q, k: trace.k, divisor: trace.divisor, rotary: null, positionBias };
  } catch (error) {
    throw new Error(`Cannot trace head ${head + 1} of layer ${layer + 1} (${part}): ${error.message}`);
  }
}

/**
 * The lens view's result for a run of runTranslation's: the decoder part's
 * result with the decoder's logit lens (k per cell), `decoderLens` set (the
 * lens view's caption says what it reads). Asked of the worker once per run
 * (the promise is kept as run.lens; a failure is not kept, so a later call
 * asks again). Rejects with an Error that says why not.
 */
export function translationLens(client, key, run, k) {
  run.lens ??= client.forwardSeq2Seq(key, { ...runIds(run), lens: k }).then(
    ({ lens }) => ({ ...run.parts.decoder.result, lens, decoderLens: true }),
    (error) => {
      run.lens = null;
      throw new Error(`Cannot read the decoder's logit lens: ${error.message}`);
    },
  );
  return run.lens;
}

/** The three parts' layer × head grids of an encoder–decoder: [{ part, layers, heads }]. */
export const partGrids = (config) => [
  { part: 'encoder', layers: config.encoderLayers, heads: config.encoderHeads },
  { part: 'decoder', layers: config.decoderLayers, heads: config.decoderHeads },
  { part: 'cross', layers: config.decoderLayers, heads: config.decoderHeads },
];

/** The state's ablated heads that an encoder–decoder has, as the engine takes them: [{ part, layer, head }]. */
export function ablatedParts(config, ablate = []) {
  const grids = new Map(partGrids(config).map((grid) => [grid.part, grid]));
  return ablate.filter(([l, h, part]) => grids.has(part) && l < grids.get(part).layers && h < grids.get(part).heads)
    .map(([layer, head, part]) => ({ part, layer, head }));
}

/**
 * The ablation view's result for a run of runTranslation's, before its
 * comparison is known: { tokens (the target tokens the decoder wrote, or the
 * reader's target), texts, causal: true, modelType, grids (partGrids),
 * translation (the intact model's own, or null for the reader's target) };
 * made once per run (kept as run.ablationFrame: the same tokens each time).
 */
export function ablationFrame(run, config) {
  const cross = run.parts.cross.result;
  run.ablationFrame ??= {
    tokens: cross.tokens.filter((token) => token.segment === 1), texts: [cross.texts[1]], causal: true, modelType: config.modelType,
    grids: partGrids(config), translation: run.raw.text ?? null,
  };
  return run.ablationFrame;
}

// The source ids and every decoder id of a run (start token, target): the teacher-forced loss reads each target token.
const targetIds = (run) => ({ sourceIds: runIds(run).sourceIds, decoderIds: run.raw.decoderTokens.map((token) => token.id) });

/**
 * ablationFrame's result with its comparison: result.ablation = { heads,
 * mode, before, after: { predictions, tokenLoss }, lossPositions (loss i is
 * target token i's, predicted by the decoder at position i), leftOut (how
 * many of the state's heads the model lacks), translation:
 * { text, decoderTokens } the model's own translation with the heads knocked
 * out } (engine-worker.js's ablateSeq2Seq, then its translate), over the
 * target the run shows. onComparison(result) runs first, without the
 * translation (null), which takes a whole decoding. Throws an Error that says why not.
 */
export async function translationAblation(client, key, run, config, { ablate = [], ablation = 'zero' }, { topK = 5, onComparison = () => {} } = {}) {
  const heads = ablatedParts(config, ablate);
  try {
    const raw = await client.ablate(key, { ...targetIds(run), topK, ablate: heads, ablation });
    const comparison = {
      heads, mode: ablation, before: raw.before, after: raw.after, lossPositions: raw.lossPositions.map((p) => p - 1), translation: null,
      leftOut: ablate.length - heads.length, // heads of the state (a link's) that this model does not have
    };
    onComparison({ ...ablationFrame(run, config), ablation: comparison });
    const { text, decoderTokens } = await client.translate(key, { sourceIds: targetIds(run).sourceIds, ablate: heads, ablation, attentions: false });
    return { ...ablationFrame(run, config), ablation: { ...comparison, translation: { text, decoderTokens } } };
  } catch (error) {
    throw new Error(`Cannot run the ablation on this translation: ${error.message}`);
  }
}

/** The ablation view's "Most important heads" of a run of runTranslation's, over its target. Throws an Error that says why not. */
export async function rankTranslationHeads(client, key, run, { ablation = 'zero' }) {
  try {
    return await client.rankHeads(key, { ...targetIds(run), ablation });
  } catch (error) {
    throw new Error(`Cannot rank the heads: ${error.message}`);
  }
}
