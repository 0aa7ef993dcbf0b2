// Benchmark section "payload": bytes raw and gzipped (level 9) of every page,
// script, stylesheet and WASM file of dist/ (the playground, its bundled
// app.js, the widget's modules, the embedding guide, the one-file page
// template), their total without the pthreads build's files, and the check
// that the core WASM stays under its 400 KB gzipped budget.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

import { markdownTable } from './report.mjs';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const CORE_WASM_BUDGET = 400 * 1024;

function filesUnder(dir, prefix = '') {
  return readdirSync(dir).flatMap((name) => {
    const path = `${dir}${name}`;
    return statSync(path).isDirectory() ? filesUnder(`${path}/`, `${prefix}${name}/`) : [`${prefix}${name}`];
  });
}

const kb = (bytes) => (bytes / 1024).toFixed(1);

export const payload = {
  id: 'payload',
  title: 'Payload: what the page loads, KB',
  async run() {
    const files = filesUnder(dist).filter((f) => /\.(html|css|js|mjs|wasm|svg)$/.test(f)).sort();
    const rows = files.map((file) => {
      const bytes = readFileSync(`${dist}${file}`);
      return { file, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
    });
    const sum = (list, key) => list.reduce((s, r) => s + r[key], 0);
    const threadedOnly = (f) => f.includes('_mt');
    const withoutThreaded = rows.filter((r) => !threadedOnly(r.file));
    const core = rows.find((r) => r.file === 'wasm/attnplay_core.wasm');
    const table = rows.map((r) => [r.file, kb(r.raw), kb(r.gzip)]);
    table.push(['**total, without the _mt files**', kb(sum(withoutThreaded, 'raw')), kb(sum(withoutThreaded, 'gzip'))]);
    const verdict = core.gzip <= CORE_WASM_BUDGET ? 'within' : '**OVER**';
    return {
      markdown: [
        markdownTable([{ title: 'file (dist/)' }, { title: 'raw KB' }, { title: 'gzip -9 KB' }], table),
        '',
        `- Core WASM (wasm/attnplay_core.wasm): ${kb(core.gzip)} KB gzipped, ${verdict} the 400 KB budget.`,
        '- The `_mt` files (pthreads build) load instead of the single-threaded ones only on cross-origin isolated pages.',
      ].join('\n'),
      failed: core.gzip > CORE_WASM_BUDGET ? 'core WASM over its 400 KB gzipped budget' : undefined,
    };
  },
};
