// The notebook page's own script (the notebook page template, made by
// scripts/make-page-template.mjs, that the Python package shows in an
// <iframe srcdoc> in a notebook cell): sizes the iframe to the page's content,
// so the cell has no inner scrollbar and nothing is cut off, and gives the
// widgets the notebook's light or dark theme, following it when it changes.
// Large data (attention, or the live page's embedded models) is kept beside
// the frame, in the cell's own <script type="application/json" id=...> (an
// attribute of megabytes parses slowly, and twice): a JSON script of the page
// that is { "attnplay_host_data": id } gets that script's text before the
// widget starts (this script runs first).
// A srcdoc frame has its host's origin, so it reaches its <iframe> element
// and the host document; where it cannot (a sandboxed host), the iframe keeps
// the height the package wrote, the widgets follow the system's theme, and
// data kept beside the frame is replaced by a note saying so.
// Not here: the widget (a separate script of the same page), the Python side.

/** 'light', 'dark' or null (unknown) for the document of a notebook front end. */
export function hostTheme(doc) {
  const body = doc.body;
  if (!body) return null;
  // JupyterLab 4 and Notebook 7.
  if (body.dataset.jpThemeLight === 'true') return 'light';
  if (body.dataset.jpThemeLight === 'false') return 'dark';
  // VS Code's notebook output webview.
  if (body.classList.contains('vscode-light') || body.classList.contains('vscode-high-contrast-light')) return 'light';
  if (body.classList.contains('vscode-dark') || body.classList.contains('vscode-high-contrast')) return 'dark';
  // Colab and others: the lightness of the first opaque background from the body up.
  for (let element = body; element; element = element.parentElement) {
    const rgba = /rgba?\(([^)]+)\)/.exec(doc.defaultView.getComputedStyle(element).backgroundColor)?.[1].split(',').map(Number);
    if (rgba && (rgba.length < 4 || rgba[3] > 0.5)) return 0.2126 * rgba[0] + 0.7152 * rgba[1] + 0.0722 * rgba[2] < 128 ? 'dark' : 'light';
  }
  return null;
}

function host() {
  try {
    const frame = window.frameElement;
    return frame ? { frame, doc: frame.ownerDocument } : null;
  } catch {
    return null; // a cross-origin host
  }
}

/** Widgets written without a theme (or with "auto") take the host's; a theme the caller chose stays. */
function followTheme(doc) {
  const following = [...document.querySelectorAll('attention-view')].filter((widget) => (widget.getAttribute('theme') ?? 'auto') === 'auto');
  const apply = () => {
    const theme = hostTheme(doc) ?? 'auto';
    for (const widget of following) if (widget.getAttribute('theme') !== theme) widget.setAttribute('theme', theme);
    document.documentElement.dataset.theme = theme;
  };
  apply();
  const observer = new MutationObserver(apply);
  for (const element of [doc.documentElement, doc.body]) observer.observe(element, { attributes: true, attributeFilter: ['class', 'data-jp-theme-light', 'style', 'theme'] });
}

function fitHeight(frame) {
  const fit = () => {
    const height = `${Math.ceil(document.documentElement.getBoundingClientRect().height)}px`;
    if (frame.style.height !== height) frame.style.height = height;
  };
  new ResizeObserver(fit).observe(document.documentElement);
  fit();
}

const HOST_DATA_KEY = 'attnplay_host_data';

/**
 * Fills each JSON script that names data kept beside the frame (a widget's
 * attention, the live page's models) with that data; where it cannot be read,
 * a note takes the place of the widget.
 */
function fetchHostData(doc) {
  for (const script of document.querySelectorAll('script[type="application/json"]')) {
    if (script.textContent.length > 200 || !script.textContent.includes(HOST_DATA_KEY)) continue;
    const holder = doc?.getElementById(JSON.parse(script.textContent)[HOST_DATA_KEY]);
    if (holder) {
      script.textContent = holder.textContent;
      continue;
    }
    const note = document.createElement('p');
    note.setAttribute('role', 'alert');
    note.textContent = 'This view\'s data is kept in the notebook beside this frame, which this viewer does not let the frame read. '
      + 'Open the notebook in Jupyter, VS Code or Colab, or write the view as a page of its own with save_html().';
    const widget = script.closest('attention-view') ?? document.querySelector('attention-view');
    script.remove();
    widget?.replaceWith(note);
  }
}

const found = host();
fetchHostData(found?.doc ?? null);
if (found) {
  fitHeight(found.frame);
  followTheme(found.doc);
}
