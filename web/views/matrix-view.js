// <matrix-view>: the T x T attention heatmap of the selected head, or the
// element-wise mean of the selected heads (state.heads; null = all heads of
// the layer), on canvas: one row per query token, one column per key token,
// labels on both axes (column labels rotated, thinned when they do not fit),
// the exact weight of the cell under the pointer (readout line and tooltip).
// For causal models the upper triangle is drawn masked (grey hatching), not
// as zeros; on a sliding-window layer so are the keys before the window. Click locks a query row (state.token), Esc unlocks; the canvas is
// focusable and the arrow keys move a cell cursor that the readout follows.
// The cells are painted once per map into a 1-pixel-per-cell image and
// scaled up; pointer and keyboard only repaint the overlays.
// A subclass may draw another T x T map through mapOf (rollout-view.js).
// Not here: the controls, the transforms (attention-data.js), the table
// alternative (attention-table.js).
import { StoreBound } from '../ui/store-bound.js';
import { h } from '../ui/dom.js';
import { SvgWriter } from '../export/svg-writer.js';
import { MAP_STATE_KEYS, hatchPattern, isMasked, maskedColours, pageBackground, rowOfToken, rowTokens, selectedMap, shorten, slidingWindowOf, viewColours, weightIndex, weightLut, weightScaleWords } from '../attention/view-support.js';

const MIN_CELL = 2;
const MAX_CELL = 28;
const LABEL_FONT = 11;
const LABEL_CHARS = 16;
const LABEL_SPACE = LABEL_FONT + 3; // pixels a label needs across its axis
const MAX_LABEL_WIDTH = 130;
const MAX_SVG_CELLS = 128 * 128; // larger maps go into the SVG as one embedded image

export class MatrixView extends StoreBound {
  #result = null;
  #selected = null; // selectedMap(): { heads, title, map, rowLabels, colLabels }
  #masked = null; // Uint8Array [rows * cols]
  #scaleMax = 1;
  #layout = null; // { left, top, cell, width, height, step }
  #hover = null; // { r, c }
  #cursor = null; // { r, c } keyboard cell cursor
  #width = 0;
  #cells = document.createElement('canvas'); // 1 pixel per cell
  #base = document.createElement('canvas'); // cells, mask and labels at canvas size
  #title = h('p', { class: 'view-title' });
  #legend = h('p', { class: 'matrix-legend hint' });
  #canvas = h('canvas', { tabindex: '0', role: 'img' });
  #scroller = h('div', { class: 'matrix-view-scroller' });
  #tooltip = h('div', { class: 'matrix-tooltip', role: 'tooltip', hidden: true });
  #readout = h('p', { class: 'readout', 'aria-live': 'polite' });

  connectedCallback() {
    super.connectedCallback();
    if (!this.#scroller.isConnected) {
      this.#scroller.append(this.#canvas);
      this.append(this.#title, this.#scroller, this.#legend, this.#readout, this.#tooltip);
      this.#canvas.addEventListener('pointermove', (e) => this.#onPointer(e));
      this.#canvas.addEventListener('pointerleave', () => this.#setHover(null, null));
      this.#canvas.addEventListener('click', (e) => this.#onClick(e));
      this.#canvas.addEventListener('keydown', (e) => this.#onKey(e));
      this.#canvas.addEventListener('focus', () => this.#onFocus());
      this.#canvas.addEventListener('blur', () => this.#paint());
      new ResizeObserver(() => {
        if (this.clientWidth !== this.#width) this.#rebuild();
      }).observe(this);
    }
    this.#rebuild();
  }


  storeChanged(state, changed) {
    if (changed === null) this.#rebuild();
    else if (changed.some((key) => [...MAP_STATE_KEYS, 'theme'].includes(key))) this.#rebuild();
    else if (changed.includes('token')) {
      this.#revealLocked();
      this.#paint();
    }
  }

  /** Model output: { tokens, attentions [L, H, T, T], texts, causal }. */
  set result(result) {
    this.#result = result;
    this.#rebuild();
  }

  /** The canvas as drawn (the PNG export). */
  exportCanvas() { this.flushDeferred(); return this.#canvas; }

  /**
   * SVG text of the heatmap as drawn, in the page's theme colours: one
   * rectangle per cell (merged along runs of equal colour), or for maps of
   * more than 128 x 128 cells one embedded image of the cells, as plotting
   * libraries do; masked cells hatched; token labels as text; the locked
   * query row outlined. Exact values are in the JSON and .npy exports.
   */
  svg() {
    this.flushDeferred();
    if (!this.#layout) return null;
    const { left, top, cell, width, height, step } = this.#layout;
    const { map, rowLabels, colLabels, title } = this.#selected;
    const [rows, cols] = map.shape;
    const colours = viewColours(this);
    const svg = new SvgWriter(width, height, { background: pageBackground(this), title });
    if (rows * cols > MAX_SVG_CELLS) {
      svg.image(this.#cells.toDataURL('image/png'), left, top, cols * cell, rows * cell);
    } else {
      const cells = svg.group({ 'shape-rendering': 'crispEdges' });
      const scale = weightLut(this.store.state.theme);
      const masked = maskedColours(this.store.state.theme);
      for (let r = 0; r < rows; r += 1) {
        for (let c = 0; c < cols;) {
          const at = this.#cellColour(r * cols + c);
          let end = c + 1;
          while (end < cols && this.#cellColour(r * cols + end) === at) end += 1;
          const fill = at < 0 ? svg.hatch(`rgb(${masked.hatch})`, `rgb(${masked.cell})`) : `rgb(${scale[at]}, ${scale[at + 1]}, ${scale[at + 2]})`;
          svg.rect(left + c * cell, top + r * cell, (end - c) * cell, cell, { fill }, cells);
          c = end;
        }
      }
    }
    svg.rect(left - 0.5, top - 0.5, cols * cell + 1, rows * cell + 1, { fill: 'none', stroke: 'rgba(128, 128, 128, 0.6)' });
    const labels = svg.group({ fill: colours.text });
    for (let r = 0; r < rows; r += step) svg.text(shorten(rowLabels[r], LABEL_CHARS), left - 5, top + (r + 0.5) * cell, { anchor: 'end', size: LABEL_FONT }, labels);
    for (let c = 0; c < cols; c += step) {
      const x = left + (c + 0.5) * cell;
      svg.text(shorten(colLabels[c], LABEL_CHARS), x, top - 5, { size: LABEL_FONT, transform: `rotate(-90 ${x} ${top - 5})` }, labels);
    }
    const locked = this.#lockedRow();
    if (locked >= 0) {
      svg.rect(left - 1, top + locked * cell - 1, cols * cell + 2, cell + 2, { fill: 'none', stroke: colours.accent, 'stroke-width': 2 });
      svg.rect(0, top + locked * cell, 4, Math.max(cell, 2), { fill: colours.accent });
    }
    return svg.toString();
  }

  /**
   * What the heatmap shows, for tests and exports: the title, the heads
   * averaged, the row/column token (or word) indices and labels, the weights
   * drawn (row-major; below-threshold cells are drawn as 0 but listed
   * exactly), which cells are masked, the colour scale's top, and the cell
   * geometry in CSS pixels (cell (r, c) spans left + c·cell .. left + (c+1)·cell).
   */
  heatModel() {
    this.flushDeferred();
    if (!this.#selected) return null;
    const { heads, title, map, rowLabels, colLabels } = this.#selected;
    const { left, top, cell } = this.#layout;
    return {
      title, heads, rows: map.rows.slice(), cols: map.cols.slice(), rowLabels, colLabels,
      values: Array.from(map.data), masked: Array.from(this.#masked), scaleMax: this.#scaleMax,
      threshold: this.store.state.threshold, left, top, cell,
    };
  }

  /**
   * The map to draw for a result and state: { heads, title, map, rowLabels,
   * colLabels, caption? }, or null (no head selected); a subclass that draws
   * another T x T map (rollout-view.js) overrides it, and may throw an Error
   * whose message is then shown instead of the map (as a problem, unless the
   * Error's `pending` is true: the map is on its way).
   */
  mapOf(result, state) {
    return selectedMap(result, state);
  }

  /** Draws again (after a change a subclass's mapOf depends on). */
  redraw() {
    this.#rebuild();
  }

  #rebuild() {
    if (!this.store || !this.#result || !this.isConnected || this.deferWhileHidden()) return;
    this.#width = this.clientWidth;
    let problem = null;
    let pending = false;
    try {
      this.#selected = this.mapOf(this.#result, this.store.state);
    } catch (error) {
      this.#selected = null;
      problem = error.message;
      pending = error.pending === true;
    }
    if (this.#selected && this.#selected.map.shape.includes(0)) {
      // A filter that keeps no query or no key token (e.g. B → A of a text without B): nothing to paint.
      this.#selected = null;
      problem = 'No tokens to show: the sentence filter keeps no query or no key token.';
    }
    this.#hover = null;
    this.#cursor = null;
    this.#tooltip.hidden = true;
    this.#title.toggleAttribute('data-error', problem !== null && !pending);
    if (!this.#selected) {
      this.#layout = null;
      this.#title.textContent = problem ?? 'No head selected.';
      this.#legend.textContent = '';
      this.#readout.textContent = '';
      this.#canvas.width = 0;
      this.#canvas.height = 0;
      return;
    }
    const fallback = this.#result.cross ? 'cross-attention, the alignment matrix: target tokens (rows) × source tokens (columns)' : 'attention weights, query tokens (rows) × key tokens (columns)';
    const { map, title, caption = fallback } = this.#selected;
    const [rows, cols] = map.shape;
    this.#masked = new Uint8Array(rows * cols);
    // A sliding-window layer's window is drawn masked too (on tokens; words blur it, so not there).
    const window = this.#result.cross || this.store.state.words ? 0 : slidingWindowOf(this.#result, this.store.state.layer);
    let max = 0;
    for (let r = 0; r < rows; r += 1) {
      for (let c = 0; c < cols; c += 1) {
        if (isMasked(this.#result, map, r, c, window)) this.#masked[r * cols + c] = 1;
        else max = Math.max(max, map.data[r * cols + c]);
      }
    }
    this.#scaleMax = max > 0 ? max : 1;
    this.#title.textContent = `${title}: ${caption}`;
    const words = weightScaleWords(this.store.state.theme);
    const hatching = window && rows > window ? `; grey hatching: masked by the causal mask and this layer's sliding window of ${window} tokens (−∞ before softmax)`
      : this.#result.causal ? '; grey hatching: masked by the causal mask (−∞ before softmax)' : '';
    this.#legend.textContent = `Colour: weight from 0 (${words.low}) to ${this.#scaleMax.toFixed(3)} (${words.high}), the largest weight shown${hatching}.`;
    this.#layOut();
    this.#drawCells();
    this.#drawBase();
    this.#canvas.setAttribute('aria-label', `${title}: heatmap of ${rows} query tokens by ${cols} key tokens. Arrow keys move a cell cursor and read its weight, Enter locks the query row, Escape unlocks. The attention table lists the same weights as text.`);
    this.#readout.textContent = 'Point at a cell (or focus the map and use the arrow keys) for its exact weight; click to lock its query row.';
    this.#revealLocked();
    this.#paint();
  }

  // Scrolls the locked query row into sight when it is out of it (a link or preset's token, the keyboard).
  #revealLocked() {
    const r = this.#layout ? this.#lockedRow() : -1;
    if (r >= 0) this.#scrollTo({ r, c: null });
  }

  #layOut() {
    const { rowLabels, colLabels } = this.#selected;
    const [rows, cols] = this.#selected.map.shape;
    const ctx = this.#canvas.getContext('2d');
    ctx.font = `${LABEL_FONT}px system-ui, sans-serif`;
    const widest = (labels) => labels.reduce((m, label) => Math.max(m, ctx.measureText(shorten(label, LABEL_CHARS)).width), 0);
    const left = Math.ceil(Math.min(MAX_LABEL_WIDTH, widest(rowLabels)) + 10);
    const top = Math.ceil(Math.min(MAX_LABEL_WIDTH, widest(colLabels)) + 10);
    const available = Math.max(200, (this.#width || 640) - left - 12);
    const cell = Math.min(MAX_CELL, Math.max(MIN_CELL, available / Math.max(rows, cols)));
    const width = Math.ceil(left + cols * cell + 4);
    const height = Math.ceil(top + rows * cell + 4);
    this.#layout = { left, top, cell, width, height, step: Math.ceil(LABEL_SPACE / cell) };
    const ratio = Math.min(2, window.devicePixelRatio || 1);
    for (const canvas of [this.#canvas, this.#base]) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    this.#canvas.style.width = `${width}px`;
    this.#canvas.style.height = `${height}px`;
  }

  // Colour of cell i (row-major): its index into the theme's weight scale, or -1 when masked.
  // Below-threshold weights are drawn as 0. Shared by the canvas and the SVG.
  #cellColour(i) {
    if (this.#masked[i]) return -1;
    const w = this.#selected.map.data[i];
    return weightIndex(w < this.store.state.threshold ? 0 : w / this.#scaleMax);
  }

  // One pixel per cell: weight colours, masked cells grey.
  #drawCells() {
    const [rows, cols] = this.#selected.map.shape;
    this.#cells.width = cols;
    this.#cells.height = rows;
    const ctx = this.#cells.getContext('2d');
    const image = ctx.createImageData(cols, rows);
    const pixels = image.data;
    const scale = weightLut(this.store.state.theme);
    const masked = maskedColours(this.store.state.theme).cell;
    for (let i = 0; i < rows * cols; i += 1) {
      const at = this.#cellColour(i);
      if (at < 0) {
        pixels.set(masked, i * 4);
      } else {
        pixels[i * 4] = scale[at];
        pixels[i * 4 + 1] = scale[at + 1];
        pixels[i * 4 + 2] = scale[at + 2];
      }
      pixels[i * 4 + 3] = 255;
    }
    ctx.putImageData(image, 0, 0);
  }

  #drawBase() {
    const { left, top, cell, width, height, step } = this.#layout;
    const { map, rowLabels, colLabels } = this.#selected;
    const [rows, cols] = map.shape;
    const ctx = this.#base.getContext('2d');
    const ratio = this.#base.width / width;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.#base.width, this.#base.height);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(this.#cells, left, top, cols * cell, rows * cell);
    if (this.#result.causal) {
      // Hatch every run of masked cells in a row.
      ctx.beginPath();
      for (let r = 0; r < rows; r += 1) {
        let c = 0;
        while (c < cols) {
          if (!this.#masked[r * cols + c]) { c += 1; continue; }
          const start = c;
          while (c < cols && this.#masked[r * cols + c]) c += 1;
          ctx.rect(left + start * cell, top + r * cell, (c - start) * cell, cell);
        }
      }
      ctx.fillStyle = hatchPattern(ctx, this.store.state.theme);
      ctx.fill();
    }
    ctx.strokeStyle = 'rgba(128, 128, 128, 0.6)';
    ctx.lineWidth = 1;
    ctx.strokeRect(left - 0.5, top - 0.5, cols * cell + 1, rows * cell + 1);
    ctx.fillStyle = viewColours(this).text;
    ctx.font = `${LABEL_FONT}px system-ui, sans-serif`;
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'right';
    for (let r = 0; r < rows; r += step) ctx.fillText(shorten(rowLabels[r], LABEL_CHARS), left - 5, top + (r + 0.5) * cell);
    for (let c = 0; c < cols; c += step) {
      ctx.save();
      ctx.translate(left + (c + 0.5) * cell, top - 5);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'left';
      ctx.fillText(shorten(colLabels[c], LABEL_CHARS), 0, 0);
      ctx.restore();
    }
  }

  #lockedRow() {
    if (!this.#selected) return -1;
    return rowOfToken(this.#result, this.store.state, this.#selected.map, this.store.state.token);
  }

  #paint() {
    if (!this.#layout) return;
    const { left, top, cell, width } = this.#layout;
    const [rows, cols] = this.#selected.map.shape;
    const ctx = this.#canvas.getContext('2d');
    const ratio = this.#canvas.width / width;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.#canvas.width, this.#canvas.height);
    ctx.drawImage(this.#base, 0, 0);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    const { accent } = viewColours(this);
    const locked = this.#lockedRow();
    if (locked >= 0) {
      ctx.strokeStyle = accent;
      ctx.lineWidth = 2;
      ctx.strokeRect(left - 1, top + locked * cell - 1, cols * cell + 2, cell + 2);
      ctx.fillStyle = accent;
      ctx.fillRect(0, top + locked * cell, 4, Math.max(cell, 2));
    }
    const outline = (at, style) => {
      if (!at) return;
      ctx.strokeStyle = style;
      ctx.lineWidth = 2;
      ctx.strokeRect(left + at.c * cell - 1, top + at.r * cell - 1, cell + 2, cell + 2);
      // Guides to the row and column labels.
      ctx.globalAlpha = 0.35;
      ctx.fillStyle = style;
      ctx.fillRect(left - 4, top + at.r * cell, 3, cell);
      ctx.fillRect(left + at.c * cell, top - 4, cell, 3);
      ctx.globalAlpha = 1;
    };
    outline(this.#hover, '#e8590c');
    if (this.getRootNode().activeElement === this.#canvas) outline(this.#cursor, accent);
    if (rows === 0) ctx.fillText('No tokens to show.', 8, 16);
  }

  #describe(r, c) {
    const { map, rowLabels, colLabels } = this.#selected;
    const cols = map.shape[1];
    const where = `${rowLabels[r]} (query ${r + 1}) → ${colLabels[c]} (key ${c + 1})`;
    if (this.#masked[r * cols + c]) return { where, value: 'masked (−∞ before softmax)' };
    const w = map.data[r * cols + c];
    const note = w < this.store.state.threshold ? ' (below the threshold, drawn as 0)' : '';
    return { where, value: `${w.toFixed(6)}${note}` };
  }

  #show(at, pointer) {
    if (!at) {
      this.#tooltip.hidden = true;
      return;
    }
    const { where, value } = this.#describe(at.r, at.c);
    this.#readout.textContent = `${where}: ${value}`;
    if (!pointer) {
      this.#tooltip.hidden = true;
      return;
    }
    this.#tooltip.textContent = `${where}: ${value}`;
    this.#tooltip.hidden = false;
    const host = this.getBoundingClientRect();
    this.#tooltip.style.left = `${Math.min(pointer.x - host.left + 14, Math.max(0, host.width - this.#tooltip.offsetWidth))}px`;
    this.#tooltip.style.top = `${pointer.y - host.top + 18}px`;
  }

  #hit(event) {
    if (!this.#layout) return null;
    const { left, top, cell } = this.#layout;
    const rect = this.#canvas.getBoundingClientRect();
    const c = Math.floor((event.clientX - rect.left - left) / cell);
    const r = Math.floor((event.clientY - rect.top - top) / cell);
    const [rows, cols] = this.#selected.map.shape;
    return r >= 0 && c >= 0 && r < rows && c < cols ? { r, c } : null;
  }

  #setHover(at, pointer) {
    const same = JSON.stringify(at) === JSON.stringify(this.#hover);
    this.#hover = at;
    this.#show(at, pointer);
    if (!same) this.#paint();
  }

  #onPointer(event) {
    this.#setHover(this.#hit(event), { x: event.clientX, y: event.clientY });
  }

  #lock(r) {
    const tokens = rowTokens(this.#result, this.store.state, this.#selected.map);
    const token = r === null || this.#lockedRow() === r ? null : tokens[r];
    this.store.set({ token });
    this.dispatchEvent(new CustomEvent('token-select', { bubbles: true, composed: true, detail: { token } }));
  }

  #onClick(event) {
    const at = this.#hit(event);
    if (at) this.#cursor = at;
    this.#lock(at ? at.r : null);
  }

  #onFocus() {
    if (!this.#selected || this.#selected.map.shape[0] === 0) return;
    if (!this.#cursor) this.#cursor = { r: Math.max(0, this.#lockedRow()), c: 0 };
    this.#show(this.#cursor, null);
    this.#paint();
  }

  #onKey(event) {
    if (!this.#selected) return;
    const [rows, cols] = this.#selected.map.shape;
    if (rows === 0 || cols === 0) return;
    const at = this.#cursor ?? { r: Math.max(0, this.#lockedRow()), c: 0 };
    const moves = {
      ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1],
      PageUp: [-10, 0], PageDown: [10, 0], Home: [0, -cols], End: [0, cols],
    };
    if (moves[event.key]) {
      const [dr, dc] = moves[event.key];
      this.#cursor = { r: Math.min(rows - 1, Math.max(0, at.r + dr)), c: Math.min(cols - 1, Math.max(0, at.c + dc)) };
      this.#scrollTo(this.#cursor);
      this.#show(this.#cursor, null);
      this.#paint();
    } else if (event.key === 'Enter' || event.key === ' ') {
      this.#cursor = at;
      this.#lock(at.r);
    } else if (event.key === 'Escape') {
      this.#lock(null);
    } else {
      return;
    }
    event.preventDefault();
  }

  // Keeps the cursor's cell (or, with c null, its row) inside the scroller's visible part.
  #scrollTo({ r, c }) {
    const { left, top, cell } = this.#layout;
    const s = this.#scroller;
    const y = top + r * cell;
    if (c !== null) {
      const x = left + c * cell;
      if (x < s.scrollLeft + left) s.scrollLeft = Math.max(0, x - left);
      else if (x + cell > s.scrollLeft + s.clientWidth) s.scrollLeft = x + cell - s.clientWidth + 8;
    }
    if (y < s.scrollTop + top) s.scrollTop = Math.max(0, y - top);
    else if (y + cell > s.scrollTop + s.clientHeight) s.scrollTop = y + cell - s.clientHeight + 8;
  }
}

customElements.define('matrix-view', MatrixView);
