// Builds the one-file page templates.
// - The page template: the <attention-view> widget bundled with esbuild into
//   one inline module script, its stylesheets inlined (adopted as constructed
//   stylesheets, web/widget/widget-styles.js), a Content-Security-Policy that
//   allows nothing but that script (by its hash) and the page's own <style>
//   (by its hash), and three placeholders that an export fills:
//   @@ATTNPLAY_TITLE@@ (HTML text), @@ATTNPLAY_ATTRIBUTES@@ (the widget's
//   attributes) and @@ATTNPLAY_DATA@@ (the attention JSON, with every "<"
//   written \u003c). Three writers fill it the same way: the playground's
//   "Download as a page" (web/export/page-export.js, reading
//   dist/attention-page.html), the CLI's `attention --format html`
//   (cpp/cli/html_page.cpp, which compiles in the C++ source this script
//   writes with --cpp) and the Python package's save_html.
// - The notebook page template (notebookTemplate): the same, without title
//   and footer, with web/export/notebook-frame.js; the Python package shows
//   it in a cell's <iframe srcdoc>.
// - The live page template (liveTemplate): the widget with the engine worker
//   and the WASM core inside the page (web/engine's seams engine-worker-start.js
//   and core-files.js replaced at bundling), web/export/playground-cell.js,
//   view tabs; the Python package's playground().
// scripts/assemble-dist.mjs writes the last two into python/attnplay/static/.
// Usage: node scripts/make-page-template.mjs [--html OUT.html] [--cpp OUT.cpp]
// Not here: filling the templates (the writers above).
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
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

/** esbuild plugin: 'attnplay:inline-styles' is STYLES_MODULE. */
const inlineStyles = {
  name: 'inline-styles',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^attnplay:inline-styles$/ }, () => ({ path: 'inline-styles', namespace: 'attnplay' }));
    esbuild.onLoad({ filter: /.*/, namespace: 'attnplay' }, () => ({ contents: STYLES_MODULE, resolveDir: webDir, loader: 'js' }));
  },
};

/** The widget and everything it imports, as one minified ES module (text). */
export async function widgetBundle() {
  const result = await build({
    stdin: { contents: "import 'attnplay:inline-styles';\nimport './widget/attention-view.js';\n", resolveDir: webDir, sourcefile: 'attention-page-entry.js' },
    bundle: true, format: 'esm', minify: true, write: false, target: 'es2022', legalComments: 'none',
    loader: { '.css': 'text' },
    logLevel: 'error',
    plugins: [inlineStyles],
  });
  return result.outputFiles[0].text.replaceAll('</script', '<\\/script');
}

const sha256 = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * A self-contained page: its CSS and module scripts allowed by their hashes
 * and nothing else; `live` adds what running a model needs (WebAssembly, the
 * engine worker from a blob: URL, downloads from @@ATTNPLAY_CONNECT@@).
 */
function htmlPage({ css, body, scripts, live = false }) {
  const scriptSources = [...scripts.map(sha256), ...(live ? ["'wasm-unsafe-eval'"] : [])].join(' ');
  const liveSources = live ? ' worker-src blob:; connect-src @@ATTNPLAY_CONNECT@@;' : '';
  const csp = `default-src 'none'; script-src ${scriptSources};${liveSources} style-src ${sha256(css)}; base-uri 'none'; form-action 'none'`;
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

const root = fileURLToPath(new URL('../', import.meta.url));

/**
 * The engine worker (web/engine/engine-worker.js and what it imports) as one
 * classic script (text), with the single-threaded WASM core inside it: the
 * Emscripten glue bundled, the .wasm gzipped and base64-encoded, unpacked with
 * DecompressionStream when the worker starts (core-files.js's replacement).
 */
export async function inlineEngineWorker(wasmPath = `${root}dist/wasm/attnplay_core.wasm`) {
  const wasm = gzipSync(readFileSync(wasmPath), { level: 9 }).toString('base64');
  const inlineCore = `
import createModule from ${JSON.stringify(`${root}build/wasm/attnplay_core.mjs`)};
const WASM_GZIP = ${JSON.stringify(wasm)};
export async function coreFiles(name) {
  if (name !== 'attnplay_core') throw new Error('this page holds the single-threaded core only');
  const bytes = Uint8Array.from(atob(WASM_GZIP), (c) => c.charCodeAt(0));
  const wasmBinary = new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer());
  return { createModule, wasmUrl: null, wasmBinary };
}`;
  // A classic script: a module worker from a blob: URL does not start in a page opened from file://.
  // (The glue's import.meta.url becomes undefined; it is not needed with the bytes at hand.)
  const result = await build({
    entryPoints: [`${webDir}engine/engine-worker.js`], bundle: true, format: 'iife', minify: true, write: false, target: 'es2022', legalComments: 'none', logLevel: 'error',
    plugins: [replaceModule('core-files.js', inlineCore, root)],
  });
  return result.outputFiles[0].text;
}

/** esbuild plugin: the web/ module `file` (as any module imports it) replaced by `contents` (resolved from resolveDir). */
function replaceModule(file, contents, resolveDir) {
  const filter = new RegExp(`/${file.replace('.', '\\.')}$`);
  return {
    name: `replace-${file}`,
    setup(esbuild) {
      esbuild.onResolve({ filter }, () => ({ path: file, namespace: 'attnplay-replaced' }));
      esbuild.onLoad({ filter: /.*/, namespace: 'attnplay-replaced' }, () => ({ contents, resolveDir, loader: 'js' }));
    },
  };
}

/**
 * The widget for the live page, as one module (text): its styles inline, the
 * page's own module (export/playground-cell.js: embedded models, view tabs),
 * and the engine worker started from `workerSource` (engine-worker-start.js's
 * replacement) instead of a file beside the widget.
 */
export async function liveWidgetBundle(workerSource) {
  const startWorker = `
const WORKER_SOURCE = ${JSON.stringify(workerSource)};
export function startEngineWorker() {
  return new Worker(URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' })));
}`;
  const result = await build({
    stdin: { contents: "import 'attnplay:inline-styles';\nimport './export/playground-cell.js';\nimport './widget/attention-view.js';\n", resolveDir: webDir, sourcefile: 'live-page-entry.js' },
    bundle: true, format: 'esm', minify: true, write: false, target: 'es2022', legalComments: 'none',
    loader: { '.css': 'text' },
    logLevel: 'error',
    plugins: [inlineStyles, replaceModule('engine-worker-start.js', startWorker, webDir)],
  });
  return result.outputFiles[0].text.replaceAll('</script', '<\\/script');
}

const LIVE_CSS = 'html,body{margin:0;padding:0;background:transparent}body{font:14px/1.4 system-ui,sans-serif;padding:1px 0}'
  + 'nav.views{display:flex;flex-wrap:wrap;gap:.25rem;margin:0 0 .4rem}nav.views button{font:inherit;padding:.2rem .6rem;border:1px solid #8888;border-radius:.3rem;background:transparent;color:inherit;cursor:pointer}'
  + 'nav.views button[aria-pressed=true]{background:#1f5fa8;border-color:#1f5fa8;color:#fff}html[data-theme=dark] body{color:#e8e8ee}'
  + '@media (prefers-color-scheme:dark){html:not([data-theme=light]) body{color:#e8e8ee}}';

/**
 * The live page template: the widget running a model in the page (the engine
 * worker and the WASM core inside the page), view tabs above it, the
 * notebook frame's script, and placeholders @@ATTNPLAY_TITLE@@,
 * @@ATTNPLAY_ATTRIBUTES@@, @@ATTNPLAY_VIEWS@@ (a comma list of views),
 * @@ATTNPLAY_DATA@@ (the embedded models' JSON, written as the data JSON is)
 * and @@ATTNPLAY_CONNECT@@ (the CSP's connect-src: where models download from).
 * The Python package's playground() fills it (python/attnplay/_page.py).
 */
export function liveTemplate(bundle, frameScript) {
  return htmlPage({
    css: LIVE_CSS,
    body: `<nav class="views" data-views="@@ATTNPLAY_VIEWS@@" aria-label="Views"></nav>
<attention-view @@ATTNPLAY_ATTRIBUTES@@></attention-view>
<script type="application/json" id="attnplay-models">@@ATTNPLAY_DATA@@</script>`,
    scripts: [frameScript, bundle],
    live: true,
  });
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
