// "Download as a page": the playground's current attention and view as one
// self-contained HTML file. The template (attention-page.html, made by
// scripts/make-page-template.mjs at build time) holds the <attention-view>
// widget bundled with its styles and a strict Content-Security-Policy; this
// fills in a title, the widget's attributes (view, layer, heads, token,
// threshold, theme, rollout-method, overlay) and the attention as data-mode JSON (tokens, the
// tensor as base64 float32, and the model view's head labels). The CLI's `attention --format html` fills the
// same template the same way (cpp/cli/html_page.cpp).
// An encoder–decoder model's run embeds its three parts (the widget's
// encoder–decoder data) and opens on the part shown; a vision transformer's
// embeds its picture as the model saw it, its labels and norms (pictureData).
// The tabs the widget does not draw are saved as snapshots (view-snapshot.js).
// Not here: the widget (attention-view.js), downloads (export.js).
import { base64OfBytes, encoderDecoderJson, pictureData } from './export.js';

const TEMPLATE_URL = new URL('../attention-page.html', import.meta.url);
const SCRIPT = '<script type="module">';
const escapeHtml = (text) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/** Fills the template's placeholders (in one pass, before the widget's script only). */
export function fillPageTemplate(template, { title, attributes, data }) {
  const script = template.indexOf(SCRIPT);
  if (script < 0) throw new Error('the page template has no widget script');
  const values = {
    '@@ATTNPLAY_TITLE@@': escapeHtml(title),
    '@@ATTNPLAY_ATTRIBUTES@@': Object.entries(attributes).map(([name, value]) => `${name}="${escapeHtml(String(value))}"`).join(' '),
    // Inside <script type="application/json">, "<" must not start a tag: JSON lets it be written \u003c.
    '@@ATTNPLAY_DATA@@': JSON.stringify(data).replaceAll('<', '\\u003c'),
  };
  return template.slice(0, script).replace(/@@ATTNPLAY_[A-Z]+@@/g, (name) => {
    if (!(name in values)) throw new Error(`unknown placeholder ${name} in the page template`);
    return values[name];
  }) + template.slice(script);
}

/** The playground's views that the widget draws (the other tabs are saved as snapshots, view-snapshot.js). */
export const WIDGET_VIEWS = ['image', 'head', 'model', 'matrix', 'rollout', 'cross'];

/** The widget attributes that reproduce the playground's view of `state` (and the rollout view's method and display). */
export function viewAttributes(state, rolloutMethod = 'rollout', rolloutDisplay = 'matrix') {
  const attributes = { view: WIDGET_VIEWS.includes(state.view) ? state.view : 'head', layer: state.layer, controls: '' };
  if (state.view === 'rollout' && rolloutMethod !== 'rollout') attributes['rollout-method'] = rolloutMethod;
  if (state.view === 'rollout' && rolloutDisplay !== 'matrix') attributes['rollout-display'] = rolloutDisplay;
  if (state.view === 'image' && state.overlay !== 'attention') attributes.overlay = state.overlay;
  if (state.heads !== null) attributes.heads = state.heads.join(',');
  if (state.token !== null) attributes.token = state.token;
  if (state.threshold > 0) attributes.threshold = state.threshold;
  if (state.theme !== 'auto') attributes.theme = state.theme;
  return attributes;
}

/**
 * The data a one-file page embeds: tokens and the tensor as base64 float32
 * (exact, and about a third of the size of nested JSON lists).
 */
function embeddedData({ tokens, attentions, model, modelType, causal, headScores }) {
  const [layers, heads] = attentions.shape;
  const labels = new Map((headScores ?? []).map((s) => [`${s.layer}.${s.head}`, s.labels]));
  return {
    model, model_type: modelType, causal,
    tokens: tokens.map((t) => ({ token: t.display, id: t.id, special: Boolean(t.special), type_id: t.typeId ?? 0 })),
    attentions: base64Tensor(attentions),
    // The model view's head labels (its badges), when the head-pattern analysis has run.
    ...(headScores ? { head_labels: Array.from({ length: layers }, (_, l) => Array.from({ length: heads }, (__, h) => labels.get(`${l}.${h}`) ?? [])) } : {}),
  };
}

/** A float32 tensor as { dtype, shape, base64 } (its little-endian bytes). */
function base64Tensor({ data, shape }) {
  return { dtype: 'float32', shape: [...shape], base64: base64OfBytes(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)) };
}

/**
 * The page (HTML text) for a run's result shown with `state` (and the rollout
 * view's method and display); `run`: an encoder–decoder model's run (translation-run.js),
 * whose three parts it embeds; `headScores`: the model view's head labels (model-view.js).
 */
export async function attentionPage({ result, state, modelName, rolloutMethod = 'rollout', rolloutDisplay = 'matrix', run = null, headScores = null }) {
  const response = await fetch(TEMPLATE_URL);
  if (!response.ok) throw new Error(`the page template ${TEMPLATE_URL.pathname} could not be loaded (HTTP ${response.status})`);
  if (run) {
    return fillPageTemplate(await response.text(), {
      title: `Attention of ${modelName}: “${run.source.text}” → “${run.translation}”`,
      attributes: { ...viewAttributes(state, rolloutMethod, rolloutDisplay), attention: state.part },
      data: encoderDecoderJson({ modelName, modelType: result.modelType, run }, base64Tensor),
    });
  }
  const [layers, heads, tokens] = result.attentions.shape;
  const grid = result.picture?.grid;
  return fillPageTemplate(await response.text(), {
    title: `Attention of ${modelName}: ${layers} layers × ${heads} heads, ${grid ? `${grid.rows} × ${grid.columns} patches, ` : ''}${tokens} tokens`,
    attributes: viewAttributes(state, rolloutMethod, rolloutDisplay),
    data: {
      ...embeddedData({ tokens: result.tokens, attentions: result.attentions, model: modelName, modelType: result.modelType, causal: result.causal, headScores }),
      ...(result.picture ? await pictureData(result.picture) : {}),
    },
  });
}
