// <ablation-view>: knock heads out and see what changes. A layer × head grid
// of buttons toggles heads in the state's ablate list (the page or widget
// reruns the model: every view then shows the ablated model's attention), a
// picker sets zero or mean ablation, and the view draws from the run's
// comparison (run-loop.js's result.ablation): the predictions at the locked
// token (causal: else the last token; encoders: each mask token) before → after with
// each token's probability shift, and every token's loss change as a
// coloured strip with a legend. "Most important heads" asks the page for the
// ranking (a 'rank-request' event; the page sets `ranking`), shown in the
// grid as each head's loss increase and as a list.
// An encoder–decoder's result (translation-run.js's translationAblation) has
// a grid per part (encoder, decoder self-attention, cross-attention), the
// target's teacher-forced loss, the decoder's predictions at the target token
// chosen in the loss strip (at first the one whose loss rose most) and the
// translation the model writes without the heads.
// Token text is always set as text, never as HTML.
// Not here: running the model (run-loop.js, engine-worker.js), the
// comparison's arithmetic (ablation.js).
import { ABLATION_MODES, headKey, headName, lossChanges, meanLoss, predictionShift, rankingKey, toggleHead } from '../attention/ablation.js';
import { h, replaceKeepingFocus } from '../ui/dom.js';
import { StoreBound } from '../ui/store-bound.js';
import { maskHint } from '../ui/token-marks.js';

const PART_CAPTIONS = { encoder: 'Encoder self-attention', decoder: 'Decoder self-attention', cross: 'Cross-attention' };
const MODE_LABELS = { zero: 'Zero (output set to 0)', mean: 'Mean (output set to its mean over the text)' };
const percent = (p) => (p === null ? '—' : `${(100 * p).toFixed(1)}%`);
const capitalized = (text) => `${text[0].toUpperCase()}${text.slice(1)}`;
const signed = (x, digits = 2) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(digits)}`;

/** Background of a loss change (nats): red when the token got harder to predict, blue when easier, clear when unchanged; full colour at ±scale. */
export function lossChangeColor(change, scale = 2) {
  const strength = Math.min(1, Math.abs(change) / scale);
  const hue = change >= 0 ? '0 80% 55%' : '215 80% 55%';
  return `hsl(${hue} / ${(0.8 * strength).toFixed(3)})`;
}

export class AblationView extends StoreBound {
  #result = null;
  #ranking = null; // { mode, key (ablation.js's rankingKey), baseLoss, heads: [{ layer, head, loss, delta, part? }] }
  #rankingError = null;
  #rankingBusy = false;
  #targetRow = null; // encoder–decoders: the target token whose predictions are shown (null: the largest loss change)

  storeChanged(state, changed) {
    if (changed === null || changed.some((key) => ['ablate', 'ablation', 'token', 'text', 'textB', 'target'].includes(key))) this.#render();
  }

  /**
   * Model output with result.ablation (run-loop.js runText with compare), or
   * an encoder–decoder's (translation-run.js's translationAblation; its
   * `grids` name the parts).
   */
  set result(result) {
    if (result?.tokens !== this.#result?.tokens) this.#targetRow = null;
    this.#result = result;
    this.#render();
  }
  get result() { return this.#result; }

  /** The ranking the page computed for a 'rank-request' ({ baseLoss, heads, mode, text }), or an Error, or null. */
  set ranking(value) {
    this.#rankingBusy = false;
    this.#ranking = value instanceof Error ? null : value;
    this.#rankingError = value instanceof Error ? value.message : null;
    this.#render();
  }
  get ranking() { return this.#ranking; }

  // An encoder–decoder's result (its `grids` name the parts).
  get #seq2seq() { return Boolean(this.#result.grids); }

  #render() {
    if (!this.store || !this.#result || !this.isConnected || this.deferWhileHidden()) return;
    const state = this.store.state;
    const comparison = this.#result.ablation ?? null;
    const ranking = this.#ranking && this.#ranking.mode === state.ablation && this.#ranking.key === rankingKey(state) ? this.#ranking : null;
    const grids = this.#result.grids ?? [{ part: undefined, layers: this.#result.attentions.shape[0], heads: this.#result.attentions.shape[1] }];
    replaceKeepingFocus(this, ...[
      h('div', { class: 'ablation-controls controls' },
        h('label', {}, 'Ablation ', h('select', { name: 'ablation', dataset: { focusKey: 'mode' }, onchange: (e) => this.store.set({ ablation: e.target.value }) },
          ABLATION_MODES.map((mode) => h('option', { value: mode, selected: mode === state.ablation }, MODE_LABELS[mode])))),
        h('button', { type: 'button', name: 'clear', dataset: { focusKey: 'clear' }, disabled: state.ablate.length === 0, onclick: () => this.store.set({ ablate: [] }) }, 'Restore all heads'),
        h('button', { type: 'button', name: 'rank', dataset: { focusKey: 'rank' }, disabled: this.#rankingBusy, onclick: () => this.#requestRanking() },
          this.#rankingBusy ? 'Ranking heads…' : 'Most important heads')),
      ...grids.map((grid) => this.#grid(grid, state, ranking)),
      this.#rankingError ? h('p', { class: 'status', 'data-state': 'error' }, this.#rankingError) : null,
      ranking ? this.#rankingList(ranking) : null,
      comparison ? null : h('p', { class: 'hint' }, 'Running the model…'),
      comparison && this.#seq2seq ? this.#translations(comparison) : null,
      comparison ? this.#predictions(comparison, state) : null,
      comparison ? this.#losses(comparison) : null,
    ].filter(Boolean));
  }

  #requestRanking() {
    this.#rankingBusy = true;
    this.#rankingError = null;
    this.#render();
    this.dispatchEvent(new CustomEvent('rank-request', { bubbles: true, composed: true, detail: { ablation: this.store.state.ablation } }));
  }

  // Layer rows × head columns of one part (or of the model); a pressed button is a knocked-out head.
  #grid({ part, layers, heads }, state, ranking) {
    const delta = new Map(ranking?.heads.map((e) => [headKey([e.layer, e.head, e.part]), e.delta]) ?? []);
    const max = ranking ? Math.max(1e-6, ...ranking.heads.map((e) => Math.abs(e.delta))) : 1;
    const ablated = new Set(state.ablate.map(headKey));
    const caption = part ? `${PART_CAPTIONS[part]}: click heads to knock them out` : 'Click heads to knock them out (layer × head)';
    return h('div', { class: 'ablation-grid-scroller' }, h('table', { class: 'ablation-grid', dataset: part ? { part } : {} },
      h('caption', {}, caption),
      h('tr', {}, h('th', {}, ''), Array.from({ length: heads }, (_, hd) => h('th', { scope: 'col' }, `H${hd + 1}`))),
      Array.from({ length: layers }, (_, l) => h('tr', { class: 'ablation-layer' }, h('th', { scope: 'row' }, `L${l + 1}`),
        Array.from({ length: heads }, (_, hd) => {
          const key = headKey([l, hd, part]);
          const d = delta.get(key);
          return h('td', {}, h('button', {
            type: 'button', class: 'ablation-head', dataset: { layer: String(l), head: String(hd), focusKey: key, ...(part ? { part } : {}) },
            'aria-pressed': String(ablated.has(key)),
            title: `${capitalized(headName([l, hd, part]))}${d === undefined ? '' : `: loss ${signed(d, 3)} nats when ablated alone`}`,
            style: d === undefined ? undefined : `box-shadow: inset 0 -0.35rem 0 ${lossChangeColor(d, max)}`,
            onclick: () => this.store.set({ ablate: toggleHead(this.store.state.ablate, l, hd, part) }),
          }, ablated.has(key) ? '✕' : (d === undefined ? '' : signed(d))));
        })))));
  }

  #rankingList(ranking) {
    return h('details', { class: 'ablation-ranking', open: true },
      h('summary', {}, `Most important heads (${ranking.mode} ablation, each alone; mean loss of the intact model ${ranking.baseLoss.toFixed(3)} nats)`),
      h('ol', {}, ranking.heads.slice(0, 10).map((e) => h('li', { dataset: { layer: String(e.layer), head: String(e.head), ...(e.part ? { part: e.part } : {}) } },
        `${capitalized(headName([e.layer, e.head, e.part]))}: ${signed(e.delta, 3)} nats`))));
  }

  // Encoder–decoders: the translation the model writes with and without the heads (the latter once decoded).
  #translations(comparison) {
    const intact = this.#result.translation;
    const written = comparison.translation;
    const ablated = written === null ? 'Translating…' : written.text ?? written.decoderTokens.slice(1).map((t) => t.display).join(' ');
    const n = comparison.heads.length;
    return h('div', { class: 'ablation-translations' },
      h('dl', {},
        intact === null ? null : [h('dt', {}, 'The model’s translation'), h('dd', { class: 'intact' }, intact)],
        h('dt', {}, n ? `Its translation without ${n === 1 ? 'this head' : `these ${n} heads`}` : 'Its translation (no head knocked out)'),
        h('dd', { class: 'ablated', 'aria-busy': String(written === null) }, ablated)),
      h('p', { class: 'hint' }, 'The heads are knocked out on this tab only: the other tabs show the intact model.'),
      comparison.leftOut ? h('p', { class: 'hint', dataset: { leftOut: String(comparison.leftOut) } },
        `${comparison.leftOut} head${comparison.leftOut === 1 ? '' : 's'} in the link ${comparison.leftOut === 1 ? 'is' : 'are'} not in this model (a head is PART:LAYER:HEAD, PART encoder, decoder or cross) and ${comparison.leftOut === 1 ? 'was' : 'were'} left out.`) : null);
  }

  // Causal: the locked token's row (else the last); encoders: every mask token.
  #predictions(comparison, state) {
    const { before, after } = comparison;
    const tokens = this.#result.tokens;
    if (before.predictions.length === 0) {
      return h('p', { class: 'hint ablation-predictions' }, this.#result.causal ? 'No predictions.' : `${maskHint(this.#result.maskToken)}, with and without the heads.`);
    }
    const seq2seq = this.#seq2seq;
    const locked = state.token !== null && state.token < tokens.length ? state.token : tokens.length - 1;
    const wanted = seq2seq ? [this.#shownTargetRow(comparison)] : this.#result.causal ? [locked] : before.predictions.map((p) => p.position);
    const rows = before.predictions.map((p, i) => [p, after.predictions[i]]).filter(([p]) => wanted.includes(p.position));
    const caption = (position) => (seq2seq ? `Target token ${position + 1} (“${tokens[position].display}”): what the decoder predicted there`
      : this.#result.causal ? `Next token after “${tokens[position].display}” (token ${position + 1})` : `${this.#result.maskToken} at token ${position + 1}`);
    return h('div', { class: 'ablation-predictions' }, rows.map(([b, a]) => h('table', { class: 'ablation-shift' },
      h('caption', {}, caption(b.position)),
      h('tr', {}, h('th', { scope: 'col' }, 'token'), h('th', { scope: 'col' }, 'before'), h('th', { scope: 'col' }, 'after'), h('th', { scope: 'col' }, 'shift')),
      predictionShift(b, a).map((e) => h('tr', { dataset: { id: String(e.id) } },
        h('td', { class: 'prediction-token' }, e.display),
        h('td', { class: 'before' }, percent(e.before)),
        h('td', { class: 'after' }, percent(e.after)),
        h('td', { class: `shift ${e.shift === null ? '' : e.shift >= 0 ? 'up' : 'down'}` }, e.shift === null ? 'outside the top' : `${signed(100 * e.shift, 1)} pts`))))));
  }

  // Encoder–decoders: the target token whose predictions are shown: the one chosen in the strip, else the
  // one whose loss rose most.
  #shownTargetRow(comparison) {
    if (this.#targetRow !== null && this.#targetRow < this.#result.tokens.length) return this.#targetRow;
    const changes = lossChanges(comparison.lossPositions, comparison.before.tokenLoss, comparison.after.tokenLoss);
    return changes.reduce((best, c) => (best === null || c.change > best.change ? c : best), null)?.position ?? 0;
  }

  // Each token's loss change as the background of the token (text only, each in its own outlined box: WordPiece
  // tokens carry no spaces), with a legend; full colour at the largest change (at least 0.1 nats). An
  // encoder–decoder's target tokens are buttons: each shows the decoder's predictions there.
  #losses(comparison) {
    const changes = lossChanges(comparison.lossPositions, comparison.before.tokenLoss, comparison.after.tokenLoss);
    if (changes.length === 0) return null;
    const scale = Math.max(0.1, ...changes.map((c) => Math.abs(c.change)));
    const byPosition = new Map(changes.map((c) => [c.position, c]));
    const mean = meanLoss(changes);
    const seq2seq = this.#seq2seq;
    const what = seq2seq ? 'each target token (teacher-forced: given the source and the target before it; click one for its predictions)'
      : this.#result.causal ? 'each token (predicted from the ones before it)' : `each ${this.#result.maskToken} (against the intact model’s top prediction)`;
    const shown = seq2seq ? this.#shownTargetRow(comparison) : null;
    return h('figure', { class: 'ablation-loss' },
      h('figcaption', {}, `Loss of ${what}: mean ${mean.before.toFixed(3)} → ${mean.after.toFixed(3)} nats (${signed(mean.after - mean.before, 3)})`),
      h('p', { class: 'ablation-tokens' }, this.#result.tokens.map((token, i) => {
        const c = byPosition.get(i);
        return h(seq2seq ? 'button' : 'span', {
          class: 'ablation-token', dataset: { ...(c ? { change: c.change.toFixed(4) } : {}), ...(seq2seq ? { focusKey: `target-${i}` } : {}) },
          style: c ? `background: ${lossChangeColor(c.change, scale)}` : undefined,
          title: c ? `${token.display}: ${c.before.toFixed(3)} → ${c.after.toFixed(3)} nats (${signed(c.change, 3)})` : `${token.display}: no loss (nothing predicts it)`,
          ...(seq2seq ? { type: 'button', 'aria-pressed': String(i === shown), onclick: () => { this.#targetRow = i; this.#render(); } } : {}),
        }, token.display);
      })),
      h('p', { class: 'ablation-legend' },
        h('span', { style: `background: ${lossChangeColor(-scale, scale)}` }, `easier (−${scale.toFixed(2)} nats)`), ' ',
        h('span', { class: 'unchanged' }, 'unchanged'), ' ',
        h('span', { style: `background: ${lossChangeColor(scale, scale)}` }, `harder (+${scale.toFixed(2)} nats)`)));
  }
}

if (!customElements.get('ablation-view')) customElements.define('ablation-view', AblationView);
