// <decoding-view>: cross-attention as the decoder writes, step by step. The
// target tokens appear one at a time; at each step the source tokens are
// shaded by that target token's cross-attention row (what the decoder read
// to go on), and the alignment matrix of the tutorials (source tokens along
// the top, target tokens down the side, on the theme's weight scale) grows by that
// row. Values on hover (title and readout). The step is the page's locked
// token (a target token; none locked = every step so far, the latest
// current), so locking a target token in the head or matrix view moves here
// too; buttons step, play and rewind. Weights are the selected heads of the
// selected layer (one head, or their mean), as given: the page's threshold,
// pruning and word grouping do not apply. Token text is set as text.
// Not here: building the result (encoder-decoder.js), the other views.
import { StoreBound } from '../ui/store-bound.js';
import { h, replaceKeepingFocus } from '../ui/dom.js';
import { crossMap } from '../attention/encoder-decoder.js';
import { headsTitle, textOnWeight, weightColour } from '../attention/view-support.js';

const PLAY_MS = 700; // one step per this many milliseconds while playing

export class DecodingView extends StoreBound {
  #result = null;
  #map = null; // crossMap(): { data [T * S], shape [T, S], heads }
  #timer = null;
  #title = h('p', { class: 'view-title' });
  #stepLabel = h('span', { class: 'decoding-step', 'aria-live': 'polite' });
  #play = h('button', { type: 'button', class: 'decoding-play', onclick: () => this.#togglePlay() }, 'Play ▶');
  #source = h('p', { class: 'decoding-source', 'aria-label': 'Source tokens, shaded by what the current target token read' });
  #target = h('p', { class: 'decoding-target', 'aria-label': 'Target tokens written so far' });
  #table = h('table', { class: 'alignment' });
  #readout = h('p', { class: 'readout', 'aria-live': 'polite' });

  connectedCallback() {
    super.connectedCallback();
    if (this.#table.isConnected) return;
    const button = (label, name, step) => h('button', { type: 'button', class: `decoding-${name}`, onclick: () => { this.#stop(); this.#setStep(step()); } }, label);
    this.append(this.#title,
      h('div', { class: 'controls decoding-controls' },
        button('« First', 'first', () => 0),
        button('◀ Back', 'back', () => this.step - 1),
        this.#play,
        button('Next ▶', 'next', () => this.step + 1),
        button('Last »', 'last', () => null),
        this.#stepLabel),
      h('p', { class: 'hint' }, 'Source (what the decoder reads):'), this.#source,
      h('p', { class: 'hint' }, 'Target (what it writes):'), this.#target,
      h('div', { class: 'alignment-scroller' }, this.#table), this.#readout);
    this.#table.addEventListener('pointerover', (event) => this.#showCell(event.target.closest('td')));
    this.#table.addEventListener('pointerleave', () => this.#showCell(null));
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this.#stop();
  }

  storeChanged(state, changed) {
    if (changed === null || changed.some((key) => ['layer', 'heads', 'token', 'theme'].includes(key))) this.#render();
  }

  /** A cross-attention result (encoder-decoder.js: result.cross holds [L, H, T, S]). */
  set result(result) {
    this.#result = result;
    this.#render();
  }

  get result() { return this.#result; }

  /** The current step (0-based target token), or -1 when there is nothing to show. */
  get step() {
    if (!this.#map) return -1;
    const steps = this.#map.shape[0];
    const token = this.store?.state.token;
    const source = this.#sourceCount();
    return token !== null && token !== undefined && token >= source && token < source + steps ? token - source : steps - 1;
  }

  /**
   * What is drawn, for tests: { layer, heads, step, steps, sourceLabels,
   * targetLabels (the rows shown), rows (their weights), current (the
   * shading of the source tokens) }.
   */
  decodingModel() {
    this.flushDeferred();
    if (!this.#map) return null;
    const [, keys] = this.#map.shape;
    const step = this.step;
    const row = (q) => Array.from(this.#map.data.subarray(q * keys, (q + 1) * keys));
    const rows = Array.from({ length: step + 1 }, (_, q) => row(q));
    return {
      layer: this.store.state.layer, heads: this.#map.heads, step, steps: this.#map.shape[0],
      sourceLabels: this.#labels(0), targetLabels: this.#labels(1).slice(0, step + 1), rows, current: rows[step],
    };
  }

  #sourceCount() { return this.#result.cross.attentions.shape[3]; }

  #labels(segment) {
    return this.#result.tokens.filter((token) => token.typeId === segment).map((token) => token.display);
  }

  #setStep(step) {
    const steps = this.#map?.shape[0] ?? 0;
    const token = step === null || step >= steps - 1 ? null : this.#sourceCount() + Math.max(0, step);
    this.store.set({ token });
  }

  #togglePlay() {
    if (this.#timer) {
      this.#stop();
      return;
    }
    this.#setStep(0);
    this.#play.textContent = 'Pause';
    this.#timer = setInterval(() => {
      const next = this.step + 1;
      this.#setStep(next);
      if (!this.#map || next >= this.#map.shape[0] - 1) this.#stop();
    }, PLAY_MS);
  }

  #stop() {
    clearInterval(this.#timer);
    this.#timer = null;
    this.#play.textContent = 'Play ▶';
  }

  #render() {
    if (!this.store || !this.#result || !this.isConnected || this.deferWhileHidden()) return;
    if (!this.#result.cross) {
      this.#map = null;
      this.#title.textContent = 'The decoding view shows cross-attention, which only encoder–decoder models (translation) have.';
      for (const part of [this.#source, this.#target, this.#table]) part.replaceChildren();
      this.#stepLabel.textContent = '';
      return;
    }
    const state = this.store.state;
    const { theme } = state;
    this.#map = crossMap(this.#result, state);
    if (!this.#map) {
      this.#title.textContent = 'No head selected.';
      return;
    }
    const [steps, keys] = this.#map.shape;
    const step = this.step;
    const sources = this.#labels(0);
    const targets = this.#labels(1);
    const count = this.#result.cross.attentions.shape[1];
    this.#title.textContent = `Layer ${state.layer + 1}, ${headsTitle(this.#map.heads, count)}: cross-attention, what each target token read in the source`;
    this.#stepLabel.textContent = `Step ${step + 1} of ${steps}: “${targets[step]}”`;
    const weight = (q, k) => this.#map.data[q * keys + k];

    this.#source.replaceChildren(...sources.map((label, k) => {
      const w = weight(step, k);
      return h('span', { class: 'decoding-token', title: `${label}: ${w.toFixed(4)}`, style: `background: ${weightColour(theme, w)}; color: ${textOnWeight(theme, w)}` }, label);
    }));
    replaceKeepingFocus(this.#target, ...targets.slice(0, step + 1).map((label, q) => h('button', {
      type: 'button', class: 'decoding-token', dataset: { focusKey: `step ${q}` }, 'aria-current': q === step ? 'step' : 'false', onclick: () => { this.#stop(); this.#setStep(q); },
    }, label)));

    const head = h('tr', {}, h('th', { scope: 'col' }, ''), ...sources.map((label) => h('th', { scope: 'col', class: 'alignment-source' }, label)));
    const body = Array.from({ length: step + 1 }, (_, q) => h('tr', { 'aria-current': q === step ? 'step' : 'false' },
      h('th', { scope: 'row' }, targets[q]),
      ...sources.map((label, k) => {
        const w = weight(q, k);
        return h('td', { title: `${targets[q]} → ${label}: ${w.toFixed(4)}`, dataset: { value: String(w), row: String(q), col: String(k) }, style: `background: ${weightColour(theme, w)}` });
      })));
    this.#table.replaceChildren(
      h('caption', {}, 'Alignment: target tokens (rows) × source tokens (columns)'),
      h('thead', {}, head), h('tbody', {}, body));
    this.#readout.textContent = 'Point at a cell for its weight; click a target token to go back to its step.';
  }

  #showCell(cell) {
    if (!cell) return;
    this.#readout.textContent = cell.title;
  }
}

customElements.define('decoding-view', DecodingView);
