// The page's selection state, one object that every view reads and writes:
// model, text(s), view, layer, heads, locked token, threshold, pruning, pair
// filter, special-token hiding, word aggregation, theme, from-scratch step.
// Includes its URL form (the hash), so a link restores the state exactly.
// Not here: DOM, drawing or computation.

export const VIEWS = ['head', 'model', 'matrix', 'neuron', 'scratch'];
export const FILTERS = ['all', 'a-a', 'b-b', 'a-b', 'b-a'];
export const THEMES = ['auto', 'light', 'dark'];

export const DEFAULT_STATE = Object.freeze({
  model: 'austen-gpt',
  text: 'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.',
  textB: '',
  view: 'head',
  layer: 0,
  heads: null, // null = all heads of the layer
  token: null, // locked token index, or null
  threshold: 0,
  prune: 1, // cumulative mass kept per row (1 = no pruning)
  filter: 'all',
  hideSpecial: false,
  words: false,
  theme: 'auto',
  step: 0,
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

/** State -> URL hash (without '#'); only values that differ from the defaults. */
export function encodeState(state) {
  const params = new URLSearchParams();
  for (const [key, fallback] of Object.entries(DEFAULT_STATE)) {
    const value = state[key];
    if (value === undefined || JSON.stringify(value) === JSON.stringify(fallback)) continue;
    if (key === 'heads') params.set(key, value.join(','));
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
    text: get('text') ?? d.text,
    textB: get('textB') ?? d.textB,
    view: oneOf(get('view'), VIEWS, d.view),
    layer: int(get('layer'), d.layer),
    heads: heads === null ? d.heads : heads.split(',').filter((h) => h !== '').map((h) => int(h, -1)).filter((h) => h >= 0),
    token: get('token') === null ? d.token : int(get('token'), d.token),
    threshold: fraction(get('threshold'), d.threshold),
    prune: fraction(get('prune'), d.prune),
    filter: oneOf(get('filter'), FILTERS, d.filter),
    hideSpecial: get('hideSpecial') === null ? d.hideSpecial : flag(get('hideSpecial')),
    words: get('words') === null ? d.words : flag(get('words')),
    theme: oneOf(get('theme'), THEMES, d.theme),
    step: int(get('step'), d.step),
  };
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
