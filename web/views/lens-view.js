// <lens-view>: the logit lens as a grid, layer × position: each cell is the
// top token that the residual stream at that position, after that layer, reads
// as through the model's own output head (the final norm and unembedding; BERT:
// the masked-LM head), coloured by its probability (on the theme's weight scale), so the
// reader watches the prediction form layer by layer. Rows: the embeddings,
// then layers 1..L; the last row is the model's own prediction (causal models:
// the next token after each position; BERT: what it reads at each position).
// The top-k of a cell shows on hover or keyboard focus (arrow keys move
// between cells; one tab stop for the grid). Token text is set as text, never
// HTML. The grid scrolls both ways with the labels kept in view.
// The result comes from the engine (result.lens: engine.js's TextModel.run with
// options.lens; an encoder–decoder's decoder: TranslationModel.forward's, with
// result.decoderLens set); without one (attention data alone) the view says why.
// Not here: the computation (cpp/analysis/logit_lens.*), running the model.
import { h } from '../ui/dom.js';
import { StoreBound } from '../ui/store-bound.js';
import { shorten, textOnWeight, weightColour, weightScaleWords } from '../attention/view-support.js';

const CELL_CHARACTERS = 10; // longer top tokens are shortened in the cell (the full text is in its readout)

const percent = (p) => `${(100 * p).toFixed(p >= 0.995 || p < 0.0005 ? 0 : 1)}%`;

export class LensView extends StoreBound {
  #result = null;
  #title = h('p', { class: 'view-title' });
  #caption = h('p', { class: 'hint lens-caption' });
  #table = h('table', { class: 'lens-grid', role: 'grid' });
  #readout = h('p', { class: 'readout lens-readout', 'aria-live': 'polite' });
  #focus = { row: 0, col: 0 }; // the grid's tab stop

  connectedCallback() {
    super.connectedCallback();
    if (this.#table.isConnected) return;
    this.append(this.#title, this.#caption, h('div', { class: 'lens-scroller' }, this.#table), this.#readout);
    this.#table.addEventListener('pointerover', (event) => this.#show(event.target.closest('td')));
    this.#table.addEventListener('focusin', (event) => this.#show(event.target.closest('td')));
    this.#table.addEventListener('keydown', (event) => this.#move(event));
  }

  /** The views' run result; result.lens: { ids, probabilities, displays, shape: [layers + 1, T, k] } (engine.js). */
  set result(result) {
    this.#result = result;
    this.#render();
  }

  get result() { return this.#result; }

  storeChanged(state, changed) {
    if (changed === null || changed.includes('token') || changed.includes('theme')) this.#render();
  }

  /**
   * What is drawn, for tests: { rowLabels, columnLabels, cells: [row][position]
   * { display (the cell's text, unshortened), probability, top: [{ id, display,
   * probability }] } }, or null when there is no lens to show.
   */
  lensModel() {
    this.flushDeferred();
    const lens = this.#result?.lens;
    if (!lens) return null;
    const [rows, t] = lens.shape;
    const cells = Array.from({ length: rows }, (_, r) => Array.from({ length: t }, (__, c) => {
      const top = this.#top(r, c);
      return { display: top[0].display, probability: top[0].probability, top };
    }));
    return { rowLabels: this.#rowLabels(), columnLabels: this.#result.tokens.map((token) => token.display), cells };
  }

  // The top-k of cell (row, position): [{ id, display, probability }], best first.
  #top(row, col) {
    const { ids, probabilities, displays, shape: [, t, k] } = this.#result.lens;
    const at = (row * t + col) * k;
    return Array.from({ length: k }, (_, j) => ({ id: ids[at + j], display: displays ? displays[at + j] : String(ids[at + j]), probability: probabilities[at + j] }));
  }

  #rowLabels() {
    const rows = this.#result.lens.shape[0];
    return Array.from({ length: rows }, (_, r) => (r === 0 ? 'embeddings' : r === rows - 1 ? `layer ${r} (output)` : `layer ${r}`));
  }

  #render() {
    if (this.deferWhileHidden()) return;
    const result = this.#result;
    if (!result?.lens) {
      const missing = result && !result.decoderLensPending; // an encoder–decoder run's decoder lens is on its way
      this.#title.textContent = !result ? '' : missing
        ? 'The logit lens needs a run of a decoder-only or encoder-only model here (its hidden states and output layer); attention weights alone, or an encoder–decoder’s attention, do not have them.'
        : 'Reading the decoder’s logit lens…';
      this.#title.toggleAttribute('data-error', Boolean(missing));
      this.#caption.textContent = '';
      this.#table.replaceChildren();
      this.#readout.textContent = '';
      return;
    }
    this.#title.removeAttribute('data-error');
    const [rows, t] = result.lens.shape;
    const theme = this.store?.state.theme ?? 'auto';
    this.#title.textContent = `Logit lens: the top token of every layer (rows) at every position (columns), ${rows - 1} layers × ${t} tokens`;
    const { low, high } = weightScaleWords(theme);
    const reading = result.decoderLens
      ? 'Each cell reads the decoder’s residual stream after that layer through the output layer (the tied embeddings and final_logits_bias): the target token the decoder would write after the column’s token if it stopped there (before the search’s own rules, such as never writing the pad token).'
      : result.causal
      ? 'Each cell reads the residual stream after that layer through the final norm and the unembedding: the next token the model would predict after the column’s token if it stopped there.'
      : 'Each cell reads the residual stream after that layer through the masked-LM head: the token the model would fill in at the column’s position if it stopped there.';
    this.#caption.textContent = `${reading} The last row is the model’s prediction. Colour: the top token’s probability, from 0 (${low}) to 1 (${high}); hover or focus a cell for its top tokens.`;
    this.#focus = { row: Math.min(this.#focus.row, rows - 1), col: Math.min(this.#focus.col, t - 1) };
    const locked = this.store?.state.token ?? null;
    const labels = this.#rowLabels();
    const head = h('tr', {}, h('th', { scope: 'col', class: 'lens-corner' }, result.causal ? 'after token →' : 'at token →'),
      result.tokens.map((token, c) => h('th', { scope: 'col', 'aria-current': c === locked ? 'true' : null }, shorten(token.display, CELL_CHARACTERS))));
    const body = labels.map((label, r) => h('tr', {}, h('th', { scope: 'row' }, label),
      Array.from({ length: t }, (_, c) => {
        const [best] = this.#top(r, c);
        return h('td', {
          tabindex: r === this.#focus.row && c === this.#focus.col ? '0' : '-1',
          dataset: { row: String(r), col: String(c) },
          'aria-current': c === locked ? 'true' : null,
          style: `background: ${weightColour(theme, best.probability)}; color: ${textOnWeight(theme, best.probability)}`,
          'aria-label': `${label}, token ${c + 1}: ${best.display} ${percent(best.probability)}`,
        }, shorten(best.display, CELL_CHARACTERS));
      })));
    this.#table.replaceChildren(h('thead', {}, head), h('tbody', {}, body));
    this.#readout.textContent = '';
    this.#revealLocked();
  }

  // Scrolls the locked token's column into sight when it is out of it (a link or preset's token), beside the
  // row labels that stay in view.
  #revealLocked() {
    const current = this.#table.querySelector('thead th[aria-current="true"]');
    const scroller = this.#table.parentElement;
    if (!current || !scroller) return;
    const cell = current.getBoundingClientRect();
    const box = scroller.getBoundingClientRect();
    const labels = this.#table.querySelector('th.lens-corner').getBoundingClientRect().width;
    if (cell.left < box.left + labels || cell.right > box.left + scroller.clientWidth) {
      scroller.scrollLeft += cell.left - box.left - labels - (scroller.clientWidth - labels - cell.width) / 2;
    }
  }

  // The readout of a cell: where it is and its top-k.
  #show(cell) {
    if (!cell || !this.#result?.lens) return;
    const r = Number(cell.dataset.row);
    const c = Number(cell.dataset.col);
    const token = this.#result.tokens[c].display;
    const where = `${this.#rowLabels()[r]}, ${this.#result.causal ? `after “${token}”` : `at “${token}”`} (token ${c + 1}):`;
    this.#readout.textContent = `${where} ${this.#top(r, c).map((item) => `“${item.display}” ${percent(item.probability)}`).join(' · ')}`;
  }

  // Arrow keys, Home and End move the tab stop between cells.
  #move(event) {
    const cell = event.target.closest('td');
    if (!cell) return;
    const [rows, t] = this.#result.lens.shape;
    const steps = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    let row = Number(cell.dataset.row);
    let col = Number(cell.dataset.col);
    if (steps[event.key]) {
      row = Math.max(0, Math.min(rows - 1, row + steps[event.key][0]));
      col = Math.max(0, Math.min(t - 1, col + steps[event.key][1]));
    } else if (event.key === 'Home' || event.key === 'End') {
      col = event.key === 'Home' ? 0 : t - 1;
    } else {
      return;
    }
    event.preventDefault();
    const next = this.#table.querySelector(`td[data-row="${row}"][data-col="${col}"]`);
    cell.tabIndex = -1;
    next.tabIndex = 0;
    this.#focus = { row, col };
    next.focus();
  }
}

customElements.define('lens-view', LensView);
