// Assembles dist/, the static site any host can serve as is:
// - the page: web/'s files that are not modules (index.html, style.css, the
//   embedding guide embed/, the stylesheets, the widget's declarations), and
//   page/app.js, web/page/app.js bundled with every module it imports
//   (esbuild, minified, with a source map: one request where the modules took
//   47, and each load costs the browser less CPU; `node tests/bench/run.mjs
//   page-load` measures both);
// - the widget's modules, unbundled (authors copy and import them as they
//   are), exactly those that widget/attention-view.js reaches: its imports,
//   transitively, and the files they name with new URL('...', import.meta.url)
//   (the engine worker and what it imports, the stylesheets); the page's
//   bundle adds the files its own modules name that way. The list comes from
//   the imports (moduleClosure below), never from a hand-kept list;
// - the WASM modules (under dist/wasm/: the single-threaded one from
//   build/wasm/ and the pthreads one from build/wasm-mt/, without their
//   function-name sections);
// - the shipped models of models/catalog.json that exist (under dist/models/,
//   with dist/models/index.json listing them for the model picker) and the
//   gallery of suggested hub models (models/gallery.json) and the sample
//   photographs offered to hub vision models (models/sample-pictures/);
// - attention-page.html, the one-file page template of the playground's
//   "Download as a page" (scripts/make-page-template.mjs).
// It also writes the Python package's data (python/attnplay/static/, not
// tracked): the notebook page template, the one-file page template, the live
// page template (the widget with its engine and WASM inside, for a playground
// in a cell), the shipped models' files, and the npm package's version, which
// is the Python package's.
// In the bundle, each module's new URL('relative path', import.meta.url) is
// rewritten relative to the bundle's own place (rebaseAssetUrls), so that it
// still names the same file.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { inlineEngineWorker, liveTemplate, liveWidgetBundle, notebookFrameScript, notebookTemplate, pageTemplate, widgetBundle } from './make-page-template.mjs';
import { withoutNameSection } from './wasm-names.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;
const web = `${root}web/`;
const wasmFiles = [
  'build/wasm/attnplay_core.mjs',
  'build/wasm/attnplay_core.wasm',
  'build/wasm-mt/attnplay_core_mt.mjs',
  'build/wasm-mt/attnplay_core_mt.wasm',
  'build/wasm-mt/attnplay_core_mt.worker.js',
];
const MODEL_FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'preprocessor_config.json', 'README.md'];

for (const file of wasmFiles) {
  if (!existsSync(`${root}${file}`)) {
    console.error(`assemble-dist: ${file} is missing; run scripts/build.sh wasm`);
    process.exit(1);
  }
}
/**
 * Paths (relative to web/) of the files that the entry modules load: their
 * imports, transitively, and every web/ file that one of them names with
 * new URL('relative path', import.meta.url), with what that file loads.
 */
async function moduleClosure(entries) {
  const found = new Set();
  let pending = entries;
  while (pending.length > 0) {
    const { metafile } = await build({
      entryPoints: pending.map((entry) => `${web}${entry}`), absWorkingDir: web, outdir: dist,
      bundle: true, splitting: true, format: 'esm', write: false, metafile: true, logLevel: 'error',
    });
    pending = [];
    for (const input of Object.keys(metafile.inputs)) {
      found.add(input);
      const source = readFileSync(`${web}${input}`, 'utf8');
      for (const [, reference] of source.matchAll(ASSET_URL)) {
        const file = relative(web, resolve(dirname(`${web}${input}`), reference));
        if (found.has(file) || !existsSync(`${web}${file}`)) continue; // attention-page.html is made below
        if (file.endsWith('.js')) pending.push(file);
        else found.add(file);
      }
    }
  }
  return found;
}

const ASSET_URL = /new URL\('(\.{1,2}\/[^'$]+)', import\.meta\.url\)/g;

/**
 * esbuild plugin: the modules' new URL('relative path', import.meta.url) made
 * relative to the bundle, whose folder of dist/ is `folder` (a folder of web/
 * and of dist/ alike, as dist/ keeps web/'s layout).
 */
const rebaseAssetUrls = (folder) => ({
  name: 'rebase-asset-urls',
  setup(esbuild) {
    esbuild.onLoad({ filter: /\.js$/ }, ({ path }) => {
      const contents = readFileSync(path, 'utf8').replace(ASSET_URL, (match, reference) => {
        const target = relative(`${web}${folder}`, resolve(dirname(path), reference));
        return `new URL('${target.startsWith('.') ? target : `./${target}`}', import.meta.url)`;
      });
      return { contents, loader: 'js' };
    });
  },
});

rmSync(dist, { recursive: true, force: true });
// The folders' READMEs are for the repository's readers, not the site's.
cpSync(web, dist, { recursive: true, filter: (source) => statSync(source).isDirectory() || !/(\.js|\/README\.md)$/.test(source) });
const page = await build({
  entryPoints: [`${web}page/app.js`], outfile: `${dist}/page/app.js`, absWorkingDir: root,
  bundle: true, format: 'esm', target: 'es2022', minify: true, keepNames: true, sourcemap: 'linked', legalComments: 'none',
  metafile: true, logLevel: 'error', plugins: [rebaseAssetUrls('page')],
});
const pageInputs = Object.keys(page.metafile.inputs).map((input) => relative(web, `${root}${input}`));
const loadedByThePage = [...await moduleClosure(pageInputs)].filter((file) => !pageInputs.includes(file));
for (const file of new Set([...await moduleClosure(['widget/attention-view.js']), ...loadedByThePage])) {
  mkdirSync(dirname(`${dist}/${file}`), { recursive: true });
  cpSync(`${web}${file}`, `${dist}/${file}`);
}
mkdirSync(`${dist}/wasm`, { recursive: true });
for (const file of wasmFiles) {
  const target = `${dist}/wasm/${file.split('/').pop()}`;
  if (file.endsWith('.wasm')) writeFileSync(target, withoutNameSection(readFileSync(`${root}${file}`)));
  else cpSync(`${root}${file}`, target);
}

const catalog = JSON.parse(readFileSync(`${root}models/catalog.json`, 'utf8'));
// A model ships once trained: its config and weights, and a tokenizer (text models) or an image processor (vision models).
const has = (name, file) => existsSync(`${root}models/${name}/${file}`);
const shipped = catalog.filter(({ name }) => has(name, 'config.json') && has(name, 'model.safetensors') &&
  (has(name, 'tokenizer.json') || has(name, 'preprocessor_config.json')));
mkdirSync(`${dist}/models`, { recursive: true });
for (const { name, samples = [] } of shipped) {
  mkdirSync(`${dist}/models/${name}`, { recursive: true });
  for (const file of [...MODEL_FILES, ...samples]) { // samples: a vision model's pictures (catalog.json), under samples/
    if (has(name, file)) cpSync(`${root}models/${name}/${file}`, `${dist}/models/${name}/${file}`);
  }
}
const bundle = await widgetBundle();
writeFileSync(`${dist}/attention-page.html`, pageTemplate(bundle));
const pythonData = `${root}python/attnplay/static`;
rmSync(pythonData, { recursive: true, force: true });
mkdirSync(pythonData, { recursive: true });
writeFileSync(`${pythonData}/notebook-page.html`, notebookTemplate(bundle, await notebookFrameScript()));
cpSync(`${dist}/attention-page.html`, `${pythonData}/attention-page.html`);
writeFileSync(`${pythonData}/live-page.html`, liveTemplate(await liveWidgetBundle(await inlineEngineWorker()), await notebookFrameScript()));
for (const { name } of shipped.filter(({ name }) => has(name, 'tokenizer.json'))) { // the notebook's playground reads text
  mkdirSync(`${pythonData}/models/${name}`, { recursive: true });
  for (const file of ['config.json', 'model.safetensors', 'tokenizer.json']) cpSync(`${root}models/${name}/${file}`, `${pythonData}/models/${name}/${file}`);
}
writeFileSync(`${pythonData}/version.txt`, `${JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version}\n`);
writeFileSync(`${dist}/models/index.json`, `${JSON.stringify(shipped, null, 2)}\n`);
cpSync(`${root}models/gallery.json`, `${dist}/models/gallery.json`); // the page's suggested hub models
cpSync(`${root}models/sample-pictures`, `${dist}/models/sample-pictures`, { recursive: true }); // photographs for the hub's vision models
console.log(`assemble-dist: dist/ is ready (models: ${shipped.map((m) => m.name).join(', ') || 'none yet'})`);
