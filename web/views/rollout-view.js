// <rollout-view>: attention rollout or attention flow (rollout.js) as a T x T
// heatmap, drawn by the matrix view (it is a <matrix-view> whose map is the
// rolled-out one instead of one layer's heads): row i is how much token i's
// representation after the last layer draws on each input token. A method
// picker (rollout | flow) sits above the map; the `method` property sets it.
// The reader's picks are announced as a 'rollout-change' event (detail:
// { method, display }), so the page can keep them in its link.
// A display picker (Matrix | Lines; the `display` property) draws the same map
// as the head view's lines instead: a <head-view> given the map as a one-layer,
// one-head result, tokens after the last layer on the left, input tokens on
// the right, the head view's opacity rule.
// The page's transforms (pair filter, hidden special tokens, words, pruning,
// threshold) apply to the rolled-out map as to a head's; layer and head
// selection do not (every layer and head goes in). Cross-attention is
// refused: rollout chains self-attention from layer to layer.
// The map is computed here by rollout.js (data mode, the one-file page), or,
// when `compute` is set (the page and the widget with a model: the engine
// worker's C++ rollout), off the main thread: the view says it is computing
// and draws the map when it arrives, so a long text never freezes the page.
// Not here: the computation (rollout.js, cpp/analysis/rollout.*), the heatmap
// drawing (matrix-view.js), the line drawing (head-view.js).
import { prepareMaps } from '../attention/attention-data.js';
import { h } from '../ui/dom.js';
import './head-view.js';
import { MatrixView } from './matrix-view.js';
import { ROLLOUT_DISPLAYS, ROLLOUT_METHODS, rolledOut } from '../attention/rollout.js';

const METHOD_LABELS = { rollout: 'Rollout', flow: 'Flow (max-flow)' };
const DISPLAY_LABELS = { matrix: 'Matrix', lines: 'Lines' };

// The page's store as the Lines' head view sees it: the rolled-out map is its
// only layer and head; what it sets (a locked token) goes to the page's store.
function oneMapStore(store) {
  const oneMap = (state) => ({ ...state, layer: 0, heads: null });
  return {
    get state() { return oneMap(store.state); },
    set: (patch) => store.set(patch),
    subscribe: (listener) => store.subscribe((state, changed) => listener(oneMap(state), changed)),
  };
}

export class RolloutView extends MatrixView {
  #method = 'rollout';
  #computed = { attentions: null, method: null, data: null, error: null }; // the last rolled-out map, Float32Array [T * T]
  #pending = null; // { attentions, method } being computed by `compute`
  #display = 'matrix';
  #lines = h('head-view', { hidden: true }); // the Lines display
  #shown = null; // { of: the result, single: its rolled-out map as a one-layer, one-head result, drawn: the single #lines has }

  /**
   * null (compute here, with rollout.js) or async (attentions, method) =>
   * { data: [T·T] } computing the map elsewhere (EngineClient.rollout).
   */
  compute = null;
  #picker = h('label', { class: 'rollout-method' }, 'Method ', h('select', {
    name: 'rollout-method', onchange: (event) => { this.method = event.target.value; this.#announce(); },
  }, ROLLOUT_METHODS.map((method) => h('option', { value: method }, METHOD_LABELS[method]))));

  #displayPicker = h('label', { class: 'rollout-method' }, 'Display ', h('select', {
    name: 'rollout-display', onchange: (event) => { this.display = event.target.value; this.#announce(); },
  }, ROLLOUT_DISPLAYS.map((display) => h('option', { value: display }, DISPLAY_LABELS[display]))));

  connectedCallback() {
    super.connectedCallback();
    if (this.firstChild !== this.#picker) this.prepend(this.#picker, ' ', this.#displayPicker);
    if (this.lastChild !== this.#lines) this.append(this.#lines);
  }

  get store() { return super.store; }
  set store(store) {
    this.#lines.store = oneMapStore(store);
    super.store = store;
  }

  /** 'matrix' (the heatmap) or 'lines' (the head view's lines). */
  get display() { return this.#display; }
  set display(value) {
    this.#showPicked(this.#displayPicker, ROLLOUT_DISPLAYS, value);
    if (value === this.#display) return;
    this.#display = value;
    this.dataset.display = value;
    this.redraw();
  }

  /**
   * The lines drawn in the Lines display (HeadView.lineModel(): from, to, weight,
   * opacity, ...; head is 0), [] in the Matrix display.
   */
  lineModel() {
    this.flushDeferred();
    return this.#lines.hidden ? [] : this.#lines.lineModel();
  }

  /** The canvas as drawn (PNG export): the heatmap or the lines. */
  exportCanvas() { return this.#display === 'lines' ? this.#lines.exportCanvas() : super.exportCanvas(); }

  /** SVG text of the heatmap or the lines, as displayed. */
  svg() { return this.#display === 'lines' ? this.#lines.svg() : super.svg(); }

  /** 'rollout' (Ā_L · … · Ā_1) or 'flow' (max flow through the layers). */
  get method() { return this.#method; }
  set method(value) {
    this.#showPicked(this.#picker, ROLLOUT_METHODS, value);
    if (value === this.#method) return;
    this.#method = value;
    this.redraw();
  }

  #announce() {
    this.dispatchEvent(new CustomEvent('rollout-change', { bubbles: true, detail: { method: this.#method, display: this.#display } }));
  }

  // Shows `value` in a picker (method or display), refusing one that is not among its choices.
  #showPicked(picker, choices, value) {
    const select = picker.querySelector('select');
    if (!choices.includes(value)) throw new RangeError(`unknown rollout ${select.name.slice('rollout-'.length)} "${value}" (use ${choices.join(' or ')})`);
    select.value = value;
  }

  mapOf(result, state) {
    this.#lines.hidden = true; // until the map is there
    if (result.cross) {
      throw new Error('Attention rollout is defined for self-attention, where each layer’s tokens are the next layer’s inputs; cross-attention (decoder → encoder) does not chain that way. Pick the encoder or decoder self-attention.');
    }
    const { attentions } = result;
    const [layers, heads, t] = attentions.shape;
    const computed = this.#computed;
    if (computed.attentions !== attentions || computed.method !== this.#method) {
      if (this.compute) throw this.#computeElsewhere(attentions, this.#method);
      this.#computed = { attentions, method: this.#method, data: Float32Array.from(rolledOut(attentions, this.#method).data), error: null };
    }
    if (this.#computed.error) throw new Error(this.#computed.error);
    // prepareMaps on a one-layer, one-head tensor holding the rolled-out map: the page's transforms, labels.
    if (this.#shown?.of !== result || this.#shown.single.attentions.data !== this.#computed.data) {
      this.#shown = { of: result, single: { ...result, attentions: { data: this.#computed.data, shape: [1, 1, t, t] } }, drawn: null };
    }
    const { single } = this.#shown;
    const { maps, rowLabels, colLabels } = prepareMaps(single, { ...state, layer: 0 }, [0]);
    const name = this.#method === 'rollout' ? 'Attention rollout' : 'Attention flow';
    const lines = this.#display === 'lines';
    if (lines) {
      this.#lines.hidden = false;
      this.#lines.caption = `${name} of all ${layers} layers combined: one line from each token after the last layer (left) to each input token (right), weighted by how much it draws on it`;
      if (this.#shown.drawn !== single) this.#lines.result = this.#shown.drawn = single;
    }
    return {
      heads: [...Array(heads).keys()],
      title: `${name} over layers 1–${layers} (mean of all ${heads} heads, plus the residual)`,
      caption: lines ? 'how much each token after the last layer (left) draws on each input token (right)'
        : 'how much each token after the last layer (rows) draws on each input token (columns)',
      map: maps[0].map, rowLabels, colLabels,
    };
  }

  // Starts computing (once per attentions and method) with `compute`, redraws when the map
  // arrives; returns the Error the view shows meanwhile (pending: not a failure).
  #computeElsewhere(attentions, method) {
    if (this.#pending?.attentions !== attentions || this.#pending.method !== method) {
      const pending = { attentions, method };
      this.#pending = pending;
      const settle = (data, error) => {
        if (this.#pending !== pending) return; // a newer map was asked for meanwhile
        this.#pending = null;
        this.#computed = { attentions, method, data, error };
        this.redraw();
      };
      this.compute(attentions, method).then((map) => settle(Float32Array.from(map.data), null), (error) => settle(null, error.message));
    }
    return Object.assign(new Error(`Computing the attention ${method === 'rollout' ? 'rollout' : 'flow'} of ${attentions.shape[0]} layers…`), { pending: true });
  }
}

customElements.define('rollout-view', RolloutView);
