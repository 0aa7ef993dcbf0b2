// <attention-table>: the text alternative of the attention maps for screen
// readers and keyboard users. A real <table> with a caption: one row per
// query token of the selected head (or the mean of the selected heads, as in
// the matrix view), its 5 strongest keys and their weights, so it stays
// usable at 512 tokens. When there are at most 32 tokens, a checkbox adds the
// full query x key matrix (masked cells say "masked"). The locked token's
// row is marked (aria-current). Token text is written as text, never HTML.
// Not here: drawing; where the page places the table (the app decides).
import { StoreBound } from '../ui/store-bound.js';
import { h } from '../ui/dom.js';
import { isMasked, rowOfToken, selectedMap, slidingWindowOf } from '../attention/view-support.js';

const TOP = 5;
const FULL_LIMIT = 32;

export class AttentionTable extends StoreBound {
  #result = null;
  #selected = null;
  #fullToggle = h('input', { type: 'checkbox', onchange: () => this.#render() });
  #fullLabel = h('label', { class: 'attention-table-full' }, this.#fullToggle, ` Show the full matrix (up to ${FULL_LIMIT} tokens)`);
  #tables = h('div', { class: 'attention-table-scroller' });

  connectedCallback() {
    super.connectedCallback();
    if (!this.#tables.isConnected) this.append(this.#fullLabel, this.#tables);
    this.#rebuild();
  }


  storeChanged(state, changed) {
    if (changed === null) this.#rebuild();
    else if (changed.some((key) => ['layer', 'heads', 'prune', 'filter', 'hideSpecial', 'words'].includes(key))) this.#rebuild();
    else if (changed.includes('token')) this.#markLocked();
  }

  /** Model output: { tokens, attentions [L, H, T, T], texts, causal }. */
  set result(result) {
    this.#result = result;
    this.#rebuild();
  }

  #rebuild() {
    if (!this.store || !this.#result || !this.isConnected || this.deferWhileHidden()) return;
    this.#selected = selectedMap(this.#result, this.store.state);
    this.#render();
  }

  #render() {
    if (!this.#selected) {
      this.#tables.replaceChildren(h('p', {}, 'No head selected.'));
      return;
    }
    const [rows, cols] = this.#selected.map.shape;
    const fits = rows <= FULL_LIMIT && cols <= FULL_LIMIT;
    this.#fullToggle.disabled = !fits;
    this.#fullLabel.title = fits ? '' : `The full matrix is offered for up to ${FULL_LIMIT} tokens; this input has ${Math.max(rows, cols)}.`;
    this.#tables.replaceChildren(this.#topTable(), fits && this.#fullToggle.checked ? this.#fullTable() : '');
    this.#markLocked();
  }

  // "token #position" as two text nodes (positions tell repeated tokens apart).
  #tokenCell(tag, label, index, props = {}) {
    return h(tag, props, label, h('span', { class: 'token-position' }, ` #${index + 1}`));
  }

  #topTable() {
    const { map, rowLabels, colLabels, title } = this.#selected;
    const [rows, cols] = map.shape;
    const unit = this.store.state.words ? 'word' : 'token';
    const window = this.#window();
    const masked = window && rows > window ? `; a token only attends to itself and the ${window - 1} tokens before it (causal mask and this layer's sliding window)`
      : this.#result.causal ? `; a ${unit} only attends to itself and earlier ${unit}s (causal mask)` : '';
    const head = h('tr', {}, h('th', { scope: 'col' }, `Query ${unit}`),
      Array.from({ length: TOP }, (_, i) => [h('th', { scope: 'col' }, `Key ${i + 1}`), h('th', { scope: 'col' }, `Weight ${i + 1}`)]).flat());
    const body = Array.from({ length: rows }, (_, r) => {
      const order = [];
      for (let c = 0; c < cols; c += 1) if (!isMasked(this.#result, map, r, c, window) && map.data[r * cols + c] > 0) order.push(c);
      order.sort((a, b) => map.data[r * cols + b] - map.data[r * cols + a] || a - b);
      const cells = Array.from({ length: TOP }, (_, i) => {
        const c = order[i];
        if (c === undefined) return [h('td', { class: 'empty' }, '—'), h('td', { class: 'empty' }, '—')];
        const weight = map.data[r * cols + c];
        return [this.#tokenCell('td', colLabels[c], map.cols[c], { dataset: { key: String(map.cols[c]) } }), h('td', { class: 'weight', dataset: { value: String(weight) } }, weight.toFixed(4))];
      });
      return h('tr', { dataset: { query: String(map.rows[r]) } }, this.#tokenCell('th', rowLabels[r], map.rows[r], { scope: 'row' }), cells.flat());
    });
    return h('table', { class: 'attention-top' },
      h('caption', {}, `${title}: the ${TOP} strongest keys of each query ${unit}, strongest first${masked}.`),
      h('thead', {}, head), h('tbody', {}, body));
  }

  // This layer's sliding window (on tokens, not words), or 0.
  #window() {
    return this.#result.cross || this.store.state.words ? 0 : slidingWindowOf(this.#result, this.store.state.layer);
  }

  #fullTable() {
    const { map, rowLabels, colLabels, title } = this.#selected;
    const [rows, cols] = map.shape;
    const window = this.#window();
    const head = h('tr', {}, h('td'), Array.from({ length: cols }, (_, c) => this.#tokenCell('th', colLabels[c], map.cols[c], { scope: 'col' })));
    const body = Array.from({ length: rows }, (_, r) => h('tr', { dataset: { query: String(map.rows[r]) } },
      this.#tokenCell('th', rowLabels[r], map.rows[r], { scope: 'row' }),
      Array.from({ length: cols }, (_, c) => {
        if (isMasked(this.#result, map, r, c, window)) return h('td', { class: 'masked' }, 'masked');
        const weight = map.data[r * cols + c];
        return h('td', { dataset: { value: String(weight) } }, weight.toFixed(4));
      })));
    return h('table', { class: 'attention-full' },
      h('caption', {}, `${title}: every weight, query (rows) × key (columns)`),
      h('thead', {}, head), h('tbody', {}, body));
  }

  #markLocked() {
    if (!this.#selected) return;
    const row = rowOfToken(this.#result, this.store.state, this.#selected.map, this.store.state.token);
    for (const table of this.#tables.querySelectorAll('table')) {
      table.querySelectorAll('tbody tr').forEach((tr, r) => {
        if (r === row) tr.setAttribute('aria-current', 'true');
        else tr.removeAttribute('aria-current');
      });
    }
  }
}

customElements.define('attention-table', AttentionTable);
