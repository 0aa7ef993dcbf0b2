// Where the <attention-view> widget's shadow root gets its styles: by default
// <link>s to ../views/views.css and attention-view.css beside this module; in a
// one-file page (scripts/make-page-template.mjs) the bundle hands the style
// texts over first (inlineWidgetStyles), and they are adopted as constructed
// stylesheets, so the page needs no file and no inline <style> in the shadow.
// Not here: the styles themselves.

// Relative to this module, as the widget is (so a copied dist/ or a package finds them).
const FILES = [new URL('../views/views.css', import.meta.url).href, new URL('./attention-view.css', import.meta.url).href];
let inlined = null; // CSSStyleSheet[] once a bundle has inlined the texts

/** Called by the one-file bundle before the widget is defined: the texts of views.css and attention-view.css. */
export function inlineWidgetStyles(texts) {
  inlined = texts.map((text) => {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(text);
    return sheet;
  });
}

/** Nodes to put in a new shadow root (links), or none after adopting the inlined sheets. */
export function widgetStyles(shadow) {
  if (inlined) {
    shadow.adoptedStyleSheets = [...inlined];
    return [];
  }
  return FILES.map((href) => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = href;
    return link;
  });
}
