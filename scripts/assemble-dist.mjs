// Assembles dist/, the static site any host can serve as is: the files of
// web/ plus the WASM modules (under dist/wasm/): the single-threaded one from
// build/wasm/ and the pthreads one from build/wasm-mt/.
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;
const wasmFiles = [
  'build/wasm/attnplay_core.mjs',
  'build/wasm/attnplay_core.wasm',
  'build/wasm-mt/attnplay_core_mt.mjs',
  'build/wasm-mt/attnplay_core_mt.wasm',
  'build/wasm-mt/attnplay_core_mt.worker.js',
];

for (const file of wasmFiles) {
  if (!existsSync(`${root}${file}`)) {
    console.error(`assemble-dist: ${file} is missing; run scripts/build.sh wasm`);
    process.exit(1);
  }
}
rmSync(dist, { recursive: true, force: true });
cpSync(`${root}web`, dist, { recursive: true });
mkdirSync(`${dist}/wasm`, { recursive: true });
for (const file of wasmFiles) cpSync(`${root}${file}`, `${dist}/wasm/${file.split('/').pop()}`);
console.log('assemble-dist: dist/ is ready');
