// The playground page: wires the engine worker, the shared Store (kept in the
// URL hash so a link restores the view), the model picker (shipped models or
// the reader's own folder or URL), the text inputs (live, debounced), the
// views, the predictions panel, the status line and the exports. For an
// encoder–decoder model it translates instead (translation-run.js): the target
// tokens appear as they are written, with the decoding view following them,
// and a picker chooses the attention part the other views show.
// Not here: computation (engine-worker.js), drawing (the *-view.js elements),
// state encoding (state.js), file formats (export.js).
import { getEngineClient } from './engine-client.js';
import { h } from './dom.js';
import { attentionJson, download, encoderDecoderJson, toNpy } from './export.js';
import { exportCaption, framedCanvas, framedSvg } from './export-frame.js';
import { attentionPage } from './page-export.js';
import { headColour } from './palette.js';
import { marksNote } from './token-marks.js';
import { RunLoop, isPair, loadingText, runText, traceHead } from './run-loop.js';
import { PartPicker } from './attention-parts.js';
import { runTranslation } from './translation-run.js';
import { Store, decodeLink, decodeState, encodeLink } from './state.js';
import { pageBackground, viewColours } from './view-support.js';
import './attention-table.js';
import './decoding-view.js';
import './head-view.js';
import './matrix-view.js';
import './model-view.js';
import './neuron-view.js';
import './rollout-view.js';
import './scratch-view.js';
import './view-controls.js';

const $ = (selector) => document.querySelector(selector);
const client = getEngineClient();
let linkProblem = null; // a damaged link's message, shown once the page is up
async function stateOfLink(hash) {
  try {
    return await decodeLink(hash);
  } catch (error) {
    linkProblem = `Part of this link could not be read: ${error.message}.`;
    return decodeState(hash.replace(/(^#|&)z(text|textB|target)=[^&]*/g, ''));
  }
}
const store = new Store(await stateOfLink(location.hash));
const views = ['head-view', 'model-view', 'matrix-view', 'rollout-view', 'neuron-view', 'attention-table'].map((name) => $(name));
const scratch = $('scratch-view');
const decoding = $('decoding-view'); // always the cross-attention of an encoder–decoder model
const controls = $('#controls');
const OWN_MODEL = '__own__';

let engineInfo = null;
let model = null; // the model shown: { key (the menu's value), name, config }
let result = null; // what the views show
let lastRun = null; // the last run's raw result (predictions follow the locked token)
let translated = null; // an encoder–decoder model's last run: { parts, order, translation, source, raw, ms }
let shipped = [];

// ---- state <-> URL -------------------------------------------------------
// The URL follows the state a moment after it settles (history.replaceState
// of a long link costs ~15 ms, too much for every layer change or keystroke),
// asynchronously (long texts are deflated); only the latest write lands.
// body[data-link] is "pending" from a change until its link is written.
const LINK_DELAY = 250; // ms
let linkWrites = 0;
let linkTimer = null;
async function writeLink() {
  clearTimeout(linkTimer);
  const write = ++linkWrites;
  const hash = await encodeLink(store.state);
  if (write !== linkWrites) return;
  if (`#${hash}` !== location.hash && !(hash === '' && location.hash === '')) history.replaceState(null, '', hash ? `#${hash}` : location.pathname);
  document.body.dataset.link = 'written';
}
store.subscribe(() => {
  document.body.dataset.link = 'pending';
  clearTimeout(linkTimer);
  linkTimer = setTimeout(writeLink, LINK_DELAY);
});
window.addEventListener('hashchange', async () => store.set(await stateOfLink(location.hash)));

// ---- status ----------------------------------------------------------------
function setStatus(text, state = 'ready') {
  const status = $('#engine-status');
  status.textContent = text;
  status.dataset.state = state;
}

function describeStatus(ms) {
  const c = model.config;
  if (c.encoderDecoder) {
    const { raw } = translated;
    setStatus(`${model.name} · ${raw.sourceTokens.length} source → ${raw.decoderTokens.length - 1} target tokens · encoder ${c.encoderLayers} × ${c.encoderHeads}, decoder ${c.decoderLayers} × ${c.decoderHeads} (layers × heads) · WASM SIMD ${engineInfo.simd ? 'on' : 'off'} · ${ms.toFixed(1)} ms`);
    return;
  }
  const tokens = result?.tokens.length ?? 0;
  setStatus(`${model.name} · ${tokens} tokens · ${c.layers} layers × ${c.heads} heads · WASM SIMD ${engineInfo.simd ? 'on' : 'off'} · forward ${ms.toFixed(1)} ms`);
}

function showModelError(message) {
  const box = $('#model-error');
  box.hidden = !message;
  box.textContent = message ?? '';
}

/** What the page shows when there is nothing to show: why, beside the model picker. */
function showModelNote(message) {
  const note = $('#model-note');
  note.hidden = !message;
  note.textContent = message ?? '';
}

// ---- views -----------------------------------------------------------------
for (const view of views) view.store = store;
decoding.store = store;
controls.store = store;
const partPicker = new PartPicker((part) => store.set({ part, token: null }));
controls.before(partPicker.element);

function showView() {
  const { view } = store.state;
  for (const tab of document.querySelectorAll('[role=tab]')) {
    const selected = tab.dataset.view === view;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
  }
  for (const panel of document.querySelectorAll('[role=tabpanel]')) panel.hidden = panel.dataset.view !== view;
  const modelViews = view !== 'scratch';
  const encoderDecoder = Boolean(model?.config.encoderDecoder);
  // Without a result (no model yet, or no text) the model views show nothing rather than stale drawings.
  controls.hidden = !modelViews || !result;
  for (const element of views) element.hidden = !result;
  decoding.hidden = !translated && !decoding.result;
  // Encoder–decoder models: the Decoding tab and the part picker; no neuron view or predictions (nor for the others a Decoding tab).
  $('[role=tab][data-view="cross"]').hidden = !encoderDecoder;
  $('[role=tab][data-view="neuron"]').hidden = encoderDecoder;
  partPicker.element.hidden = !encoderDecoder || !translated || !modelViews || view === 'cross';
  // The table lists one layer's weights: not what the model view (all layers), the rollout view (layers combined) or the decoding view (its own table) shows.
  $('.table-alt').hidden = !modelViews || ['model', 'rollout', 'cross'].includes(view) || !result;
  // The from-scratch mode has no model output: no predictions, images or attention files.
  for (const selector of ['.predictions', '#export-svg', '#export-png', '#export-json', '#export-npy']) $(selector).hidden = !modelViews;
  if (encoderDecoder) $('.predictions').hidden = true;
  // The decoding view is a page of its own (HTML, not a picture): no PNG or SVG of it.
  if (view === 'cross') for (const selector of ['#export-svg', '#export-png']) $(selector).hidden = true;
}

document.querySelector('.view-tabs').addEventListener('click', (event) => {
  const tab = event.target.closest('[role=tab]');
  if (tab) store.set({ view: tab.dataset.view });
});
document.querySelector('.view-tabs').addEventListener('keydown', (event) => {
  const tabs = [...document.querySelectorAll('[role=tab]')];
  const index = tabs.findIndex((tab) => tab.dataset.view === store.state.view);
  const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
  if (!step) return;
  const next = tabs[(index + step + tabs.length) % tabs.length];
  store.set({ view: next.dataset.view });
  next.focus();
});

function applyTheme() {
  const { theme } = store.state;
  if (theme === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  $('#theme').value = theme;
}
$('#theme').addEventListener('change', (event) => store.set({ theme: event.target.value }));

store.subscribe((state, changed) => {
  if (changed.includes('view')) showView();
  if (changed.includes('theme')) applyTheme();
  if (changed.includes('text') || changed.includes('textB') || changed.includes('target')) runs.schedule();
  if (changed.includes('part') && translated) showPart();
  // The Decoding tab is about cross-attention: the layer menu then lists the decoder's layers.
  if (changed.includes('view') && state.view === 'cross' && translated && state.part !== 'cross') store.set({ part: 'cross', token: null });
  if (changed.includes('model')) selectModel(state.model);
  if (changed.includes('step')) scratch.showStep(state.step - 1);
});
scratch.addEventListener('step-change', (event) => store.set({ step: event.detail.step + 1 }));
scratch.showStep(store.state.step - 1);

// ---- running the model (the loop itself: run-loop.js) ------------------------

/** No result to show (empty text, a failed run): views, predictions and token count go, with the reason. */
function clearResult(reason) {
  result = null;
  lastRun = null;
  translated = null;
  decoding.result = null;
  $('#translation').hidden = true;
  $('#predictions').replaceChildren();
  $('#token-marks').textContent = '';
  $('#run-note').textContent = reason;
  const c = model.config;
  const shape = c.encoderDecoder ? `encoder ${c.encoderLayers} × ${c.encoderHeads}, decoder ${c.decoderLayers} × ${c.decoderHeads} (layers × heads)` : `${c.layers} layers × ${c.heads} heads`;
  setStatus(`${model.name} · ${shape} · WASM SIMD ${engineInfo.simd ? 'on' : 'off'}`);
  showView();
}

// The part the picker chooses (cross-attention by default) in every view but the decoding view, which always shows cross-attention.
function showPart() {
  const name = translated.order.includes(store.state.part) ? store.state.part : 'cross';
  const part = translated.parts[name];
  result = part.result;
  for (const view of views) view.result = result;
  const patch = { filter: result.filter ?? 'all' };
  if (store.state.layer >= part.layers) patch.layer = 0;
  store.set(patch);
  controls.configure({ layers: part.layers, pairs: false });
  partPicker.show(translated.order, name);
  showView();
}

// The translation line: the target tokens as they are written, then the translated text.
function showTranslation(tokens, text = null) {
  $('#translation').hidden = false;
  const output = $('#translation output');
  if (text !== null) output.replaceChildren(text);
  else output.replaceChildren(...tokens.map((token) => h('span', { class: 'translation-token' }, token.display)));
}

// One run of an encoder–decoder model: its own translation, written token by token, or the reader's target.
async function runEncoderDecoder() {
  const run = await runTranslation(client, 'model', model.config, store.state, {
    onSource: () => showTranslation([]),
    onStep: (partial, steps) => {
      decoding.result = partial;
      decoding.hidden = false;
      showTranslation(steps);
    },
  });
  translated = run;
  decoding.result = run.parts.cross.result;
  showTranslation([], run.translation ?? run.raw.decoderTokens.slice(1).map((token) => token.display).join(' '));
  showPart();
  $('#token-marks').textContent = marksNote(run.parts.cross.result.tokens.map((token) => token.display));
  $('#run-note').textContent = run.note;
  describeStatus(run.ms);
  document.body.dataset.run = String(Number(document.body.dataset.run ?? 0) + 1);
}

// One run of the latest text with the model shown (the worker holds it as 'model').
const runs = new RunLoop(async () => {
  if (!model) return false; // loadModel runs once the model is there
  try {
    if (model.config.encoderDecoder) {
      await runEncoderDecoder();
      return true;
    }
    translated = null;
    const { raw, result: shown, note } = await runText(client, 'model', model.config, store.state, { topK: 5 });
    result = shown;
    for (const view of views) view.result = result;
    showView();
    controls.configure({ layers: model.config.layers, pairs: isPair(model.config, store.state.textB) });
    if (store.state.layer >= model.config.layers) store.set({ layer: 0 });
    renderPredictions(raw);
    const predicted = raw.predictions.flatMap((p) => p.top.map((item) => item.display));
    $('#token-marks').textContent = marksNote([...result.tokens.map((token) => token.display), ...predicted]);
    $('#run-note').textContent = note;
    describeStatus(raw.ms);
    document.body.dataset.run = String(Number(document.body.dataset.run ?? 0) + 1);
  } catch (error) {
    clearResult(error.message);
  }
  return true;
});

$('neuron-view').addEventListener('trace-request', async (event) => {
  try {
    $('neuron-view').trace = await traceHead(client, 'model', model.config, store.state, event.detail);
  } catch (error) {
    $('#run-note').textContent = error.message;
  }
});

function renderPredictions(r) {
  const panel = $('#predictions');
  const tokens = r.tokens;
  if (!r.predictions.length) {
    panel.replaceChildren(h('p', { class: 'hint' }, model.config.causal
      ? 'Next-token predictions appear here.'
      : 'Write [MASK] in the text to see what the model fills in.'));
    return;
  }
  const locked = store.state.token;
  const rows = model.config.causal
    ? r.predictions.filter((p) => (locked === null ? p.position === tokens.length - 1 : p.position === locked))
    : r.predictions;
  panel.replaceChildren(...rows.map((p) => h('figure', { class: 'prediction' },
    h('figcaption', {}, model.config.causal ? `After “${tokens[p.position].display}”` : `[MASK] at token ${p.position + 1}`),
    h('ol', {}, p.top.map((item) => h('li', {},
      h('span', { class: 'prediction-token' }, item.display),
      h('span', { class: 'prediction-bar', style: `width: ${(item.probability * 100).toFixed(1)}%` }),
      h('span', { class: 'prediction-value' }, `${(item.probability * 100).toFixed(1)}%`)))))));
  panel.dataset.count = String(rows.length);
  lastRun = r;
}
store.subscribe((state, changed) => {
  if (changed.includes('token') && lastRun && model?.config.causal) renderPredictions(lastRun);
});

// ---- models ------------------------------------------------------------------
// key: the menu's value for this model (a shipped name, or OWN_MODEL).
async function loadModel(key, name, source) {
  showModelError(null);
  const progress = $('#load-progress');
  progress.hidden = false;
  progress.value = 0;
  $('#load-label').textContent = `Loading ${name}…`;
  try {
    const loaded = await client.loadModel('model', source, (download) => {
      if (download.total) progress.value = download.loaded / download.total;
      $('#load-label').textContent = loadingText(name, download);
    });
    if (!loaded.hasTokenizer) throw new Error(`${name} has no tokenizer.json, so it cannot read text`);
    model = { key, name, config: loaded.config };
    showModelNote(null);
    const { encoderDecoder } = loaded.config;
    $('#text-b-label').hidden = loaded.config.causal || Boolean(encoderDecoder);
    $('#target-label').hidden = !encoderDecoder;
    if (!encoderDecoder) $('#translation').hidden = true;
    translated = null;
    decoding.result = null;
    if (encoderDecoder && store.state.view === 'neuron') store.set({ view: 'head' });
    $('#load-label').textContent = `${name}: ${loaded.config.modelType}, ${(loaded.config.parameters / 1e6).toFixed(1)}M parameters`;
    $('model-view').headScores = null; // the previous model's labels
    runs.runNow();
    // After the first run is queued (the worker answers in order), so the first attention is not kept waiting.
    // The head-pattern analysis reads decoder-only and encoder-only models; an encoder–decoder's heads go unlabelled.
    $('model-view').headScores = encoderDecoder ? [] : await client.analyzeHeads('model');
  } catch (error) {
    showModelError(`Could not load ${name}: ${error.message}`);
    $('#load-label').textContent = '';
    // The menu names the model still shown, not the one that failed.
    if (model) {
      $('#model-select').value = model.key;
      store.set({ model: model.key });
    }
  } finally {
    progress.hidden = true;
  }
}

function selectModel(name) {
  const select = $('#model-select');
  const own = name === OWN_MODEL || !shipped.some((m) => m.name === name);
  select.value = own ? OWN_MODEL : name;
  $('#own-model').hidden = !own;
  if (!own && model?.key === name) return; // already shown (a failed load put the menu back)
  if (!own) loadModel(name, name, new URL(`models/${name}/`, location.href).href);
  else if (!model) {
    // A link can name only the shipped models: say why nothing is shown, and offer the picker.
    showModelNote(name === OWN_MODEL
      ? 'This link was made while your own model was open, and a link cannot carry a model\'s files. Load your model again below, or pick a shipped model from the menu.'
      : `“${name}” is not one of the models this page ships (${shipped.map((m) => m.name).join(', ') || 'none found'}). Pick one from the menu, or load your own model below.`);
  }
}

$('#model-select').addEventListener('change', (event) => store.set({ model: event.target.value }));
$('#model-files').addEventListener('change', (event) => {
  if (event.target.files.length) loadModel(OWN_MODEL, 'your model', [...event.target.files]);
});
$('#model-url-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const url = $('#model-url').value.trim();
  if (url) loadModel(OWN_MODEL, url.replace(/\/$/, '').split('/').pop() || url, url);
});
const dropZone = $('#drop-zone');
dropZone.addEventListener('dragover', (event) => { event.preventDefault(); dropZone.classList.add('dragging'); });
dropZone.addEventListener('dragleave', () => dropZone.classList.remove('dragging'));
dropZone.addEventListener('drop', async (event) => {
  event.preventDefault();
  dropZone.classList.remove('dragging');
  const files = await droppedFiles(event.dataTransfer);
  if (files.length) loadModel(OWN_MODEL, 'your model', files);
});

// Files of a drop: plain files, or the files directly inside a dropped folder.
async function droppedFiles(transfer) {
  const entries = [...transfer.items].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
  const folder = entries.find((entry) => entry.isDirectory);
  if (!folder) return [...transfer.files];
  const children = await new Promise((resolve, reject) => folder.createReader().readEntries(resolve, reject));
  return Promise.all(children.filter((e) => e.isFile).map((e) => new Promise((resolve, reject) => e.file(resolve, reject))));
}

// ---- inputs ------------------------------------------------------------------
const textA = $('#text-a');
const textB = $('#text-b');
textA.value = store.state.text;
textB.value = store.state.textB;
const targetText = $('#target');
targetText.value = store.state.target;
textA.addEventListener('input', () => store.set({ text: textA.value, token: null }));
textB.addEventListener('input', () => store.set({ textB: textB.value, token: null }));
targetText.addEventListener('input', () => store.set({ target: targetText.value, token: null }));
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && store.state.token !== null && !event.defaultPrevented) store.set({ token: null });
});

// ---- share and export ------------------------------------------------------------
$('#copy-link').addEventListener('click', async () => {
  await writeLink();
  try {
    await navigator.clipboard.writeText(location.href);
    $('#run-note').textContent = 'Link copied: it restores this model, text and view.';
  } catch {
    $('#run-note').textContent = `Copy this link: ${location.href}`;
  }
});
// The model and rollout views show every layer: their files are not named after one.
const stem = () => `attnplay-${model?.name ?? 'model'}-${['model', 'rollout'].includes(store.state.view) ? 'all-layers' : `layer${store.state.layer + 1}`}`;
// Every model view (head-view, matrix-view, rollout-view, model-view, neuron-view) offers exportCanvas() and svg().
const activeView = () => $(`${store.state.view}-view`);
// The head and matrix pictures get a title (model, layer, heads, text) and their legend (export-frame.js).
function exportFrame() {
  const { view, layer, heads } = store.state;
  if (!result || !['head', 'matrix'].includes(view)) return null;
  const element = activeView();
  const headCount = result.attentions.shape[1];
  const shown = (heads ?? [...Array(headCount).keys()]).filter((head) => head < headCount);
  return {
    ...exportCaption({ modelName: model.name, layer, heads, headCount, texts: result.texts }),
    legend: element.querySelector(view === 'head' ? '.head-view-legend' : '.matrix-legend')?.textContent ?? '',
    swatches: view === 'head' ? shown.map((head) => ({ colour: headColour(head), label: `H${head + 1}` })) : [],
    colours: { text: viewColours(element).text, background: pageBackground(element) },
  };
}
$('#export-png').addEventListener('click', () => {
  let canvas = activeView()?.exportCanvas();
  if (!canvas?.width) return;
  const frame = exportFrame();
  if (frame) canvas = framedCanvas(canvas, frame, canvas.width / (canvas.clientWidth || canvas.width));
  canvas.toBlob((blob) => download(blob, `${stem()}-${store.state.view}.png`, 'image/png'));
});
$('#export-svg').addEventListener('click', () => {
  let svg = activeView()?.svg();
  if (!svg) return;
  const frame = exportFrame();
  if (frame) svg = framedSvg(svg, frame);
  download(svg, `${stem()}-${store.state.view}.svg`, 'image/svg+xml');
});
$('#export-json').addEventListener('click', () => {
  if (translated) download(JSON.stringify(encoderDecoderJson({ modelName: model.name, modelType: model.config.modelType, run: translated })), `attnplay-${model.name}-attention.json`, 'application/json');
  else if (result) download(attentionJson({ modelName: model.name, modelType: model.config.modelType, tokens: result.tokens, texts: result.texts, attentions: result.attentions }), `attnplay-${model.name}-attention.json`, 'application/json');
});
$('#export-npy').addEventListener('click', () => {
  // An encoder–decoder part's own tensor: [L, H, S, S], [L, H, T, T] or cross-attention's [L, H, T, S].
  if (result) download(toNpy(result.cross?.attentions ?? result.attentions), `attnplay-${model.name}-${translated ? `${store.state.part}-` : ''}attention.npy`);
});

// "Download as a page": one self-contained HTML file with the widget in data mode (page-export.js).
$('#export-page').addEventListener('click', async () => {
  if (!result) return;
  try {
    const page = await attentionPage({ result, state: store.state, modelName: model.name, rolloutMethod: $('rollout-view').method, run: translated });
    download(page, `attnplay-${model.name}-${store.state.view}.html`, 'text/html');
  } catch (error) {
    $('#run-note').textContent = `Cannot make the page: ${error.message}`;
  }
});

// ---- start ---------------------------------------------------------------------
showView();
applyTheme();
try {
  const started = performance.now();
  engineInfo = await client.info();
  setStatus(`Engine loaded: attnplay core ${engineInfo.version}, WASM SIMD ${engineInfo.simd ? 'on' : 'off'}, ${(performance.now() - started).toFixed(0)} ms.`);
} catch (error) {
  setStatus(`The engine could not start: ${error.message}`, 'error');
}
try {
  const response = await fetch('models/index.json');
  shipped = response.ok ? await response.json() : [];
} catch {
  shipped = [];
}
$('#model-select').replaceChildren(
  ...shipped.map((m) => h('option', { value: m.name, title: m.description }, m.name)),
  h('option', { value: OWN_MODEL }, 'Your own model…'),
);
selectModel(store.state.model);
if (linkProblem) $('#run-note').textContent = linkProblem;
