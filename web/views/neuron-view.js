// <neuron-view>: bertviz's neuron view, generalised. For one query token and
// one head it shows how the attention weights come about, as aligned rows of
// coloured cells (blue positive, orange negative, stronger = larger |value|):
// the query vector q; for each key token its key vector k, the element-wise
// q × k, their sum q·k, q·k ÷ √d_k (Gemma 2/3: ÷ √query_pre_attn_scalar, the
// trace's divisor; T5: unscaled), Gemma 2's softcap step cap·tanh(s ÷ cap),
// T5's position bias and the softmax
// weight. For causal models only the keys up to the query are shown (later
// keys are masked); on a sliding-window layer (result.slidingWindow,
// result.slidingLayers) only the window's. The view computes q × k, q·k, the
// scaling, the cap and the softmax itself (in double) from the Q and K of the
// head, so every step is the arithmetic shown.
// An encoder–decoder's cross-attention part (result.cross): the query is a
// target token (the decoder), the keys are the source tokens (the encoder).
// Query token: state.token, else the last token (causal, cross) or the first; head:
// the first of state.heads, else head 0. Q and K come from view.trace, which
// the view asks for with a `trace-request` event.
// RoPE models (the trace has `rotary`): q and k in the rows are the rotated
// vectors the dot product uses, and a panel below (rope-panel.js) shows, for
// the query and one key (the "Key" menu or a click on a key row; by default
// the key with the largest weight), each dimension pair before and after the
// rotation and the angle it turned by. T5 (the trace has `positionBias`):
// each score gets the head's learned bias for the distance key − query, a
// column of its own, and a panel below (position-bias-panel.js) draws every
// head's bias over the distances and the buckets, the chosen key marked.
// The header and the q row stay fixed; key rows scroll and only visible rows
// are drawn, so 512 keys cost the same as 30.
// Not here: computing Q and K (the model runtime), the other views.
import { StoreBound } from '../ui/store-bound.js';
import { h } from '../ui/dom.js';
import { SvgWriter } from '../export/svg-writer.js';
import { pageBackground, shorten, slidingWindowOf, viewColours } from '../attention/view-support.js';
import { positionBiasPanel } from './position-bias-panel.js';
import { ropePanel, rotaryPairs } from './rope-panel.js';

const LABEL_WIDTH = 140;
const NUMBER_WIDTH = 74;
const GAP = 16;
const HEADER = 34;

const signedColour = (v, scale) => {
  const s = scale > 0 ? Math.min(1, Math.abs(v) / scale) : 0;
  return v < 0 ? `rgba(230, 120, 30, ${0.06 + 0.9 * s})` : `rgba(40, 110, 200, ${0.06 + 0.9 * s})`;
};
const formatNumber = (v) => (Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(3));

export class NeuronView extends StoreBound {
  #result = null;
  #trace = null;
  #requested = null; // "layer.head" of the trace asked for
  #model = null; // neuronModel()
  #layout = null;
  #hover = null; // { row: -1 (q) | key position, section, dim }
  #cursor = null; // key position chosen with the keyboard
  #title = h('p', { class: 'view-title' });
  #controls = h('div', { class: 'controls' });
  #querySelect = h('select', { onchange: (e) => this.store.set({ token: Number(e.target.value) }) });
  #headSelect = h('select', { onchange: (e) => this.store.set({ heads: [Number(e.target.value)] }) });
  #panelKey = null; // key position the rotary or position-bias panel shows; null = the key with the largest weight
  #keySelect = h('select', { onchange: (e) => { this.#panelKey = Number(e.target.value); this.#rebuild(); } });
  #keyLabelText = h('span', {}, 'Key (rotary) ');
  #keyLabel = h('label', { hidden: true }, this.#keyLabelText, this.#keySelect);
  #ropeSlot = h('div', { class: 'rope-slot' });
  #note = h('p', { class: 'hint' });
  #canvas = h('canvas', { tabindex: '0', role: 'img' });
  #scroller = h('div', { class: 'neuron-view-scroller' });
  #spacer = h('div');
  #readout = h('p', { class: 'readout', 'aria-live': 'polite' });

  connectedCallback() {
    super.connectedCallback();
    if (!this.#scroller.isConnected) {
      this.#controls.append(
        h('label', {}, 'Query token ', this.#querySelect),
        h('label', {}, 'Head ', this.#headSelect),
        this.#keyLabel,
      );
      this.#scroller.append(this.#canvas, this.#spacer);
      this.append(this.#title, this.#controls, this.#note, this.#scroller, this.#readout, this.#ropeSlot);
      this.#scroller.addEventListener('scroll', () => this.#paint());
      this.#canvas.addEventListener('pointermove', (e) => this.#setHover(this.#hit(e)));
      this.#canvas.addEventListener('pointerleave', () => this.#setHover(null));
      this.#canvas.addEventListener('keydown', (e) => this.#onKey(e));
      this.#canvas.addEventListener('click', (e) => {
        const hit = this.#hit(e);
        if (hit && hit.row >= 0 && this.#model?.rotary) {
          this.#panelKey = this.#model.keys[hit.row].key;
          this.#rebuild();
        }
      });
      new ResizeObserver(() => {
        if (this.#layout && this.clientWidth !== this.#layout.hostWidth) this.#rebuild();
      }).observe(this);
    }
    this.#rebuild();
  }


  storeChanged(state, changed) {
    if (changed === null) this.#rebuild();
    else if (changed.some((key) => ['layer', 'heads', 'token', 'words', 'filter', 'hideSpecial'].includes(key))) this.#rebuild();
    else if (changed.includes('theme')) this.#paint(); // its colours are read from the theme at paint time
  }

  /**
   * Model output: { tokens, attentions [L, H, T, T], texts, causal }, or an encoder–decoder's
   * cross-attention part (encoder-decoder.js's crossResult, with `cross`). Clears the trace.
   */
  set result(result) {
    this.#result = result;
    this.#trace = null;
    this.#panelKey = null;
    this.#requested = null;
    this.#rebuild();
  }

  /**
   * Q and K of one head: { layer, head, q: {data, shape: [T, d_k]}, k: {...}, scores?, rotary? }
   * (rotary, RoPE models: { q, k before the rotation, inverseFrequencies [r/2], firstPosition, attentionFactor }).
   */
  set trace(trace) {
    this.#trace = trace ?? null;
    this.#requested = null;
    this.#rebuild();
  }

  /** The canvas as drawn (the PNG export: the visible rows). */
  exportCanvas() { this.flushDeferred(); return this.#canvas; }

  /** SVG text of the whole view (every key row, not only the visible ones), in the page's theme colours. */
  svg() {
    this.flushDeferred();
    if (!this.#model || !this.#layout) return null;
    const { width, height, rowHeight } = this.#layout;
    const { layer, head, queryLabel, keys } = this.#model;
    const colours = viewColours(this);
    const svg = new SvgWriter(width, height, { background: pageBackground(this), title: `Neuron view, layer ${layer + 1}, head ${head + 1}, query ${queryLabel}` });
    const { fixed, keys: rows } = this.#scene(0, keys.length - 1, 0, colours);
    const cells = svg.group({ 'shape-rendering': 'crispEdges' });
    const texts = svg.group({});
    const anchors = { left: 'start', center: 'middle', right: 'end' };
    for (const item of [...fixed, ...rows]) {
      if (item.rect) svg.rect(...item.rect, { fill: item.fill }, cells);
      else svg.text(item.text, item.x, item.y, { anchor: anchors[item.align], size: rowHeight > 16 ? 12 : 11, fill: item.fill }, texts);
    }
    return svg.toString();
  }

  /** Mends the page snapshot's copy of this view (view-snapshot.js): every key row, as the SVG export draws them, in the scroller. */
  offlineCopy(copy) {
    const svg = this.svg();
    const scroller = copy.querySelector('.neuron-view-scroller');
    if (!svg || !scroller) return;
    scroller.replaceChildren(this.ownerDocument.importNode(new DOMParser().parseFromString(svg, 'image/svg+xml').documentElement, true));
  }

  /**
   * The numbers shown, for tests and exports (null while waiting for Q and K):
   * { layer, head, query, queryLabel, defaultQuery, dk, divisor, softcap (Gemma 2; 0: none), window (the
   * sliding window of this layer; 0: none), positionBias (T5: true), q, keys: [{ key, label, k, products,
   * dot, scaled, capped (softcap·tanh(scaled / softcap), or scaled), bias (T5's position bias, else 0),
   * softmax, modelWeight }], rotary, layout }. rotary (RoPE models, else null): rope-panel.js's rotaryPairs()
   * for the query and the panel's key, plus key (its position in the text).
   * layout gives the cell geometry in CSS pixels: cellWidth, rowHeight, the
   * left edge of each section (x.k, x.products, x.dot, x.scaled, x.capped with a softcap, x.bias with a
   * position bias, x.softmax),
   * qTop (the q row's top) and keysTop (first key row's top, unscrolled).
   */
  neuronModel() {
    this.flushDeferred();
    if (!this.#model) return null;
    const { cellWidth, rowHeight, x, qTop, keysTop } = this.#layout;
    const copy = (v) => Array.from(v);
    return {
      ...this.#model,
      q: copy(this.#model.q),
      keys: this.#model.keys.map((key) => ({ ...key, k: copy(key.k), products: copy(key.products) })),
      layout: { cellWidth, rowHeight, x: { ...x }, qTop, keysTop },
    };
  }

  // The tokens that are queries and keys. Cross-attention (an encoder–decoder's cross part, drawn over
  // [source, target] tokens): queries are the target tokens, from `firstQuery` = S on, keys the S source
  // tokens; the trace's q has a row per target token. Else every token is both, and q and k have t rows.
  #span() {
    const t = this.#result.attentions.shape[2];
    const sources = this.#result.cross ? this.#result.cross.attentions.shape[3] : 0;
    return this.#result.cross ? { t, firstQuery: sources, queries: t - sources, keys: sources } : { t, firstQuery: 0, queries: t, keys: t };
  }

  #selection() {
    const [layers, heads] = this.#result.attentions.shape;
    const { t, firstQuery } = this.#span();
    const state = this.store.state;
    const head = (state.heads ?? []).find((x) => x >= 0 && x < heads) ?? 0;
    const locked = state.token !== null && state.token >= firstQuery && state.token < t;
    const query = locked ? state.token : (this.#result.causal || this.#result.cross ? t - 1 : 0);
    return { layer: Math.min(state.layer, layers - 1), head, query, defaultQuery: !locked };
  }

  #rebuild() {
    if (!this.store || !this.#result || !this.isConnected || this.deferWhileHidden()) return;
    const { layer, head, query, defaultQuery } = this.#selection();
    const span = this.#span();
    const tokens = this.#result.tokens;
    const heads = this.#result.attentions.shape[1];
    this.#querySelect.replaceChildren(...tokens.map((token, i) => (i < span.firstQuery ? null : h('option', { value: String(i), selected: i === query }, `${i + 1}: ${token.display}`))).filter(Boolean));
    this.#headSelect.replaceChildren(...Array.from({ length: heads }, (_, i) => h('option', { value: String(i), selected: i === head }, `Head ${i + 1}`)));
    this.#querySelect.value = String(query);
    this.#headSelect.value = String(head);
    this.#title.textContent = `Layer ${layer + 1}, head ${head + 1}: how query “${tokens[query].display}” (token ${query + 1}) weighs each key`;
    const notes = [];
    if (defaultQuery) notes.push(`No token is locked, so the query is the ${this.#result.causal || this.#result.cross ? 'last' : 'first'} ${this.#result.cross ? 'target ' : ''}token; lock a token (or choose one here) to follow another.`);
    if (this.#result.causal) notes.push('Causal model: only keys up to the query are shown; later keys are masked (−∞ before softmax).');
    const window = slidingWindowOf(this.#result, layer);
    if (window) notes.push(`Sliding-window layer: the query sees only its last ${window} keys (itself included); earlier keys are masked.`);
    if (this.#result.cross) notes.push('Cross-attention: the query comes from the decoder (a target token), the keys from the encoder (every source token).');
    const state = this.store.state;
    if (state.words || state.filter !== 'all' || state.hideSpecial) notes.push('This view shows the model’s own computation on tokens: word grouping, the pair filter and hidden special tokens do not apply here.');
    const trace = this.#trace;
    const fresh = trace && trace.layer === layer && trace.head === head && trace.q?.shape[0] === span.queries && trace.k?.shape[0] === span.keys &&
      (!trace.rotary || (trace.rotary.q.shape[0] === span.queries && trace.rotary.k.shape[0] === span.keys));
    this.#keyLabel.hidden = !(fresh && (trace.rotary || trace.positionBias));
    this.#keyLabelText.textContent = trace?.positionBias ? 'Key (position bias) ' : 'Key (rotary) ';
    if (!fresh) {
      this.#ropeSlot.replaceChildren();
      this.#model = null;
      this.#layout = null;
      this.#note.textContent = notes.join(' ');
      this.#readout.textContent = `Waiting for the query and key vectors of layer ${layer + 1}, head ${head + 1}…`;
      this.dataset.state = 'waiting';
      this.#canvas.width = 0;
      this.#canvas.height = 0;
      this.#spacer.style.height = '0';
      this.#scroller.style.height = '';
      const key = `${layer}.${head}`;
      if (this.#requested !== key) {
        this.#requested = key;
        this.dispatchEvent(new CustomEvent('trace-request', { bubbles: true, composed: true, detail: { layer, head } }));
      }
      return;
    }
    this.#model = this.#compute(layer, head, query, defaultQuery);
    const worst = this.#model.keys.reduce((m, key) => Math.max(m, Math.abs(key.softmax - key.modelWeight)), 0);
    if (this.#model.positionBias) notes.push('T5: q·k is not scaled, and no position is added to the tokens; each score gets this head’s learned bias for the distance key − query instead (the panel below).');
    if (this.#model.softcap) notes.push(`Softcapped scores (Gemma 2): each scaled score s becomes ${this.#model.softcap}·tanh(s ÷ ${this.#model.softcap}) before the softmax, so no score exceeds ±${this.#model.softcap}.`);
    if (worst > 1e-3) notes.push(`Note: the model’s attention weights differ from the softmax of these scores by up to ${worst.toFixed(4)}.`);
    this.#note.textContent = notes.join(' ');
    this.#showPositionPanel();
    this.dataset.state = 'ready';
    this.#cursor = null;
    this.#hover = null;
    this.#layOut();
    this.#canvas.setAttribute('aria-label', `Neuron view of layer ${layer + 1}, head ${head + 1} for query “${tokens[query].display}”: ${this.#model.keys.length} keys. Arrow keys up and down read each key's dot product, scaled score and softmax weight.`);
    this.#readout.textContent = 'Point at a cell for its value; focus the view and use the arrow keys to read each key row.';
    this.#paint();
  }

  #compute(layer, head, query, defaultQuery) {
    const { q, k } = this.#trace;
    const dk = q.shape[1];
    const divisor = this.#trace.divisor ?? Math.sqrt(dk);  // √d_k, Gemma 2/3's √query_pre_attn_scalar, or T5's 1
    const softcap = this.#trace.softcap ?? 0;
    const bias = this.#trace.positionBias?.bias ?? null;  // T5: [Tq, Tk]
    const window = slidingWindowOf(this.#result, layer);
    const { t, firstQuery, keys: keyCount } = this.#span();
    const qv = q.data.subarray((query - firstQuery) * dk, (query - firstQuery + 1) * dk);
    const last = this.#result.causal ? query : keyCount - 1;
    const [, heads] = this.#result.attentions.shape;
    const weightsAt = ((layer * heads + head) * t + query) * t;
    const keys = [];
    for (let j = window ? Math.max(0, query - window + 1) : 0; j <= last; j += 1) {
      const kv = k.data.subarray(j * dk, (j + 1) * dk);
      const products = new Float64Array(dk);
      let dot = 0;
      for (let d = 0; d < dk; d += 1) {
        products[d] = qv[d] * kv[d];
        dot += products[d];
      }
      const scaled = dot / divisor;
      const capped = softcap ? softcap * Math.tanh(scaled / softcap) : scaled;
      const positionBias = bias ? bias.data[(query - firstQuery) * bias.shape[1] + j] : 0;
      keys.push({ key: j, label: this.#result.tokens[j].display, k: kv, products, dot, scaled, capped, bias: positionBias, softmax: 0, modelWeight: this.#result.attentions.data[weightsAt + j] });
    }
    const score = (key) => key.capped + key.bias;  // what the softmax reads
    const max = keys.reduce((m, key) => Math.max(m, score(key)), -Infinity);
    let sum = 0;
    for (const key of keys) sum += Math.exp(score(key) - max);
    for (const key of keys) key.softmax = Math.exp(score(key) - max) / sum;
    return { layer, head, query, queryLabel: this.#result.tokens[query].display, defaultQuery, dk, divisor, softcap, window, positionBias: bias !== null, q: qv, keys, rotary: this.#rotaryOf(query, keys) };
  }

  // The rotary panel's numbers (RoPE traces) for the query and the chosen key, else null.
  #rotaryOf(query, keys) {
    const { q, k, rotary } = this.#trace;
    if (!rotary) return null;
    const dk = q.shape[1];
    const chosen = this.#panelKeyOf(keys);
    const row = (m, i) => m.data.subarray(i * dk, (i + 1) * dk);
    return {
      key: chosen.key,
      ...rotaryPairs({
        qBefore: row(rotary.q, query), kBefore: row(rotary.k, chosen.key), qAfter: row(q, query), kAfter: row(k, chosen.key),
        inverseFrequencies: rotary.inverseFrequencies, queryPosition: rotary.firstPosition + query, keyPosition: rotary.firstPosition + chosen.key,
      }),
      attentionFactor: rotary.attentionFactor ?? 1,
    };
  }

  // The key the rotary or position-bias panel shows: the chosen one, else the one with the largest weight.
  #panelKeyOf(keys) {
    return keys.find((key) => key.key === this.#panelKey) ?? keys.reduce((best, key) => (key.modelWeight > best.modelWeight ? key : best), keys[0]);
  }

  #showPositionPanel() {
    const { rotary, keys, query, queryLabel, dk, head, positionBias } = this.#model;
    if (positionBias) {
      const key = this.#panelKeyOf(keys);
      const { part, byDistance, maxDistance } = this.#trace.positionBias;
      this.#keySelect.replaceChildren(...keys.map((x) => h('option', { value: String(x.key), selected: x.key === key.key }, `${x.key + 1}: ${x.label}`)));
      this.#keySelect.value = String(key.key);
      this.#ropeSlot.replaceChildren(positionBiasPanel(byDistance, part, head, { label: queryLabel, position: query }, { label: key.label, position: key.key },
        key.bias, maxDistance));
      return;
    }
    if (!rotary) {
      this.#ropeSlot.replaceChildren();
      return;
    }
    const key = keys.find((x) => x.key === rotary.key);
    const first = this.#trace.rotary.firstPosition;
    this.#keySelect.replaceChildren(...keys.map((x) => h('option', { value: String(x.key), selected: x.key === key.key }, `${x.key + 1}: ${x.label}`)));
    this.#keySelect.value = String(key.key);
    this.#ropeSlot.replaceChildren(ropePanel(rotary, { label: queryLabel, position: first + query }, { label: key.label, position: first + key.key }, key.dot, dk));
  }

  #layOut() {
    const { dk, keys } = this.#model;
    const hostWidth = this.clientWidth;
    const available = Math.max(360, hostWidth || 800) - LABEL_WIDTH - 3 * NUMBER_WIDTH - 3 * GAP - 16;
    const cellWidth = Math.max(2, Math.min(14, Math.floor(available / (2 * dk))));
    const rowHeight = keys.length > 150 ? 14 : 18;
    const x = { k: LABEL_WIDTH + 8 };
    x.products = x.k + dk * cellWidth + GAP;
    x.dot = x.products + dk * cellWidth + GAP;
    x.scaled = x.dot + NUMBER_WIDTH + 4;
    if (this.#model.softcap) x.capped = x.scaled + NUMBER_WIDTH + 4;
    if (this.#model.positionBias) x.bias = (x.capped ?? x.scaled) + NUMBER_WIDTH + 4;
    x.softmax = (x.bias ?? x.capped ?? x.scaled) + NUMBER_WIDTH + 4;
    const width = x.softmax + NUMBER_WIDTH + 8;
    const qTop = HEADER;
    const keysTop = qTop + rowHeight + 8;
    const height = keysTop + keys.length * rowHeight + 4;
    const viewport = Math.min(height, Math.max(260, Math.round(window.innerHeight * 0.7)));
    const scale = (values) => values.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    this.#layout = {
      hostWidth, cellWidth, rowHeight, x, width, height, viewport, qTop, keysTop,
      scales: {
        vectors: Math.max(scale(this.#model.q), ...keys.map((key) => scale(key.k))),
        products: Math.max(...keys.map((key) => scale(key.products))),
        dot: scale(keys.map((key) => key.dot)),
        scaled: scale(keys.map((key) => key.scaled)),
        capped: scale(keys.map((key) => key.capped)),
        bias: scale(keys.map((key) => key.bias)),
      },
    };
    const ratio = Math.min(2, window.devicePixelRatio || 1);
    this.#canvas.width = Math.round(width * ratio);
    this.#canvas.height = Math.round(viewport * ratio);
    this.#canvas.style.width = `${width}px`;
    this.#canvas.style.height = `${viewport}px`;
    this.#scroller.style.height = `${viewport}px`;
    this.#spacer.style.height = `${height - viewport}px`;
  }

  /**
   * What the view draws, in CSS pixels, as { fixed, keys } lists of
   * { rect: [x, y, w, h], fill } and { text, x, y, align, fill }: the column
   * titles and the q row (fixed), then key rows first..last, moved up by scroll.
   */
  #scene(first, last, scroll, colours) {
    const { cellWidth, rowHeight, x, qTop, keysTop, scales } = this.#layout;
    const { dk, q, keys, divisor, softcap, positionBias } = this.#model;
    const fixed = [];
    const rows = [];
    const title = (text, left, y, align = 'left') => fixed.push({ text, x: left, y, align, fill: colours.text });
    title(this.#model.rotary ? 'k after RoPE (q above, too)' : 'key k (q above)', x.k, 12);
    title('q × k (element-wise)', x.products, 12);
    title('q·k', x.dot + NUMBER_WIDTH / 2, 12, 'center');
    title(divisor === 1 ? 'unscaled' : `÷ √${Math.round(divisor * divisor)} = ${divisor.toFixed(2)}`, x.scaled + NUMBER_WIDTH / 2, 12, 'center');
    if (softcap) title(`${softcap}·tanh(s ÷ ${softcap})`, x.capped + NUMBER_WIDTH / 2, 12, 'center');
    if (positionBias) title('+ position bias', x.bias + NUMBER_WIDTH / 2, 12, 'center');
    title('softmax', x.softmax + NUMBER_WIDTH / 2, 12, 'center');
    title(`d_k = ${dk}`, x.k + (dk * cellWidth) / 2, 26, 'center');
    const vector = (out, values, left, top, scale) => {
      for (let d = 0; d < values.length; d += 1) {
        out.push({ rect: [left + d * cellWidth, top + 1, Math.max(1, cellWidth - (cellWidth > 4 ? 1 : 0)), rowHeight - 2], fill: signedColour(values[d], scale) });
      }
    };
    const number = (value, left, top, fill) => {
      rows.push({ rect: [left, top + 1, NUMBER_WIDTH, rowHeight - 2], fill });
      rows.push({ text: formatNumber(value), x: left + NUMBER_WIDTH - 4, y: top + rowHeight / 2, align: 'right', fill: colours.text });
    };
    const label = (out, text, top, fill) => out.push({ text: shorten(text, 20), x: LABEL_WIDTH, y: top + rowHeight / 2, align: 'right', fill });
    label(fixed, `q: ${this.#model.queryLabel}`, qTop, colours.accent);
    vector(fixed, q, x.k, qTop, scales.vectors);
    for (let i = first; i <= last; i += 1) {
      const key = keys[i];
      const top = keysTop + i * rowHeight - scroll;
      label(rows, `${key.label} ${key.key + 1}`, top, colours.text);
      vector(rows, key.k, x.k, top, scales.vectors);
      vector(rows, key.products, x.products, top, scales.products);
      number(key.dot, x.dot, top, signedColour(key.dot, scales.dot));
      number(key.scaled, x.scaled, top, signedColour(key.scaled, scales.scaled));
      if (softcap) number(key.capped, x.capped, top, signedColour(key.capped, scales.capped));
      if (positionBias) number(key.bias, x.bias, top, signedColour(key.bias, scales.bias));
      number(key.softmax, x.softmax, top, signedColour(key.softmax, 1));
    }
    return { fixed, keys: rows };
  }

  #paint() {
    if (!this.#model || !this.#layout) return;
    const { cellWidth, rowHeight, x, width, viewport, qTop, keysTop } = this.#layout;
    const { keys } = this.#model;
    const scroll = this.#scroller.scrollTop;
    const ctx = this.#canvas.getContext('2d');
    const ratio = this.#canvas.width / width;
    const colours = viewColours(this);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, viewport);
    ctx.font = `${rowHeight > 16 ? 12 : 11}px system-ui, sans-serif`;
    ctx.textBaseline = 'middle';
    const draw = (item) => {
      ctx.fillStyle = item.fill;
      if (item.rect) {
        ctx.fillRect(...item.rect);
      } else {
        ctx.textAlign = item.align;
        ctx.fillText(item.text, item.x, item.y);
      }
    };
    // The titles and the query row stay put; keys scroll beneath them.
    const first = Math.max(0, Math.floor((scroll - 4) / rowHeight));
    const last = Math.min(keys.length - 1, Math.ceil((scroll + viewport - keysTop) / rowHeight));
    const scene = this.#scene(first, last, scroll, colours);
    scene.fixed.forEach(draw);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, keysTop - 4, width, viewport);
    ctx.clip();
    scene.keys.forEach(draw);
    if (this.#cursor !== null && this.getRootNode().activeElement === this.#canvas) {
      ctx.strokeStyle = colours.accent;
      ctx.lineWidth = 2;
      ctx.strokeRect(1, keysTop + this.#cursor * rowHeight - scroll, width - 2, rowHeight);
    }
    ctx.restore();
    if (this.#hover && this.#hover.dim !== undefined) {
      const { row, section, dim } = this.#hover;
      const top = row < 0 ? qTop : keysTop + row * rowHeight - scroll;
      ctx.strokeStyle = '#e8590c';
      ctx.lineWidth = 1.5;
      ctx.strokeRect(x[section] + dim * cellWidth, top, cellWidth, rowHeight);
    }
  }

  #hit(event) {
    if (!this.#layout) return null;
    const { cellWidth, rowHeight, x, qTop, keysTop } = this.#layout;
    const rect = this.#canvas.getBoundingClientRect();
    const px = event.clientX - rect.left;
    const py = event.clientY - rect.top;
    let row;
    if (py >= qTop && py < qTop + rowHeight) row = -1;
    else if (py >= keysTop) row = Math.floor((py - keysTop + this.#scroller.scrollTop) / rowHeight);
    else return null;
    if (row >= this.#model.keys.length) return null;
    const { dk } = this.#model;
    for (const section of ['k', 'products']) {
      const dim = Math.floor((px - x[section]) / cellWidth);
      if (dim >= 0 && dim < dk && !(row < 0 && section === 'products')) return { row, section, dim };
    }
    for (const section of ['dot', 'scaled', 'capped', 'bias', 'softmax'].filter((name) => x[name] !== undefined)) {
      if (row >= 0 && px >= x[section] && px < x[section] + NUMBER_WIDTH) return { row, section };
    }
    return row >= 0 && px < x.k ? { row, section: 'label' } : null;
  }

  #rowSummary(key) {
    const { divisor, softcap, positionBias } = this.#model;
    const capped = softcap ? `, capped = ${key.capped.toFixed(6)}` : '';
    const bias = positionBias ? `, + position bias ${key.bias.toFixed(6)} = ${(key.capped + key.bias).toFixed(6)}` : '';
    return `Key “${key.label}” (token ${key.key + 1}): q·k = ${key.dot.toFixed(6)}, ÷ ${divisor.toFixed(4)} = ${key.scaled.toFixed(6)}${capped}${bias}, softmax = ${key.softmax.toFixed(6)}`;
  }

  #text(hover) {
    const { q, keys, dk, divisor, softcap } = this.#model;
    const { row, section, dim } = hover;
    if (row < 0) return `q[${dim + 1}] of “${this.#model.queryLabel}” = ${q[dim].toFixed(6)}`;
    const key = keys[row];
    switch (section) {
      case 'k': return `k[${dim + 1}] of “${key.label}” (token ${key.key + 1}) = ${key.k[dim].toFixed(6)}`;
      case 'products': return `q[${dim + 1}] × k[${dim + 1}] = ${q[dim].toFixed(4)} × ${key.k[dim].toFixed(4)} = ${key.products[dim].toFixed(6)}`;
      case 'dot': return `q·k for “${key.label}” = sum of the ${dk} products = ${key.dot.toFixed(6)}`;
      case 'scaled': return `q·k ÷ √${Math.round(divisor * divisor)} = ${key.dot.toFixed(6)} ÷ ${divisor.toFixed(4)} = ${key.scaled.toFixed(6)}`;
      case 'capped': return `${softcap}·tanh(${key.scaled.toFixed(6)} ÷ ${softcap}) = ${key.capped.toFixed(6)}`;
      case 'bias': return `position bias of head ${this.#model.head + 1} for distance ${key.key - this.#model.query} (key − query): ${key.bias.toFixed(6)}; score ${key.capped.toFixed(6)} + ${key.bias.toFixed(6)} = ${(key.capped + key.bias).toFixed(6)}`;
      case 'softmax': return `softmax weight of “${key.label}” = ${key.softmax.toFixed(6)} (the model's attention weight: ${key.modelWeight.toFixed(6)})`;
      default: return this.#rowSummary(key);
    }
  }

  #setHover(hover) {
    if (JSON.stringify(hover) === JSON.stringify(this.#hover)) return;
    this.#hover = hover;
    if (hover) {
      const text = this.#text(hover);
      this.#readout.textContent = text;
      this.#canvas.title = text;
    } else {
      this.#canvas.removeAttribute('title');
    }
    this.#paint();
  }

  #onKey(event) {
    if (!this.#model) return;
    const count = this.#model.keys.length;
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10, Home: -count, End: count };
    if (moves[event.key] === undefined) return;
    event.preventDefault();
    const from = this.#cursor ?? (event.key === 'ArrowUp' ? count : -1);
    this.#cursor = Math.min(count - 1, Math.max(0, from + moves[event.key]));
    const { rowHeight, viewport, keysTop } = this.#layout;
    const top = keysTop + this.#cursor * rowHeight;
    const s = this.#scroller;
    if (top - s.scrollTop < keysTop) s.scrollTop = top - keysTop;
    else if (top + rowHeight - s.scrollTop > viewport) s.scrollTop = top + rowHeight - viewport;
    this.#readout.textContent = this.#rowSummary(this.#model.keys[this.#cursor]);
    this.#paint();
  }
}

customElements.define('neuron-view', NeuronView);
