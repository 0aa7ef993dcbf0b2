// The page's selection state, one object that every view reads and writes:
// model, text(s) (and an encoder–decoder model's target text), view, the
// encoder–decoder part shown, layer, heads, locked token, threshold, pruning, pair
// filter, special-token hiding, word aggregation, theme, from-scratch step,
// the generation shown (its settings and timeline step), the compare view's second text,
// ablated heads and the ablation mode, the rollout view's method and display,
// a vision model's picture (by name: picture-link.js) and what its overlay shows.
// Includes its URL form (the hash), so a link restores the state exactly:
// encodeState/decodeState (plain parameters) and encodeLink/decodeLink (the
// same, with a long text deflated and base64url-encoded so links stay short;
// links with plain text keep opening).
// Not here: DOM, drawing or computation.
import { ABLATION_MODES, formatHeads, parseHeads } from '../attention/ablation.js';
import { SEQ2SEQ_PARTS } from '../engine/engine-inputs.js';
import { DEFAULT_HUB } from '../hub/hub.js';
import { ROLLOUT_DISPLAYS, ROLLOUT_METHODS } from '../attention/rollout.js';

export const VIEWS = ['image', 'head', 'model', 'matrix', 'rollout', 'lens', 'neuron', 'scratch', 'cross', 'generate', 'compare', 'ablation'];
export const FILTERS = ['all', 'a-a', 'b-b', 'a-b', 'b-a'];
export const THEMES = ['auto', 'light', 'dark'];
/** What the Picture view's overlay shows: the layer's attention, rollout or attention flow over all layers (image-view.js). */
export const OVERLAYS = ['attention', 'rollout', 'flow'];
/** The attention parts of an encoder–decoder model the views can show (the core's names). */
export const PARTS = SEQ2SEQ_PARTS;

export const DEFAULT_STATE = Object.freeze({
  model: 'austen-gpt', // a shipped model's name, hf:ORG/NAME[@revision] (hub.js) or a model folder's URL
  hub: DEFAULT_HUB, // where hf: models come from (a mirror, or the tests' imitation of the hub)
  text: 'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.',
  textB: '',
  target: '', // an encoder–decoder model's target text; '' = its own translation
  view: 'head',
  part: 'cross', // encoder–decoder models: which attention the views show
  layer: 0,
  heads: null, // null = all heads of the layer
  token: null, // locked token index, or null
  threshold: 0,
  prune: 1, // cumulative mass kept per row (1 = no pruning)
  filter: 'all',
  hideSpecial: false,
  words: false,
  theme: 'auto',
  step: 1, // from-scratch step, counted from 1 as the page numbers them
  gen: null, // settings of the generation shown ("20" greedy, "20:t0.8:k40:p0.95:s7" sampled: generation-run.js), or null
  genStep: null, // the generation timeline's step, from 1, or null for the last
  compareText: '', // the compare view's text B
  ablate: [], // heads knocked out, [[layer, head], ...] (0-based; ablation.js), in every view
  ablation: 'zero', // 'zero' or 'mean' (the ablated head's output; see cpp/model/model.h)
  rolloutMethod: 'rollout', // the rollout view's method: 'rollout' or 'flow' (rollout.js)
  rolloutDisplay: 'matrix', // the rollout view's display: 'matrix' or 'lines'
  picture: '', // a vision model's picture: sample:PATH, local:HASH or inline:DATA (picture-link.js), '' = none
  overlay: 'attention', // the Picture view's overlay: one of OVERLAYS
});

const int = (value, fallback, min = 0) => {
  if (value === null || !/^\d+$/.test(value)) return fallback;
  const n = Number.parseInt(value, 10);
  return Number.isFinite(n) && n >= min ? n : fallback;
};
const fraction = (value, fallback) => {
  if (value === null || value.trim() === '') return fallback;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : fallback;
};
const oneOf = (value, allowed, fallback) => (allowed.includes(value) ? value : fallback);
const flag = (value) => value === '1';
const headList = (value, fallback) => {
  try {
    return value === null ? fallback : parseHeads(value);
  } catch {
    return fallback;
  }
};
/**
 * True when `value` names a picture the way picture-link.js writes them: sample:PATH (a relative path under
 * models/: no leading slash, no empty, '.' or '..' segment), local:HASH or inline:DATA.
 */
export const isPictureName = (value) => /^(sample:[\w.-]+(\/[\w.-]+)*|local:[0-9a-f]{64}|inline:[\w-]+)$/.test(value)
  && !/(^sample:|\/)\.{1,2}(\/|$)/.test(value);
const pictureName = (value, fallback) => (value !== null && isPictureName(value) ? value : fallback);
const httpUrl = (value, fallback) => (value !== null && /^https?:\/\/[^\s]+$/.test(value) ? value.replace(/\/+$/, '') : fallback);

/**
 * State -> URL hash (without '#'); only values that differ from the defaults,
 * and the text with any model but the default (a link that names a shipped
 * model and no text opens on the model's own example).
 */
export function encodeState(state) {
  const params = new URLSearchParams();
  for (const [key, fallback] of Object.entries(DEFAULT_STATE)) {
    const value = state[key];
    const named = key === 'text' && state.model !== DEFAULT_STATE.model;
    if (value === undefined || (!named && JSON.stringify(value) === JSON.stringify(fallback))) continue;
    if (key === 'heads') params.set(key, value.join(','));
    else if (key === 'ablate') params.set(key, formatHeads(value));
    else if (typeof value === 'boolean') params.set(key, value ? '1' : '0');
    else params.set(key, String(value));
  }
  return params.toString();
}

/** URL hash -> state; anything missing or invalid takes its default. */
export function decodeState(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const get = (key) => params.get(key);
  const d = DEFAULT_STATE;
  const heads = get('heads');
  return {
    model: get('model') || d.model,
    hub: httpUrl(get('hub'), d.hub),
    text: get('text') ?? d.text,
    textB: get('textB') ?? d.textB,
    target: get('target') ?? d.target,
    view: oneOf(get('view'), VIEWS, d.view),
    part: oneOf(get('part'), PARTS, d.part),
    layer: int(get('layer'), d.layer),
    heads: heads === null ? d.heads : heads.split(',').filter((h) => h !== '').map((h) => int(h, -1)).filter((h) => h >= 0),
    token: get('token') === null ? d.token : int(get('token'), d.token),
    threshold: fraction(get('threshold'), d.threshold),
    prune: fraction(get('prune'), d.prune),
    filter: oneOf(get('filter'), FILTERS, d.filter),
    hideSpecial: get('hideSpecial') === null ? d.hideSpecial : flag(get('hideSpecial')),
    words: get('words') === null ? d.words : flag(get('words')),
    theme: oneOf(get('theme'), THEMES, d.theme),
    step: int(get('step'), d.step, 1),
    gen: get('gen') || d.gen,
    genStep: get('genStep') === null ? d.genStep : int(get('genStep'), d.genStep, 1),
    compareText: get('compareText') ?? d.compareText,
    ablate: headList(get('ablate'), d.ablate),
    ablation: oneOf(get('ablation'), ABLATION_MODES, d.ablation),
    rolloutMethod: oneOf(get('rolloutMethod'), ROLLOUT_METHODS, d.rolloutMethod),
    rolloutDisplay: oneOf(get('rolloutDisplay'), ROLLOUT_DISPLAYS, d.rolloutDisplay),
    picture: pictureName(get('picture'), d.picture),
    overlay: oneOf(get('overlay'), OVERLAYS, d.overlay),
  };
}

// A text longer than this (in URL-encoded characters) travels deflated as z<key>=.
const DEFLATE_OVER = 100;
const LINK_TEXTS = ['text', 'textB', 'target', 'compareText'];

async function streamBytes(bytes, transform) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(transform)).arrayBuffer());
}

/** Bytes as base64url without padding (the link's packed texts and pictures). */
export function base64url(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** base64url text (padding optional) -> bytes; throws on a character outside the alphabet. */
export function fromBase64url(text) {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

// The last text deflated and its packed form: a layer change or a locked token does not deflate the text again.
let lastDeflated = { text: null, packed: null };
async function deflated(text) {
  if (lastDeflated.text !== text) {
    const packed = base64url(await streamBytes(new TextEncoder().encode(text), new CompressionStream('deflate-raw')));
    lastDeflated = { text, packed };
  }
  return lastDeflated.packed;
}

/**
 * State -> URL hash (without '#'), as encodeState but with long texts deflated (raw DEFLATE, base64url).
 * A text that is undefined is left out (a vision model's link names none).
 */
export async function encodeLink(state) {
  const params = new URLSearchParams(encodeState({ ...state, ...Object.fromEntries(LINK_TEXTS.map((key) => [key, state[key] === undefined ? undefined : DEFAULT_STATE[key]])) }));
  for (const key of LINK_TEXTS) {
    const text = state[key];
    if (text === undefined || text === DEFAULT_STATE[key]) continue;
    const plainLength = text.length > DEFLATE_OVER / 3 ? encodeURIComponent(text).length : 0; // short texts stay plain
    const packed = plainLength > DEFLATE_OVER ? await deflated(text) : null;
    if (packed !== null && packed.length < plainLength) params.set(`z${key}`, packed);
    else params.set(key, text);
  }
  return params.toString();
}

/**
 * URL hash -> state, reading deflated texts (encodeLink) and plain ones.
 * Throws an Error saying which text is damaged when a deflated text does not inflate.
 */
export async function decodeLink(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  for (const key of LINK_TEXTS) {
    const packed = params.get(`z${key}`);
    if (packed === null) continue;
    params.delete(`z${key}`);
    try {
      const bytes = await streamBytes(fromBase64url(packed), new DecompressionStream('deflate-raw'));
      params.set(key, new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch {
      throw new Error(`the link's ${{ text: 'text', textB: 'second sentence', target: 'target text', compareText: 'text to compare' }[key]} is damaged (cut short or edited?) and cannot be read`);
    }
  }
  return decodeState(params.toString());
}

/** Observable holder of the state. subscribe(fn) calls fn(state, changedKeys). */
export class Store {
  #state;
  #listeners = new Set();

  constructor(initial = DEFAULT_STATE) {
    this.#state = { ...initial };
  }

  get state() { return this.#state; }

  set(patch) {
    const changed = Object.keys(patch).filter((key) => JSON.stringify(patch[key]) !== JSON.stringify(this.#state[key]));
    if (changed.length === 0) return;
    this.#state = { ...this.#state, ...patch };
    for (const listener of this.#listeners) listener(this.#state, changed);
  }

  subscribe(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
