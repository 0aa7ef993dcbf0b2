// Pure functions over a model's attention, shared by every view: pick a
// head's map out of the [L, H, T, T] tensor, average heads, filter sentence
// pairs (bertviz's A→B etc.), hide special tokens and renormalise, aggregate
// sub-word tokens into words, prune each row to its strongest weights.
// A map is { data: Float32Array, shape: [rows, cols], rows: [token indices],
// cols: [token indices] } so views always know which tokens a cell joins.
// Not here: drawing, DOM, or the engine.

/** Map of one head: attentions [L, H, T, T] -> [T, T]. */
export function headMap(attentions, layer, head) {
  const [layers, heads, t] = attentions.shape;
  if (layer < 0 || layer >= layers || head < 0 || head >= heads) throw new RangeError(`no head ${layer}.${head}`);
  const start = (layer * heads + head) * t * t;
  const all = [...Array(t).keys()];
  return { data: attentions.data.slice(start, start + t * t), shape: [t, t], rows: all, cols: [...all] };
}

/** Mean of the maps of several heads of one layer. */
export function meanMap(attentions, layer, heads) {
  if (heads.length === 0) throw new RangeError('no heads selected');
  const maps = heads.map((head) => headMap(attentions, layer, head));
  const data = new Float32Array(maps[0].data.length);
  for (const map of maps) for (let i = 0; i < data.length; i += 1) data[i] += map.data[i] / heads.length;
  return { ...maps[0], data };
}

/** Sub-map of the given token indices (values unchanged). */
export function sliceMap(map, rows, cols) {
  const n = map.shape[1];
  const rowPos = rows.map((token) => map.rows.indexOf(token));
  const colPos = cols.map((token) => map.cols.indexOf(token));
  const data = new Float32Array(rows.length * cols.length);
  rowPos.forEach((r, i) => colPos.forEach((c, j) => { data[i * cols.length + j] = map.data[r * n + c]; }));
  return { data, shape: [rows.length, cols.length], rows: [...rows], cols: [...cols] };
}

export const PAIR_FILTERS = ['all', 'a-a', 'b-b', 'a-b', 'b-a'];

/** bertviz's sentence-pair filter: which query and key tokens are shown. */
export function filterPairs(map, tokens, filter) {
  if (filter === 'all') return map;
  if (!PAIR_FILTERS.includes(filter)) throw new RangeError(`unknown pair filter "${filter}"`);
  const segment = (side) => (side === 'a' ? 0 : 1);
  const [from, to] = filter.split('-').map(segment);
  return sliceMap(map, map.rows.filter((i) => tokens[i].typeId === from), map.cols.filter((i) => tokens[i].typeId === to));
}

/**
 * A special token the tokenizer added around the text ([CLS], [SEP]): it
 * covers no characters of the text. Special tokens the reader wrote, such as
 * [MASK], cover their characters and are not "added".
 */
export const isAddedSpecial = (token) => token.special && token.start === token.end;

/** Drops the special tokens the tokenizer added (isAddedSpecial) and renormalises each row to sum to 1. */
export function withoutSpecialTokens(map, tokens) {
  const kept = (i) => !isAddedSpecial(tokens[i]);
  const sliced = sliceMap(map, map.rows.filter(kept), map.cols.filter(kept));
  const [rows, cols] = sliced.shape;
  for (let r = 0; r < rows; r += 1) {
    let sum = 0;
    for (let c = 0; c < cols; c += 1) sum += sliced.data[r * cols + c];
    if (sum > 0) for (let c = 0; c < cols; c += 1) sliced.data[r * cols + c] /= sum;
  }
  return sliced;
}

const PUNCTUATION = /^[\p{P}\p{S}]/u;
const TRAILING_PUNCTUATION = /[\p{P}\p{S}]$/u;

/**
 * Groups tokens into words: a word is a run of tokens with no whitespace or
 * gap between them in the text; punctuation and special tokens stand alone.
 * texts: the input text of each segment ([text] or [textA, textB]); tokens
 * carry UTF-16 offsets start/end into the text of `segment` (or `typeId`).
 */
export function wordGroups(tokens, texts) {
  const groups = [];
  let previous = null;
  tokens.forEach((token, i) => {
    const segment = token.segment ?? token.typeId ?? 0;
    const covered = token.special ? '' : texts[segment].slice(token.start, token.end);
    const continues = previous && !token.special && !previous.token.special &&
      previous.segment === segment && token.start === previous.token.end &&
      !/^\s/.test(covered) && !/\s$/.test(previous.covered) &&
      !PUNCTUATION.test(covered) && !TRAILING_PUNCTUATION.test(previous.covered);
    if (continues) groups[groups.length - 1].push(i);
    else groups.push([i]);
    previous = { token, covered, segment };
  });
  return groups;
}

/**
 * Word-level map: the weight from word A to word B is the mean over A's
 * query pieces of the sum over B's key pieces (rows still sum to 1).
 * groups: token index lists (wordGroups); only tokens present in the map count.
 * Returns the map with rows/cols = group indices.
 */
export function aggregateWords(map, groups) {
  const n = map.shape[1];
  const rowGroups = groups.map((g) => g.map((t) => map.rows.indexOf(t)).filter((p) => p >= 0)).map((g, i) => [i, g]).filter(([, g]) => g.length);
  const colGroups = groups.map((g) => g.map((t) => map.cols.indexOf(t)).filter((p) => p >= 0)).map((g, i) => [i, g]).filter(([, g]) => g.length);
  const data = new Float32Array(rowGroups.length * colGroups.length);
  rowGroups.forEach(([, queries], r) => colGroups.forEach(([, keys], c) => {
    let sum = 0;
    for (const q of queries) for (const k of keys) sum += map.data[q * n + k];
    data[r * colGroups.length + c] = sum / queries.length;
  }));
  return { data, shape: [rowGroups.length, colGroups.length], rows: rowGroups.map(([i]) => i), cols: colGroups.map(([i]) => i) };
}

/**
 * exBERT-style pruning: in each row keep the strongest weights until their
 * cumulative sum reaches `mass` (0..1); the rest become 0. mass >= 1 keeps all.
 */
export function pruneByMass(map, mass) {
  if (mass >= 1) return map;
  const [rows, cols] = map.shape;
  const data = new Float32Array(map.data.length);
  for (let r = 0; r < rows; r += 1) {
    const order = [...Array(cols).keys()].sort((a, b) => map.data[r * cols + b] - map.data[r * cols + a]);
    let kept = 0;
    for (const c of order) {
      if (kept >= mass) break;
      data[r * cols + c] = map.data[r * cols + c];
      kept += map.data[r * cols + c];
    }
  }
  return { ...map, data };
}

/**
 * Maps of the selected heads of one layer, after the page's transforms in
 * order: pair filter, hidden special tokens, word aggregation, pruning.
 * result: { tokens, attentions [L, H, T, T], texts }; state: the page state.
 * Returns { maps: [{ head, map }], rowLabels, colLabels } (labels follow
 * map.rows / map.cols: token display strings, or word texts).
 */
export function prepareMaps(result, state, heads) {
  const { tokens, attentions, texts } = result;
  const groups = state.words ? wordGroups(tokens, texts) : null;
  const maps = heads.map((head) => {
    let map = headMap(attentions, state.layer, head);
    if (state.filter !== 'all') map = filterPairs(map, tokens, state.filter);
    if (state.hideSpecial) map = withoutSpecialTokens(map, tokens);
    if (groups) map = aggregateWords(map, groups);
    if (state.prune < 1) map = pruneByMass(map, state.prune);
    return { head, map };
  });
  const label = groups ? (g) => wordLabel(groups[g], tokens, texts) : (t) => tokens[t].display;
  const first = maps[0]?.map ?? { rows: [], cols: [] };
  return { maps, rowLabels: first.rows.map(label), colLabels: first.cols.map(label) };
}

function wordLabel(group, tokens, texts) {
  const first = tokens[group[0]];
  if (first.special) return first.display;
  const last = tokens[group[group.length - 1]];
  return texts[first.segment ?? first.typeId ?? 0].slice(first.start, last.end).trim() || first.display;
}
