// Head ablation on the page and in the widget, without DOM or WASM: the
// "L:H,L:H" form of a list of heads (the CLI's --ablate, the widget's
// `ablate` attribute, the link's ablate=), and the before → after comparison
// the ablation view draws from two runs of the same text (intact, ablated):
// the predictions at one row with each token's probability shift, and the
// change of every token's loss.
// Not here: running the model (engine-worker.js's ablate), drawing (ablation-view.js).

export const ABLATION_MODES = ['zero', 'mean'];

/** "0:1, 2:3" -> [[0, 1], [2, 3]] (sorted, duplicates dropped). Throws an Error naming a bad item. */
export function parseHeads(text) {
  const pairs = [];
  for (const item of String(text).split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const match = /^(\d+):(\d+)$/.exec(item);
    if (!match) throw new Error(`"${item}" is not LAYER:HEAD (two numbers from 0, e.g. 0:3)`);
    pairs.push([Number(match[1]), Number(match[2])]);
  }
  return normalizeHeads(pairs);
}

/** [[layer, head], ...] sorted by layer then head, without duplicates. */
export function normalizeHeads(pairs) {
  const seen = new Set();
  return pairs.filter(([l, h]) => !seen.has(`${l}:${h}`) && seen.add(`${l}:${h}`))
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/** [[0, 1], [2, 3]] -> "0:1,2:3". */
export const formatHeads = (pairs) => pairs.map(([l, h]) => `${l}:${h}`).join(',');

/** The list with head (layer, head) added, or removed when it is there. */
export function toggleHead(pairs, layer, head) {
  const has = pairs.some(([l, h]) => l === layer && h === head);
  return has ? pairs.filter(([l, h]) => l !== layer || h !== head) : normalizeHeads([...pairs, [layer, head]]);
}

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
