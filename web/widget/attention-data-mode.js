// The <attention-view> widget's data mode, on the DOM side: where the author's
// attention comes from (the `data` property, the `src` attribute with
// `tokens-src` for a .npy file, or a child <script type="application/json">),
// reading it once per change, which part of an encoder–decoder model is shown
// (the `attention` attribute: self, encoder, decoder, cross; a picker when
// there are several), a vision transformer's picture decoded, and the note
// shown in place of views that need the model itself. Nothing here starts
// the engine worker or fetches WASM.
// Not here: parsing and validation (attention-data-source.js), drawing.
import { h } from '../ui/dom.js';
import { PartPicker } from '../ui/attention-parts.js';
import { AttentionDataError, MODEL_VIEWS, fetchAttentionData, isAttentionData, parseJsonText, readAttentionData, vectorTrace } from '../attention/attention-data-source.js';
import { pictureOfFile } from '../run/image-run.js';

// A vision transformer's data: its picture's PNG (read by attention-data-source.js) decoded to the pixels the image view draws.
async function decodePictures(data) {
  for (const part of Object.values(data.parts)) {
    const picture = part.result.picture;
    if (!picture?.seen.png) continue;
    const { width, height, png } = picture.seen;
    let pixels;
    try {
      pixels = await pictureOfFile(new Blob([png], { type: 'image/png' }));
    } catch {
      throw new AttentionDataError('image.seen.png is not a picture this browser can read');
    }
    if (pixels.width !== width || pixels.height !== height) {
      throw new AttentionDataError(`image.seen says ${width} × ${height} pixels, its PNG is ${pixels.width} × ${pixels.height}`);
    }
    picture.seen = pixels;
  }
  return data;
}

export class DataMode {
  static attributes = ['src', 'tokens-src', 'attention'];

  /** A parsed child JSON that holds attention rather than the scratch view's matrices. */
  static isData(value) { return isAttentionData(value); }

  #host;
  #property = null;
  #sourceKey = null; // what the cached data was read from
  #partKey = null;
  #loading = null; // Promise of readAttentionData's { parts, order }
  #shown = null;
  #picker = null;

  constructor(host) {
    this.#host = host;
  }

  get property() { return this.#property; }
  set property(value) { this.#property = value ?? null; }

  #childScript() {
    const script = this.#host.querySelector(':scope > script[type="application/json"]');
    if (!script) return null;
    const text = script.textContent;
    // Invalid JSON that names an attention key is still data (and gets the data's error message).
    return /"(encoder_|decoder_|cross_)?attentions"/.test(text) ? text : null;
  }

  /** True when the widget draws given attention instead of running a model. */
  get active() {
    return this.#property !== null || this.#host.hasAttribute('src') || this.#childScript() !== null;
  }

  /** Call after any change of the sources; true when what is shown must be read again (or the model run, once the data is gone). */
  changed() {
    if (!this.active) {
      const wasActive = this.#sourceKey !== null;
      this.#sourceKey = null;
      this.#partKey = null;
      this.#loading = null;
      this.#shown = null;
      this.#picker?.element.remove();
      return wasActive;
    }
    const host = this.#host;
    const sourceKey = this.#property ?? `${host.getAttribute('src')}\n${host.getAttribute('tokens-src')}\n${host.getAttribute('tokens')}\n${this.#childScript()}`;
    const partKey = host.getAttribute('attention');
    if (sourceKey === this.#sourceKey && partKey === this.#partKey) return false;
    if (sourceKey !== this.#sourceKey) this.#loading = null;
    this.#sourceKey = sourceKey;
    this.#partKey = partKey;
    return true;
  }

  #read() {
    return this.#readData().then(decodePictures);
  }

  #readData() {
    const host = this.#host;
    if (this.#property !== null) return Promise.resolve().then(() => readAttentionData(this.#property));
    if (host.hasAttribute('src')) {
      const tokens = host.getAttribute('tokens');
      return fetchAttentionData(host.getAttribute('src'), {
        tokensSrc: host.getAttribute('tokens-src'),
        tokens: tokens === null ? null : parseJsonText(tokens, 'the tokens attribute'),
        base: document.baseURI,
      });
    }
    return Promise.resolve().then(() => readAttentionData(parseJsonText(this.#childScript(), 'the <script type="application/json"> inside the widget')));
  }

  /** Reads (once per source) and returns the part to show: { result, layers, heads, warning, headScores }. */
  async load() {
    this.changed();
    if (!this.#loading) {
      const loading = this.#read();
      this.#loading = loading;
      loading.catch(() => { if (this.#loading === loading) this.#loading = null; }); // read again on the next run
    }
    let data;
    try {
      data = await this.#loading;
    } catch (error) {
      this.#shown = null;
      throw new Error(`Cannot draw this attention data: ${error.message}`);
    }
    const asked = this.#host.getAttribute('attention');
    const name = data.parts[asked] ? asked : data.order.includes('cross') ? 'cross' : data.order[0];
    this.#shown = { ...data.parts[name], name, order: data.order };
    if (asked !== null && !data.parts[asked]) {
      const note = `The data has no ${asked} attention (it has: ${data.order.join(', ')}); showing ${name}.`;
      this.#shown.warning = this.#shown.warning ? `${note} ${this.#shown.warning}` : note;
    }
    return this.#shown;
  }

  /** Head labels of the part shown, as the model view's headScores, or null. */
  get headScores() { return this.#shown?.headScores ?? null; }

  /** A note to show instead of a view that needs the model, or null. The neuron view needs the data's queries and keys. */
  unavailable(view) {
    if (!this.active || !MODEL_VIEWS[view] || (view === 'neuron' && this.#shown?.vectors)) return null;
    return h('p', { class: 'unavailable', role: 'note', dataset: { unavailable: view } },
      `${MODEL_VIEWS[view]} This widget shows attention computed elsewhere, so the ${view} view is not available here; the head, model, matrix, rollout and (for cross-attention) decoding views are${view === 'neuron' ? ', and the neuron view when the data has "queries" and "keys"' : ''}.`);
  }

  /** The neuron view's trace of { layer, head } from the shown part's queries and keys, or null when it has none. */
  trace(request) {
    return this.#shown?.vectors ? vectorTrace(this.#shown.vectors, request) : null;
  }

  /** Shows (before `anchor`) a picker of the parts when the data has several. */
  showPicker(anchor) {
    const order = this.#shown?.order ?? [];
    if (order.length < 2) {
      this.#picker?.element.remove();
      return;
    }
    this.#picker ??= new PartPicker((name) => this.#host.setAttribute('attention', name));
    this.#picker.show(order, this.#shown.name);
    if (this.#picker.element.nextSibling !== anchor) anchor.before(this.#picker.element);
  }
}
