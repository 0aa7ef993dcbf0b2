// "Download as a page" for the tabs that the <attention-view> widget does not
// draw (Logit lens, Neuron view, Compare texts, Ablation, From scratch): the
// view as the reader sees it, frozen into one self-contained HTML file that is
// drawn the same way offline. The view's elements are cloned with the values
// of their form controls; every canvas becomes a PNG image of what it shows;
// a view may then mend the copy with offlineCopy(copy) (the neuron view puts
// all its key rows in, as SVG, not only the rows scrolled into view); the
// page's own stylesheets and theme come along. The file has no script: it is
// the drawing and its text, not a running model (readouts on hover and edits
// need the playground), and its Content-Security-Policy loads nothing:
// default-src 'none', images from data: only, styles inline (the views
// colour their cells through style attributes).
// Token text stays text: cloning copies text nodes, and the title is escaped.
// Not here: the widget's one-file page (page-export.js), downloads (export.js).

const escapeHtml = (text) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

const FOOTER = 'A snapshot of an attnplay playground view, drawn offline from this file alone. Its controls and readouts on hover need the playground.';

/** The CSS rules of the page's own stylesheets, as text. */
function pageCss(document) {
  return [...document.styleSheets].flatMap((sheet) => {
    try {
      return [...sheet.cssRules].map((rule) => rule.cssText);
    } catch {
      return []; // a stylesheet from another origin: not ours
    }
  }).join('\n');
}

/** Sets on `frozen` (a clone of `live`) what a clone does not keep: a form control's value, checked, selected; a canvas's pixels (as an image, at the size it is shown). */
function freeze(live, frozen) {
  if (live.localName === 'textarea') frozen.textContent = live.value;
  else if (live.localName === 'select') [...frozen.options].forEach((option, j) => option.toggleAttribute('selected', live.options[j]?.selected ?? false));
  else if (live.localName === 'input' && ['checkbox', 'radio'].includes(live.type)) frozen.toggleAttribute('checked', live.checked);
  else if (live.localName === 'input') frozen.setAttribute('value', live.value);
  else if (live.localName === 'canvas') {
    const image = live.ownerDocument.createElement('img');
    for (const { name, value } of frozen.attributes) if (!['tabindex', 'role', 'aria-label', 'width', 'height'].includes(name)) image.setAttribute(name, value);
    image.alt = live.getAttribute('aria-label') ?? '';
    if (live.width && live.height) image.src = live.toDataURL('image/png');
    const { width, height } = live.getBoundingClientRect();
    image.style.width = `${width || live.width}px`;
    image.style.height = `${height || live.height}px`;
    frozen.replaceWith(image);
  }
}

/**
 * The HTML text of a page that shows `panel` (the playground's tab panel
 * shown, with its view drawn) as it is drawn now, titled `title`, in `theme`
 * ('light' or 'dark': the one its colours were drawn for, view-support.js's drawnTheme).
 */
export function viewSnapshotPage(panel, { title, theme }) {
  const document = panel.ownerDocument;
  const copy = panel.cloneNode(true);
  const copies = copy.querySelectorAll('*'); // the same elements in the same order, before any is replaced
  const pairs = [[panel, copy], ...[...panel.querySelectorAll('*')].map((live, i) => [live, copies[i]])];
  for (const [live, frozen] of pairs) freeze(live, frozen);
  for (const [live, frozen] of pairs) live.offlineCopy?.(frozen);
  copy.removeAttribute('hidden');
  const csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";
  return `<!doctype html>
<html lang="en" data-theme="${theme === 'dark' ? 'dark' : 'light'}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="attnplay">
<title>${escapeHtml(title)}</title>
<style>${pageCss(document).replaceAll('</style', '<\\/style')}
body.attnplay-snapshot{display:block;max-width:80rem;margin:0 auto;padding:1rem}.snapshot-title{font-size:1.2rem;overflow-wrap:anywhere}</style>
</head>
<body class="attnplay-snapshot">
<h1 class="snapshot-title">${escapeHtml(title)}</h1>
${copy.outerHTML}
<footer class="hint">${FOOTER}</footer>
</body>
</html>
`;
}
