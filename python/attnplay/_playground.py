"""The live playground in a cell: attnplay's widget running a model in the
notebook's browser (its engine worker and WASM core are inside the output),
with view tabs (head, model, matrix, rollout, neuron, logit lens, generation,
ablation, compare), the text editable.

A shipped model (``austen-gpt``, ``austen-bert``, ``gettext-en-fr``) travels
inside the output, so it runs offline; a Hugging Face hub model
(``"HuggingFaceTB/SmolLM2-135M"``) is downloaded by the reader's browser from
the hub (or the mirror ``hub``) and kept in its Cache Storage.
Not here: the data views (_views.py), the page (_page.py).
"""
import base64
import json
from importlib import resources
from urllib.parse import urlsplit

from ._page import AttentionHTML
from ._views import _theme, check_action, show

MODEL_FILES = {'config': 'config.json', 'weights': 'model.safetensors', 'tokenizer': 'tokenizer.json'}
CAUSAL_VIEWS = ['head', 'model', 'matrix', 'rollout', 'neuron', 'lens', 'generate', 'ablation', 'compare']
ENCODER_VIEWS = ['head', 'model', 'matrix', 'rollout', 'neuron', 'lens', 'ablation', 'compare']
TRANSLATION_VIEWS = ['cross', 'head', 'model', 'matrix', 'rollout', 'neuron', 'lens', 'ablation']
KNOWN_VIEWS = set(CAUSAL_VIEWS + TRANSLATION_VIEWS + ['scratch'])


def shipped_models():
    """The names of the models that come with the package."""
    folder = resources.files('attnplay').joinpath('static', 'models')
    return sorted(entry.name for entry in folder.iterdir() if entry.is_dir()) if folder.is_dir() else []


def _shipped_files(name):
    folder = resources.files('attnplay').joinpath('static', 'models', name)
    return {key: base64.b64encode(folder.joinpath(file).read_bytes()).decode('ascii') for key, file in MODEL_FILES.items()}


def _default_views(config):
    if config.get('is_encoder_decoder'):
        return TRANSLATION_VIEWS
    if config.get('model_type') in ('bert', 'roberta', 'distilbert', 'xlm-roberta', 'electra'):
        return ENCODER_VIEWS
    return CAUSAL_VIEWS


def playground(model='austen-gpt', text=None, view=None, views=None, hub=None, display_mode=None, editable=True,
               height=640, html_action='view', **attributes):
    """attnplay's playground in a cell: the widget runs ``model`` on ``text`` in the notebook's browser.

    model: a shipped model's name (``attnplay.shipped_models()``), a Hugging Face hub id (``"ORG/NAME"``,
    ``"hf:ORG/NAME@revision"``), or the URL of a model folder the browser can fetch (with CORS headers).
    view: the view shown first; views: the tabs (default: those the model's kind has). hub: a mirror that
    serves the hub's URL layout. Further keyword arguments are the widget's attributes
    (``generate="20"``, ``ablate="1:0"``, ``layer=2``, ``text_b=...``; see web/embed/index.html).
    """
    check_action(html_action)
    placeholders = {}
    data = {}
    config = {}
    shipped = shipped_models()
    if model in shipped:
        data = {model: _shipped_files(model)}
        config = json.loads(resources.files('attnplay').joinpath('static', 'models', model, 'config.json').read_text(encoding='utf-8'))
        widget_model = model
        sources = ["'none'"]  # the files are in the page
    elif isinstance(model, str) and model.startswith(('http://', 'https://')):
        widget_model = model
        parts = urlsplit(model)
        sources = [f'{parts.scheme}://{parts.netloc}']
    elif isinstance(model, str) and ('/' in model or model.startswith('hf:')):
        widget_model = model if model.startswith('hf:') else f'hf:{model}'
        sources = ['https:']  # the hub and its file stores
        if hub is not None:
            parts = urlsplit(hub)
            if parts.scheme not in ('http', 'https') or not parts.netloc:
                raise ValueError(f'hub must be an http(s) URL, not {hub!r}')
            sources.append(f'{parts.scheme}:')  # the mirror and the file store it redirects to
    else:
        raise ValueError(f'model {model!r} is neither a shipped model ({", ".join(shipped) or "none in this build"}), '
                         'a Hugging Face hub id ("ORG/NAME") nor a model folder URL')
    views = list(views) if views is not None else _default_views(config)
    unknown = [v for v in views + ([view] if view else []) if v not in KNOWN_VIEWS]
    if unknown:
        raise ValueError(f'unknown view {unknown[0]!r}; the views are {", ".join(sorted(KNOWN_VIEWS))}')
    widget = {'model': widget_model, 'view': view or views[0], 'controls': '', **_theme(display_mode)}
    if editable:
        widget['editable'] = ''
    if text is not None:
        widget['text'] = text
    if hub is not None:
        widget['hub'] = hub
    for name, value in attributes.items():
        widget[name.replace('_', '-')] = value
    placeholders['VIEWS'] = ','.join(views)
    placeholders['CONNECT'] = ' '.join(sources)
    return show(AttentionHTML(f'attnplay playground: {model}', widget, data, height, live=True, placeholders=placeholders), html_action)
