// <model-view>: every layer x head of the model as a grid of thumbnails of
// its attention map (after the page's transforms), each head framed in its
// palette colour, captioned "L<layer> H<head>" and badged with the labels the
// head-pattern analysis gave it (whatever names it carries: previous-token,
// induction, sink, cls-sink, ...), one badge per row so thumbnails line up,
// explained in a legend of the labels present. Thumbnails share the width
// available; hovering or focusing one enlarges it.
// Each thumbnail is a button: click or Enter opens that head in the head view
// (state.view = 'head'); arrow keys move between thumbnails (one tab stop).
// Maps are shrunk to at most 64 x 64 blocks (block means, masked blocks grey),
// 128 or 256 where the thumbnails are that many device pixels wide, and
// coloured relative to each head's largest block, so 12 x 12 heads at 128
// tokens build in a few tens of milliseconds.
// Not here: the head-pattern scores (computed by the core), the head view.
import { kvGroup, kvHeadOf, sharesKeyValues, sinkScore, sinkText } from '../attention/head-facts.js';
import { StoreBound } from '../ui/store-bound.js';
import { prepareMaps } from '../attention/attention-data.js';
import { h } from '../ui/dom.js';
import { headColour } from '../ui/palette.js';
import { SvgWriter } from '../export/svg-writer.js';
import { maskedColours, pageBackground, slidingWindowOf, viewColours, weightIndex, weightLut } from '../attention/view-support.js';

const THUMB_BLOCKS = 64; // at least; doubled (up to MAX_BLOCKS) while the thumbnails have the pixels
const MAX_BLOCKS = 256;
const SCORE_NAMES = ['previousToken', 'nextToken', 'induction', 'sink', 'self', 'local', 'broad'];
// What a head label means, for the legend; a label not listed here is shown by its name alone.
const LABEL_MEANINGS = {
  'previous-token': 'attends to the token just before',
  'next-token': 'attends to the token just after',
  induction: 'attends to the token after an earlier copy of the current one',
  sink: 'puts most weight on the first token',
  'cls-sink': 'puts most weight on [CLS]',
  'sep-sink': 'puts most weight on [SEP]',
  self: 'attends to the token itself',
  local: 'attends to nearby tokens',
  broad: 'spreads its weight evenly',
};
// The exported picture (PNG and SVG): thumbnail size, gaps and text sizes in CSS pixels.
const EXPORT = { thumb: 96, gap: 12, frame: 3, layerCaption: 64, title: 28, caption: 14, badge: 12 };

export class ModelView extends StoreBound {
  #result = null;
  #headScores = null;
  #thumbs = []; // [{ layer, head, labels, shape, values, scaleMax, button, canvas, badges }], layer-major
  #title = h('p', { class: 'view-title' });
  #hint = h('p', { class: 'hint' });
  #legend = h('dl', { class: 'model-legend', hidden: true });
  #grid = h('div', { class: 'model-grid' });
  #zoom = h('canvas', { class: 'model-zoom', hidden: true, 'aria-hidden': 'true' }); // the hovered or focused thumbnail, enlarged

  connectedCallback() {
    super.connectedCallback();
    if (!this.#grid.isConnected) {
      this.append(this.#title, this.#hint, this.#legend, this.#grid, this.#zoom);
      this.#grid.addEventListener('keydown', (e) => this.#onKey(e));
      const thumbOf = (event) => this.#thumbs.find(({ button }) => button === event.target.closest?.('.model-thumb'));
      this.#grid.addEventListener('pointerover', (e) => this.#showZoom(thumbOf(e)));
      this.#grid.addEventListener('focusin', (e) => this.#showZoom(thumbOf(e)));
      this.#grid.addEventListener('pointerleave', () => this.#showZoom(null));
      this.#grid.addEventListener('focusout', () => this.#showZoom(null));
      this.#grid.addEventListener('scroll', () => this.#showZoom(null));
    }
    this.#rebuild();
  }


  storeChanged(state, changed) {
    if (changed === null) this.#rebuild();
    else if (changed.some((key) => ['threshold', 'prune', 'filter', 'hideSpecial', 'words', 'theme'].includes(key))) this.#rebuild();
    else if (changed.some((key) => ['layer', 'heads'].includes(key))) this.#markCurrent();
  }

  /** Model output: { tokens, attentions [L, H, T, T], texts, causal }. */
  set result(result) {
    this.#result = result;
    this.#rebuild();
  }

  /** Head-pattern scores: [{ layer, head, labels: [...], previousToken, ... }] or null. */
  set headScores(scores) {
    this.#headScores = scores ?? null;
    this.#rebuild();
  }

  get headScores() { return this.#headScores; }

  /**
   * The thumbnails as drawn, for tests: [{ layer, head, labels, shape:
   * [blockRows, blockCols], values (block means, row-major; null = fully
   * masked), scaleMax (the value drawn darkest) }].
   */
  thumbnailModel() {
    this.flushDeferred();
    return this.#thumbs.map(({ layer, head, labels, shape, values, scaleMax }) => ({ layer, head, labels, shape, values: Array.from(values, (v) => (Number.isNaN(v) ? null : v)), scaleMax }));
  }

  /**
   * The grid as one picture (the PNG export): thumbnails in their head colours,
   * the heads the head view shows outlined in the accent colour, captions and
   * the line of facts under each caption (KV head, sink score) and head
   * labels, in the page's theme colours.
   */
  exportCanvas() {
    this.flushDeferred();
    const picture = this.exportLayout();
    if (!picture) return null;
    const ratio = 2;
    const canvas = document.createElement('canvas');
    canvas.width = picture.width * ratio;
    canvas.height = picture.height * ratio;
    const ctx = canvas.getContext('2d');
    ctx.scale(ratio, ratio);
    ctx.fillStyle = picture.colours.background;
    ctx.fillRect(0, 0, picture.width, picture.height);
    ctx.textBaseline = 'middle';
    for (const text of picture.texts) {
      ctx.font = `${text.bold ? 'bold ' : ''}${text.size}px system-ui, sans-serif`;
      ctx.fillStyle = picture.colours.text;
      ctx.fillText(text.text, text.x, text.y);
    }
    ctx.imageSmoothingEnabled = false;
    for (const t of picture.thumbs) {
      if (t.current) {
        ctx.strokeStyle = picture.colours.accent;
        ctx.lineWidth = 2;
        ctx.strokeRect(...t.outline);
      }
      ctx.strokeStyle = t.colour;
      ctx.lineWidth = EXPORT.frame;
      ctx.strokeRect(...t.frame);
      if (t.canvas.width > 0) ctx.drawImage(t.canvas, t.x, t.y, t.size, t.size);
    }
    return canvas;
  }

  /** SVG text of the grid as exportCanvas() draws it (thumbnails as embedded images, text as text). */
  svg() {
    this.flushDeferred();
    const picture = this.exportLayout();
    if (!picture) return null;
    const { colours } = picture;
    const svg = new SvgWriter(picture.width, picture.height, { background: colours.background, title: picture.texts[0].text });
    for (const t of picture.thumbs) {
      if (t.current) svg.rect(...t.outline, { fill: 'none', stroke: colours.accent, 'stroke-width': 2 });
      svg.rect(...t.frame, { fill: 'none', stroke: t.colour, 'stroke-width': EXPORT.frame });
      if (t.canvas.width > 0) svg.image(t.canvas.toDataURL('image/png'), t.x, t.y, t.size, t.size);
    }
    const texts = svg.group({ fill: colours.text });
    for (const text of picture.texts) svg.text(text.text, text.x, text.y, { size: text.size, 'font-weight': text.bold ? 'bold' : undefined }, texts);
    return svg.toString();
  }

  /**
   * Where everything of the exported picture goes, in CSS pixels (the PNG is
   * drawn at twice that): { width, height, texts: [{ text, x, y, size, bold }],
   * thumbs: [{ layer, head, x, y, size, canvas, colour, current, frame, outline }] (frame and
   * outline: [x, y, w, h] rectangles to stroke), colours }.
   */
  exportLayout() {
    if (!this.#result || this.#thumbs.length === 0) return null;
    const [layers, heads] = this.#result.attentions.shape;
    const { thumb, gap, frame, layerCaption, title, caption, badge } = EXPORT;
    const badgeLines = Math.max(0, ...this.#thumbs.map((t) => t.labels.length));
    // The line under each caption on screen (key/value head with GQA, sink score), when any head has one.
    const factsLines = this.#thumbs.some((t) => t.facts.textContent) ? 1 : 0;
    const cellWidth = thumb + 2 * frame + gap;
    const cellHeight = thumb + 2 * frame + caption + (factsLines + badgeLines) * badge + gap;
    const { layer: currentLayer, heads: currentHeads } = this.store.state;
    const texts = [{ text: `All ${layers} layers × ${heads} heads`, x: gap, y: title / 2, size: 14, bold: true }];
    const thumbs = [];
    for (const t of this.#thumbs) {
      const x = layerCaption + t.head * cellWidth + frame;
      const y = title + t.layer * cellHeight + frame;
      if (t.head === 0) texts.push({ text: this.#layerCaption(t.layer), x: gap, y: y + thumb / 2, size: 12, bold: true });
      texts.push({ text: `L${t.layer + 1} H${t.head + 1}`, x: x - frame, y: y + thumb + frame + caption / 2 + 1, size: 11 });
      if (t.facts.textContent) texts.push({ text: t.facts.textContent, x: x - frame, y: y + thumb + frame + caption + 0.5 * badge, size: 10 });
      t.labels.forEach((label, i) => texts.push({ text: label, x: x - frame, y: y + thumb + frame + caption + (factsLines + i + 0.5) * badge, size: 10 }));
      thumbs.push({
        layer: t.layer, head: t.head, x, y, size: thumb, canvas: t.canvas, colour: headColour(t.head),
        current: t.layer === currentLayer && (currentHeads === null || currentHeads.includes(t.head)),
        frame: [x - frame / 2, y - frame / 2, thumb + frame, thumb + frame], // stroked frame-wide, in the head colour
        outline: [x - frame - 2, y - frame - 2, thumb + 2 * frame + 4, thumb + 2 * frame + 4], // around the frame, heads shown now
      });
    }
    return { width: layerCaption + heads * cellWidth, height: title + layers * cellHeight, texts, thumbs, colours: { ...viewColours(this), background: pageBackground(this) } };
  }

  #rebuild() {
    if (!this.store || !this.#result || !this.isConnected || this.deferWhileHidden()) return;
    const [layers, heads] = this.#result.attentions.shape;
    const state = this.store.state;
    const scores = new Map((this.#headScores ?? []).map((s) => [`${s.layer}.${s.head}`, s]));
    this.#title.textContent = `All ${layers} layers × ${heads} heads. Choose a head to open it in the head view.`;
    this.#hint.textContent = `Each thumbnail is coloured relative to its own strongest weight${this.#result.causal ? '; grey: masked by the causal mask' : ''}.${this.#headScores ? '' : ' Head labels appear once the head-pattern analysis has run.'}`;
    // Buttons and canvases are kept while the model's shape stays (a new
    // canvas context costs about a millisecond; redrawing one is cheap).
    if (this.#thumbs.length !== layers * heads || this.#grid.style.getPropertyValue('--heads') !== String(heads)) this.#createButtons(layers, heads);
    const allHeads = [...Array(heads).keys()];
    const blocks = this.#blocks();
    for (let layer = 0; layer < layers; layer += 1) {
      const prepared = prepareMaps(this.#result, { ...state, layer }, allHeads);
      for (const { head, map } of prepared.maps) this.#drawThumbnail(this.#thumbs[layer * heads + head], map, scores.get(`${layer}.${head}`), blocks);
    }
    // Beside each caption: its key/value head when heads share them (GQA), and its attention-sink score on this text.
    const { kvHeads } = this.#result;
    for (const thumb of this.#thumbs) {
      thumb.sink = sinkScore(this.#result.attentions, thumb.layer, thumb.head);
      const kv = sharesKeyValues(heads, kvHeads) ? `KV${kvHeadOf(thumb.head, heads, kvHeads) + 1}` : '';
      thumb.facts.textContent = [kv, sinkText(thumb.sink)].filter(Boolean).join(' · ');
      thumb.button.title = this.#describe(thumb, scores.get(`${thumb.layer}.${thumb.head}`));
    }
    // One badge per row: every thumbnail keeps room for the most labels any head has.
    this.#grid.style.setProperty('--badge-rows', String(Math.max(0, ...this.#thumbs.map((t) => t.labels.length))));
    this.#renderLegend();
    this.#markCurrent();
  }

  // Enlarges a thumbnail beside it (to its right, or left where the view ends); null hides the zoom.
  #showZoom(thumb) {
    const zoom = this.#zoom;
    if (!thumb || thumb.canvas.width === 0) {
      zoom.hidden = true;
      return;
    }
    zoom.width = thumb.canvas.width;
    zoom.height = thumb.canvas.height;
    zoom.getContext('2d').drawImage(thumb.canvas, 0, 0);
    zoom.style.setProperty('--head', headColour(thumb.head));
    zoom.hidden = false;
    const view = this.getBoundingClientRect();
    const at = thumb.button.getBoundingClientRect();
    const size = zoom.offsetWidth;
    const right = at.right - view.left + 8;
    zoom.style.left = `${right + size <= view.width ? right : Math.max(0, at.left - view.left - size - 8)}px`;
    zoom.style.top = `${Math.max(0, at.top - view.top)}px`;
  }

  // Blocks per side of a thumbnail: 64, or 128 / 256 when its canvas is that many device pixels wide.
  #blocks() {
    const width = (this.#thumbs[0]?.canvas.clientWidth ?? 0) * (window.devicePixelRatio || 1);
    let blocks = THUMB_BLOCKS;
    while (blocks * 2 <= Math.min(width, MAX_BLOCKS)) blocks *= 2;
    return blocks;
  }

  #renderLegend() {
    const present = [...new Set(this.#thumbs.flatMap((t) => t.labels))];
    this.#legend.hidden = present.length === 0;
    this.#legend.replaceChildren(...present.flatMap((label) => [
      h('dt', {}, h('span', { class: 'head-badge' }, label)),
      h('dd', {}, LABEL_MEANINGS[label] ?? 'a label of the head-pattern analysis'),
    ]));
  }

  // "Layer 3", and on a sliding-window layer (Mistral, Gemma 2/3's local layers) its window.
  #layerCaption(layer) {
    const window = this.#result.cross ? 0 : slidingWindowOf(this.#result, layer);
    return window ? `Layer ${layer + 1} · window ${window}` : `Layer ${layer + 1}`;
  }

  #createButtons(layers, heads) {
    this.#grid.style.setProperty('--heads', String(heads));
    this.#thumbs = [];
    const children = [];
    for (let layer = 0; layer < layers; layer += 1) {
      children.push(h('div', { class: 'model-layer-caption', dataset: { window: String(slidingWindowOf(this.#result, layer)) } }, this.#layerCaption(layer)));
      for (let head = 0; head < heads; head += 1) {
        const canvas = h('canvas', { 'aria-hidden': 'true' });
        const badges = h('span', { class: 'thumb-badges' });
        const facts = h('span', { class: 'thumb-facts' });
        const button = h('button', {
          type: 'button',
          class: 'model-thumb',
          tabindex: '-1',
          style: `--head: ${headColour(head)}`,
          dataset: { layer: String(layer), head: String(head) },
          onclick: () => this.store.set({ view: 'head', layer, heads: [head] }),
        }, canvas, h('span', { class: 'thumb-caption' }, `L${layer + 1} H${head + 1}`), facts, badges);
        this.#thumbs.push({ layer, head, labels: [], shape: [0, 0], values: new Float32Array(0), scaleMax: 1, button, canvas, badges, facts, sink: null });
        children.push(button);
      }
    }
    this.#grid.replaceChildren(...children);
  }

  // Shrinks the map to at most THUMB_BLOCKS² block means (masked cells left
  // out; a fully masked block is NaN) and draws one pixel per block.
  #drawThumbnail(thumb, map, score, blocks) {
    const [rows, cols] = map.shape;
    const br = Math.min(blocks, rows);
    const bc = Math.min(blocks, cols);
    const rowBlock = Int32Array.from({ length: rows }, (_, r) => Math.floor((r * br) / rows));
    const colBlock = Int32Array.from({ length: cols }, (_, c) => Math.floor((c * bc) / cols));
    const sums = new Float64Array(br * bc);
    const counts = new Uint32Array(br * bc);
    const causal = this.#result.causal;
    const threshold = this.store.state.threshold;
    const { data } = map;
    let open = causal ? 0 : cols; // rows and columns ascend: keys [0, open) are not masked
    for (let r = 0; r < rows; r += 1) {
      if (causal) while (open < cols && map.cols[open] <= map.rows[r]) open += 1;
      const offset = rowBlock[r] * bc;
      const start = r * cols;
      for (let c = 0; c < open; c += 1) {
        const w = data[start + c];
        const block = offset + colBlock[c];
        if (w >= threshold) sums[block] += w;
        counts[block] += 1;
      }
    }
    const values = new Float32Array(br * bc);
    let scaleMax = 0;
    for (let i = 0; i < values.length; i += 1) {
      values[i] = counts[i] ? sums[i] / counts[i] : NaN;
      if (counts[i]) scaleMax = Math.max(scaleMax, values[i]);
    }
    if (scaleMax === 0) scaleMax = 1;
    const { canvas } = thumb;
    if (canvas.width !== bc || canvas.height !== br) {
      canvas.width = bc;
      canvas.height = br;
    }
    if (values.length) {
      const ctx = canvas.getContext('2d');
      const image = ctx.createImageData(bc, br);
      const pixels = image.data;
      const scale = weightLut(this.store.state.theme);
      const masked = maskedColours(this.store.state.theme).cell;
      for (let i = 0; i < values.length; i += 1) {
        if (Number.isNaN(values[i])) {
          pixels.set(masked, i * 4);
        } else {
          const at = weightIndex(values[i] / scaleMax);
          pixels[i * 4] = scale[at];
          pixels[i * 4 + 1] = scale[at + 1];
          pixels[i * 4 + 2] = scale[at + 2];
        }
        pixels[i * 4 + 3] = 255;
      }
      ctx.putImageData(image, 0, 0);
    }
    const labels = score?.labels ?? [];
    Object.assign(thumb, { labels, shape: [br, bc], values, scaleMax });
    thumb.badges.replaceChildren(...labels.map((label) => h('span', { class: 'head-badge' }, label)));
    thumb.button.setAttribute('aria-label', `Layer ${thumb.layer + 1}, head ${thumb.head + 1}${labels.length ? `: ${labels.join(', ')}` : ''}. Open in the head view.`);
  }

  #describe({ layer, head, labels, sink }, score) {
    const lines = [`Layer ${layer + 1}, head ${head + 1}${labels.length ? `: ${labels.join(', ')}` : ''}`];
    const [, heads] = this.#result.attentions.shape;
    const { kvHeads } = this.#result;
    if (sharesKeyValues(heads, kvHeads)) {
      lines.push(`Reads key/value head ${kvHeadOf(head, heads, kvHeads) + 1} of ${kvHeads}, with heads ${kvGroup(head, heads, kvHeads).map((x) => x + 1).join(', ')}`);
    }
    if (sink !== null && sink !== undefined) lines.push(`Attention sink: ${Math.round(sink * 100)}% of the later tokens' weight is on the first token`);
    if (score) lines.push(SCORE_NAMES.filter((name) => typeof score[name] === 'number').map((name) => `${name} ${score[name].toFixed(2)}`).join(', '));
    return lines.join('\n');
  }

  // Marks the thumbnails of the heads the head view shows now, and makes the
  // first of them the grid's tab stop.
  #markCurrent() {
    const { layer, heads } = this.store.state;
    let stop = null;
    for (const { layer: l, head, button } of this.#thumbs) {
      const current = l === layer && (heads === null || heads.includes(head));
      button.classList.toggle('current', current);
      button.tabIndex = -1;
      if (current && !stop) stop = button;
    }
    (stop ?? this.#thumbs[0]?.button)?.setAttribute('tabindex', '0');
  }

  #onKey(event) {
    const index = this.#thumbs.findIndex(({ button }) => button === event.target);
    if (index < 0) return;
    const heads = this.#result.attentions.shape[1];
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: heads, ArrowUp: -heads, Home: -(index % heads), End: heads - 1 - (index % heads) }[event.key];
    if (step === undefined) return;
    event.preventDefault();
    const next = this.#thumbs[Math.min(this.#thumbs.length - 1, Math.max(0, index + step))].button;
    for (const { button } of this.#thumbs) button.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }
}

customElements.define('model-view', ModelView);
