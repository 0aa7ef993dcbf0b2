// <image-view>: where a vision transformer looks. The picture as the model saw
// it (resized and cropped by its image processor), dimmed everywhere but the
// patches a chosen token attends to: the selected heads of state.layer (one
// head, or their mean), or attention rollout or attention flow over every
// layer (Abnar & Zuidema 2020; flow's T max-flow problems are solved a few
// per frame, the picture filling in as they finish). The chosen token is the
// locked one (state.token), else the patch under the pointer (not for flow),
// else CLS (state.overlay picks the map); the learned tokens (CLS, DeiT's
// distillation token, DINOv2's registers) are chips above the picture, each
// with the weight the chosen token gives it. Below: the classifier's top
// labels (before → after when heads are knocked out), every head of the layer and every layer
// × head as small pictures (a click selects; Shift+click knocks a head out,
// state.ablate), and the register and sink panel: the attention each token
// receives and the norm of its hidden state (Darcet et al. 2023's high-norm
// tokens that soak up attention).
// result: the page's view result of an image run (run/image-run.js):
// { tokens, attentions [L, H, T, T], picture: { seen, grid, prefixTokens,
// topK, topKBefore, norms } }.
// Not here: running the model or preprocessing (the engine), the T × T
// matrix (matrix-view.js, which draws the same result with patch labels).
import { StoreBound } from '../ui/store-bound.js';
import { h, replaceKeepingFocus } from '../ui/dom.js';
import { activeHeads, headMean, headsTitle, pageBackground, viewColours } from '../attention/view-support.js';
import { attentionFlowRow, attentionRollout } from '../attention/rollout.js';
import { formatHeads } from '../attention/ablation.js';
import { SvgWriter } from '../export/svg-writer.js';
import { OVERLAYS } from '../run/state.js';

const MAIN_SIZE = 384; // pixels of the picture's longer side
const HEAD_SIZE = 104;
const MODEL_SIZE = 56;
const DIM = 0.82; // opacity of the dimming over a patch with no attention
const FLOW_SLICE_MS = 12; // attention flow's max-flow problems solved per frame, at most this long
const OVERLAY_NAMES = { attention: 'Attention of the layer', rollout: 'Rollout over all layers', flow: 'Attention flow over all layers' };

export class ImageView extends StoreBound {
  #result = null;
  #picture = document.createElement('canvas'); // the seen picture, 1:1
  #mean = null; // Float32Array [T, T]: the selected heads' map of the layer
  #rollout = null; // { data: Float64Array [T, T] } once asked for
  #flows = new Map(); // query token -> Float64Array [T]: its finished row of attention flow
  #flowJob = null; // the row being solved: { query, row: Float64Array [T], done, cancelled }
  #hoverToken = null;
  #gridFrame = 0;
  #layer = h('select', { 'aria-label': 'Layer' });
  #source = h('select', { 'aria-label': 'What the picture shows' }, ...OVERLAYS.map((value) => h('option', { value }, OVERLAY_NAMES[value])));
  #title = h('p', { class: 'view-title' });
  #chips = h('div', { class: 'image-chips', role: 'group', 'aria-label': 'Learned tokens' });
  #canvas = h('canvas', { class: 'image-main', tabindex: '0', role: 'img' });
  #readout = h('p', { class: 'readout', 'aria-live': 'polite' });
  #labels = h('ol', { class: 'image-labels' });
  #heads = h('div', { class: 'image-grid' });
  #model = h('div', { class: 'image-grid image-model-grid' });
  #sinks = h('table', { class: 'image-sinks' });

  connectedCallback() {
    super.connectedCallback();
    if (this.#canvas.isConnected) return;
    this.append(
      h('div', { class: 'image-controls' }, this.#title, h('label', {}, 'Layer ', this.#layer), h('label', {}, 'Show ', this.#source)),
      this.#chips,
      h('div', { class: 'image-main-row' }, this.#canvas,
        h('section', { class: 'image-labels-panel' }, h('h3', {}, 'Labels'), this.#labels)),
      this.#readout,
      h('details', { open: true }, h('summary', {}, 'Every head of this layer'),
        h('p', { class: 'hint' }, 'Click a head to show it alone; Shift+click knocks it out (and back in).'), this.#heads),
      h('details', {}, h('summary', {}, 'Every layer and head'), this.#model),
      h('details', {}, h('summary', {}, 'Registers and sinks'),
        h('p', { class: 'hint' }, 'The attention each token receives in this layer (mean over heads and queries) and the norm of its output: '
          + 'tokens that soak up attention with a large norm are the artefacts registers were added to hold.'), this.#sinks),
    );
    this.#source.addEventListener('change', () => this.store.set({ overlay: this.#source.value }));
    this.#layer.addEventListener('change', () => this.store.set({ layer: Number(this.#layer.value) }));
    this.#model.closest('details').addEventListener('toggle', () => this.#paintAll());
    this.#canvas.addEventListener('pointermove', (e) => this.#hover(this.#patchAt(e)));
    this.#canvas.addEventListener('pointerleave', () => this.#hover(null));
    this.#canvas.addEventListener('click', (e) => {
      const token = this.#patchAt(e);
      if (token !== null) this.store.set({ token: this.store.state.token === token ? null : token });
    });
    this.#canvas.addEventListener('keydown', (e) => this.#onKey(e));
  }

  storeChanged(state, changed) {
    if (!this.#result) return;
    if (changed === null || changed.some((key) => ['layer', 'heads', 'ablate', 'theme', 'overlay'].includes(key))) this.#rebuild();
    else if (changed.includes('token') && this.#mean) this.#paintQuery();
  }

  /** A vision model's run (run/image-run.js); a text model's result (no picture) leaves the view empty. */
  set result(result) {
    this.#result = result?.picture ? result : null;
    this.#mean = null;
    this.#model.replaceChildren(); // rebuilt for this result's layers and heads
    if (!this.#result) return;
    this.#rollout = null;
    this.#flows.clear();
    if (this.#flowJob) this.#flowJob.cancelled = true;
    this.#flowJob = null;
    const { seen } = result.picture;
    this.#picture.width = seen.width;
    this.#picture.height = seen.height;
    this.#picture.getContext('2d').putImageData(new ImageData(new Uint8ClampedArray(seen.data), seen.width, seen.height), 0, 0);
    this.#rebuild();
  }

  get result() { return this.#result; }

  exportCanvas() { this.flushDeferred(); return this.#canvas; }

  /** The picture as drawn (an embedded PNG: the weights are in its pixels), with the title. */
  svg() {
    this.flushDeferred();
    const { width, height } = this.#canvas;
    const svg = new SvgWriter(width, height + 22, { background: pageBackground(this), title: this.#title.textContent });
    svg.text(this.#title.textContent, 0, 14, { size: 12, fill: viewColours(this).text });
    svg.image(this.#canvas.toDataURL('image/png'), 0, 22, width, height);
    return svg;
  }

  /** The token whose attention the pictures show: locked, hovered (not for attention flow, seconds per token), else CLS. */
  get queryToken() {
    return this.store.state.token ?? (this.store.state.overlay === 'flow' ? null : this.#hoverToken) ?? 0;
  }

  #rebuild() {
    if (!this.#result || this.deferWhileHidden()) return;
    const { attentions } = this.#result;
    const state = this.store.state;
    const heads = activeHeads(this.#result, state);
    this.#mean = heads.length ? headMean(attentions, Math.min(state.layer, attentions.shape[0] - 1), heads) : null;
    this.#paintAll();
  }

  // Everything: what depends on the layer (labels, sinks) and what depends on the chosen token.
  #paintAll() {
    if (!this.#result || !this.#mean) return;
    const layers = this.#result.attentions.shape[0];
    const layer = Math.min(this.store.state.layer, layers - 1);
    if (this.#layer.options.length !== layers) {
      this.#layer.replaceChildren(...Array.from({ length: layers }, (_, l) => h('option', { value: String(l) }, String(l + 1))));
    }
    this.#layer.value = String(layer);
    this.#source.value = this.store.state.overlay;
    this.#layer.disabled = this.store.state.overlay !== 'attention';
    this.#renderLabels();
    this.#renderSinks(layer);
    this.#buildHeads(layer);
    this.#paintQuery();
  }

  // What a hover changes: the pictures of the chosen token's attention, its chips and its readout.
  #paintQuery() {
    const state = this.store.state;
    const [layers, count, T] = this.#result.attentions.shape;
    const layer = Math.min(state.layer, layers - 1);
    const query = Math.min(this.queryToken, T - 1);
    const who = this.#result.tokens[query].display;
    const allLayers = layers === 1 ? 'its one layer' : `all ${layers} layers`;
    let row;
    if (state.overlay === 'rollout') {
      this.#rollout ??= attentionRollout(this.#result.attentions);
      row = this.#rollout.data.subarray(query * T, query * T + T);
      this.#title.textContent = `Rollout over ${allLayers}: where ${who} draws from`;
    } else if (state.overlay === 'flow') {
      const flow = this.#flowRow(query);
      row = flow.row;
      this.#title.textContent = `Attention flow over ${allLayers}: where ${who} draws from`
        + (flow.done < T ? ` (${flow.done} of ${T} tokens solved…)` : '');
    } else {
      row = this.#mean.subarray(query * T, query * T + T);
      this.#title.textContent = `Layer ${layer + 1}, ${headsTitle(activeHeads(this.#result, state), count)}: attention from ${who}`;
    }
    this.#paintPicture(this.#canvas, MAIN_SIZE, row, query);
    this.#canvas.setAttribute('aria-label', `${this.#title.textContent}, over the ${this.#grid().rows} × ${this.#grid().columns} patches`);
    this.#renderChips(row, query);
    this.#renderReadout(row, query);
    // The small pictures follow at the next frame (one repaint for several pointer moves).
    cancelAnimationFrame(this.#gridFrame);
    this.#gridFrame = requestAnimationFrame(() => {
      this.#renderHeads(layer, query);
      this.#renderModel(query);
    });
  }

  // The query's row of attention flow: finished, or as far as it is solved (the rest 0), solving it a slice per frame.
  #flowRow(query) {
    const finished = this.#flows.get(query);
    if (finished) return { row: finished, done: finished.length };
    if (this.#flowJob?.query !== query) {
      if (this.#flowJob) this.#flowJob.cancelled = true;
      const job = { query, row: new Float64Array(this.#result.attentions.shape[2]), done: 0, cancelled: false };
      const values = attentionFlowRow(this.#result.attentions, query);
      const solve = () => {
        if (job.cancelled) return;
        const until = performance.now() + FLOW_SLICE_MS;
        while (job.done < job.row.length && performance.now() < until) job.row[job.done++] = values.next().value;
        if (job.done === job.row.length) {
          this.#flows.set(query, job.row);
          this.#flowJob = null;
        } else {
          setTimeout(solve, 0);
        }
        if (this.store.state.overlay === 'flow' && this.queryToken === query) this.#paintQuery();
      };
      this.#flowJob = job;
      setTimeout(solve, 0);
    }
    return { row: this.#flowJob.row, done: this.#flowJob.done };
  }

  #grid() { return this.#result.picture.grid; }

  #prefix() { return this.#result.picture.prefixTokens; }

  // Draws the picture at `size` pixels (longer side) dimmed by 1 - weight / max over the patches; the query patch outlined.
  #paintPicture(canvas, size, row, query) {
    const { rows, columns } = this.#grid();
    const seen = this.#picture;
    const scale = size / Math.max(seen.width, seen.height);
    const width = Math.round(seen.width * scale);
    const height = Math.round(seen.height * scale);
    if (canvas.width !== width || canvas.height !== height) Object.assign(canvas, { width, height });
    const ctx = canvas.getContext('2d');
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(seen, 0, 0, width, height);
    const prefix = this.#prefix();
    let max = 0;
    for (let p = 0; p < rows * columns; p += 1) max = Math.max(max, row[prefix + p]);
    const cellW = (this.#result.picture.patch.width * scale), cellH = (this.#result.picture.patch.height * scale);
    for (let p = 0; p < rows * columns; p += 1) {
      const alpha = DIM * (1 - (max > 0 ? row[prefix + p] / max : 0));
      ctx.fillStyle = `rgba(0, 0, 0, ${alpha.toFixed(3)})`;
      ctx.fillRect((p % columns) * cellW, Math.floor(p / columns) * cellH, cellW, cellH);
    }
    if (query >= prefix) {
      const p = query - prefix;
      ctx.strokeStyle = viewColours(this).accent;
      ctx.lineWidth = Math.max(1, size / 128);
      ctx.strokeRect((p % columns) * cellW + 1, Math.floor(p / columns) * cellH + 1, cellW - 2, cellH - 2);
    }
  }

  // The patch token under a pointer event, or null outside the grid.
  #patchAt(event) {
    const rect = this.#canvas.getBoundingClientRect();
    const { rows, columns } = this.#grid();
    const { width, height } = this.#result.picture.patch;
    const x = ((event.clientX - rect.left) / rect.width) * this.#picture.width;
    const y = ((event.clientY - rect.top) / rect.height) * this.#picture.height;
    const column = Math.floor(x / width), r = Math.floor(y / height);
    if (column < 0 || r < 0 || column >= columns || r >= rows) return null;
    return this.#prefix() + r * columns + column;
  }

  #hover(token) {
    if (token === this.#hoverToken) return;
    this.#hoverToken = token;
    if (this.store.state.token === null && this.#mean) this.#paintQuery();
  }

  // Arrow keys move the locked patch; Escape unlocks.
  #onKey(event) {
    const { rows, columns } = this.#grid();
    const prefix = this.#prefix();
    const locked = this.store.state.token;
    if (event.key === 'Escape') {
      this.store.set({ token: null });
      return;
    }
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (!moves[event.key]) return;
    event.preventDefault();
    const p = locked !== null && locked >= prefix ? locked - prefix : 0;
    const r = Math.min(rows - 1, Math.max(0, Math.floor(p / columns) + moves[event.key][0]));
    const c = Math.min(columns - 1, Math.max(0, (p % columns) + moves[event.key][1]));
    this.store.set({ token: prefix + r * columns + c });
  }

  #renderChips(row, query) {
    const chips = [];
    for (let t = 0; t < this.#prefix(); t += 1) {
      const chosen = t === query;
      chips.push(h('button', {
        type: 'button', class: 'chip', 'aria-pressed': String(chosen), dataset: { focusKey: `prefix-${t}` },
        title: chosen ? 'The token whose attention the pictures show' : `Show where ${this.#result.tokens[t].display} looks`,
        onclick: () => this.store.set({ token: t === 0 && this.store.state.token === null ? null : t }),
      }, `${this.#result.tokens[t].display} ${row[t].toFixed(2)}`));
    }
    replaceKeepingFocus(this.#chips, h('span', { class: 'hint' }, 'Learned tokens (weight received from the chosen token): '), ...chips);
  }

  #renderReadout(row, query) {
    const prefix = this.#prefix();
    let best = prefix;
    let onPatches = 0;
    for (let t = prefix; t < row.length; t += 1) {
      onPatches += row[t];
      if (row[t] > row[best]) best = t;
    }
    const total = row.reduce((a, b) => a + b, 0);
    this.#readout.textContent = `${this.#result.tokens[query].display}: strongest patch ${this.#result.tokens[best].display} `
      + `${row[best].toFixed(3)}; ${(100 * onPatches / total).toFixed(1)}% on patches, ${(100 * (1 - onPatches / total)).toFixed(1)}% on the learned tokens. `
      + (this.store.state.overlay === 'flow' ? 'Click a patch to see its flow (seconds per token); ' : 'Hover or click a patch to see where it looks; ')
      + 'arrow keys move a locked patch, Esc unlocks.';
  }

  #renderLabels() {
    const { topK, topKBefore } = this.#result.picture;
    if (!topK) {
      this.#labels.replaceChildren(h('li', { class: 'hint' }, 'This checkpoint has no classifier (a bare model): no labels.'));
      return;
    }
    const before = new Map(topKBefore ? topKBefore.labels.map((label, i) => [label, topKBefore.probabilities[i]]) : []);
    this.#labels.replaceChildren(...topK.labels.map((label, i) => {
      const p = topK.probabilities[i];
      const was = before.get(label);
      return h('li', {}, h('span', { class: 'label-name' }, label), ' ',
        h('meter', { min: 0, max: 1, value: p, 'aria-label': `${label} probability` }), ' ',
        h('span', { class: 'label-probability' }, `${(100 * p).toFixed(1)}%`),
        topKBefore ? h('span', { class: 'hint' }, was === undefined ? ' (new)' : ` (was ${(100 * was).toFixed(1)}%)`) : null);
    }));
  }

  // One head's attention row of `query` at `layer`: [T].
  #headRow(layer, head, query) {
    const { data, shape: [, count, T] } = this.#result.attentions;
    const start = ((layer * count + head) * T + query) * T;
    return data.subarray(start, start + T);
  }

  // The heads' buttons are built when the layer, the selection or the knocked-out heads change (#paintAll);
  // a hover only repaints their pictures.
  #buildHeads(layer) {
    const count = this.#result.attentions.shape[1];
    const state = this.store.state;
    const ablated = new Set((state.ablate ?? []).filter(([l, , part]) => !part && l === layer).map(([, head]) => head));
    const cells = [];
    for (let head = 0; head < count; head += 1) {
      const selected = state.heads?.length === 1 && state.heads[0] === head;
      cells.push(h('button', {
        type: 'button', class: `image-cell${selected ? ' selected' : ''}${ablated.has(head) ? ' ablated' : ''}`,
        dataset: { focusKey: `head-${head}` }, 'aria-pressed': String(selected),
        title: `Layer ${layer + 1}, head ${head + 1}${ablated.has(head) ? ' (knocked out)' : ''}`,
        onclick: (e) => (e.shiftKey ? this.#toggleAblation(layer, head) : this.store.set({ heads: selected ? null : [head] })),
      }, h('canvas'), h('span', {}, `head ${head + 1}${ablated.has(head) ? ' ✕' : ''}`)));
    }
    replaceKeepingFocus(this.#heads, ...cells);
  }

  #renderHeads(layer, query) {
    this.#heads.querySelectorAll('canvas').forEach((canvas, head) => {
      this.#paintPicture(canvas, HEAD_SIZE, this.#headRow(layer, head, query), query);
    });
  }

  // The layers × heads grid's buttons, built once per result and when it is opened; #renderModel repaints them.
  #buildModel() {
    const [layers, count] = this.#result.attentions.shape;
    const cells = [];
    for (let layer = 0; layer < layers; layer += 1) {
      for (let head = 0; head < count; head += 1) {
        cells.push(h('button', {
          type: 'button', class: 'image-cell', title: `Layer ${layer + 1}, head ${head + 1}`,
          onclick: () => this.store.set({ layer, heads: [head] }),
        }, h('canvas')));
      }
    }
    this.#model.style.gridTemplateColumns = `repeat(${count}, auto)`;
    this.#model.replaceChildren(...cells);
  }

  #renderModel(query) {
    if (!this.#model.closest('details').open) return; // drawn when opened
    const [layers, count] = this.#result.attentions.shape;
    if (this.#model.children.length !== layers * count) this.#buildModel();
    this.#model.querySelectorAll('canvas').forEach((canvas, i) => {
      this.#paintPicture(canvas, MODEL_SIZE, this.#headRow(Math.floor(i / count), i % count, query), query);
    });
  }

  #toggleAblation(layer, head) {
    const ablate = this.store.state.ablate ?? [];
    const has = ablate.some(([l, hd, part]) => !part && l === layer && hd === head);
    this.store.set({ ablate: has ? ablate.filter(([l, hd, part]) => part || l !== layer || hd !== head) : [...ablate, [layer, head]] });
  }

  #renderSinks(layer) {
    const { data, shape: [, count, T] } = this.#result.attentions;
    const received = new Float64Array(T);
    for (let head = 0; head < count; head += 1) {
      const start = (layer * count + head) * T * T;
      for (let q = 0; q < T; q += 1) for (let k = 0; k < T; k += 1) received[k] += data[start + q * T + k];
    }
    for (let k = 0; k < T; k += 1) received[k] /= count * T;
    const norms = this.#result.picture.norms?.[layer + 1] ?? null; // the output of this layer
    const byNorm = [...Array(T).keys()].slice(this.#prefix()).sort((a, b) => (norms ? norms[b] - norms[a] : received[b] - received[a]));
    const shown = [...Array(this.#prefix()).keys(), ...byNorm.slice(0, 5)];
    const maxReceived = Math.max(...received);
    const maxNorm = norms ? Math.max(...norms) : 1;
    const ablated = this.store.state.ablate?.length ? ` · knocked out: ${formatHeads(this.store.state.ablate)}` : '';
    this.#sinks.replaceChildren(
      h('caption', {}, `Layer ${layer + 1}: the learned tokens, and the patches with the largest ${norms ? 'norms' : 'attention received'}${ablated}`),
      h('tr', {}, h('th', {}, 'token'), h('th', {}, 'attention received'), h('th', {}, 'norm of its output')),
      ...shown.map((t) => h('tr', {},
        h('th', { scope: 'row' }, this.#result.tokens[t].display),
        h('td', {}, h('meter', { min: 0, max: maxReceived, value: received[t] }), ` ${received[t].toFixed(3)}`),
        h('td', {}, norms ? [h('meter', { min: 0, max: maxNorm, value: norms[t] }), ` ${norms[t].toFixed(1)}`] : '—'))),
    );
  }
}

customElements.define('image-view', ImageView);
