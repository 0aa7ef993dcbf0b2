// The live page's own module (the one-file page that runs a model: the Python
// package's playground cell, made by scripts/make-page-template.mjs and
// bundled with the widget, so that both share one registry of embedded
// models): registers the model files the page holds, and puts a row of view
// tabs above each widget.
// The page holds a model's files in <script type="application/json"
// id="attnplay-models">: { name: { config, weights, tokenizer, ...: base64 } };
// a widget whose `model` is that name loads them (embedded-models.js).
// A <nav data-views="head,model,..."> before a widget gets one button per
// view; the pressed one is the widget's `view`.
// Not here: the widget, the frame's height and theme (notebook-frame.js).
import { base64Bytes } from '../attention/attention-data-source.js';
import { registerEmbeddedModel } from '../widget/embedded-models.js';

const VIEW_LABELS = {
  head: 'Head', model: 'Model', matrix: 'Matrix', rollout: 'Rollout', neuron: 'Neuron', lens: 'Logit lens',
  generate: 'Generate', ablation: 'Ablation', compare: 'Compare', cross: 'Translation', scratch: 'From scratch',
};

function registerModels() {
  const holder = document.getElementById('attnplay-models');
  if (!holder) return;
  for (const [name, files] of Object.entries(JSON.parse(holder.textContent))) {
    registerEmbeddedModel(name, Object.fromEntries(Object.entries(files).map(([key, text]) => [key, new Blob([base64Bytes(text, `the page's ${key} file of ${name}`)])])));
  }
}

function viewTabs(nav) {
  const widget = nav.nextElementSibling;
  if (widget?.localName !== 'attention-view') return;
  const buttons = nav.dataset.views.split(',').filter((view) => VIEW_LABELS[view]).map((view) => {
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.view = view;
    button.textContent = VIEW_LABELS[view];
    button.addEventListener('click', () => widget.setAttribute('view', view));
    return button;
  });
  nav.replaceChildren(...buttons);
  const mark = () => {
    const shown = widget.getAttribute('view') ?? 'head';
    for (const button of buttons) button.setAttribute('aria-pressed', String(button.dataset.view === shown));
  };
  new MutationObserver(mark).observe(widget, { attributes: true, attributeFilter: ['view'] });
  mark();
}

registerModels();
for (const nav of document.querySelectorAll('nav[data-views]')) viewTabs(nav);
