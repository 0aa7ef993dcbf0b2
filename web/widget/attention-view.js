// <attention-view>: the embeddable widget. One module an author loads with
// <script type="module" src=".../widget/attention-view.js">, then writes
// <attention-view model="austen-gpt" text="..." view="head"></attention-view>
// (or model="hf:ORG/NAME" for a model on the Hugging Face hub, hub.js).
// It runs the model on the text in the page's shared engine worker and shows
// one of the playground's views (head, model, matrix, rollout, lens, neuron, scratch,
// cross: the decoding view of an encoder–decoder model's cross-attention;
// generate: the generation timeline over the head view of the chosen step;
// compare: the same head on `text` and `compare-text`, and their difference;
// ablation: knock heads out; the `ablate` attribute knocks heads out in every view) inside
// a shadow root, with its own styles (views.css, attention-view.css) so the
// host page's CSS does not reach in and the widget's does not leak out.
// Everything (worker, WASM, shipped models, styles) is found relative to this
// module's URL. Several widgets share one worker and load each model once; a
// widget does nothing (no worker, no download, no run) until it is scrolled
// into view. In data mode (attention given by `src`, a child JSON script or
// the `data` property; attention-data-mode.js) it draws that instead, with no
// worker and no WASM. Attributes, properties and events: see web/embed/index.html.
// Not here: the views themselves (../views/), the engine (../engine/).
import { h } from '../ui/dom.js';
import { getEngineClient } from '../engine/engine-client.js';
import { LENS_TOP_K, RunLoop, isPair, loadingText, rankHeads, runText, traceHead } from '../run/run-loop.js';
import { ScratchView } from '../scratch/scratch-view.js';
import { checkPreset } from '../scratch/scratch-examples.js';
import { DEFAULT_STATE, Store, decodeState } from '../run/state.js';
import { DataMode } from './attention-data-mode.js';
import { embeddedModel } from './embedded-models.js';
import { PartPicker } from '../ui/attention-parts.js';
import { ablationFrame, rankTranslationHeads, runTranslation, traceTranslation, translationAblation, translationLens } from '../run/translation-run.js';
import { ROLLOUT_DISPLAYS, ROLLOUT_METHODS } from '../attention/rollout.js';
import { isHubReference, parseModelId } from '../hub/hub.js';
import { widgetStyles } from './widget-styles.js';
import { modelRunner } from '../views/compare-view.js';
import { formatHeads, parseHeads, rankingKey } from '../attention/ablation.js';
import '../views/ablation-view.js';
import '../views/decoding-view.js';
import '../views/generation-panel.js';
import '../views/head-view.js';
import '../views/image-view.js';
import { pictureOfFile, runPicture } from '../run/image-run.js';
import '../views/lens-view.js';
import '../views/matrix-view.js';
import '../views/model-view.js';
import '../views/neuron-view.js';
import '../views/rollout-view.js';
import '../views/view-controls.js';

const MODULE_URL = import.meta.url;
const VIEW_ELEMENTS = { image: 'image-view', head: 'head-view', model: 'model-view', matrix: 'matrix-view', rollout: 'rollout-view', lens: 'lens-view', neuron: 'neuron-view', scratch: 'scratch-view', cross: 'decoding-view', generate: 'generation-panel', compare: 'compare-view', ablation: 'ablation-view' };
const STATE_ATTRIBUTES = { model: 'model', hub: 'hub', text: 'text', 'text-b': 'textB', target: 'target', view: 'view', layer: 'layer', heads: 'heads', token: 'token', threshold: 'threshold', theme: 'theme', generate: 'gen', 'generate-step': 'genStep', 'compare-text': 'compareText', ablate: 'ablate', ablation: 'ablation', overlay: 'overlay' };
const MATRIX_ATTRIBUTES = ['tokens', 'x', 'wq', 'wk', 'wv'];

/**
 * URL of a model folder: a shipped model's name ("austen-gpt") is the folder
 * models/<name>/ of the attnplay folder (beside widget/); anything else is a URL (absolute, or
 * relative to the page) of a Hugging Face style folder.
 */
export function modelFolderUrl(model, base = document.baseURI) {
  if (/^[A-Za-z0-9][\w.-]*$/.test(model)) return new URL(`../models/${model}/`, MODULE_URL).href;
  const url = new URL(model, base).href;
  return url.endsWith('/') ? url : `${url}/`;
}

/**
 * What the worker loads for a `model` attribute: { key (the worker's name for
 * it), source }. A name the page registered files for (embedded-models.js)
 * is those files; "hf:ORG/NAME@revision" is a model on the hub `hub`
 * (hub.js); anything else is a folder (modelFolderUrl).
 */
export function widgetModel(model, hub) {
  const files = embeddedModel(model);
  if (files) return { key: `embedded ${model}`, source: files };
  if (!isHubReference(model)) {
    const url = modelFolderUrl(model);
    return { key: url, source: url };
  }
  const ref = { hub, ...parseModelId(model) };
  return { key: `${ref.hub} ${ref.id}@${ref.revision}`, source: ref };
}

// The page's models, shared by every widget: key (widgetModel) -> Promise of
// the load result ({ config, hasTokenizer }); the worker holds each under its
// key, loaded once and kept for the page's lifetime.
const loadedModels = new Map();
const headScores = new Map();

function sharedModel({ key, source }, onProgress) {
  if (!loadedModels.has(key)) {
    const loading = getEngineClient().loadModel(key, source, onProgress).then((loaded) => {
      if (!loaded.hasTokenizer && !loaded.config.imageModel) throw new Error("the model folder has no tokenizer (tokenizer.json, a SentencePiece model such as tokenizer.model or spiece.model, or Marian's source.spm, target.spm and vocab.json), so it cannot read text");
      return loaded;
    });
    loading.catch(() => loadedModels.delete(key)); // a failed load may be retried
    loadedModels.set(key, loading);
  }
  return loadedModels.get(key);
}

function sharedHeadScores(key) {
  if (!headScores.has(key)) headScores.set(key, getEngineClient().analyzeHeads(key));
  return headScores.get(key);
}

/** Author matrices from attributes: JSON arrays; tokens may also be words separated by spaces. */
function parseMatrixAttribute(name, value) {
  if (name === 'tokens' && !value.trim().startsWith('[')) return value.trim().split(/\s+/);
  try {
    return JSON.parse(value);
  } catch {
    throw new Error(`the ${name} attribute is not a JSON array: ${value.slice(0, 40)}`);
  }
}

export class AttentionView extends HTMLElement {
  static get observedAttributes() {
    return [...Object.keys(STATE_ATTRIBUTES), 'picture', 'editable', 'height', 'controls', 'step', 'rollout-method', 'rollout-display', ...MATRIX_ATTRIBUTES, ...DataMode.attributes];
  }

  #store = new Store(DEFAULT_STATE);
  #root;
  #status;
  #controls;
  #slot;
  #textA;
  #textB;
  #views = new Map(); // view name -> element, created on first use
  #visible = false;
  #intersection = null;
  #childObserver = null;
  #quiet = false; // true while a change is not the reader's (no events)
  #model = null; // { key (widgetModel), config } of the loaded model
  #result = null;
  #runs = 0;
  #runLoop = new RunLoop(() => this.#runStep());
  #lastPreset = null;
  #matrixError = null;
  #traceError = null; // the message of a neuron-view trace that failed, until one succeeds
  #data = new DataMode(this); // attention given by the author instead of a model
  #translated = null; // an encoder–decoder model's last run (translation-run.js)
  #partPicker = new PartPicker((name) => this.setAttribute('attention', name));
  #generationHead = null; // the generate view's head view, showing the timeline's step
  #stepResult = null; // the generation step's result while one is shown
  #picture = null; // a vision model's input: { url (the picture attribute), pixels (ImageData) }, or a Promise of it while it loads
  #intactLabels = null; // the picture's labels without knocked-out heads: { picture, topK }

  constructor() {
    super();
    const shadow = this.attachShadow({ mode: 'open' });
    this.#textA = h('textarea', { class: 'text-a', rows: '2', spellcheck: 'false', 'aria-label': 'Text' });
    this.#textB = h('textarea', { class: 'text-b', rows: '2', spellcheck: 'false', 'aria-label': 'Second sentence (B)' });
    this.#controls = h('view-controls', { hidden: true });
    this.#slot = h('div', { class: 'view-slot' });
    this.#status = h('p', { class: 'status', role: 'status' });
    this.#root = h('div', { class: 'root', part: 'root' },
      h('div', { class: 'texts', hidden: true }, this.#textA, this.#textB),
      this.#controls, this.#slot, this.#status);
    shadow.append(...widgetStyles(shadow), this.#root);

    this.#textA.addEventListener('input', () => this.#store.set({ text: this.#textA.value, token: null }));
    this.#textB.addEventListener('input', () => this.#store.set({ textB: this.#textB.value, token: null }));
    // The inner views' own events stay inside; the widget fires its documented ones.
    for (const type of ['token-select', 'trace-request', 'step-change', 'rank-request']) shadow.addEventListener(type, (event) => event.stopPropagation());
    shadow.addEventListener('trace-request', (event) => this.#trace(event.detail));
    shadow.addEventListener('generation-step', (event) => {
      this.#stepResult = event.detail.result;
      if (this.#generationHead) this.#generationHead.result = this.#stepResult;
      this.#quietly(() => this.#store.set({ token: event.detail.query }));
    });
    shadow.addEventListener('generation-clear', () => {
      this.#stepResult = null;
      if (this.#generationHead && this.#result) this.#generationHead.result = this.#result;
    });
    shadow.addEventListener('rank-request', (event) => this.#rank(event.detail));
    this.#store.subscribe((state, changed) => this.#onStateChange(state, changed));
  }

  connectedCallback() {
    this.#applyAttributes(Object.keys(STATE_ATTRIBUTES));
    this.#applyLayout();
    this.#intersection = new IntersectionObserver((entries) => {
      if (!entries.some((entry) => entry.isIntersecting)) return;
      this.#intersection.disconnect();
      this.#visible = true;
      this.#start();
    }, { rootMargin: '100px' });
    this.#intersection.observe(this);
    this.#childObserver = new MutationObserver(() => {
      this.#applyMatrices();
      if (this.#data.changed()) this.#scheduleRun(0);
      else if (this.#model?.config.imageModel && !this.#data.active && this.#pictureUrl() !== this.#picture?.url) this.#scheduleRun(0); // a child <img>'s picture
    });
    this.#childObserver.observe(this, { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ['src'] });
    this.dataset.state ??= 'idle';
  }

  disconnectedCallback() {
    this.#intersection?.disconnect();
    this.#childObserver?.disconnect();
  }

  attributeChangedCallback(name) {
    if (!this.isConnected) return;
    if (name in STATE_ATTRIBUTES) this.#applyAttributes([name]);
    else if (name === 'picture') this.#scheduleRun(0);
    else if (MATRIX_ATTRIBUTES.includes(name)) this.#applyMatrices();
    else if (DataMode.attributes.includes(name)) {
      if (this.#data.changed()) this.#scheduleRun(0);
      else if (name === 'attention' && this.#translated) this.#showPart();
    }
    else this.#applyLayout();
    if (name === 'step') this.#showStep();
    // The generate attribute asks for a generation of the text: a new text or new settings generate again.
    if ((name === 'text' || name === 'generate') && this.hasAttribute('generate')) {
      queueMicrotask(() => { // after the panel has ended the generation of the old text
        this.#applyAttributes(['generate']);
        this.#views.get('generate')?.run();
      });
    }
    if (name === 'rollout-method' || name === 'rollout-display') this.#applyRolloutAttributes();
  }

  // ---- JS API: properties mirror the attributes; reading gives the current state.
  get model() { return this.getAttribute('model') ?? DEFAULT_STATE.model; }
  set model(value) { this.setAttribute('model', value); }
  /** Where hf: models come from (default https://huggingface.co). */
  get hub() { return this.#store.state.hub; }
  set hub(value) { this.setAttribute('hub', value); }
  get text() { return this.#store.state.text; }
  set text(value) { this.setAttribute('text', value); }
  get textB() { return this.#store.state.textB; }
  set textB(value) { this.setAttribute('text-b', value); }
  /** An encoder–decoder model's target text ('' = the model's own translation of `text`). */
  get target() { return this.#store.state.target; }
  set target(value) { this.setAttribute('target', value); }
  /** The compare view's text B (the `compare-text` attribute). */
  get compareText() { return this.#store.state.compareText; }
  set compareText(value) { this.setAttribute('compare-text', value); }
  /** Settings of the generate view's generation (the `generate` attribute: "20" or "20:t0.8:k40:p0.95:s7"), or null. */
  get generate() { return this.#store.state.gen; }
  set generate(value) {
    if (value === null || value === undefined) this.removeAttribute('generate');
    else this.setAttribute('generate', value);
  }
  get view() { return this.#store.state.view; }
  set view(value) { this.setAttribute('view', value); }
  get layer() { return this.#store.state.layer; }
  set layer(value) { this.setAttribute('layer', String(value)); }
  /** Selected heads (0-based), or null for every head of the layer. */
  get heads() { return this.#store.state.heads; }
  set heads(value) {
    if (value === null || value === undefined) this.removeAttribute('heads');
    else this.setAttribute('heads', value.join(','));
  }
  /** Locked token index, or null. */
  get token() { return this.#store.state.token; }
  set token(value) {
    if (value === null || value === undefined) this.removeAttribute('token');
    else this.setAttribute('token', String(value));
  }
  get threshold() { return this.#store.state.threshold; }
  set threshold(value) { this.setAttribute('threshold', String(value)); }
  /** Knocked-out heads as "LAYER:HEAD,..." (0-based; '' for none), in every view. */
  get ablate() { return formatHeads(this.#store.state.ablate); }
  set ablate(value) { this.setAttribute('ablate', Array.isArray(value) ? formatHeads(value) : String(value)); }
  /** 'zero' (the default) or 'mean': what an ablated head's output becomes. */
  get ablation() { return this.#store.state.ablation; }
  set ablation(value) { this.setAttribute('ablation', value); }
  get theme() { return this.#store.state.theme; }
  set theme(value) { this.setAttribute('theme', value); }
  /** What the image view's overlay shows: 'attention' (the layer's), 'rollout' or 'flow' (over all layers). */
  get overlay() { return this.#store.state.overlay; }
  set overlay(value) { this.setAttribute('overlay', value); }
  get editable() { return this.hasAttribute('editable'); }
  set editable(value) { this.toggleAttribute('editable', Boolean(value)); }
  get height() { return this.getAttribute('height'); }
  set height(value) { this.setAttribute('height', String(value)); }
  /** The rollout view's method: 'rollout' (the default) or 'flow'. */
  get rolloutMethod() { return this.#views.get('rollout')?.method ?? this.#rolloutAttribute('rollout-method', ROLLOUT_METHODS); }
  set rolloutMethod(value) { this.setAttribute('rollout-method', value); }
  /** The rollout view's display: 'matrix' (the default, a heatmap) or 'lines' (the head view's lines). */
  get rolloutDisplay() { return this.#views.get('rollout')?.display ?? this.#rolloutAttribute('rollout-display', ROLLOUT_DISPLAYS); }
  set rolloutDisplay(value) { this.setAttribute('rollout-display', value); }
  /** The author's example for the scratch view ({ tokens, x, wq, wk, wv }, or { source, target, xEncoder, xDecoder, wq, wk, wv }), or null. */
  get matrices() { return this.#lastPreset; }
  set matrices(value) {
    if (value?.xEncoder !== undefined) throw new TypeError('a cross-attention example (xEncoder, xDecoder, ...) is given as a child <script type="application/json">; the matrices property takes { tokens, x, wq, wk, wv }');
    for (const name of MATRIX_ATTRIBUTES) {
      if (value?.[name] === undefined) this.removeAttribute(name);
      else this.setAttribute(name, JSON.stringify(value[name]));
    }
  }

  /** Attention data to draw instead of a model's (data mode; see attention-data-source.js), or null. */
  get data() { return this.#data.property; }
  set data(value) {
    this.#data.property = value;
    if (this.#data.changed()) this.#scheduleRun(0);
  }

  /** The last run's { tokens, attentions: { data, shape [L, H, T, T] }, texts, causal, modelType }, or null. */
  get result() { return this.#result; }
  /** Forward runs this widget has made (0 until it is scrolled into view). */
  get runs() { return this.#runs; }
  /** The element drawing the current view (a head-view, model-view, ..., the generation-panel of the generate view), once shown. */
  get viewElement() { return this.#views.get(this.#store.state.view) ?? null; }

  // ---- attributes -> state
  #applyAttributes(names) {
    const params = new URLSearchParams();
    for (const [attribute, key] of Object.entries(STATE_ATTRIBUTES)) {
      const value = this.getAttribute(attribute);
      if (value !== null) params.set(key, value);
    }
    const parsed = decodeState(params.toString());
    const patch = {};
    for (const name of names) patch[STATE_ATTRIBUTES[name]] = parsed[STATE_ATTRIBUTES[name]];
    this.#quietly(() => this.#store.set(patch));
  }

  #quietly(change) {
    this.#quiet = true;
    try {
      change();
    } finally {
      this.#quiet = false;
    }
  }

  #applyLayout() {
    const editable = this.hasAttribute('editable') && !this.#data.active && !this.#model?.config.imageModel;
    this.#textA.closest('.texts').hidden = !editable;
    this.#textB.hidden = !this.#model || this.#model.config.causal || Boolean(this.#model.config.encoderDecoder);
    this.#controls.hidden = !this.hasAttribute('controls') || ['scratch', 'lens', 'image'].includes(this.#store.state.view);
    const height = this.getAttribute('height');
    const length = height && /^\d+(\.\d+)?$/.test(height) ? `${height}px` : height;
    if (length && CSS.supports('height', length)) this.#slot.style.setProperty('max-height', length);
    else this.#slot.style.removeProperty('max-height');
  }

  // ---- state changes (from attributes, the JS API or the reader)
  #onStateChange(state, changed) {
    if (changed.includes('theme')) this.#root.dataset.theme = state.theme;
    if (changed.includes('text') && this.#textA.value !== state.text) this.#textA.value = state.text;
    if (changed.includes('textB') && this.#textB.value !== state.textB) this.#textB.value = state.textB;
    if (changed.includes('view')) {
      this.#applyLayout();
      if (this.#translated) this.#showPart();
      else this.#showView();
      // The logit lens is computed only while it is shown: a run brings it.
      if (state.view === 'lens' && this.#result && !this.#result.lens && !this.#data.active && !this.#translated) this.#scheduleRun(0);
    }
    if (changed.includes('model') || changed.includes('hub')) {
      this.#model = null;
      this.#result = null;
      this.#translated = null;
      this.#partPicker.element.remove();
      if (this.#views.has('ablation')) this.#views.get('ablation').ranking = null; // the previous model's ranking
    }
    if (changed.some((key) => ['model', 'hub', 'text', 'textB', 'target'].includes(key))) this.#scheduleRun(this.#quiet ? 0 : undefined);
    // Ablated heads change every view's attention; the ablation view also needs the intact run. An encoder–decoder's
    // heads are knocked out in the ablation view only, which compares its translation with and without them.
    const ablationChanged = changed.includes('ablate') || changed.includes('ablation');
    if (this.#translated && ablationChanged) this.#readTranslationAblation();
    else if (ablationChanged || (changed.includes('view') && state.view === 'ablation' && this.#result && !this.#result.ablation && !this.#translated)) this.#scheduleRun(0);
    if (changed.includes('ablate') && !this.#quiet) {
      this.dispatchEvent(new CustomEvent('ablation-change', { bubbles: true, composed: true, detail: { ablate: formatHeads(state.ablate), ablation: state.ablation } }));
    }
    if (this.#quiet) return;
    // Reader's choices: the documented events.
    if (changed.includes('token')) {
      const token = state.token;
      const display = token === null ? null : this.#result?.tokens[token]?.display ?? null;
      this.dispatchEvent(new CustomEvent('token-select', { bubbles: true, composed: true, detail: { token, display, layer: state.layer } }));
    }
    if (changed.includes('heads') || changed.includes('layer')) {
      this.dispatchEvent(new CustomEvent('head-select', { bubbles: true, composed: true, detail: { layer: state.layer, heads: state.heads } }));
    }
  }

  // ---- work, once visible
  #start() {
    this.#textA.value = this.#store.state.text;
    this.#textB.value = this.#store.state.textB;
    this.#root.dataset.theme = this.#store.state.theme;
    this.#controls.store = this.#store;
    this.#showView();
    this.#applyMatrices();
    this.#scheduleRun(0);
  }

  #viewElement(view) {
    if (!this.#views.has(view)) {
      const element = document.createElement(VIEW_ELEMENTS[view]);
      if (view !== 'scratch') element.store = this.#store;
      else if (this.#lastPreset) element.preset = this.#lastPreset;
      if (view === 'rollout') this.#applyRolloutAttributes(element);
      if (view === 'generate') {
        this.#generationHead = document.createElement('head-view');
        this.#generationHead.store = this.#store;
      }
      this.#views.set(view, element);
      this.#connectModel(view);
    }
    return this.#views.get(view);
  }

  // The generate and compare views run the loaded model themselves: they get it once it is there.
  #connectModel(only = null) {
    const model = this.#model;
    const usable = model && !this.#data.active;
    const generate = this.#views.get('generate');
    if (generate && (only === null || only === 'generate')) generate.engine = usable ? { client: getEngineClient(), key: model.key, config: model.config } : null;
    const compare = this.#views.get('compare');
    if (compare && (only === null || only === 'compare')) {
      compare.runner = usable ? modelRunner(getEngineClient(), model.key, model.config) : null;
    }
  }

  #showView() {
    if (!this.#visible) return;
    const { view } = this.#store.state;
    const unavailable = this.#data.unavailable(this.getAttribute('view') ?? view);
    if (unavailable) {
      this.#slot.replaceChildren(unavailable);
      return;
    }
    const element = this.#viewElement(view);
    if (view === 'generate') {
      if (element.parentNode !== this.#slot) this.#slot.replaceChildren(element, this.#generationHead);
      const shown = this.#stepResult ?? this.#result;
      if (shown) this.#generationHead.result = shown;
      if (!this.#model && !this.#data.active) this.#scheduleRun(0);
      return;
    }
    if (element.parentNode !== this.#slot) this.#slot.replaceChildren(element);
    // With a model, rollout and flow are computed in the engine worker; attention data alone is rolled out here.
    if (view === 'rollout') element.compute = this.#data.active ? null : (attentions, method) => getEngineClient().rollout(attentions, method);
    if (view === 'compare') {
      if (!this.#model && !this.#data.active) this.#scheduleRun(0);
      return;
    }
    if (view === 'scratch') {
      this.#applyMatrices();
      this.#showStep();
      return;
    }
    if (this.#result) element.result = this.#result;
    if (view === 'lens' && this.#translated) this.#readTranslationLens();
    if (view === 'ablation' && this.#translated) this.#readTranslationAblation();
    if (view === 'model' && this.#data.active) element.headScores = this.#data.headScores;
    else if (view === 'model' && this.#model && !this.#model.config.encoderDecoder) sharedHeadScores(this.#model.key).then((scores) => { element.headScores = scores; }, () => {});
    if (!this.#model && !this.#data.active) this.#scheduleRun(0);
  }

  // An encoder–decoder's logit lens reads its decoder (whatever the `attention` attribute shows): once per translation.
  async #readTranslationLens() {
    const run = this.#translated;
    try {
      const lensResult = await translationLens(getEngineClient(), this.#model.key, run, LENS_TOP_K);
      if (run === this.#translated && this.#store.state.view === 'lens') this.#views.get('lens').result = lensResult;
    } catch (error) {
      if (run === this.#translated) this.#setStatus(error.message, 'error');
    }
  }

  // An encoder–decoder's ablation view: its target's loss and predictions and its translation, with and without the
  // state's heads (of any part); the grids first, the comparison when the worker answers.
  async #readTranslationAblation() {
    const run = this.#translated;
    const view = this.#views.get('ablation');
    if (!view || this.#store.state.view !== 'ablation') return;
    const { ablate, ablation } = this.#store.state;
    const current = () => run === this.#translated && this.#store.state.view === 'ablation' && ablate === this.#store.state.ablate && ablation === this.#store.state.ablation;
    const frame = ablationFrame(run, this.#model.config);
    if (view.result?.tokens !== frame.tokens) view.result = frame;
    try {
      const ablationResult = await translationAblation(getEngineClient(), this.#model.key, run, this.#model.config, this.#store.state, {
        onComparison: (partial) => { if (current()) view.result = partial; },
      });
      if (current()) view.result = ablationResult;
    } catch (error) {
      if (current()) this.#setStatus(error.message, 'error');
    }
  }

  // A rollout view attribute (rollout-method, rollout-display), or the first of its
  // choices (rollout, matrix) when it is missing or not one of them.
  #rolloutAttribute(name, choices) {
    const value = this.getAttribute(name);
    return choices.includes(value) ? value : choices[0];
  }

  // The rollout-method and rollout-display attributes, to the rollout view if there is one.
  #applyRolloutAttributes(rollout = this.#views.get('rollout')) {
    if (!rollout) return;
    rollout.method = this.#rolloutAttribute('rollout-method', ROLLOUT_METHODS);
    rollout.display = this.#rolloutAttribute('rollout-display', ROLLOUT_DISPLAYS);
  }

  #showStep() {
    const scratch = this.#views.get('scratch');
    if (!scratch?.isConnected) return;
    const step = this.getAttribute('step');
    const index = ScratchView.stepIds.indexOf(step);
    // An author's example opens where it is used: the scaling step, or cross-attention for an alignment example.
    const fallback = this.#lastPreset ? ScratchView.stepIds.indexOf(this.#lastPreset.xEncoder ? 'cross-attention' : 'scaling') : 0;
    scratch.showStep(index >= 0 ? index : fallback);
  }

  /** The author's matrices from the child <script type="application/json"> or the attributes. */
  #readMatrices() {
    const script = this.querySelector('script[type="application/json"]');
    if (script) {
      try {
        return JSON.parse(script.textContent);
      } catch (error) {
        throw new Error(`the <script type="application/json"> inside the widget is not valid JSON (${error.message})`);
      }
    }
    if (!MATRIX_ATTRIBUTES.some((name) => this.hasAttribute(name))) return null;
    return Object.fromEntries(MATRIX_ATTRIBUTES.filter((name) => this.hasAttribute(name))
      .map((name) => [name, parseMatrixAttribute(name, this.getAttribute(name))]));
  }

  #applyMatrices() {
    let preset;
    try {
      const raw = this.#readMatrices();
      preset = raw === null || DataMode.isData(raw) ? null : checkPreset(raw);
    } catch (error) {
      this.#lastPreset = null;
      this.#matrixError = `Cannot use the example's matrices: ${error.message}`;
      this.#setStatus(this.#matrixError, 'error');
      return;
    }
    this.#matrixError = null;
    if (JSON.stringify(preset) === JSON.stringify(this.#lastPreset)) return;
    this.#lastPreset = preset;
    const scratch = this.#views.get('scratch');
    if (preset && scratch) {
      scratch.preset = preset;
      this.#showStep();
    }
    if (this.#store.state.view === 'scratch' && this.#visible) this.#setStatus('', 'ready');
  }

  #setStatus(text, state) {
    this.#status.textContent = text;
    this.#status.dataset.state = state;
    this.dataset.state = state;
  }

  #scheduleRun(delay) {
    if (this.#visible) this.#runLoop.schedule(delay);
  }

  // One step of the run loop (run-loop.js): loads the model if needed and runs the latest text.
  async #runStep() {
    if (this.#store.state.view === 'scratch') {
      if (this.#matrixError) this.#setStatus(this.#matrixError, 'error');
      else this.#setStatus('', 'ready');
      return false; // the scratch view needs no model; it runs when another view is shown
    }
    try {
      await this.#runOnce();
    } catch (error) {
      this.#setStatus(error.message, 'error');
    }
    return true;
  }

  async #runOnce() {
    if (this.#data.active) {
      await this.#showData();
      return;
    }
    const { model: name, hub, text, textB } = this.#store.state;
    let wanted;
    try {
      wanted = widgetModel(name, hub);
    } catch (error) {
      throw new Error(`Could not load the model ${name}: ${error.message}`);
    }
    if (this.#model?.key !== wanted.key) {
      this.#setStatus(`Loading ${name}…`, 'loading');
      let loaded;
      try {
        loaded = await sharedModel(wanted, (download) => {
          this.#status.textContent = loadingText(name, download);
        });
      } catch (error) {
        throw new Error(`Could not load the model ${name}: ${error.message}`);
      }
      const { model: now, hub: nowHub } = this.#store.state;
      if (now !== name || nowHub !== hub) return; // the model changed meanwhile
      this.#model = { key: wanted.key, config: loaded.config };
      this.#applyLayout();
      this.#connectModel();
    }
    const { config } = this.#model;
    const { ablate, ablation, view } = this.#store.state;
    const ablateAttribute = this.getAttribute('ablate');
    if (ablateAttribute && ablate.length === 0) {
      try {
        parseHeads(ablateAttribute);
      } catch (error) {
        throw new Error(`The ablate attribute: ${error.message}`);
      }
    }
    if (config.encoderDecoder) {
      await this.#translate();
      return;
    }
    if (config.imageModel) {
      await this.#runPicture();
      return;
    }
    const lens = view === 'lens' ? LENS_TOP_K : 0;
    const { raw: r, result, note } = await runText(getEngineClient(), this.#model.key, config, { text, textB, ablate, ablation }, { lens, compare: view === 'ablation' });
    this.#result = result;
    this.#runs += 1;
    this.dataset.runs = String(this.#runs);
    this.#controls.configure({ layers: config.layers, pairs: isPair(config, textB) });
    if (this.#store.state.layer >= config.layers) this.#quietly(() => this.#store.set({ layer: 0 }));
    this.#showView();
    this.#setStatus(note, 'ready');
    this.dispatchEvent(new CustomEvent('attention-ready', { bubbles: true, composed: true, detail: { tokens: r.tokens.map((t) => t.display), layers: config.layers, heads: config.heads } }));
  }

  // The picture a vision model reads: the `picture` attribute, else the src of a child <img> (which shows
  // before the widget runs, and where scripts do not), as written (relative to the page).
  #pictureUrl() {
    return this.getAttribute('picture') ?? this.querySelector(':scope > img[src]')?.getAttribute('src') ?? null;
  }

  // A vision model on the picture #pictureUrl names, fetched and decoded once per URL; the labels without the
  // knocked-out heads are kept per picture (before → after).
  async #runPicture() {
    const { key, config } = this.#model;
    const url = this.#pictureUrl();
    if (!url) throw new Error('This is a vision model: give the widget a picture, picture="URL" or a child <img src="URL"> (PNG, JPEG, ...).');
    if (this.#picture?.url !== url) {
      let pixels;
      try {
        const response = await fetch(new URL(url, document.baseURI));
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        pixels = await pictureOfFile(await response.blob());
      } catch (error) {
        throw new Error(`Could not read the picture ${url}: ${error.message}`);
      }
      if (this.#pictureUrl() !== url) return; // another picture meanwhile: its own run follows
      this.#picture = { url, pixels };
    }
    const shown = this.#picture;
    const { ablate, ablation } = this.#store.state;
    const intact = this.#intactLabels?.picture === shown ? this.#intactLabels.topK : null;
    const { raw, result, intactTopK } = await runPicture(getEngineClient(), key, config, shown.pixels, { ablate, ablation }, intact);
    this.#intactLabels = { picture: shown, topK: intactTopK };
    this.#result = result;
    this.#runs += 1;
    this.dataset.runs = String(this.#runs);
    this.#controls.configure({ layers: config.layers, pairs: false });
    if (this.#store.state.layer >= config.layers) this.#quietly(() => this.#store.set({ layer: 0 }));
    if (!this.hasAttribute('view') && this.#store.state.view === DEFAULT_STATE.view) this.#quietly(() => this.#store.set({ view: 'image' }));
    this.#showView();
    this.#setStatus('', 'ready');
    this.dispatchEvent(new CustomEvent('attention-ready', { bubbles: true, composed: true, detail: { tokens: raw.tokens, labels: raw.topK?.labels ?? [], layers: config.layers, heads: config.heads } }));
  }

  // An encoder–decoder model: its own translation of the text, each token
  // drawn as it is written when the decoding view is shown, or the `target`
  // attribute's text; then the part the `attention` attribute names.
  async #translate() {
    const { key, config } = this.#model;
    const { text, target } = this.#store.state;
    const run = await runTranslation(getEngineClient(), key, config, { text, target }, {
      onStep: (partial) => {
        if (this.#store.state.view !== 'cross') return;
        this.#result = partial;
        this.#showView();
      },
    });
    this.#translated = run;
    this.#runs += 1;
    this.dataset.runs = String(this.#runs);
    this.#showPart();
    this.#setStatus(run.note, 'ready');
    this.dispatchEvent(new CustomEvent('attention-ready', { bubbles: true, composed: true, detail: { tokens: run.parts.cross.result.tokens.map((t) => t.display), translation: run.translation, layers: config.decoderLayers, heads: config.decoderHeads } }));
  }

  // The part of the last translation to show: cross-attention in the decoding view, else the `attention` attribute's (cross by default).
  #shownPart() {
    const asked = this.getAttribute('attention');
    return this.#store.state.view !== 'cross' && this.#translated.order.includes(asked) ? asked : 'cross';
  }

  #showPart() {
    const run = this.#translated;
    const name = this.#shownPart();
    const part = run.parts[name];
    this.#result = part.result;
    this.#controls.configure({ layers: part.layers, pairs: false });
    const patch = { filter: part.result.filter ?? 'all' };
    if (this.#store.state.layer >= part.layers) patch.layer = 0;
    this.#quietly(() => this.#store.set(patch));
    this.#partPicker.show(run.order, name);
    if (this.#partPicker.element.nextSibling !== this.#controls) this.#controls.before(this.#partPicker.element);
    this.#partPicker.element.hidden = ['cross', 'scratch', 'lens', 'ablation'].includes(this.#store.state.view); // the lens reads the decoder; the ablation view has a grid per part
    this.#showView();
  }

  // Data mode: the author's attention in place of a run (no worker, no WASM).
  async #showData() {
    this.#setStatus('Reading the attention data…', 'loading');
    const shown = await this.#data.load(); // { result, layers, heads, warning, parts }
    this.#result = shown.result;
    this.#applyLayout();
    this.#controls.configure({ layers: shown.layers, pairs: !shown.result.filter && shown.result.tokens.some((t) => t.typeId === 1) });
    const patch = { filter: shown.result.filter ?? 'all' };
    if (this.#store.state.layer >= shown.layers) patch.layer = 0;
    // A vision transformer's data opens on its picture unless the view is given.
    if (shown.result.picture && !this.hasAttribute('view') && this.#store.state.view === DEFAULT_STATE.view) patch.view = 'image';
    this.#quietly(() => this.#store.set(patch));
    this.#data.showPicker(this.#controls);
    this.#showView();
    this.#setStatus(shown.warning ?? '', 'ready');
    this.dispatchEvent(new CustomEvent('attention-ready', { bubbles: true, composed: true, detail: { tokens: shown.result.tokens.map((t) => t.display), layers: shown.layers, heads: shown.heads } }));
  }

  async #rank({ ablation }) {
    const view = this.#views.get('ablation');
    if (!this.#model || !view) return;
    const key = rankingKey(this.#store.state);
    try {
      const run = this.#translated;
      const ranking = run ? await rankTranslationHeads(getEngineClient(), this.#model.key, run, this.#store.state)
        : await rankHeads(getEngineClient(), this.#model.key, this.#model.config, this.#store.state);
      view.ranking = { ...ranking, mode: ablation, key };
    } catch (error) {
      view.ranking = error;
    }
  }

  async #trace(request) {
    if (this.#data.active) {
      this.#views.get('neuron').trace = this.#data.trace(request);
      return;
    }
    if (!this.#model) return;
    try {
      const [run, part] = [this.#translated, this.#translated && this.#shownPart()];
      const trace = run ? await traceTranslation(getEngineClient(), this.#model.key, run, part, request)
        : await traceHead(getEngineClient(), this.#model.key, this.#model.config, this.#store.state, request);
      if (run && (run !== this.#translated || part !== this.#shownPart())) return; // another translation or part since
      this.#views.get('neuron').trace = trace;
      if (this.#traceError !== null && this.#status.textContent === this.#traceError) this.#setStatus('', 'ready'); // the last trace's error, now resolved
      this.#traceError = null;
    } catch (error) {
      this.#traceError = error.message;
      this.#setStatus(error.message, 'error');
    }
  }
}

if (!customElements.get('attention-view')) customElements.define('attention-view', AttentionView);
