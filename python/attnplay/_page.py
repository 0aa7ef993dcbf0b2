"""The HTML of a view: the widget's page templates filled with attention data.

Three templates come with the package (written into ``attnplay/static/`` by
the project's build, ``scripts/assemble-dist.mjs``): ``notebook-page.html``,
shown in a cell inside an ``<iframe srcdoc>`` (it sizes the frame to its
content and follows the notebook's theme); ``attention-page.html``, the
one-file page that ``save_html`` writes; and ``live-page.html``, the
playground's, which also holds the engine worker and the WASM core and runs a
model in the page. Each holds the ``<attention-view>`` widget and its styles
inline under a Content-Security-Policy that allows nothing else: no
require.js, no CDN; the data pages no network at all, the live page only the
model's downloads. They are filled the way the playground's "Download as a
page" fills them (web/export/page-export.js).
Not here: which attributes and data a view asks for (_views.py).
"""
import html
import json
import re
import uuid
from importlib import resources

SCRIPT = '<script type="module">'
# Data (attention, a playground's model files) larger than this, in characters of JSON, is kept beside the cell's
# frame, not in its srcdoc (see web/export/notebook-frame.js).
INLINE_DATA_LIMIT = 1 << 20


def _template(name):
    try:
        return resources.files('attnplay').joinpath('static', name).read_text(encoding='utf-8')
    except FileNotFoundError:
        raise RuntimeError(
            f'attnplay/static/{name} is missing: this copy of the package was installed without the widget. '
            'In the attnplay repository run `npm run build`, then `pip install ./python`.') from None


def json_text(data):
    """JSON for a <script type="application/json">: ASCII, and "<" written \\u003c so that it cannot start a tag."""
    return json.dumps(data, separators=(',', ':'), allow_nan=False).replace('<', '\\u003c')


def fill(template, title, attributes, data_text, placeholders=None):
    """The template with its placeholders filled (in the part before the first script only). data_text: the
    data as json_text wrote it. placeholders: more of them ({'VIEWS': text}, written as given; the caller escapes)."""
    start = template.index(SCRIPT)
    values = {
        '@@ATTNPLAY_TITLE@@': html.escape(title, quote=True),
        '@@ATTNPLAY_ATTRIBUTES@@': ' '.join(f'{name}="{html.escape(str(value), quote=True)}"' for name, value in attributes.items()),
        '@@ATTNPLAY_DATA@@': data_text,
        **{f'@@ATTNPLAY_{name}@@': value for name, value in (placeholders or {}).items()},
    }
    # One pass: a value that contains a placeholder's name (say, a text) is written as it is.
    head = re.sub(r'@@ATTNPLAY_[A-Z]+@@', lambda match: values.get(match.group(0), match.group(0)), template[:start])
    return head + template[start:]


def _ascii_attribute(text):
    """An attribute value, escaped, in ASCII (other characters as references): it reads the same in a file of any encoding."""
    return html.escape(text, quote=True).encode('ascii', 'xmlcharrefreplace').decode('ascii')


class AttentionHTML:
    """A view's HTML: shown by Jupyter (``_repr_html_``), ``.data`` as bertviz's HTML objects have it, ``save_html``.

    Data views fill notebook-page.html for the cell and attention-page.html for save_html; a playground
    (live=True) fills live-page.html for both, its extra placeholders in ``placeholders``.
    """

    def __init__(self, title, attributes, data, height, live=False, placeholders=None):
        self.title = title
        self.attributes = dict(attributes)
        self.attention_data = data
        self.height = height
        self.live = live
        self.placeholders = placeholders
        text = json_text(data)
        beside = ''
        if len(text) > INLINE_DATA_LIMIT:
            # Kept beside the frame, in the cell: the frame's script hands it to the widget (notebook-frame.js).
            holder = f'attnplay-data-{uuid.uuid4().hex}'
            beside = f'<script type="application/json" id="{holder}">{text}</script>'
            text = json_text({'attnplay_host_data': holder})
        page = fill(_template('live-page.html' if live else 'notebook-page.html'), title, self.attributes, text, placeholders)
        # The page sets the frame's height to its content once it runs; `height` is what the cell has before (or without) that.
        self.data = (f'<div class="attnplay-output">{beside}<iframe srcdoc="{_ascii_attribute(page)}" title="{_ascii_attribute(title)}" '
                     f'style="width: 100%; height: {int(height)}px; border: 0; display: block" loading="eager"></iframe></div>')

    def _repr_html_(self):
        return self.data

    def __html__(self):
        return self.data

    def page(self):
        """The one-file page: a complete HTML document (a data view's loads nothing from the network)."""
        template = _template('live-page.html' if self.live else 'attention-page.html')
        return fill(template, self.title, self.attributes, json_text(self.attention_data), self.placeholders)

    def save_html(self, path):
        """Writes the one-file page to ``path`` (open it in any browser, attach it, host it)."""
        with open(path, 'w', encoding='utf-8') as file:
            file.write(self.page())
        return path
