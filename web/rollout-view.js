// <rollout-view>: attention rollout or attention flow (rollout.js) as a T x T
// heatmap, drawn by the matrix view (it is a <matrix-view> whose map is the
// rolled-out one instead of one layer's heads): row i is how much token i's
// representation after the last layer draws on each input token. A method
// picker (rollout | flow) sits above the map; the `method` property sets it.
// The page's transforms (pair filter, hidden special tokens, words, pruning,
// threshold) apply to the rolled-out map as to a head's; layer and head
// selection do not (every layer and head goes in). Cross-attention is
// refused: rollout chains self-attention from layer to layer.
// Not here: the computation (rollout.js), the heatmap drawing (matrix-view.js).
import { prepareMaps } from './attention-data.js';
import { h } from './dom.js';
import { MatrixView } from './matrix-view.js';
import { ROLLOUT_METHODS, rolledOut } from './rollout.js';

const METHOD_LABELS = { rollout: 'Rollout', flow: 'Flow (max-flow)' };

export class RolloutView extends MatrixView {
  #method = 'rollout';
  #computed = { attentions: null, method: null, data: null }; // the last rolled-out map, Float32Array [T * T]
  #picker = h('label', { class: 'rollout-method' }, 'Method ', h('select', {
    name: 'rollout-method', onchange: (event) => { this.method = event.target.value; },
  }, ROLLOUT_METHODS.map((method) => h('option', { value: method }, METHOD_LABELS[method]))));

  connectedCallback() {
    super.connectedCallback();
    if (this.firstChild !== this.#picker) this.prepend(this.#picker);
  }

  /** 'rollout' (Ā_L · … · Ā_1) or 'flow' (max flow through the layers). */
  get method() { return this.#method; }
  set method(value) {
    if (!ROLLOUT_METHODS.includes(value)) throw new RangeError(`unknown rollout method "${value}" (use ${ROLLOUT_METHODS.join(' or ')})`);
    this.#picker.querySelector('select').value = value;
    if (value === this.#method) return;
    this.#method = value;
    this.redraw();
  }

  mapOf(result, state) {
    if (result.cross) {
      throw new Error('Attention rollout is defined for self-attention, where each layer’s tokens are the next layer’s inputs; cross-attention (decoder → encoder) does not chain that way. Pick the encoder or decoder self-attention.');
    }
    const { attentions } = result;
    const [layers, heads, t] = attentions.shape;
    const computed = this.#computed;
    if (computed.attentions !== attentions || computed.method !== this.#method) {
      this.#computed = { attentions, method: this.#method, data: Float32Array.from(rolledOut(attentions, this.#method).data) };
    }
    // prepareMaps on a one-layer, one-head tensor holding the rolled-out map: the page's transforms, labels.
    const single = { ...result, attentions: { data: this.#computed.data, shape: [1, 1, t, t] } };
    const { maps, rowLabels, colLabels } = prepareMaps(single, { ...state, layer: 0 }, [0]);
    const name = this.#method === 'rollout' ? 'Attention rollout' : 'Attention flow';
    return {
      heads: [...Array(heads).keys()],
      title: `${name} over layers 1–${layers} (mean of all ${heads} heads, plus the residual)`,
      caption: 'how much each token after the last layer (rows) draws on each input token (columns)',
      map: maps[0].map, rowLabels, colLabels,
    };
  }
}

customElements.define('rollout-view', RolloutView);
