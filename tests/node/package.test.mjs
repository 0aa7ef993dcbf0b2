// The npm package of the widget: `npm pack` holds exactly what an author
// needs (attention-view.js and every module and stylesheet it loads, the WASM
// engine, the shipped models that exist, the TypeScript declarations) and
// none of the playground page; the package's "exports" resolve to the widget;
// the declarations name every property the element has.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dist = `${root}dist/`;

/** Files of dist/ that attention-view.js loads: static imports, new URL(...) assets and its stylesheets, transitively. */
function widgetClosure() {
  const found = new Set();
  const visit = (file) => {
    if (found.has(file)) return;
    found.add(file);
    if (!file.endsWith('.js')) return;
    const source = readFileSync(`${dist}${file}`, 'utf8');
    const references = [
      ...source.matchAll(/^import\s+(?:[^'"]*?\s+from\s+)?'(\.{1,2}\/[^']+)'/gm),
      ...source.matchAll(/new URL\('(\.{1,2}\/[^'$]+)', import\.meta\.url\)/g),
    ].map((match) => match[1]);
    for (const reference of references) visit(join(dirname(file), reference));
  };
  visit('widget/attention-view.js');
  return found;
}

test('npm pack: the widget, its modules and styles, the WASM, the shipped models and the .d.ts; not the playground', () => {
  const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  const packed = new Set(pack.files.map((file) => file.path));
  const closure = widgetClosure();
  for (const file of ['engine/engine-worker.js', 'engine/engine.js', 'views/views.css', 'widget/attention-view.css', 'views/head-view.js', 'scratch/scratch-view.js']) {
    assert.ok(closure.has(file), `the closure finds ${file}`);
  }
  const models = existsSync(`${dist}models`) ? readdirSync(`${dist}models`, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile()).map((entry) => `${entry.parentPath ?? entry.path}/${entry.name}`.slice(dist.length)) : [];
  const wanted = [...closure, 'widget/attention-view.d.ts', 'wasm/attnplay_core.mjs', 'wasm/attnplay_core.wasm', ...models];
  for (const file of wanted) assert.ok(packed.has(`dist/${file}`), `dist/${file} is packed`);
  for (const file of ['dist/page/app.js', 'dist/index.html', 'dist/style.css', 'dist/embed/index.html']) assert.ok(!packed.has(file), `${file} (playground) is not packed`);
  const unexpected = [...packed].filter((file) => file.startsWith('dist/') && !wanted.includes(file.slice(5)) && !file.startsWith('dist/wasm/'));
  assert.deepEqual(unexpected, [], 'nothing else from dist/');
});

test('the package exports resolve to the widget and its declarations', () => {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
  assert.equal(import.meta.resolve(pkg.name), new URL('dist/widget/attention-view.js', `file://${root}`).href);
  assert.equal(import.meta.resolve(`${pkg.name}/dist/engine/engine.js`), new URL('dist/engine/engine.js', `file://${root}`).href);
  assert.ok(existsSync(`${root}${pkg.types}`));
  assert.equal(pkg.exports['.'].types, `./${pkg.types.replace(/^\.\//, '')}`);
});

test('the declarations name every public property of the element', () => {
  const source = readFileSync(`${dist}widget/attention-view.js`, 'utf8');
  const declarations = readFileSync(`${dist}widget/attention-view.d.ts`, 'utf8');
  const properties = new Set([...source.matchAll(/^ {2}get (\w+)\(\)/gm)].map((match) => match[1]));
  assert.ok(properties.size >= 15, `${properties.size} properties`);
  const body = declarations.slice(declarations.indexOf('export class AttentionView'));
  for (const property of properties) assert.match(body, new RegExp(`^ {2}(readonly )?${property}: `, 'm'), `${property} is declared`);
  for (const event of ['token-select', 'head-select', 'attention-ready']) {
    assert.ok(source.includes(`'${event}'`) && declarations.includes(`'${event}'`), event);
  }
});
