"""The HTML of a view: the widget's page templates filled with attention data.

Two templates come with the package (written into ``attnplay/static/`` by the
project's build, ``scripts/assemble-dist.mjs``): ``notebook-page.html``, shown
in a cell inside an ``<iframe srcdoc>`` (it sizes the frame to its content and
follows the notebook's theme), and ``attention-page.html``, the one-file page
that ``save_html`` writes. Both hold the ``<attention-view>`` widget and its
styles inline under a Content-Security-Policy that allows nothing else: no
network, no require.js, no CDN. They are filled the way the playground's
"Download as a page" fills them (web/export/page-export.js).
Not here: which attributes and data a view asks for (_views.py).
"""
import html
import json
from importlib import resources

SCRIPT = '<script type="module">'


def _template(name):
    try:
        return resources.files('attnplay').joinpath('static', name).read_text(encoding='utf-8')
    except FileNotFoundError:
        raise RuntimeError(
            f'attnplay/static/{name} is missing: this copy of the package was installed without the widget. '
            'In the attnplay repository run `npm run build`, then `pip install ./python`.') from None


def fill(template, title, attributes, data):
    """The template with its placeholders filled (in the part before the first script only)."""
    start = template.index(SCRIPT)
    values = {
        '@@ATTNPLAY_TITLE@@': html.escape(title, quote=True),
        '@@ATTNPLAY_ATTRIBUTES@@': ' '.join(f'{name}="{html.escape(str(value), quote=True)}"' for name, value in attributes.items()),
        # Inside <script type="application/json">, "<" must not start a tag: JSON lets it be written \u003c.
        '@@ATTNPLAY_DATA@@': json.dumps(data, separators=(',', ':'), allow_nan=False).replace('<', '\\u003c'),
    }
    head = template[:start]
    for name, value in values.items():
        head = head.replace(name, value)
    return head + template[start:]


class AttentionHTML:
    """A view's HTML: shown by Jupyter (``_repr_html_``), ``.data`` as bertviz's HTML objects have it, ``save_html``."""

    def __init__(self, title, attributes, data, height):
        self.title = title
        self.attributes = dict(attributes)
        self.attention_data = data
        self.height = height
        page = fill(_template('notebook-page.html'), title, self.attributes, data)
        # The page sets the frame's height to its content once it runs; `height` is what the cell has before (or without) that.
        self.data = (f'<iframe srcdoc="{html.escape(page, quote=True)}" title="{html.escape(title, quote=True)}" '
                     f'style="width: 100%; height: {int(height)}px; border: 0; display: block" loading="eager"></iframe>')

    def _repr_html_(self):
        return self.data

    def __html__(self):
        return self.data

    def page(self):
        """The one-file page (a complete HTML document that loads nothing from the network)."""
        return fill(_template('attention-page.html'), self.title, self.attributes, self.attention_data)

    def save_html(self, path):
        """Writes the one-file page to ``path`` (open it in any browser, attach it, host it)."""
        with open(path, 'w', encoding='utf-8') as file:
            file.write(self.page())
        return path
