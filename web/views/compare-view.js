// <compare-view>: the same head's attention on two texts side by side (text A
// = the state's text, text B = its compareText), and their difference A − B,
// e.g. "The animal didn't cross the street because it was too tired" against
// "... too wide". The maps are those of the state's layer and heads (one
// head, or the mean of the selected heads) after the page's transforms
// (hidden special tokens, words, pruning), drawn as labelled tables. The
// difference pairs tokens by position: where the two tokenizations have the
// same length it covers every cell, and the cells whose tokens differ are
// named; where they differ in length it covers the positions both texts have
// (the first min(T_A, T_B) rows and columns), and says so.
// The host sets `runner` = async (text) => the views' result of a text
// (modelRunner: a model held in the engine worker).
// Not here: the engine worker (run-loop.js runs the texts), the transforms (view-support.js).
import { h } from '../ui/dom.js';
import { headsTitle, selectedMap } from '../attention/view-support.js';
import { RunLoop, runText } from '../run/run-loop.js';
import { StoreBound } from '../ui/store-bound.js';
import '../scratch/matrix-table.js';

/** The example of the compare view: one word changes what "it" refers to. */
export const COMPARE_EXAMPLE = Object.freeze({
  text: "The animal didn't cross the street because it was too tired",
  compareText: "The animal didn't cross the street because it was too wide",
});

/**
 * The difference of two maps ({ map: { data, shape }, rowLabels, colLabels },
 * selectedMap's), position by position over the rows and columns both have:
 * { data: A − B [R, C], shape, rowLabels, colLabels, differing: [indices of
 * rows whose labels differ], sameLength }. Labels read "a / b" where the texts differ.
 */
export function mapDifference(a, b) {
  const rows = Math.min(a.map.shape[0], b.map.shape[0]);
  const cols = Math.min(a.map.shape[1], b.map.shape[1]);
  const data = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r += 1) {
    for (let c = 0; c < cols; c += 1) data[r * cols + c] = a.map.data[r * a.map.shape[1] + c] - b.map.data[r * b.map.shape[1] + c];
  }
  const label = (x, y) => (x === y ? x : `${x} / ${y}`);
  return {
    data, shape: [rows, cols],
    rowLabels: Array.from({ length: rows }, (_, r) => label(a.rowLabels[r], b.rowLabels[r])),
    colLabels: Array.from({ length: cols }, (_, c) => label(a.colLabels[c], b.colLabels[c])),
    differing: Array.from({ length: rows }, (_, r) => r).filter((r) => a.rowLabels[r] !== b.rowLabels[r]),
    sameLength: a.map.shape[0] === b.map.shape[0] && a.map.shape[1] === b.map.shape[1],
  };
}

/** The runner of a model held in the engine worker under `key` (config: its config from loadModel). */
export function modelRunner(client, key, config) {
  if (config.encoderDecoder) {
    return async () => { throw new Error('The compare view reads one text per model run: translation models are compared in the decoding view.'); };
  }
  return async (text) => (await runText(client, key, config, { text })).result;
}

const REDRAW_KEYS = ['layer', 'heads', 'prune', 'hideSpecial', 'words'];
const OUTDATED_NOTE = 'Running both texts again: the maps below are of the texts before the change.';

export class CompareView extends StoreBound {
  #runner = null;
  #results = null; // { a, b, text, compareText }: the views' results of text A and text B, and those two texts
  #error = null;
  #runs = new RunLoop(() => this.#runBoth());
  #outdated = false; // a run skipped while hidden: it runs when the view is shown
  #textB = h('textarea', { name: 'compareText', rows: '2', spellcheck: 'false', placeholder: COMPARE_EXAMPLE.compareText,
    oninput: (event) => this.store.set({ compareText: event.target.value }) });
  #body = h('div', { class: 'compare-body' });
  #textA = h('q', { class: 'compare-text-a' });

  connectedCallback() {
    super.connectedCallback();
    if (this.#body.isConnected) return;
    this.append(
      h('label', { class: 'text-input compare-text' }, 'Text B, compared with text A: ', this.#textA, this.#textB),
      h('p', {}, h('button', { type: 'button', name: 'example', onclick: () => this.store.set({ ...COMPARE_EXAMPLE, token: null }) },
        'Try: “… too tired” against “… too wide”')),
      this.#body);
  }

  /** async (text) => the views' result ({ tokens, attentions [L, H, T, T], texts }); set by the host once a model is loaded. */
  get runner() { return this.#runner; }
  set runner(runner) {
    this.#runner = runner;
    this.#results = null;
    this.#runs.runNow();
  }

  /** The results drawn: { a, b, text, compareText } or null. */
  get results() { return this.#results; }

  storeChanged(state, changed) {
    if (changed === null) {
      if (this.#outdated) this.#runs.runNow();
      this.#draw();
      return;
    }
    if (changed.includes('text') || changed.includes('compareText')) {
      this.#runs.schedule();
      if (!this.deferWhileHidden()) this.#markOutdated();
    } else if (changed.some((key) => REDRAW_KEYS.includes(key))) this.#draw();
  }

  async #runBoth() {
    if (!this.#runner || !this.store) return false;
    // Another tab: no model runs until the view is shown (StoreBound redraws it then).
    this.#outdated = this.deferWhileHidden();
    if (this.#outdated) return false;
    const { text, compareText } = this.store.state;
    try {
      if (text.trim() === '' || compareText.trim() === '') throw new Error('Write text A above and text B here to compare them.');
      const [a, b] = await Promise.all([this.#runner(text), this.#runner(compareText)]);
      this.#results = { a, b, text, compareText };
      this.#error = null;
    } catch (error) {
      this.#results = null;
      this.#error = error.message;
    }
    this.#draw();
    this.dataset.runs = String(Number(this.dataset.runs ?? 0) + 1);
    return true;
  }

  // Between an edit and its run: text A as it is now and the maps marked as of the texts before, without
  // building the tables again at every keystroke (an edit back to the drawn texts draws them as they are).
  #markOutdated() {
    const state = this.store.state;
    const maps = this.#body.querySelector('.compare-maps');
    if (!this.#results || !maps || (this.#results.text === state.text && this.#results.compareText === state.compareText)) {
      this.#draw();
      return;
    }
    this.#textA.textContent = state.text;
    if (this.#textB.value !== state.compareText) this.#textB.value = state.compareText;
    this.#body.querySelector('.compare-note').textContent = OUTDATED_NOTE;
    maps.dataset.outdated = 'true';
  }

  #draw() {
    if (!this.store) return;
    const state = this.store.state;
    if (this.#textB.value !== state.compareText) this.#textB.value = state.compareText;
    this.#textA.textContent = state.text;
    const parts = [];
    if (this.#error || !this.#results) {
      parts.push(h('p', { class: 'hint', role: 'status' }, this.#error ?? (this.#runner ? 'Running both texts…' : 'The comparison appears once a model is loaded.')));
      this.#body.replaceChildren(...parts);
      return;
    }
    const { a, b } = this.#results;
    const [layers, heads] = a.attentions.shape;
    const layer = Math.min(state.layer, layers - 1);
    const shown = { ...state, layer, filter: 'all' };
    const mapA = selectedMap(a, shown);
    const mapB = selectedMap(b, shown);
    parts.push(h('label', {}, `Layer ${layer + 1}, head `, h('select', {
      name: 'head', onchange: (event) => this.store.set({ heads: event.target.value === 'all' ? null : [Number(event.target.value)] }),
    }, h('option', { value: 'all' }, `mean of all ${heads}`), Array.from({ length: heads }, (_, i) => h('option', { value: String(i) }, String(i + 1))))));
    parts[parts.length - 1].querySelector('select').value = state.heads?.length === 1 ? String(state.heads[0]) : 'all';
    if (!mapA || !mapB) {
      parts.push(h('p', { class: 'hint' }, 'Select a head to compare.'));
      this.#body.replaceChildren(...parts);
      return;
    }
    const diff = mapDifference(mapA, mapB);
    const title = `layer ${layer + 1}, ${headsTitle(mapA.heads, heads)}`;
    const [ra, rb] = [mapA.map.shape[0], mapB.map.shape[0]];
    // Between an edit and its run's end the maps are of the texts before: say so, rather than describe them as the new texts'.
    const outdated = this.#results.text !== state.text || this.#results.compareText !== state.compareText;
    const note = outdated ? OUTDATED_NOTE : diff.sameLength
      ? `Both texts have ${ra} rows: the difference is position by position${diff.differing.length ? `; the tokens differ at ${diff.differing.map((r) => `${r + 1} (${diff.rowLabels[r]})`).join(', ')}` : ''}.`
      : `Text A has ${ra} rows and text B ${rb}: the difference covers the first ${Math.min(ra, rb)} positions, which both texts have; the rest of the longer text has no partner (rows and columns name both tokens where they differ).`;
    const table = (caption, map, heat, kind) => {
      const element = h('matrix-table', { caption, heat, 'data-map': kind });
      element.show(map.map ?? map, { rowLabels: map.rowLabels, colLabels: map.colLabels, digits: 2 });
      return h('figure', { class: 'compare-map' }, element);
    };
    parts.push(h('p', { class: 'hint compare-note', role: 'status' }, note),
      h('div', { class: 'compare-maps', dataset: { outdated: String(outdated) } },
        table(`A: ${title}`, mapA, 'rows', 'a'),
        table(`B: ${title}`, mapB, 'rows', 'b'),
        table(`A − B (blue: more attention in A, orange: more in B)`, diff, 'signed', 'difference')));
    this.#body.replaceChildren(...parts);
  }
}

customElements.define('compare-view', CompareView);
