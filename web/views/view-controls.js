// <view-controls>: the controls every attention view shares, bound to the
// page's Store: layer, minimum weight, exBERT-style pruning (cumulative mass
// kept per row), bertviz's sentence-pair filter (shown for pairs only),
// hiding special tokens (rows renormalised) and word-level aggregation.
// Not here: head selection (head chips live in the head view), model and
// text inputs (the app shell).
import { StoreBound } from '../ui/store-bound.js';
import { h } from '../ui/dom.js';

const FILTER_LABELS = { all: 'All', 'a-a': 'A → A', 'b-b': 'B → B', 'a-b': 'A → B', 'b-a': 'B → A' };

export class ViewControls extends StoreBound {
  #layers = 0;
  #pairs = false;

  storeChanged(state, changed) {
    if (changed === null) this.#render();
    else this.#sync();
  }

  /** Number of layers of the model and whether the input is a sentence pair. */
  configure({ layers, pairs }) {
    this.#layers = layers;
    this.#pairs = pairs;
    this.#render();
  }


  #render() {
    if (!this.store) return;
    const set = (patch) => this.store.set(patch);
    this.replaceChildren(...[
      h('label', {}, 'Layer ', h('select', { name: 'layer', onchange: (e) => set({ layer: Number(e.target.value) }) },
        Array.from({ length: this.#layers }, (_, l) => h('option', { value: String(l) }, String(l + 1))))),
      h('label', { title: 'Hide lines and cells below this weight' }, 'Min weight ',
        h('input', { type: 'range', name: 'threshold', min: '0', max: '0.5', step: '0.01', oninput: (e) => set({ threshold: Number(e.target.value) }) }),
        h('output', { name: 'threshold-value' })),
      h('label', { title: 'Keep, in each row, the strongest weights until they add up to this share (exBERT)' }, 'Keep top mass ',
        h('input', { type: 'range', name: 'prune', min: '0.1', max: '1', step: '0.05', oninput: (e) => set({ prune: Number(e.target.value) }) }),
        h('output', { name: 'prune-value' })),
      this.#pairs ? h('label', {}, 'Sentences ', h('select', { name: 'filter', onchange: (e) => set({ filter: e.target.value }) },
        Object.entries(FILTER_LABELS).map(([value, label]) => h('option', { value }, label)))) : null,
      h('label', { title: 'Drop the special tokens the tokenizer adds around the text ([CLS] and [SEP], <s> and </s>; a [MASK] or <mask> you write stays) and renormalise each row over the other tokens' },
        h('input', { type: 'checkbox', name: 'hideSpecial', onchange: (e) => set({ hideSpecial: e.target.checked }) }), ' hide special tokens (rows renormalised)'),
      h('label', { title: 'Weight from word A to word B = mean over A\'s pieces of the sum over B\'s pieces' },
        h('input', { type: 'checkbox', name: 'words', onchange: (e) => set({ words: e.target.checked }) }), ' words, not sub-word tokens (sum over key pieces, mean over query pieces)'),
    ].filter(Boolean));
    this.#sync();
  }

  #sync() {
    const s = this.store.state;
    const field = (name) => this.querySelector(`[name="${name}"]`);
    if (field('layer')) {
      field('layer').value = String(Math.min(s.layer, Math.max(0, this.#layers - 1)));
      field('layer').closest('label').hidden = ['model', 'rollout', 'ablation'].includes(s.view); // the model and rollout views show every layer; the ablation view every head
    }
    // The decoding view draws the weights as given: only the layer applies there; the ablation view draws no weights.
    for (const name of ['threshold', 'prune', 'filter', 'hideSpecial', 'words']) {
      const label = field(name)?.closest('label');
      if (label) label.hidden = s.view === 'cross' || s.view === 'ablation';
    }
    field('threshold').value = String(s.threshold);
    field('threshold-value').textContent = s.threshold.toFixed(2);
    field('prune').value = String(s.prune);
    field('prune-value').textContent = s.prune >= 1 ? 'all' : `${Math.round(s.prune * 100)}%`;
    if (field('filter')) field('filter').value = s.filter;
    field('hideSpecial').checked = s.hideSpecial;
    field('words').checked = s.words;
  }
}

customElements.define('view-controls', ViewControls);
