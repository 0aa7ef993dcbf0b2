// Builds the one-file page template: the <attention-view> widget bundled with
// esbuild into one inline module script, its stylesheets inlined (adopted as
// constructed stylesheets, web/widget/widget-styles.js), a Content-Security-Policy that
// allows nothing but that script (by its hash) and the page's own <style>
// (by its hash), and three placeholders that an export fills:
// @@ATTNPLAY_TITLE@@ (HTML text), @@ATTNPLAY_ATTRIBUTES@@ (the widget's
// attributes) and @@ATTNPLAY_DATA@@ (the attention JSON, with every "<"
// written \u003c). Both writers fill it the same way: the playground's
// "Download as a page" (web/export/page-export.js, reading dist/attention-page.html)
// and the CLI's `attention --format html` (cpp/cli/html_page.cpp, which
// compiles in the C++ source this script writes with --cpp).
// Usage: node scripts/make-page-template.mjs [--html OUT.html] [--cpp OUT.cpp]
// Not here: filling the template (the two writers above).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const webDir = fileURLToPath(new URL('../web/', import.meta.url));

// Runs before attention-view.js defines the element (ES modules evaluate in import order).
const STYLES_MODULE = `
import { inlineWidgetStyles } from './widget/widget-styles.js';
import views from './views/views.css';
import widget from './widget/attention-view.css';
inlineWidgetStyles([views, widget]);
`;

const PAGE_CSS = 'body{margin:0 auto;max-width:72rem;padding:1rem;font:15px/1.45 system-ui,sans-serif;color:#1b1b1f;background:#fff}'
  + 'h1{font-size:1.1rem;font-weight:600;margin:0 0 .75rem;overflow-wrap:anywhere}footer{margin-top:.75rem;font-size:.8rem;color:#5b5b66}'
  + '@media (prefers-color-scheme:dark){body{color:#e8e8ee;background:#111114}footer{color:#a0a0ad}}';

/** The widget and everything it imports, as one minified ES module (text). */
export async function widgetBundle() {
  const result = await build({
    stdin: { contents: "import 'attnplay:inline-styles';\nimport './widget/attention-view.js';\n", resolveDir: webDir, sourcefile: 'attention-page-entry.js' },
    bundle: true, format: 'esm', minify: true, write: false, target: 'es2022', legalComments: 'none',
    loader: { '.css': 'text' },
    logLevel: 'error',
    plugins: [{
      name: 'inline-styles',
      setup(esbuild) {
        esbuild.onResolve({ filter: /^attnplay:inline-styles$/ }, () => ({ path: 'inline-styles', namespace: 'attnplay' }));
        esbuild.onLoad({ filter: /.*/, namespace: 'attnplay' }, () => ({ contents: STYLES_MODULE, resolveDir: webDir, loader: 'js' }));
      },
    }],
  });
  return result.outputFiles[0].text.replaceAll('</script', '<\\/script');
}

const sha256 = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** A self-contained page: its CSS and module scripts allowed by their hashes and nothing else. */
function htmlPage({ css, body, scripts }) {
  const csp = `default-src 'none'; script-src ${scripts.map(sha256).join(' ')}; style-src ${sha256(css)}; base-uri 'none'; form-action 'none'`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="attnplay">
<title>@@ATTNPLAY_TITLE@@</title>
<style>${css}</style>
</head>
<body>
${body}
${scripts.map((script) => `<script type="module">${script}</script>`).join('\n')}
</body>
</html>
`;
}

const WIDGET_ELEMENT = '<attention-view @@ATTNPLAY_ATTRIBUTES@@><script type="application/json">@@ATTNPLAY_DATA@@</script></attention-view>';

/** The page template (text) around a bundle. */
export function pageTemplate(bundle) {
  return htmlPage({
    css: PAGE_CSS,
    body: `<h1>@@ATTNPLAY_TITLE@@</h1>
${WIDGET_ELEMENT}
<footer>Attention drawn by attnplay's &lt;attention-view&gt; widget. This file is self-contained: it loads nothing from the network.</footer>`,
    scripts: [bundle],
  });
}

const NOTEBOOK_CSS = 'html,body{margin:0;padding:0;background:transparent}body{font:14px/1.4 system-ui,sans-serif;padding:1px 0}';

/** web/export/notebook-frame.js as one minified script (text). */
export async function notebookFrameScript() {
  const result = await build({
    entryPoints: [`${webDir}export/notebook-frame.js`], bundle: true, format: 'esm', minify: true, write: false, target: 'es2022', legalComments: 'none', logLevel: 'error',
  });
  return result.outputFiles[0].text.replaceAll('</script', '<\\/script');
}

/**
 * The notebook page template: the same widget bundle and placeholders as the
 * page template, without the title and footer, with notebook-frame.js (which
 * sizes the cell's iframe and follows the notebook's theme). The Python
 * package (python/attnplay/) fills it and shows it in an <iframe srcdoc>.
 */
export function notebookTemplate(bundle, frameScript) {
  return htmlPage({ css: NOTEBOOK_CSS, body: WIDGET_ELEMENT, scripts: [frameScript, bundle] });
}

/** C++ source defining attnplay::cli::kPageTemplate (raw string pieces; adjacent literals join). */
function cppSource(template) {
  const delimiter = 'attnplay_page';
  if (template.includes(`)${delimiter}"`)) throw new Error('the template contains the raw-string delimiter');
  const pieces = [];
  for (let i = 0; i < template.length; i += 16000) pieces.push(`R"${delimiter}(${template.slice(i, i + 16000)})${delimiter}"`);
  return `// Generated by scripts/make-page-template.mjs from web/ (the widget bundle); do not edit.
#include "cli/html_page.h"

namespace attnplay::cli {
const char* const kPageTemplate =
${pieces.join('\n')};
}  // namespace attnplay::cli
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const out = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : null);
  const template = pageTemplate(await widgetBundle());
  for (const [flag, text] of [['--html', template], ['--cpp', null]]) {
    const path = out(flag);
    if (!path) continue;
    mkdirSync(dirname(path), { recursive: true });
    const content = text ?? cppSource(template);
    // Unchanged output keeps its timestamp, so make does not rebuild what depends on it.
    let previous = null;
    try { previous = readFileSync(path, 'utf8'); } catch { /* first build */ }
    if (previous !== content) writeFileSync(path, content);
  }
}
