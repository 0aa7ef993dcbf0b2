"""attnplay in notebooks: attention views that render offline in Jupyter Notebook,
JupyterLab, VS Code and Colab, drawn by attnplay's <attention-view> widget.

Drop-in for bertviz (``head_view``, ``model_view`` with bertviz's arguments)
and CircuitsVis (``attention_heads``, ``attention_patterns``,
``attention_pattern``), plus ``matrix_view``, ``rollout_view`` and
``neuron_view``; and ``playground``, the widget running a model in the
notebook's browser. Standard library only at import; numpy and torch are used
when the caller passes their arrays. Nothing is fetched at import or render
time: each view is one self-contained HTML output. See python/README.md.
"""
from importlib import resources

from ._page import AttentionHTML
from ._playground import playground, shipped_models
from ._tensors import AttentionInputError
from ._views import (attention_heads, attention_pattern, attention_patterns, head_view, matrix_view,
                     model_view, neuron_view, rollout_view)


def _version():
    try:
        return resources.files('attnplay').joinpath('static', 'version.txt').read_text(encoding='utf-8').strip()
    except FileNotFoundError:
        return '0+unbuilt'  # a source checkout before `npm run build`


__version__ = _version()

__all__ = ['AttentionHTML', 'AttentionInputError', 'attention_heads', 'attention_pattern', 'attention_patterns',
           'head_view', 'matrix_view', 'model_view', 'neuron_view', 'playground', 'rollout_view', 'shipped_models', '__version__']
