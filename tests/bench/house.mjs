// Benchmark section "house": the shape of web/ (not a speed): its folders by
// role with the modules and lines of each, and the import arrows between
// modules and between folders, read from esbuild's metafile of the three
// entry points (the page's app.js, the widget, the engine worker). Issue 26
// asked for folders of at most ~15 modules; before it, web/ was one folder of
// 53 modules and 146 arrows measured this way (6d13ce4).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

import { markdownTable } from './report.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ENTRIES = ['web/page/app.js', 'web/widget/attention-view.js', 'web/engine/engine-worker.js'];
const MAX_MODULES = 15;

const lines = (path) => readFileSync(path, 'utf8').split('\n').length - 1;

export const house = {
  id: 'house',
  title: 'House: web/ by role (folders, modules, lines, import arrows)',
  async run() {
    const folders = readdirSync(`${root}web`).filter((name) => statSync(`${root}web/${name}`).isDirectory() && name !== 'embed');
    const { metafile } = await build({
      entryPoints: ENTRIES.map((entry) => `${root}${entry}`), absWorkingDir: root, outdir: `${root}build/house`,
      bundle: true, splitting: true, format: 'esm', write: false, metafile: true, logLevel: 'error',
    });
    const folderOf = (path) => path.split('/')[1];
    let arrows = 0;
    const between = new Map(); // "from -> to": arrows
    for (const [file, { imports }] of Object.entries(metafile.inputs)) {
      for (const path of new Set(imports.filter((i) => !i.external).map((i) => i.path))) {
        arrows += 1;
        const pair = `${folderOf(file)} → ${folderOf(path)}`;
        if (folderOf(path) !== folderOf(file)) between.set(pair, (between.get(pair) ?? 0) + 1);
      }
    }
    const rows = folders.map((folder) => {
      const modules = readdirSync(`${root}web/${folder}`).filter((name) => name.endsWith('.js'));
      return [`web/${folder}/`, modules.length, modules.reduce((sum, name) => sum + lines(`${root}web/${folder}/${name}`), 0)];
    });
    const modules = rows.reduce((sum, row) => sum + row[1], 0);
    const largest = Math.max(...rows.map((row) => row[1]));
    rows.push(['**all**', modules, rows.reduce((sum, row) => sum + row[2], 0)]);
    return {
      markdown: [
        markdownTable([{ title: 'folder' }, { title: 'modules' }, { title: 'lines' }], rows),
        '',
        `- Import arrows between modules: ${arrows} (${Object.keys(metafile.inputs).length} modules reached from ${ENTRIES.join(', ')}).`,
        `- Arrows between folders: ${[...between].sort().map(([pair, n]) => `${pair} ${n}`).join('; ')}.`,
        `- The largest folder holds ${largest} modules (the goal: at most ${MAX_MODULES}).`,
      ].join('\n'),
      failed: largest > MAX_MODULES ? `a web/ folder holds ${largest} modules` : undefined,
    };
  },
};
