// <head-view>: bertviz's head view on canvas. Query tokens on the left, key
// tokens on the right, a line from each query to each key, one colour per
// head, with opacity = the weight relative to the strongest weight of that
// query in that head: each head's strongest line of each query is opaque
// however many heads are shown, in either theme. The full drawing keeps each
// query's TOP_KEYS strongest keys per head down to a tenth of the strongest
// (hover or lock a token to see all of its lines); a legend under the head
// chips says so. Lines are 1 px, which the canvas draws several times faster
// than wider ones (tests/bench/page.mjs times layer changes at 256 tokens).
// Head chips toggle a head (click) or solo it (double-click). Hovering a
// token isolates its lines and shows each head's weight beside the tokens on
// the other side; click (or tap) locks it, click again or Esc unlocks; arrow
// keys move the locked token. The lines crossing the visible part are drawn
// once per scroll position into an off-screen canvas of the viewport's size;
// hover only blits it (dimmed) and adds the focused token's lines, so hover
// redraws stay within a frame at 512 tokens x 12 heads.
// With a `caption` it draws another map given as a one-layer, one-head result
// (the rollout view's Lines display): no head chips, the caption in place of
// "one colour per head".
// Not here: the controls shared by all views (layer, threshold, ...), the
// data transforms (attention-data.js).
import { kvGroup, kvHeadOf, sharesKeyValues, sinkScore, sinkText } from '../attention/head-facts.js';
import { StoreBound } from '../ui/store-bound.js';
import { prepareMaps } from '../attention/attention-data.js';
import { h, replaceKeepingFocus } from '../ui/dom.js';
import { headColour } from '../ui/palette.js';
import { SvgWriter } from '../export/svg-writer.js';
import { MAP_STATE_KEYS, pageBackground, rowOfToken, rowTokens, shorten, viewColours } from '../attention/view-support.js';

const LABEL_WIDTH = 150; // at most; narrower on small screens (see #rebuild)
const SQUARE = 7;
const MIN_OPACITY = 0.1; // fainter lines are left out of the full drawing (not of a focused token's)
const TOP_KEYS = 8; // the full drawing keeps at most this many keys per query and head (ties aside)
const FOCUS_MIN_OPACITY = 0.06; // a focused token's weakest lines stay faintly visible
const HEADS_LEGEND = 'One colour per head. ';
// The keyboard help of the canvas's label: what #onKey does.
const KEYBOARD_HELP = 'Up and Down arrows lock the next or previous query token, Enter or Space locks the first token or unlocks, Escape unlocks.';
const OPACITY_LEGEND = `A line’s opacity is its weight relative to the strongest weight of its query in that head, so each query’s strongest line is solid. Shown: each query’s ${TOP_KEYS} strongest keys per head, down to a tenth of the strongest; hover or lock a token to see all its lines.`;
// bertviz's encoder–decoder form: which side is which, for cross-attention.
const CROSS_LEGEND = 'Cross-attention: target tokens (the decoder’s queries, left) read source tokens (the encoder’s keys, right). ';

/**
 * Per row of a map: the strongest weight (max) and the weakest weight the
 * full drawing keeps (cut: the TOP_KEYS-th strongest, at least a tenth of max).
 * Returns { max: [rows], cut: [rows] }.
 */
function rowScales(map) {
  const [rows, cols] = map.shape;
  const max = new Float32Array(rows);
  const cut = new Float32Array(rows);
  const top = new Float32Array(TOP_KEYS); // descending
  for (let r = 0; r < rows; r += 1) {
    top.fill(0);
    for (let c = 0; c < cols; c += 1) {
      const w = map.data[r * cols + c];
      if (w <= top[TOP_KEYS - 1]) continue;
      let i = TOP_KEYS - 1;
      for (; i > 0 && top[i - 1] < w; i -= 1) top[i] = top[i - 1];
      top[i] = w;
    }
    max[r] = top[0];
    cut[r] = Math.max(top[TOP_KEYS - 1], MIN_OPACITY * top[0]);
  }
  return { max, cut };
}

export class HeadView extends StoreBound {
  #result = null;
  #prepared = null;
  #rowScales = []; // per prepared map: rowScales()
  #heads = [];
  #hover = null; // { side: 'query' | 'key', index } in map row/col positions
  #base = document.createElement('canvas');
  #canvas = h('canvas', { tabindex: '0', role: 'img' });
  #scroller = h('div', { class: 'head-view-scroller' });
  #spacer = h('div');
  #chips = h('div', { class: 'head-chips', role: 'group', 'aria-label': 'Heads' });
  #legend = h('p', { class: 'head-view-legend' }, HEADS_LEGEND + OPACITY_LEGEND);
  #layout = null;
  #fitted = new Map(); // label -> its text shortened to fit the label column, for the current layout
  #baseTop = null; // scroll position #base was drawn for
  #caption = null;

  connectedCallback() {
    super.connectedCallback();
    if (!this.#scroller.isConnected) {
      this.#scroller.append(this.#canvas, this.#spacer);
      this.append(this.#chips, this.#legend, this.#scroller);
      this.#scroller.addEventListener('scroll', () => this.#paint());
      this.#canvas.addEventListener('pointermove', (e) => this.#onPointer(e));
      this.#canvas.addEventListener('pointerleave', () => this.#setHover(null));
      this.#canvas.addEventListener('click', (e) => this.#onClick(e));
      this.#canvas.addEventListener('keydown', (e) => this.#onKey(e));
      new ResizeObserver(() => this.#rebuild()).observe(this);
    }
  }


  storeChanged(state, changed) {
    if (changed === null) this.#rebuild();
    else if (changed.some((key) => MAP_STATE_KEYS.includes(key))) this.#rebuild();
    else if (changed.includes('token')) {
      this.#revealLocked();
      this.#paint();
    } else if (changed.includes('theme')) { // the colours are read from the theme when drawn
      this.#baseTop = null;
      this.#paint();
    }
  }

  /** Model output: { tokens, attentions [L, H, T, T], texts, causal }. */
  set result(result) {
    this.#result = result;
    this.#rebuild();
  }

  /**
   * The lines drawn now (the focused token's lines, or all lines), for tests
   * and exports: { from, to (token indices), head, weight, opacity, x1, y1,
   * x2, y2 (CSS pixels from the top left of the whole view, before scrolling) }.
   */
  lineModel() {
    this.flushDeferred();
    if (!this.#prepared) return [];
    const focus = this.#focus();
    const { left, right } = this.#layout;
    const lines = [];
    this.#prepared.maps.forEach(({ head, map }, k) => {
      const [rows, cols] = map.shape;
      for (let r = 0; r < rows; r += 1) {
        for (let c = 0; c < cols; c += 1) {
          if (focus && ((focus.side === 'query' && focus.index !== r) || (focus.side === 'key' && focus.index !== c))) continue;
          const weight = map.data[r * cols + c];
          const opacity = this.#opacity(k, r, weight, focus !== null);
          if (opacity === 0) continue;
          lines.push({ from: map.rows[r], to: map.cols[c], head, weight, opacity, x1: left + 6, y1: this.#y(r), x2: right - 6, y2: this.#y(c) });
        }
      }
    });
    return lines;
  }

  // Opacity of the line of prepared map k, row r, with this weight; 0 = not drawn.
  #opacity(k, r, weight, focused) {
    if (weight <= 0 || weight < this.store.state.threshold) return 0;
    const { max, cut } = this.#rowScales[k];
    if (focused) return Math.max(FOCUS_MIN_OPACITY, Math.min(1, weight / max[r]));
    return weight < cut[r] ? 0 : Math.min(1, weight / max[r]);
  }

  /**
   * null (one layer's heads), or what the lines show when the result is another
   * map as one layer and one head (rollout-view.js), one sentence without the
   * final stop: it replaces the head chips and "one colour per head" in the
   * legend, and names the drawing (canvas label, SVG title).
   */
  get caption() { return this.#caption; }
  set caption(text) {
    if (text === this.#caption) return;
    this.#caption = text;
    this.#rebuild();
  }

  /** The canvas as drawn (the PNG export: the visible part, hover or lock included). */
  exportCanvas() { this.flushDeferred(); return this.#canvas; }

  /**
   * SVG text of the whole head view as drawn now (every row, not only the
   * visible ones): the lines of lineModel(), the token labels with the locked
   * or hovered token in the accent colour, in the page's theme colours.
   */
  svg() {
    this.flushDeferred();
    if (!this.#prepared) return null;
    const { width, height, left, right, rowHeight, labelChars } = this.#layout;
    const colours = viewColours(this);
    const svg = new SvgWriter(width, height, { background: pageBackground(this), title: this.#caption ?? `Head view, layer ${this.store.state.layer + 1}` });
    const { rows, cols } = this.#prepared.maps[0].map;
    const rowIndex = new Map(rows.map((token, i) => [token, i]));
    const colIndex = new Map(cols.map((token, i) => [token, i]));
    const lines = svg.group({ 'stroke-width': 1 });
    for (const line of this.lineModel()) {
      svg.line(left + 6, this.#y(rowIndex.get(line.from)), right - 6, this.#y(colIndex.get(line.to)),
        { stroke: headColour(line.head), 'stroke-opacity': Math.min(1, line.opacity).toFixed(4) }, lines);
    }
    const focus = this.#focus();
    if (focus && this.#layout.squares) {
      // Each head's weight as a square beside the tokens on the other side, as on the canvas.
      const marks = svg.group({});
      const share = this.#prepared.maps.length;
      this.#prepared.maps.forEach(({ head, map }, k) => {
        const [rowCount, colCount] = map.shape;
        const count = focus.side === 'query' ? colCount : rowCount;
        for (let other = 0; other < count; other += 1) {
          const w = focus.side === 'query' ? map.data[focus.index * colCount + other] : map.data[other * colCount + focus.index];
          const x = focus.side === 'query' ? width - (share - k) * SQUARE - 2 : 2 + k * SQUARE;
          svg.rect(x, this.#y(other) - rowHeight / 2 + 3, SQUARE - 1, rowHeight - 6, { fill: headColour(head), 'fill-opacity': Math.min(1, w).toFixed(4) }, marks);
        }
      });
    }
    const size = rowHeight > 16 ? 13 : 11;
    const label = (text, x, i, anchor, focused) => svg.text(shorten(text, labelChars), x, this.#y(i),
      { anchor, size, fill: focused ? colours.accent : colours.text, 'font-weight': focused ? 'bold' : undefined });
    this.#prepared.rowLabels.forEach((text, i) => label(text, left - 4, i, 'end', focus?.side === 'query' && focus.index === i));
    this.#prepared.colLabels.forEach((text, i) => label(text, right + 4, i, 'start', focus?.side === 'key' && focus.index === i));
    return svg.toString();
  }

  #activeHeads() {
    const count = this.#result.attentions.shape[1];
    const chosen = this.store.state.heads;
    return (chosen ?? [...Array(count).keys()]).filter((head) => head < count);
  }

  #rebuild() {
    if (!this.store || !this.#result || !this.isConnected || this.deferWhileHidden()) return;
    const state = this.store.state;
    const layers = this.#result.attentions.shape[0];
    if (state.layer >= layers) return;
    this.#heads = this.#activeHeads();
    this.#renderChips();
    this.#chips.hidden = this.#caption !== null;
    this.#legend.textContent = (this.#caption === null ? (this.#result.cross ? CROSS_LEGEND : '') + HEADS_LEGEND : `${this.#caption}. `) + OPACITY_LEGEND;
    this.#prepared = this.#heads.length ? prepareMaps(this.#result, state, this.#heads) : null;
    this.#rowScales = this.#prepared ? this.#prepared.maps.map(({ map }) => rowScales(map)) : [];
    const rows = this.#prepared ? Math.max(this.#prepared.rowLabels.length, this.#prepared.colLabels.length) : 0;
    const rowHeight = rows > 150 ? 14 : 20;
    const width = Math.max(280, this.#scroller.clientWidth || this.clientWidth || 640); // inside the scroller's border and scrollbar gutter
    const height = rows * rowHeight + 16;
    // Narrow screens: narrower label columns, and no per-head squares.
    const labelWidth = Math.min(LABEL_WIDTH, Math.round(width * 0.27));
    const squares = width >= 520;
    this.#layout = { rowHeight, width, height, squares, labelChars: Math.floor(labelWidth / 7), left: labelWidth,
      right: width - labelWidth - (squares ? this.#heads.length * SQUARE + 8 : 0) };
    const viewport = Math.min(height, Math.max(240, Math.round(window.innerHeight * 0.7)));
    const ratio = Math.min(2, window.devicePixelRatio || 1);
    for (const canvas of [this.#canvas, this.#base]) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(viewport * ratio);
    }
    this.#canvas.style.width = `${width}px`;
    this.#canvas.style.height = `${viewport}px`;
    this.#scroller.style.height = `${viewport}px`;
    this.#spacer.style.height = `${height - viewport}px`;
    this.#baseTop = null;
    this.#fitted.clear();
    this.#canvas.setAttribute('aria-label', `${this.#caption ?? `Head view of layer ${state.layer + 1}`}: lines from ${this.#prepared?.rowLabels.length ?? 0} query tokens to key tokens${this.#caption === null ? ', one colour per head' : ''}. ${KEYBOARD_HELP}`);
    this.#revealLocked();
    this.#paint();
  }

  // Scrolls the locked token's row into the middle of the scroller when it is out of sight (a link or preset's token, the keyboard).
  #revealLocked() {
    const focus = this.#hover ? null : this.#focus();
    if (!focus || !this.#layout) return;
    const y = this.#y(focus.index);
    const s = this.#scroller;
    const { rowHeight } = this.#layout;
    if (y - rowHeight < s.scrollTop || y + rowHeight > s.scrollTop + s.clientHeight) s.scrollTop = Math.max(0, y - s.clientHeight / 2);
  }

  #renderChips() {
    const count = this.#result.attentions.shape[1];
    const active = new Set(this.#heads);
    const setHeads = (heads) => this.store.set({ heads: heads.length === count ? null : heads });
    // Heads that share a key/value head (GQA) are grouped behind a "KV n" mark; each chip's title gives its sink score.
    const { kvHeads } = this.#result;
    const grouped = sharesKeyValues(count, kvHeads);
    const layer = this.store.state.layer;
    replaceKeepingFocus(this.#chips, ...Array.from({ length: count }, (_, head) => {
      const sink = sinkScore(this.#result.attentions, layer, head);
      const chip = h('button', {
        type: 'button',
        class: 'head-chip',
        style: `--chip: ${headColour(head)}`,
        'aria-pressed': String(active.has(head)),
        dataset: { focusKey: `head ${head}`, sink: sink === null ? '' : sink.toFixed(4), ...(grouped ? { kv: String(kvHeadOf(head, count, kvHeads)) } : {}) },
        title: [`Head ${head + 1}`, grouped ? `key/value head ${kvHeadOf(head, count, kvHeads) + 1}` : '', sinkText(sink),
          'click to toggle, double-click to show only this head'].filter(Boolean).join(' · '),
        onclick: () => setHeads(active.has(head) ? this.#heads.filter((x) => x !== head) : [...this.#heads, head].sort((a, b) => a - b)),
        ondblclick: () => setHeads([head]),
      }, String(head + 1));
      const first = grouped && kvGroup(head, count, kvHeads)[0] === head;
      return first ? [h('span', { class: 'kv-mark', title: `Query heads ${kvGroup(head, count, kvHeads).map((x) => x + 1).join(', ')} share key/value head ${kvHeadOf(head, count, kvHeads) + 1}` }, `KV${kvHeadOf(head, count, kvHeads) + 1}`), chip] : [chip];
    }).flat());
  }

  #y(index) { return 8 + (index + 0.5) * this.#layout.rowHeight; }

  // Draws every line that crosses the visible rows [top, top + viewport) and
  // the labels into #base, once per scroll position.
  #drawBase(top) {
    const { left, right } = this.#layout;
    const base = this.#base;
    const ratio = base.width / this.#layout.width;
    const bottom = top + base.height / ratio;
    const ctx = base.getContext('2d');
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, base.width, base.height);
    ctx.setTransform(ratio, 0, 0, ratio, 0, -top * ratio);
    this.#baseTop = top;
    if (!this.#prepared) return;
    ctx.lineWidth = 1;
    // Batch lines by quantised opacity: one stroke per (level, head), fainter
    // levels first, so each head's strongest lines end on top of the others' faint ones.
    const levels = this.#prepared.maps.map(({ map }, k) => {
      const [rows, cols] = map.shape;
      const byLevel = Array.from({ length: 32 }, () => []);
      for (let r = 0; r < rows; r += 1) {
        const y1 = this.#y(r);
        for (let c = 0; c < cols; c += 1) {
          const opacity = this.#opacity(k, r, map.data[r * cols + c], false);
          if (opacity === 0) continue;
          const y2 = this.#y(c);
          if (Math.max(y1, y2) < top || Math.min(y1, y2) > bottom) continue; // outside the viewport
          byLevel[Math.min(31, Math.floor(opacity * 32))].push(r, c);
        }
      }
      return byLevel;
    });
    for (let level = 0; level < 32; level += 1) {
      ctx.globalAlpha = (level + 0.5) / 32;
      this.#prepared.maps.forEach(({ head }, k) => {
        const pairs = levels[k][level];
        if (pairs.length === 0) return;
        ctx.strokeStyle = headColour(head);
        ctx.beginPath();
        for (let p = 0; p < pairs.length; p += 2) {
          ctx.moveTo(left + 6, this.#y(pairs[p]));
          ctx.lineTo(right - 6, this.#y(pairs[p + 1]));
        }
        ctx.stroke();
      });
    }
    ctx.globalAlpha = 1;
    this.#drawLabels(ctx);
  }

  #drawLabels(ctx, focus = null) {
    const { left, right, rowHeight } = this.#layout;
    const colours = viewColours(this);
    ctx.font = `${rowHeight > 16 ? 13 : 11}px system-ui, sans-serif`;
    ctx.textBaseline = 'middle';
    // Labels are shortened (…) until they fit their column, so narrow screens clip none.
    const room = left - 6;
    const fit = (label) => {
      if (!this.#fitted.has(label)) {
        let chars = Math.min(label.length, this.#layout.labelChars);
        while (chars > 1 && ctx.measureText(shorten(label, chars)).width > room) chars -= 1;
        this.#fitted.set(label, shorten(label, chars));
      }
      return this.#fitted.get(label);
    };
    const draw = (labels, x, align, side) => {
      ctx.textAlign = align;
      labels.forEach((label, i) => {
        const focused = focus && focus.side === side && focus.index === i;
        ctx.fillStyle = focused ? colours.accent : colours.text;
        ctx.fillText(fit(label), x, this.#y(i));
      });
    };
    draw(this.#prepared.rowLabels, left - 4, 'right', 'query');
    draw(this.#prepared.colLabels, right + 4, 'left', 'key');
  }

  #focus() {
    if (this.#hover) return this.#hover;
    const token = this.store?.state.token;
    if (token === null || token === undefined || !this.#prepared) return null;
    const index = rowOfToken(this.#result, this.store.state, this.#prepared.maps[0].map, token);
    return index >= 0 ? { side: 'query', index } : null;
  }

  #paint() {
    if (!this.#layout) return;
    const top = this.#scroller.scrollTop;
    if (this.#baseTop !== top) this.#drawBase(top);
    const ctx = this.#canvas.getContext('2d');
    const ratio = this.#canvas.width / this.#layout.width;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.#canvas.width, this.#canvas.height);
    const focus = this.#focus();
    ctx.globalAlpha = focus ? 0.12 : 1;
    ctx.drawImage(this.#base, 0, 0);
    ctx.globalAlpha = 1;
    if (!focus || !this.#prepared) return;
    ctx.setTransform(ratio, 0, 0, ratio, 0, -top * ratio);
    const { left, right } = this.#layout;
    const share = this.#prepared.maps.length;
    ctx.lineWidth = 2;
    this.#prepared.maps.forEach(({ head, map }, k) => {
      const [, cols] = map.shape;
      const count = focus.side === 'query' ? cols : map.shape[0];
      ctx.strokeStyle = headColour(head);
      ctx.fillStyle = headColour(head);
      for (let other = 0; other < count; other += 1) {
        const [r, c] = focus.side === 'query' ? [focus.index, other] : [other, focus.index];
        const w = map.data[r * cols + c];
        const opacity = this.#opacity(k, r, w, true);
        if (opacity > 0) {
          ctx.globalAlpha = opacity;
          ctx.beginPath();
          ctx.moveTo(left + 6, this.#y(r));
          ctx.lineTo(right - 6, this.#y(c));
          ctx.stroke();
        }
        if (!this.#layout.squares) continue;
        // Each head's weight as a square beside the tokens on the other side.
        ctx.globalAlpha = Math.min(1, w);
        const x = focus.side === 'query' ? this.#layout.width - (share - k) * SQUARE - 2 : 2 + k * SQUARE;
        ctx.fillRect(x, this.#y(other) - this.#layout.rowHeight / 2 + 3, SQUARE - 1, this.#layout.rowHeight - 6);
      }
    });
    ctx.globalAlpha = 1;
    this.#drawLabels(ctx, focus);
  }

  #hit(event) {
    if (!this.#layout || !this.#prepared) return null;
    const rect = this.#canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top + this.#scroller.scrollTop;
    const index = Math.floor((y - 8) / this.#layout.rowHeight);
    const side = x < this.#layout.width / 2 ? 'query' : 'key';
    const count = side === 'query' ? this.#prepared.rowLabels.length : this.#prepared.colLabels.length;
    return index >= 0 && index < count ? { side, index } : null;
  }

  #setHover(hover) {
    if (JSON.stringify(hover) === JSON.stringify(this.#hover)) return;
    this.#hover = hover;
    this.#paint();
  }

  #onPointer(event) {
    if (event.pointerType === 'touch') return; // touch: tap to lock instead of hover
    this.#setHover(this.store.state.token === null ? this.#hit(event) : null);
  }

  #onClick(event) {
    const hit = this.#hit(event);
    const state = this.store.state;
    if (!hit || hit.side !== 'query') {
      if (state.token !== null) this.store.set({ token: null });
      return;
    }
    const token = rowTokens(this.#result, state, this.#prepared.maps[0].map)[hit.index];
    this.#hover = null;
    this.store.set({ token: state.token === token ? null : token });
    this.dispatchEvent(new CustomEvent('token-select', { bubbles: true, composed: true, detail: { token: this.store.state.token } }));
  }

  #onKey(event) {
    if (!this.#prepared) return;
    const state = this.store.state;
    const rows = rowTokens(this.#result, state, this.#prepared.maps[0].map);
    const position = state.token === null ? -1 : rows.indexOf(state.token);
    let next = null;
    if (event.key === 'ArrowDown') next = rows[Math.min(rows.length - 1, position + 1)];
    else if (event.key === 'ArrowUp') next = rows[Math.max(0, position - 1)];
    else if (event.key === 'Escape') next = null;
    else if (event.key === 'Enter' || event.key === ' ') next = state.token === null ? rows[0] : null;
    else return;
    event.preventDefault();
    this.#hover = null;
    this.store.set({ token: next });
  }
}

customElements.define('head-view', HeadView);
