// Head ablation on the page and in the widget, without DOM or WASM: the
// "L:H,L:H" form of a list of heads (the CLI's --ablate, the widget's
// `ablate` attribute, the link's ablate=; an encoder–decoder's heads as
// "PART:L:H", PART one of encoder, decoder, cross), and the before → after
// comparison the ablation view draws from two runs of the same text (intact,
// ablated): the predictions at one row with each token's probability shift,
// and the change of every token's loss.
// A head is [layer, head] (0-based), or [layer, head, part] for an encoder–decoder.
// Not here: running the model (engine-worker.js's ablate), drawing (ablation-view.js).
import { SEQ2SEQ_PARTS } from '../engine/engine-inputs.js';

export const ABLATION_MODES = ['zero', 'mean'];

/** "0:1, cross:2:3" -> [[0, 1], [2, 3, 'cross']] (sorted, duplicates dropped). Throws an Error naming a bad item. */
export function parseHeads(text) {
  const heads = [];
  for (const item of String(text).split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const match = new RegExp(`^(?:(${SEQ2SEQ_PARTS.join('|')}):)?(\\d+):(\\d+)$`).exec(item);
    if (!match) throw new Error(`"${item}" is not LAYER:HEAD (two numbers from 0, e.g. 0:3) or PART:LAYER:HEAD (PART: ${SEQ2SEQ_PARTS.join(', ')})`);
    heads.push(match[1] ? [Number(match[2]), Number(match[3]), match[1]] : [Number(match[2]), Number(match[3])]);
  }
  return normalizeHeads(heads);
}

/** "L:H", or "PART:L:H" for a head with a part: the form of one head in a list, and its identity. */
export const headKey = ([layer, head, part]) => (part ? `${part}:${layer}:${head}` : `${layer}:${head}`);

/** The heads sorted by part (encoder, decoder, cross; none first), layer, then head, without duplicates. */
export function normalizeHeads(heads) {
  const seen = new Set();
  const partOrder = (part) => (part ? 1 + SEQ2SEQ_PARTS.indexOf(part) : 0);
  return heads.filter((h) => !seen.has(headKey(h)) && seen.add(headKey(h)))
    .sort((a, b) => partOrder(a[2]) - partOrder(b[2]) || a[0] - b[0] || a[1] - b[1]);
}

/** [[0, 1], [2, 3, 'cross']] -> "0:1,cross:2:3". */
export const formatHeads = (heads) => heads.map(headKey).join(',');

/** The list with head (layer, head[, part]) added, or removed when it is there. */
export function toggleHead(heads, layer, head, part) {
  const key = headKey([layer, head, part]);
  const has = heads.some((h) => headKey(h) === key);
  return has ? heads.filter((h) => headKey(h) !== key) : normalizeHeads([...heads, part ? [layer, head, part] : [layer, head]]);
}

/** "layer 2 head 3", or "cross-attention layer 2 head 3" (1-based, for people). */
export function headName([layer, head, part]) {
  const parts = { encoder: 'encoder ', decoder: 'decoder self-attention ', cross: 'cross-attention ' };
  return `${part ? parts[part] : ''}layer ${layer + 1} head ${head + 1}`;
}

/** What a ranking of heads was computed on (the ranking shown must be of the text, pair and target shown). */
export const rankingKey = ({ text, textB = '', target = '' }) => JSON.stringify([text, textB, target]);

/**
 * Before → after at one prediction row: the union of both top-k lists, each
 * token with its probability before and after (null where it is not in that
 * run's top k) and the shift (after - before, null unless both are known),
 * ordered by the larger of its two probabilities.
 * before, after: { position, top: [{ id, display, probability }] } (the worker's predictions).
 */
export function predictionShift(before, after) {
  const byId = new Map();
  for (const item of before.top) byId.set(item.id, { id: item.id, display: item.display, before: item.probability, after: null });
  for (const item of after.top) {
    const entry = byId.get(item.id) ?? { id: item.id, display: item.display, before: null, after: null };
    entry.after = item.probability;
    byId.set(item.id, entry);
  }
  const rows = [...byId.values()].map((e) => ({ ...e, shift: e.before !== null && e.after !== null ? e.after - e.before : null }));
  return rows.sort((a, b) => Math.max(b.before ?? 0, b.after ?? 0) - Math.max(a.before ?? 0, a.after ?? 0));
}

/**
 * The loss of each token before and after: [{ position, before, after, change }]
 * for the tokens that have one (causal: tokens 1..T-1, each predicted from the
 * one before it; BERT: the [MASK] positions, scored against the intact model's
 * top prediction). before/after: Float32Array, in the order of `positions`.
 */
export function lossChanges(positions, before, after) {
  return positions.map((position, i) => ({ position, before: before[i], after: after[i], change: after[i] - before[i] }));
}

/** Mean of the loss changes' before and after, or null without any. */
export function meanLoss(changes) {
  if (changes.length === 0) return null;
  const sum = (key) => changes.reduce((s, c) => s + c[key], 0) / changes.length;
  return { before: sum('before'), after: sum('after') };
}
