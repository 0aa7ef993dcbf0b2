// Assembles dist/, the static site any host can serve as is: the files of
// web/, the WASM modules (under dist/wasm/: the single-threaded one from
// build/wasm/ and the pthreads one from build/wasm-mt/, without their
// function-name sections), and the shipped
// models of models/catalog.json that exist (under dist/models/, with
// dist/models/index.json listing them for the model picker), the gallery of
// suggested hub models (models/gallery.json), and
// attention-page.html, the one-file page template of the playground's
// "Download as a page" (scripts/make-page-template.mjs). The playground's
// dist/app.js is web/app.js bundled with every module it imports (esbuild,
// minified, with a source map): one request where the modules took 47, and
// each page load costs the browser less CPU (`node tests/bench/run.mjs
// page-load` measures both). The widget's modules stay separate files, as
// authors copy and import them one by one.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { pageTemplate, widgetBundle } from './make-page-template.mjs';
import { withoutNameSection } from './wasm-names.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;
const wasmFiles = [
  'build/wasm/attnplay_core.mjs',
  'build/wasm/attnplay_core.wasm',
  'build/wasm-mt/attnplay_core_mt.mjs',
  'build/wasm-mt/attnplay_core_mt.wasm',
  'build/wasm-mt/attnplay_core_mt.worker.js',
];
const MODEL_FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'README.md'];

for (const file of wasmFiles) {
  if (!existsSync(`${root}${file}`)) {
    console.error(`assemble-dist: ${file} is missing; run scripts/build.sh wasm`);
    process.exit(1);
  }
}
rmSync(dist, { recursive: true, force: true });
// The folders' READMEs are for the repository's readers, not the site's.
cpSync(`${root}web`, dist, { recursive: true, filter: (source) => !source.endsWith('/README.md') });
mkdirSync(`${dist}/wasm`, { recursive: true });
for (const file of wasmFiles) {
  const target = `${dist}/wasm/${file.split('/').pop()}`;
  if (file.endsWith('.wasm')) writeFileSync(target, withoutNameSection(readFileSync(`${root}${file}`)));
  else cpSync(`${root}${file}`, target);
}

const catalog = JSON.parse(readFileSync(`${root}models/catalog.json`, 'utf8'));
const shipped = catalog.filter(({ name }) => ['config.json', 'model.safetensors', 'tokenizer.json'].every((f) => existsSync(`${root}models/${name}/${f}`)));
mkdirSync(`${dist}/models`, { recursive: true });
for (const { name } of shipped) {
  mkdirSync(`${dist}/models/${name}`, { recursive: true });
  for (const file of MODEL_FILES) {
    if (existsSync(`${root}models/${name}/${file}`)) cpSync(`${root}models/${name}/${file}`, `${dist}/models/${name}/${file}`);
  }
}
await build({
  entryPoints: [`${root}web/app.js`], outfile: `${dist}/app.js`, allowOverwrite: true,
  bundle: true, format: 'esm', target: 'es2022', minify: true, keepNames: true, sourcemap: 'linked', legalComments: 'none',
  logLevel: 'error',
});
writeFileSync(`${dist}/attention-page.html`, pageTemplate(await widgetBundle()));
writeFileSync(`${dist}/models/index.json`, `${JSON.stringify(shipped, null, 2)}\n`);
cpSync(`${root}models/gallery.json`, `${dist}/models/gallery.json`); // the page's suggested hub models
console.log(`assemble-dist: dist/ is ready (models: ${shipped.map((m) => m.name).join(', ') || 'none yet'})`);
