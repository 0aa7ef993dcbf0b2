// Shared by the attention views that show one map (matrix view, attention
// table) or many (model view): which heads the state selects, the map of one
// head or the mean of several after the page's transforms, the causal mask,
// query row <-> token index (word rows map to their first token), and the
// weight colour scale.
// Not here: drawing, DOM, or the transforms themselves (attention-data.js).
import { prepareMaps, wordGroups } from './attention-data.js';

/** State keys that change the map a head or matrix view draws (so they redraw it). */
export const MAP_STATE_KEYS = ['layer', 'heads', 'threshold', 'prune', 'filter', 'hideSpecial', 'words'];

/** Heads of the layer the state selects (state.heads null = all), in order. */
export function activeHeads(result, state) {
  const count = result.attentions.shape[1];
  return (state.heads ?? [...Array(count).keys()]).filter((head) => head >= 0 && head < count);
}

/** "head 3", "mean of heads 1, 3 (2 of 12)", "mean of all 12 heads" (1-based). */
export function headsTitle(heads, count) {
  if (heads.length === 1) return `head ${heads[0] + 1}`;
  if (heads.length === count) return `mean of all ${count} heads`;
  return `mean of heads ${heads.map((head) => head + 1).join(', ')} (${heads.length} of ${count})`;
}

/** One head's [R, C] plane of a [L, H, R, C] tensor, or the element-wise mean of several heads' (heads: non-empty). */
export function headMean({ data, shape: [, count, rows, cols] }, layer, heads) {
  const plane = rows * cols;
  const mean = new Float32Array(plane);
  for (const head of heads) {
    const start = (layer * count + head) * plane;
    for (let i = 0; i < plane; i += 1) mean[i] += data[start + i];
  }
  if (heads.length > 1) for (let i = 0; i < plane; i += 1) mean[i] /= heads.length;
  return mean;
}

/**
 * The map of the selected heads of state.layer: one head's map, or the
 * element-wise mean of the selected heads' raw maps, then the page's
 * transforms (pair filter, hidden special tokens, words, pruning) applied to
 * that one map. Returns null when no head is selected or the layer is out of
 * range; else { heads, title, map, rowLabels, colLabels }.
 */
export function selectedMap(result, state) {
  const [layers, count, t] = result.attentions.shape;
  if (state.layer < 0 || state.layer >= layers) return null;
  const heads = activeHeads(result, state);
  if (heads.length === 0) return null;
  const data = headMean(result.attentions, state.layer, heads);
  // prepareMaps on a one-layer, one-head tensor holding the mean.
  const single = { ...result, attentions: { data, shape: [1, 1, t, t] } };
  const { maps, rowLabels, colLabels } = prepareMaps(single, { ...state, layer: 0 }, [0]);
  return { heads, title: `Layer ${state.layer + 1}, ${headsTitle(heads, count)}`, map: maps[0].map, rowLabels, colLabels };
}

/**
 * Whether the causal mask hides key column `col` from query row `row`, or a
 * sliding window of `window` tokens does (a key `window` or more tokens
 * before the query; pass 0 for none, and 0 when rows are words).
 * Rows and columns hold token indices, or word-group indices (groups follow
 * token order), so a later key is masked in both cases.
 */
export function isMasked(result, map, row, col, window = 0) {
  return (result.causal && map.cols[col] > map.rows[row]) || (window > 0 && map.rows[row] - map.cols[col] >= window);
}

/**
 * The sliding window of layer `layer` (Mistral's every layer, Gemma 2/3's
 * sliding ones: result.slidingWindow, result.slidingLayers), or 0.
 */
export function slidingWindowOf(result, layer) {
  const { slidingWindow = 0, slidingLayers = null } = result;
  return slidingWindow > 0 && (!slidingLayers || slidingLayers[layer]) ? slidingWindow : 0;
}

/**
 * Query rows <-> token indices (state.token is a token index). With word
 * aggregation a row is a word: it stands for its first token, and a token
 * locks the row of the word it belongs to.
 */
export function rowTokens(result, state, map) {
  if (!state.words) return map.rows.slice();
  const groups = wordGroups(result.tokens, result.texts);
  return map.rows.map((group) => groups[group][0]);
}

/** Row of the map that holds token `token` (or -1). */
export function rowOfToken(result, state, map, token) {
  if (token === null || token === undefined) return -1;
  if (!state.words) return map.rows.indexOf(token);
  const groups = wordGroups(result.tokens, result.texts);
  const group = groups.findIndex((g) => g.includes(token));
  return map.rows.indexOf(group);
}

// Sequential weight scales, in sRGB: on a light page from near-white (0) to
// dark blue (1); on a dark page from near the page's background (0) to light
// blue (1). Either way a weight of 0 sits quietly on the page.
const SCALES = { light: [[247, 251, 255], [8, 48, 107]], dark: [[31, 34, 42], [147, 197, 253]] };
// Masked cells: a grey between the scale's ends, with hatching drawn on top
// (on a dark page a darker grey, so the mask does not outshine the weights).
const MASKED = { light: { cell: [168, 168, 176], hatch: [110, 110, 120] }, dark: { cell: [62, 62, 70], hatch: [98, 98, 110] } };

const lut = ([low, high]) => Uint8ClampedArray.from({ length: 256 * 3 }, (_, j) => {
  const channel = j % 3;
  return Math.round(low[channel] + ((high[channel] - low[channel]) * Math.floor(j / 3)) / 255);
});
const WEIGHT_LUTS = { light: lut(SCALES.light), dark: lut(SCALES.dark) };
/** The system's dark colour-scheme query ('auto' themes follow it), or null outside a browser. */
export const systemDarkScheme = globalThis.matchMedia?.('(prefers-color-scheme: dark)') ?? null;

/** 'light' or 'dark': what a view with the state's theme is drawn on ('auto' follows the reader's system). */
export function drawnTheme(theme) {
  return theme === 'dark' || (theme !== 'light' && systemDarkScheme?.matches) ? 'dark' : 'light';
}

/** The masked cells' colours for a theme: { cell, hatch } as [r, g, b]. */
export function maskedColours(theme) {
  return MASKED[drawnTheme(theme)];
}

/** The weight scale of a theme in 256 steps: entry i (rgb at 3i..3i+2) is weight i / 255. */
export function weightLut(theme) {
  return WEIGHT_LUTS[drawnTheme(theme)];
}

/** The theme's weight scale in words, for legends: { low, high }. */
export function weightScaleWords(theme) {
  return drawnTheme(theme) === 'dark' ? { low: 'near-black', high: 'light blue' } : { low: 'white', high: 'dark blue' };
}

/** CSS colour of weight t (0..1) on the theme's scale. */
export function weightColour(theme, t) {
  const scale = weightLut(theme);
  const at = weightIndex(t);
  return `rgb(${scale[at]}, ${scale[at + 1]}, ${scale[at + 2]})`;
}

/** A text colour readable on the theme's colour of weight t (0..1): dark on light cells, light on dark ones. */
export function textOnWeight(theme, t) {
  const scale = weightLut(theme);
  const at = weightIndex(t);
  const luminance = 0.2126 * scale[at] + 0.7152 * scale[at + 1] + 0.0722 * scale[at + 2];
  return luminance > 140 ? '#111' : '#fff';
}

/** Index into a weight scale (times 3) of a weight t in 0..1 (clamped). */
export function weightIndex(t) {
  return 3 * Math.round(255 * Math.min(1, Math.max(0, t)));
}

/** An 8 x 8 tile of diagonal hatching on the theme's masked grey, as a canvas pattern. */
export function hatchPattern(ctx, theme) {
  const { cell, hatch } = maskedColours(theme);
  const tile = document.createElement('canvas');
  tile.width = 8;
  tile.height = 8;
  const t = tile.getContext('2d');
  t.fillStyle = `rgb(${cell})`;
  t.fillRect(0, 0, 8, 8);
  t.strokeStyle = `rgb(${hatch})`;
  t.lineWidth = 2;
  t.beginPath();
  t.moveTo(-2, 10);
  t.lineTo(10, -2);
  t.moveTo(-2, 2);
  t.lineTo(2, -2);
  t.moveTo(6, 10);
  t.lineTo(10, 6);
  t.stroke();
  return ctx.createPattern(tile, 'repeat');
}

/** Text shortened to `max` characters with an ellipsis. */
export function shorten(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The text and accent colours an element is drawn in now (theme-aware). */
export function viewColours(element) {
  const style = getComputedStyle(element);
  return { text: style.color || '#222222', accent: style.getPropertyValue('--accent').trim() || '#1f5fa8' };
}

/** The first opaque background behind an element (through shadow roots): an export's backdrop, so it looks as seen. */
export function pageBackground(element) {
  for (let node = element; node instanceof Element; node = node.parentElement ?? node.getRootNode().host) {
    const colour = getComputedStyle(node).backgroundColor;
    if (colour && colour !== 'transparent' && !/^rgba\(.*,\s*0\)$/.test(colour)) return colour;
  }
  return '#ffffff';
}
