// The playground page: wires the engine worker, the shared Store (kept in the
// URL hash so a link restores the view), the model picker (shipped models, a
// Hugging Face model by id with its download progress, Cancel and the
// gallery of suggested models, or the reader's own folder or URL), the text inputs (live, debounced), the
// views, the predictions panel, the status line and the exports. For an
// encoder–decoder model it translates instead (translation-run.js): the target
// tokens appear as they are written, with the decoding view following them,
// and a picker chooses the attention part the other views show. A causal
// model continues the text (generation-panel.js): the views then show the
// step of the generation timeline that the reader picks. The compare tab puts
// the same head's maps of two texts side by side (compare-view.js). A vision
// transformer reads a picture instead (a file, a drop, a paste, the camera or
// the samples; image-run.js), kept in this browser and named in the link
// (picture-link.js): the Picture tab shows where it looks
// (image-view.js), and the model, matrix, rollout and head views draw its
// tokens, the patches named by their place in the grid.
// Not here: computation (engine-worker.js), drawing (the *-view.js elements),
// state encoding (state.js), file formats (export.js).
import { getEngineClient } from '../engine/engine-client.js';
import { h } from '../ui/dom.js';
import { canKeepDownloads, downloadedSize, forgetDownloads } from '../hub/download.js';
import { formatBytes, hubBase, hubReference, isHubReference, parseModelId } from '../hub/hub.js';
import { attentionJson, download, encoderDecoderJson, pictureData, toNpy } from '../export/export.js';
import { exportCaption, framedCanvas, framedSvg, quotedText } from '../export/export-frame.js';
import { WIDGET_VIEWS, attentionPage } from '../export/page-export.js';
import { viewSnapshotPage } from '../export/view-snapshot.js';
import { headColour } from '../ui/palette.js';
import { marksNote, maskHint } from '../ui/token-marks.js';
import { LENS_TOP_K, RunLoop, ablateIds, isPair, loadingText, predictionsAt, rankHeads, runText, traceHead } from '../run/run-loop.js';
import { PartPicker } from '../ui/attention-parts.js';
import { ablationFrame, rankTranslationHeads, runTranslation, traceTranslation, translationAblation, translationLens } from '../run/translation-run.js';
import { traceStep } from '../run/generation-run.js';
import { pictureOfFile, pixelsAsPng, pixelsOf, runPicture } from '../run/image-run.js';
import { INLINE_SIDE, inlinePicture, keepPicture, openPicture } from '../run/picture-link.js';
import { modelRunner } from '../views/compare-view.js';
import { Store, decodeLink, decodeState, encodeLink } from '../run/state.js';
import { drawnTheme, pageBackground, viewColours } from '../attention/view-support.js';
import '../views/attention-table.js';
import '../views/generation-panel.js';
import '../views/decoding-view.js';
import '../views/head-view.js';
import '../views/image-view.js';
import '../views/matrix-view.js';
import '../views/model-view.js';
import '../views/lens-view.js';
import '../views/neuron-view.js';
import '../views/rollout-view.js';
import { headName, rankingKey } from '../attention/ablation.js';
import '../views/ablation-view.js';
import '../scratch/scratch-view.js';
import '../views/view-controls.js';

const $ = (selector) => document.querySelector(selector);
const client = getEngineClient();
let linkProblem = null; // a damaged link's message, shown once the page is up
async function stateOfLink(hash) {
  try {
    return await decodeLink(hash);
  } catch (error) {
    linkProblem = `Part of this link could not be read: ${error.message}.`;
    return decodeState(hash.replace(/(^#|&)z(text|textB|target|compareText)=[^&]*/g, ''));
  }
}
const store = new Store(await stateOfLink(location.hash));
// The widget's generate view is the page's generation panel above the views, with the head view.
if (store.state.view === 'generate') store.set({ view: 'head' });
const views = ['image-view', 'head-view', 'model-view', 'matrix-view', 'rollout-view', 'lens-view', 'neuron-view', 'ablation-view', 'attention-table'].map((name) => $(name));
const scratch = $('scratch-view');
const decoding = $('decoding-view'); // always the cross-attention of an encoder–decoder model
const generationPanel = $('generation-panel');
const compareView = $('compare-view');
const controls = $('#controls');
const OWN_MODEL = '__own__'; // the menu's entry for a folder or URL of the reader's
const HUB_MODEL = '__hub__'; // the menu's entry for a hub model by id
const PICTURE_VIEWS = ['image', 'head', 'model', 'matrix', 'rollout', 'neuron']; // drawn as pictures: PNG and SVG exports
// The views of a vision transformer's run: the picture's, and the model-wide views that need no text.
const IMAGE_VIEWS = ['image', 'model', 'matrix', 'rollout', 'head', 'scratch'];

let engineInfo = null;
let model = null; // the model shown: { key (the state's model), hub (for hf: models), name, config }
let result = null; // what the views show
let lastRun = null; // the last run's raw result (predictions follow the locked token)
let textResult = null; // while a generation step is shown: the text's own result, shown again when the generation goes away
let translated = null; // an encoder–decoder model's last run: { parts, order, translation, source, raw, ms }
let shipped = [];
let gallery = []; // suggested hub models (models/gallery.json)
let loading = null; // AbortController of the load in progress
let picture = null; // a vision model's input: { pixels (ImageData), name, kept (its sample: or local: name, or null), inline (its inline: name, when the link carries it) }, kept across models
let intactLabels = null; // the picture's labels without knocked-out heads: { picture, topK }

// ---- state <-> URL -------------------------------------------------------
// The URL follows the state a moment after it settles (history.replaceState
// of a long link costs ~15 ms, too much for every layer change or keystroke),
// asynchronously (long texts are deflated); only the latest write lands, and
// never over a link the reader went to meanwhile (a hash they typed or
// followed while a write was pending: its hashchange sets the state, and that
// state's link is written after it).
// body[data-link] is "pending" from a change until its link is written.
const LINK_DELAY = 250; // ms
let linkWrites = 0;
let linkTimer = null;
let knownHash = location.hash; // the hash the page last read or wrote; any other is the reader's navigation
async function writeLink() {
  clearTimeout(linkTimer);
  const write = ++linkWrites;
  // A vision model reads no text: its link names none (undefined leaves it out; the link opens on the default).
  const hash = await encodeLink(model?.config.imageModel ? { ...store.state, text: undefined, textB: undefined } : store.state);
  if (write !== linkWrites || location.hash !== knownHash) return;
  if (`#${hash}` !== location.hash && !(hash === '' && location.hash === '')) history.replaceState(null, '', hash ? `#${hash}` : location.pathname);
  knownHash = location.hash;
  document.body.dataset.link = 'written';
}
function scheduleLinkWrite() {
  document.body.dataset.link = 'pending';
  clearTimeout(linkTimer);
  linkTimer = setTimeout(writeLink, LINK_DELAY);
}
store.subscribe(scheduleLinkWrite);
window.addEventListener('hashchange', async () => {
  knownHash = location.hash;
  store.set(await stateOfLink(knownHash));
  scheduleLinkWrite(); // also when the state is unchanged: the link is written back in its own form
});

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

let modelErrors = 0; // messages shown so far: a run clears only one shown before it started
function showModelError(message) {
  if (message) modelErrors += 1;
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
// The rollout and flow maps are computed in the worker (the C++ core), never on the page's thread.
$('rollout-view').compute = (attentions, method) => client.rollout(attentions, method);
// Its method and display live in the state (and so in the link).
$('rollout-view').addEventListener('rollout-change', (event) => store.set({ rolloutMethod: event.detail.method, rolloutDisplay: event.detail.display }));
function applyRolloutChoices() {
  $('rollout-view').method = store.state.rolloutMethod;
  $('rollout-view').display = store.state.rolloutDisplay;
}
applyRolloutChoices();
decoding.store = store;
controls.store = store;
generationPanel.store = store;
compareView.store = store;
const partPicker = new PartPicker((part) => store.set({ part, token: null }));
controls.before(partPicker.element);

function showView() {
  const { view } = store.state;
  const imageModel = Boolean(model?.config.imageModel);
  for (const tab of document.querySelectorAll('[role=tab]')) {
    if (tab.dataset.view !== 'cross') tab.hidden = imageModel ? !IMAGE_VIEWS.includes(tab.dataset.view) : tab.dataset.view === 'image';
    const selected = tab.dataset.view === view;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
  }
  for (const panel of document.querySelectorAll('[role=tabpanel]')) panel.hidden = panel.dataset.view !== view;
  const modelViews = view !== 'scratch';
  const encoderDecoder = Boolean(model?.config.encoderDecoder);
  // Without a result (no model yet, or no text) the model views show nothing rather than stale drawings.
  // The lens reads no layer, head or weight choice; the Picture tab has its own layer menu (the weight filters are the maps').
  controls.hidden = !modelViews || !result || view === 'lens' || view === 'image';
  for (const element of views) element.hidden = !result;
  decoding.hidden = !translated && !decoding.result;
  // Encoder–decoder models: the Decoding tab and the part picker (not on the lens, which reads the decoder, nor on the
  // ablation view, which has a grid per part); no predictions panel (nor for the others a Decoding tab).
  $('[role=tab][data-view="cross"]').hidden = !encoderDecoder;
  partPicker.element.hidden = !encoderDecoder || !translated || !modelViews || ['cross', 'lens', 'ablation'].includes(view);
  // The table lists one layer's weights: not what the model view (all layers), the rollout view (layers combined), the lens, the decoding view (its own table) or the compare view (its own tables) shows.
  $('.table-alt').hidden = !modelViews || ['model', 'rollout', 'lens', 'cross', 'compare'].includes(view) || !result;
  generationPanel.hidden = !model || encoderDecoder || imageModel;
  // The from-scratch mode has no model output: no predictions, images or attention files.
  for (const selector of ['.predictions', '#export-json', '#export-npy']) $(selector).hidden = !modelViews;
  if (encoderDecoder || imageModel) $('.predictions').hidden = true; // a vision model's labels: on the Picture tab
  // The decoding view, the lens grid, the compare tables and the ablation panel are pages of their own (HTML, not pictures): no PNG or SVG of them.
  for (const selector of ['#export-svg', '#export-png']) $(selector).hidden = !PICTURE_VIEWS.includes(view);
  showAblationBanner();
}

// Heads knocked out on the Ablation tab change every view: the other model views say so, with a way back
// (not on a generation step, which the views show as it was generated, nor for an encoder–decoder, whose
// heads are knocked out on the Ablation tab only).
function showAblationBanner() {
  const { view, ablate } = store.state;
  const banner = $('#ablation-banner');
  banner.hidden = ablate.length === 0 || ['ablation', 'scratch'].includes(view) || Boolean(model?.config.encoderDecoder) || textResult !== null;
  const n = ablate.length;
  banner.querySelector('span').textContent = `${n} head${n === 1 ? '' : 's'} knocked out on the Ablation tab (${ablate.map(headName).join(', ')}): this view shows the model without ${n === 1 ? 'it' : 'them'}.`;
}
$('#ablation-banner button').addEventListener('click', () => store.set({ ablate: [] }));

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
  if (changed.includes('view')) {
    showView();
    showHeadScores();
  }
  // The logit lens is computed only while its tab is shown: a run brings it (an encoder–decoder's: its decoder's, read apart).
  if (changed.includes('view') && state.view === 'lens') {
    if (translated) showTranslationLens();
    else if (result && !result.lens && !model?.config.encoderDecoder) runs.runNow();
  }
  if (changed.includes('theme')) applyTheme();
  if (changed.includes('rolloutMethod') || changed.includes('rolloutDisplay')) applyRolloutChoices();
  if (changed.includes('text') || changed.includes('textB') || changed.includes('target')) runs.schedule();
  if (changed.includes('ablate')) showAblationBanner();
  // Ablated heads change every view's attention: run again at once (the ablation view also needs the intact run);
  // so does opening the Ablation tab on a result without its comparison. On a generation step the views keep
  // the step as generated, and the ablation view compares over its ids.
  // An encoder–decoder's heads are knocked out on the Ablation tab only: it compares its translation with and without them.
  const ablationChanged = changed.includes('ablate') || changed.includes('ablation');
  const comparisonMissing = changed.includes('view') && state.view === 'ablation' && result && !result.ablation;
  if (translated && (ablationChanged || (changed.includes('view') && state.view === 'ablation'))) showTranslationAblation();
  else if (ablationChanged || comparisonMissing) {
    if (textResult) ablateShownStep();
    else if (!model?.config.encoderDecoder) runs.schedule(0);
  }
  if (changed.includes('part') && translated) showPart();
  // The Decoding tab is about cross-attention: the layer menu then lists the decoder's layers.
  if (changed.includes('view') && state.view === 'cross' && translated && state.part !== 'cross') store.set({ part: 'cross', token: null });
  if (changed.includes('model') || (changed.includes('hub') && isHubReference(state.model))) selectModel(state.model);
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
const shownPart = () => (translated.order.includes(store.state.part) ? store.state.part : 'cross');
function showPart() {
  const name = shownPart();
  const part = translated.parts[name];
  result = part.result;
  for (const view of views) view.result = result;
  showTranslationLens(); // the lens reads the decoder, whatever the part
  showTranslationAblation(); // the ablation view has a grid per part
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
}

// The logit lens of an encoder–decoder reads its decoder (whatever part the picker shows): read while the Lens
// tab is shown, once per translation, in the worker.
async function showTranslationLens() {
  const run = translated;
  if (!run || store.state.view !== 'lens') return;
  try {
    const lensResult = await translationLens(client, 'model', run, LENS_TOP_K);
    if (run !== translated || store.state.view !== 'lens') return; // another translation or tab since
    $('lens-view').result = lensResult;
    showRequestOutcome();
  } catch (error) {
    if (run === translated) showRequestOutcome(error);
  }
}

// The Ablation tab of an encoder–decoder: the target's loss and predictions and the model's translation, with and
// without the state's heads (of any part), read while the tab is shown.
async function showTranslationAblation() {
  const run = translated;
  if (!run || store.state.view !== 'ablation') return;
  const asked = JSON.stringify([store.state.ablate, store.state.ablation]);
  const current = () => run === translated && store.state.view === 'ablation' && asked === JSON.stringify([store.state.ablate, store.state.ablation]);
  const frame = ablationFrame(run, model.config);
  if ($('ablation-view').result?.tokens !== frame.tokens) $('ablation-view').result = frame; // the grids at once; the comparison follows
  try {
    const ablationResult = await translationAblation(client, 'model', run, model.config, store.state, {
      onComparison: (partial) => { if (current()) $('ablation-view').result = partial; },
    });
    if (!current()) return; // another translation, tab or choice of heads since
    $('ablation-view').result = ablationResult;
    showRequestOutcome();
  } catch (error) {
    if (current()) showRequestOutcome(error);
  }
}

// One run of the latest text with the model shown (the worker holds it as 'model').
const runs = new RunLoop(async () => {
  if (!model) return false; // loadModel runs once the model is there
  const modelErrorsBefore = modelErrors;
  try {
    if (model.config.encoderDecoder) await runEncoderDecoder();
    else if (model.config.imageModel) await runImageModel();
    else await runDecoderOrEncoder();
    if (modelErrors === modelErrorsBefore) showModelError(null); // a failed load's message goes once the model shown runs again
    document.body.dataset.run = String(Number(document.body.dataset.run ?? 0) + 1); // runs drawn (tests wait on it)
  } catch (error) {
    clearResult(error.message);
  }
  return true;
});

// One run of a vision transformer on the reader's picture, with the state's knocked-out heads (the labels
// without them are kept per picture, for the before → after).
async function runImageModel() {
  translated = null;
  if (!picture) {
    clearResult('Choose a picture (a file, drop or paste one, the camera, or one of the samples) to see where the model looks.');
    return;
  }
  const shown = picture;
  const intact = intactLabels?.picture === shown ? intactLabels.topK : null;
  const { raw, result: imageResult, intactTopK } = await runPicture(client, 'model', model.config, shown.pixels, store.state, intact);
  if (shown !== picture) return; // another picture since: its own run follows
  intactLabels = { picture: shown, topK: intactTopK };
  result = imageResult;
  lastRun = null;
  textResult = null;
  for (const view of views) view.result = result;
  showView();
  controls.configure({ layers: model.config.layers, pairs: false });
  if (store.state.layer >= model.config.layers) store.set({ layer: 0 });
  $('#token-marks').textContent = '';
  const { seen, grid } = imageResult.picture;
  $('#run-note').textContent = `${shown.name}: ${shown.pixels.width}×${shown.pixels.height} pixels, seen as ${seen.width}×${seen.height} `
    + `(${model.config.vision.processor.type}, ${model.config.vision.processor.resample}): ${grid.rows} × ${grid.columns} patches, ${imageResult.tokens.length} tokens.`;
  describeStatus(raw.ms);
}

// The picture a vision model reads, from wherever it came; runs the model when one is shown. `kept`: its
// name in this browser (sample:PATH, local:HASH: picture-link.js), or null when the browser could not keep it.
async function setPicture(pixels, name, kept) {
  picture = { pixels, name, kept };
  await namePictureInLink();
  if (model?.config.imageModel) runs.runNow();
}

// The link names the picture by what this browser keeps, or carries it when the reader asks (and it is not a sample).
async function namePictureInLink() {
  const shown = picture;
  const own = !shown.kept?.startsWith('sample:');
  const inline = own && $('#picture-in-link').checked;
  const name = inline ? await inlinePicture(shown.pixels) : shown.kept ?? '';
  if (shown !== picture) return; // another picture meanwhile
  shown.inline = inline ? name : null;
  $('#picture-in-link').closest('label').hidden = !own;
  $('#picture-name').textContent = `${shown.name} (${shown.pixels.width}×${shown.pixels.height} pixels; `
    + (!own ? 'the link names this sample)' : inline ? `the link carries it, scaled to at most ${INLINE_SIDE} pixels)`
      : shown.kept ? 'it stays in this browser: the link opens it here only)' : 'this browser could not keep it: the link does not open it)');
  store.set({ picture: name });
}
$('#picture-in-link').addEventListener('change', () => {
  if (picture) namePictureInLink();
});
store.subscribe((state, changed) => {
  if (changed.includes('picture') && model?.config.imageModel) openLinkedPicture();
});

async function usePictureFile(file) {
  try {
    const pixels = await pictureOfFile(file);
    await setPicture(pixels, file.name || 'a pasted picture', await keepPicture(file));
  } catch (error) {
    $('#picture-name').textContent = error.message;
  }
}

// The picture the state names, when it is not the one shown (a link, a reload, the history): opened, or why not.
async function openLinkedPicture() {
  const wanted = store.state.picture;
  if (!wanted || wanted === picture?.kept || wanted === picture?.inline) return true;
  try {
    const opened = await openPicture(wanted, new URL('models/', location.href));
    if (store.state.picture !== wanted) return true; // another picture meanwhile
    const inline = wanted.startsWith('inline:');
    $('#picture-in-link').checked = inline;
    picture = { pixels: opened.pixels, name: opened.name, kept: inline ? await keepPicture(opened.blob) : wanted };
    await namePictureInLink();
    if (model?.config.imageModel) runs.runNow();
    return true;
  } catch (error) {
    $('#picture-name').textContent = `This link's picture cannot be opened: ${error.message}.`;
    return false;
  }
}

$('#picture-file').addEventListener('change', (event) => {
  if (event.target.files[0]) usePictureFile(event.target.files[0]);
});
$('#picture-input').addEventListener('dragover', (event) => event.preventDefault());
$('#picture-input').addEventListener('drop', (event) => {
  const file = [...event.dataTransfer.files].find((f) => f.type.startsWith('image/'));
  if (!file) return;
  event.preventDefault();
  event.stopPropagation(); // not a model folder
  usePictureFile(file);
});
document.addEventListener('paste', (event) => {
  const file = model?.config.imageModel ? [...event.clipboardData.files].find((f) => f.type.startsWith('image/')) : null;
  if (!file) return;
  event.preventDefault();
  usePictureFile(file);
});
// The camera (where the browser has one and the reader allows it): a live preview, and a frame taken on request.
let camera = null;
$('#picture-camera').addEventListener('click', async () => {
  const video = $('#picture-video');
  try {
    camera = await navigator.mediaDevices.getUserMedia({ video: true });
  } catch (error) {
    $('#picture-name').textContent = `No camera: ${error.message}`;
    return;
  }
  video.srcObject = camera;
  video.hidden = false;
  $('#picture-snap').hidden = false;
  await video.play();
});
$('#picture-snap').addEventListener('click', () => {
  const video = $('#picture-video');
  try {
    const pixels = pixelsOf(video, video.videoWidth, video.videoHeight);
    setPicture(pixels, 'a camera frame', null).then(async () => {
      const kept = await keepPicture(await pixelsAsPng(pixels));
      if (picture?.pixels !== pixels) return;
      picture.kept = kept;
      await namePictureInLink();
    });
  } catch (error) {
    $('#picture-name').textContent = error.message;
  }
  for (const track of camera?.getTracks() ?? []) track.stop();
  camera = null;
  video.hidden = true;
  $('#picture-snap').hidden = true;
});

// The sample pictures of a vision model, as buttons: a shipped model's own (models/catalog.json's "samples"),
// else the photographs of models/sample-pictures/ with their credit and licence. The link's picture opens
// (or the reason it cannot replaces it); with none, the first sample when no picture is chosen yet.
async function showSamples(name) {
  const own = shipped.find((m) => m.name === name)?.samples;
  let samples = (own ?? []).map((file) => ({ path: `${name}/${file}`, label: file.split('/').pop().replace(/\.\w+$/, ''), title: file }));
  if (!own) {
    try {
      const response = await fetch(new URL('models/sample-pictures/pictures.json', location.href));
      samples = (await response.json()).map((p) => ({ path: `sample-pictures/${p.file}`, label: p.file.replace(/\.\w+$/, ''), title: `${p.title}: ${p.credit}, ${p.licence}` }));
    } catch {
      samples = []; // a page without the photographs still takes the reader's own pictures
    }
  }
  const open = async ({ path }) => {
    try {
      const opened = await openPicture(`sample:${path}`, new URL('models/', location.href));
      await setPicture(opened.pixels, opened.name, `sample:${path}`);
    } catch (error) {
      $('#picture-name').textContent = error.message;
    }
  };
  $('#picture-samples').replaceChildren(...(samples.length ? [h('span', { class: 'hint' }, 'Samples: ')] : []),
    ...samples.map((sample) => h('button', { type: 'button', class: 'chip', title: sample.title, onclick: () => open(sample) }, sample.label)));
  if (store.state.picture) await openLinkedPicture();
  else if (!picture && samples.length) await open(samples[0]);
}

// One run of a decoder-only or encoder-only model on the state's text (and B).
async function runDecoderOrEncoder() {
  translated = null;
  const lens = store.state.view === 'lens' ? LENS_TOP_K : 0;
  const { raw, result: shown, note } = await runText(client, 'model', model.config, store.state, { topK: 5, lens, compare: store.state.view === 'ablation' });
  result = shown;
  textResult = null;
  for (const view of views) view.result = result;
  showView();
  controls.configure({ layers: model.config.layers, pairs: isPair(model.config, store.state.textB) });
  if (store.state.layer >= model.config.layers) store.set({ layer: 0 });
  renderPredictions(raw);
  const predicted = raw.predictions.flatMap((p) => p.top.map((item) => item.display));
  $('#token-marks').textContent = marksNote([...result.tokens.map((token) => token.display), ...predicted]);
  $('#run-note').textContent = note;
  describeStatus(raw.ms);
}

// A neuron-view trace or a generation step's ablation that fails says why in #run-note, until one succeeds.
let requestError = null;
function showRequestOutcome(error = null) {
  const note = $('#run-note');
  if (error) {
    requestError = error.message;
    note.textContent = requestError;
  } else if (requestError !== null) {
    if (note.textContent === requestError) note.textContent = '';
    requestError = null;
  }
}

$('neuron-view').addEventListener('trace-request', async (event) => {
  try {
    const ids = generationPanel.stepIds; // a generation step: the text shown is the prompt and the tokens before the step's
    const [run, part] = [translated, translated && shownPart()];
    const trace = run ? await traceTranslation(client, 'model', run, part, event.detail)
      : ids ? await traceStep(client, 'model', ids, event.detail) : await traceHead(client, 'model', model.config, store.state, event.detail);
    if (run && (run !== translated || part !== shownPart())) return; // another translation or part since: its own request follows
    $('neuron-view').trace = trace;
    showRequestOutcome();
  } catch (error) {
    showRequestOutcome(error);
  }
});

$('ablation-view').addEventListener('rank-request', async (event) => {
  const key = rankingKey(store.state);
  try {
    const ranking = translated ? await rankTranslationHeads(client, 'model', translated, store.state) : await rankHeads(client, 'model', model.config, store.state);
    $('ablation-view').ranking = { ...ranking, mode: event.detail.ablation, key };
  } catch (error) {
    $('ablation-view').ranking = error;
  }
});

function renderPredictions(r) {
  const panel = $('#predictions');
  const tokens = r.tokens;
  if (!r.predictions.length) {
    panel.replaceChildren(h('p', { class: 'hint' }, model.config.causal
      ? 'Next-token predictions appear here.'
      : `${maskHint(model.config.hasMlmHead ? model.config.maskToken : null)}.`));
    return;
  }
  const locked = store.state.token;
  const shownPosition = locked === null || locked >= tokens.length ? tokens.length - 1 : locked;
  const rows = model.config.causal ? r.predictions.filter((p) => p.position === shownPosition) : r.predictions;
  lastRun = r;
  if (model.config.causal && !rows.length) {  // a run predicts after the last token alone: ask for the locked one's
    panel.replaceChildren(h('p', { class: 'hint' }, `Predicting after “${tokens[shownPosition].display}”…`));
    fetchPredictions(r, shownPosition);
    return;
  }
  panel.replaceChildren(...rows.map((p) => h('figure', { class: 'prediction' },
    h('figcaption', {}, model.config.causal ? `After “${tokens[p.position].display}”` : `${model.config.maskToken} at token ${p.position + 1}`),
    h('ol', {}, p.top.map((item) => h('li', {},
      h('span', { class: 'prediction-token' }, item.display),
      h('span', { class: 'prediction-bar', style: `width: ${(item.probability * 100).toFixed(1)}%` }),
      h('span', { class: 'prediction-value' }, `${(item.probability * 100).toFixed(1)}%`)))))));
  panel.dataset.count = String(rows.length);
}

// The predictions after token `position` of run r, added to r's and shown if r is still the run shown
// (and its text the text: an edit waiting for its run has none of r's tokens).
async function fetchPredictions(r, position) {
  const { text, textB } = store.state;
  const current = () => lastRun === r && store.state.text === text && store.state.textB === textB;
  try {
    const found = await predictionsAt(client, 'model', model.config, store.state, position);
    if (!current()) return;
    r.predictions = [...r.predictions, ...found];
    renderPredictions(r);
  } catch (error) {
    if (current()) $('#predictions').replaceChildren(h('p', { class: 'hint' }, error.message));
  }
}
store.subscribe((state, changed) => {
  if (changed.includes('token') && lastRun && model?.config.causal) renderPredictions(lastRun);
});

// ---- generation: the views show the timeline's step ------------------------------
generationPanel.addEventListener('generation-step', (event) => {
  if (!generationPanel.generation) return;
  textResult ??= result;
  result = event.detail.result;
  for (const view of views) view.result = result;
  $('#predictions').replaceChildren(h('p', { class: 'hint' }, 'The probabilities of the generation step are shown with its timeline.'));
  lastRun = null;
  store.set({ token: event.detail.query });
  showView();
  ablateShownStep();
});
// The Ablation tab on a generation step (whose result has no comparison): the model with and without the
// state's heads over the step's ids, once the generation has stopped writing.
async function ablateShownStep() {
  const ids = generationPanel.stepIds;
  if (!textResult || !ids || store.state.view !== 'ablation' || generationPanel.generation?.running) return;
  const [shown, asked] = [result, JSON.stringify([store.state.ablate, store.state.ablation])];
  const current = () => result === shown && asked === JSON.stringify([store.state.ablate, store.state.ablation]);
  try {
    const ablation = await ablateIds(client, 'model', model.config, ids, store.state);
    if (!current()) return; // another step, text or choice of heads since
    result = { ...result, ablation };
    $('ablation-view').result = result;
    showRequestOutcome();
  } catch (error) {
    if (current()) showRequestOutcome(error);
  }
}
generationPanel.addEventListener('generation-clear', () => {
  if (!textResult) return;
  result = textResult;
  textResult = null;
  for (const view of views) view.result = result;
  store.set({ token: null });
  showView();
});

// ---- models ------------------------------------------------------------------
// key: the state's model for this load (a shipped name, hf:..., a URL, or OWN_MODEL for files).
async function loadModel(key, name, source) {
  loading?.abort(); // a newer choice replaces a load still downloading
  const controller = new AbortController();
  loading = controller;
  showModelError(null);
  const progress = $('#load-progress');
  progress.hidden = false;
  progress.value = 0;
  $('#load-cancel').hidden = false;
  $('#load-label').textContent = `Loading ${name}…`;
  const hub = isHubReference(key) ? store.state.hub : null;
  try {
    const loaded = await client.loadModel('model', source, (download) => {
      if (controller.signal.aborted) return;
      if (download.total) progress.value = download.loaded / download.total;
      $('#load-label').textContent = loadingText(name, download);
      showFiles(download.files);
    }, controller.signal);
    if (!loaded.hasTokenizer && !loaded.config.imageModel) throw new Error(`${name} has no tokenizer (tokenizer.json, a SentencePiece model such as tokenizer.model or spiece.model, or Marian's source.spm, target.spm and vocab.json), so it cannot read text`);
    model = { key, hub, name, config: loaded.config };
    showModelNote(null);
    const { encoderDecoder, imageModel } = loaded.config;
    for (const input of document.querySelectorAll('.text-input')) input.hidden = Boolean(imageModel);
    $('#picture-input').hidden = !imageModel;
    $('#text-b-label').hidden = loaded.config.causal || Boolean(encoderDecoder) || Boolean(imageModel);
    $('#target-label').hidden = !encoderDecoder;
    if (!encoderDecoder) $('#translation').hidden = true;
    translated = null;
    decoding.result = null;
    generationPanel.engine = { client, key: 'model', config: loaded.config };
    compareView.runner = modelRunner(client, 'model', loaded.config);
    const kept = !hub ? '' : loaded.fromCache ? ' · opened from this browser\'s copy, nothing downloaded'
      : loaded.kept && canKeepDownloads() ? ' · kept in this browser' : ' · not kept (this browser refused to store it)';
    $('#load-label').textContent = `${name}: ${loaded.config.modelType}, ${(loaded.config.parameters / 1e6).toFixed(1)}M parameters${kept}`;
    $('model-view').headScores = null; // the previous model's labels
    $('ablation-view').ranking = null; // and its ranking of heads
    // A vision model opens on its Picture tab unless the view was chosen (the head view, the default, is in no link).
    const chosenView = store.state.view !== 'head' || /(^#|&)view=/.test(location.hash);
    if (imageModel && (!IMAGE_VIEWS.includes(store.state.view) || !chosenView)) store.set({ view: 'image' });
    if (!imageModel && store.state.view === 'image') store.set({ view: 'head' });
    showView();
    if (imageModel) await showSamples(key);
    runs.runNow();
    if (hub) showDownloadsSize();
    showHeadScores(); // after the first run is queued (the worker answers in order), so the first attention is not kept waiting
  } catch (error) {
    if (loading !== controller && controller.signal.aborted) return; // replaced by a newer load, which reports itself
    if (error.cancelled) showModelNote(`Download of ${name} cancelled.${model ? ` Still showing ${model.name}.` : ''}`);
    else showModelError(`Could not load ${name}: ${error.message}`);
    $('#load-label').textContent = '';
    // The menu names the model still shown, not the one that failed.
    if (model) {
      $('#model-select').value = menuValue(model.key);
      store.set({ model: model.key, ...(model.hub ? { hub: model.hub } : {}) });
    }
  } finally {
    if (loading === controller) {
      loading = null;
      progress.hidden = true;
      $('#load-cancel').hidden = true;
      showFiles(null);
    }
  }
}
$('#load-cancel').addEventListener('click', () => loading?.abort());

// The Model tab's head labels come from the core's head-pattern analysis (a dozen forward passes in the
// worker), run for the model shown when that tab is first opened or a page is exported with them, not on
// every load: most visits never open the tab. It reads decoder-only and encoder-only models; an
// encoder–decoder's heads go unlabelled, and a vision model's have no text patterns to score.
let headAnalysis = null; // { model, scores: Promise of the model view's headScores } for the model shown
function headScoresOfShownModel() {
  if (!model) return Promise.resolve(null);
  if (headAnalysis?.model !== model) {
    const { encoderDecoder, imageModel } = model.config;
    headAnalysis = { model, scores: encoderDecoder || imageModel ? Promise.resolve([]) : client.analyzeHeads('model').catch(() => []) };
  }
  return headAnalysis.scores;
}
function showHeadScores() {
  if (store.state.view !== 'model' || !model) return;
  const shown = model;
  headScoresOfShownModel().then((scores) => {
    if (model === shown) $('model-view').headScores = scores;
  });
}

// Each file of a hub download with its own bar: "model.safetensors 120 of 269 MB".
function showFiles(files) {
  const list = $('#load-files');
  list.hidden = !files?.length;
  if (!files?.length) {
    list.replaceChildren();
    return;
  }
  list.replaceChildren(...files.map((file) => h('li', { 'data-file': file.name },
    h('span', { class: 'file-name' }, file.name),
    h('progress', { max: '1', value: String(file.size ? file.loaded / file.size : 0) }),
    h('span', { class: 'file-bytes' }, `${formatBytes(file.loaded)}${file.size !== null ? ` of ${formatBytes(file.size)} (${Math.floor((100 * file.loaded) / (file.size || 1))}%)` : ''}`))));
}

/** The menu's entry for a model of the state: its own option when the menu has one, else "by id" or "your own". */
function menuValue(key) {
  if ([...$('#model-select').options].some((option) => option.value === key)) return key;
  return isHubReference(key) ? HUB_MODEL : OWN_MODEL;
}

const isUrl = (name) => /^https?:\/\//.test(name);

function selectModel(name) {
  const select = $('#model-select');
  const isShipped = shipped.some((m) => m.name === name);
  const hubModel = isHubReference(name);
  select.value = menuValue(name);
  $('#own-model').hidden = isShipped || hubModel;
  $('#hub-model').hidden = !hubModel;
  if (isShipped || hubModel || isUrl(name)) {
    const hub = hubModel ? store.state.hub : null;
    if (model?.key === name && model.hub === hub) return; // already shown (a failed load put the menu back)
    if (isShipped) loadModel(name, name, new URL(`models/${name}/`, location.href).href);
    else if (isUrl(name)) {
      $('#model-url').value = name;
      loadModel(name, name.replace(/\/$/, '').split('/').pop() || name, name);
    } else openHubModel(name);
    return;
  }
  if (!model) {
    // A link to a model the page cannot open by itself: say why nothing is shown, and offer the picker.
    showModelNote(name === OWN_MODEL
      ? 'This link was made while your own model was open, and a link cannot carry a model\'s files. Load your model again below, or pick a shipped model from the menu.'
      : `“${name}” is not one of the models this page ships (${shipped.map((m) => m.name).join(', ') || 'none found'}). Pick one from the menu, or load your own model below. A Hugging Face model is written hf:NAME in a link (hf:${name}).`);
  }
}

// The reader's access token for gated hub models: sent with hub loads only, never in the store (so never in
// a link, an export or a snapshot); kept in this origin's localStorage only when the reader asks.
const HUB_TOKEN_KEY = 'attnplay:hub-token';
const hubToken = () => $('#hub-token').value.trim();
function rememberHubToken() {
  try {
    if ($('#hub-token-remember').checked && hubToken()) localStorage.setItem(HUB_TOKEN_KEY, hubToken());
    else localStorage.removeItem(HUB_TOKEN_KEY);
  } catch { /* storage refused: the token stays in the field for this visit */ }
}
try {
  const saved = localStorage.getItem(HUB_TOKEN_KEY);
  if (saved) {
    $('#hub-token').value = saved;
    $('#hub-token-remember').checked = true;
  }
} catch { /* no storage */ }
$('#hub-token').addEventListener('change', rememberHubToken);
$('#hub-token-remember').addEventListener('change', rememberHubToken);
$('#hub-token-form').addEventListener('submit', (event) => event.preventDefault());
$('#hub-token-forget').addEventListener('click', () => {
  $('#hub-token').value = '';
  $('#hub-token-remember').checked = false;
  rememberHubToken();
});

function openHubModel(name) {
  let ref;
  try {
    ref = parseModelId(name);
    hubBase(store.state.hub);
  } catch (error) {
    showModelError(`Cannot open ${name}: ${error.message}.`);
    return;
  }
  $('#hub-id').value = `${ref.id}${ref.revision === 'main' ? '' : `@${ref.revision}`}`;
  $('#hub-address').textContent = hubBase(store.state.hub);
  $('#hub-tokens-link').href = `${hubBase(store.state.hub)}/settings/tokens`;
  loadModel(name, ref.id, { hub: store.state.hub, ...ref, ...(hubToken() ? { token: hubToken() } : {}) });
}

$('#model-select').addEventListener('change', (event) => {
  const value = event.target.value;
  if (value === HUB_MODEL) { // the id field is where the choice is made
    $('#own-model').hidden = true;
    $('#hub-model').hidden = false;
    $('#hub-address').textContent = hubBase(store.state.hub);
    showDownloadsSize();
    $('#hub-id').focus();
  } else {
    // A shipped model opens with its own example (a [MASK] for BERT, English for the translation model) unless the
    // reader wrote a text of their own (models/catalog.json's "example"; the default model's is the page's first text).
    const example = shipped.find((m) => m.name === value)?.example;
    const readersText = store.state.text.trim() !== '' && !shipped.some((m) => m.example === store.state.text);
    store.set({ model: value, ...(example && !readersText ? { text: example, textB: '' } : {}) });
  }
});
$('#hub-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const text = $('#hub-id').value.trim();
  if (!text) return;
  try {
    chooseModel(hubReference(parseModelId(text)));
  } catch (error) {
    showModelError(`${error.message}.`);
  }
});
// The state's model becomes `key`; choosing the model shown again retries it if it failed.
function chooseModel(key) {
  if (store.state.model === key) selectModel(key);
  else store.set({ model: key });
}
$('#model-files').addEventListener('change', (event) => {
  if (event.target.files.length) loadModel(OWN_MODEL, 'your model', [...event.target.files]);
});
// A picked folder: the files directly inside it (webkitRelativePath "folder/config.json").
$('#model-folder').addEventListener('change', (event) => {
  const files = [...event.target.files].filter((file) => file.webkitRelativePath.split('/').length === 2);
  const folder = event.target.files[0]?.webkitRelativePath.split('/')[0] ?? 'your model';
  if (files.length) loadModel(OWN_MODEL, folder, files);
});
$('#model-url-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const url = $('#model-url').value.trim();
  if (url) chooseModel(new URL(url, location.href).href);
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
$('#forget-downloads').addEventListener('click', async () => {
  await forgetDownloads();
  await showDownloadsSize();
  $('#run-note').textContent = 'Downloaded models forgotten: opening one downloads it again.';
});

/** The space the kept downloads take, beside "Forget downloaded models". */
async function showDownloadsSize() {
  if (!canKeepDownloads()) {
    $('#keep-note').textContent = 'are not kept: this page is not served over https or from localhost, so the browser offers no storage for them';
    $('#forget-downloads').hidden = true;
    return;
  }
  const { files, bytes } = await downloadedSize();
  $('#downloads-size').textContent = files ? `(${formatBytes(bytes)} in ${files} files kept)` : '(nothing kept yet)';
  $('#forget-downloads').disabled = files === 0;
}

// The gallery of suggested real models: family, size and what to look at; a click opens one. A large
// one (more than the page can hold) says so and what to do instead, with no Open button.
function showGallery() {
  $('#hub-suggestions').replaceChildren(...gallery.filter((m) => !m.large).map((m) => h('option', { value: m.id })));
  $('#gallery').replaceChildren(...gallery.map((m) => h('article', m.large ? { class: 'large' } : {},
    h('h3', {}, m.id),
    h('p', {}, `${m.family} · ${(m.parameters / 1e6).toFixed(0)}M parameters · ${m.dtype} · about ${formatBytes(m.bytes)} to download`),
    h('p', {}, m.look),
    h('p', { class: 'hint' }, m.measured ? '' : 'Head figures not yet measured by attnplay (what to look at is from the literature).'),
    m.large ? h('p', { class: 'large-note' }, `Large: ${m.large}`)
      : h('button', { type: 'button', 'data-model': hubReference({ id: m.id }) }, `Open ${m.id}`))));
}
$('#gallery').addEventListener('click', (event) => {
  const button = event.target.closest('button[data-model]');
  if (button) chooseModel(button.dataset.model);
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
// The boxes follow texts set elsewhere (the compare view's example, a model's own example text).
store.subscribe((state, changed) => {
  for (const [key, box] of [['text', textA], ['textB', textB], ['target', targetText]]) {
    if (changed.includes(key) && box.value !== state[key]) box.value = state[key];
  }
});
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
// Each of PICTURE_VIEWS' elements offers exportCanvas() and svg().
const activeView = () => (PICTURE_VIEWS.includes(store.state.view) ? $(`${store.state.view}-view`) : null);
// The head, matrix and neuron pictures get a title (model, layer, heads or head, the text; the neuron view's
// query token, and the key of its rotation panel) and their legend (export-frame.js).
const NEURON_LEGEND = 'Rows: the query vector q, then for each key its vector k, q × k element by element, q·k, q·k ÷ √d_k and the softmax weight. Blue: positive, orange: negative; stronger colour, larger magnitude.';
function exportFrame() {
  const { view, layer, heads } = store.state;
  if (!result || !['head', 'matrix', 'neuron'].includes(view)) return null;
  const element = activeView();
  const headCount = result.attentions.shape[1];
  const colours = { text: viewColours(element).text, background: pageBackground(element) };
  if (view === 'neuron') {
    const shown = element.neuronModel();
    if (!shown) return null;
    const { title, subtitle } = exportCaption({ modelName: model.name, layer: shown.layer, heads: [shown.head], headCount, texts: result.texts });
    const keys = shown.keys;
    const rotaryKey = shown.rotary ? ` · rotation of the key “${result.tokens[shown.rotary.key].display}” (token ${shown.rotary.key + 1})` : '';
    return {
      title: `${title} · query “${shown.queryLabel}” (token ${shown.query + 1}) · keys ${keys[0].key + 1}–${keys[keys.length - 1].key + 1}${rotaryKey}`,
      subtitle, legend: NEURON_LEGEND, swatches: [], colours,
    };
  }
  const shown = (heads ?? [...Array(headCount).keys()]).filter((head) => head < headCount);
  return {
    ...exportCaption({ modelName: model.name, layer, heads, headCount, texts: result.texts }),
    legend: element.querySelector(view === 'head' ? '.head-view-legend' : '.matrix-legend')?.textContent ?? '',
    swatches: view === 'head' ? shown.map((head) => ({ colour: headColour(head), label: `H${head + 1}` })) : [],
    colours,
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
$('#export-json').addEventListener('click', async () => {
  if (translated) download(JSON.stringify(encoderDecoderJson({ modelName: model.name, modelType: model.config.modelType, run: translated })), `attnplay-${model.name}-attention.json`, 'application/json');
  else if (result) {
    const seen = result.picture ? await pictureData(result.picture) : null;
    download(attentionJson({ modelName: model.name, modelType: model.config.modelType, tokens: result.tokens, texts: result.texts, attentions: result.attentions, picture: seen }), `attnplay-${model.name}-attention.json`, 'application/json');
  }
});
$('#export-npy').addEventListener('click', () => {
  // An encoder–decoder part's own tensor: [L, H, S, S], [L, H, T, T] or cross-attention's [L, H, T, S].
  if (result) download(toNpy(result.cross?.attentions ?? result.attentions), `attnplay-${model.name}-${translated ? `${store.state.part}-` : ''}attention.npy`);
});

// "Download as a page": one self-contained HTML file: the widget in data mode
// for the views it draws (page-export.js), else a snapshot of the tab as drawn (view-snapshot.js).
function snapshotTitle(view) {
  const label = $(`[role=tab][data-view="${view}"]`).textContent;
  if (view === 'scratch' || !result || !model) return `attnplay: ${label}`;
  return `${label} · ${model.name} · ${quotedText(result.texts)}`;
}
$('#export-page').addEventListener('click', async () => {
  const { view } = store.state;
  const widgetView = WIDGET_VIEWS.includes(view);
  if (!result && widgetView) return;
  try {
    const page = widgetView
      ? await attentionPage({ result, state: store.state, modelName: model.name, rolloutMethod: $('rollout-view').method, rolloutDisplay: $('rollout-view').display, run: translated, headScores: await headScoresOfShownModel() })
      : viewSnapshotPage($(`[role=tabpanel][data-view="${view}"]`), { title: snapshotTitle(view), theme: drawnTheme(store.state.theme) });
    download(page, view === 'scratch' ? 'attnplay-from-scratch.html' : `attnplay-${model?.name ?? 'model'}-${view}.html`, 'text/html');
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
  const threads = engineInfo.threads > 1 ? `${engineInfo.threads} threads (cross-origin isolated)` : 'one thread';
  setStatus(`Engine loaded: attnplay core ${engineInfo.version}, WASM SIMD ${engineInfo.simd ? 'on' : 'off'}, ${threads}, ${(performance.now() - started).toFixed(0)} ms.`);
  $('#engine-status').dataset.engine = $('#engine-status').textContent; // kept after a model's status replaces the text
} catch (error) {
  setStatus(`The engine could not start: ${error.message}`, 'error');
}
const readJson = async (path, fallback) => {
  try {
    const response = await fetch(path);
    return response.ok ? await response.json() : fallback;
  } catch {
    return fallback;
  }
};
[shipped, { models: gallery }] = await Promise.all([readJson('models/index.json', []), readJson('models/gallery.json', { models: [] })]);
$('#model-select').replaceChildren(
  ...shipped.map((m) => h('option', { value: m.name, title: m.description }, m.name)),
  h('optgroup', { label: 'Real models (downloaded from the Hugging Face hub)' },
    ...gallery.filter((m) => !m.large).map((m) => h('option', { value: hubReference({ id: m.id }), title: `${m.family}, about ${formatBytes(m.bytes)}` }, `${m.id} (${formatBytes(m.bytes)})`)),
    h('option', { value: HUB_MODEL }, 'Any Hugging Face model by id…')),
  h('option', { value: OWN_MODEL }, 'Your own model…'),
);
showGallery();
// A link that names a shipped model and no text opens on the model's own example, as the picker does.
const linkExample = shipped.find((m) => m.name === store.state.model)?.example;
if (linkExample && !/(^#|&)z?text=/.test(location.hash)) store.set({ text: linkExample, ...(/(^#|&)z?textB=/.test(location.hash) ? {} : { textB: '' }) });
selectModel(store.state.model);
if (linkProblem) $('#run-note').textContent = linkProblem;
