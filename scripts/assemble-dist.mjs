// Assembles dist/, the static site any host can serve as is: the files of
// web/ plus the WASM module built in build/wasm/ (under dist/wasm/).
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;
const wasmFiles = ['attnplay_core.mjs', 'attnplay_core.wasm'];

for (const file of wasmFiles) {
  if (!existsSync(`${root}build/wasm/${file}`)) {
    console.error(`assemble-dist: build/wasm/${file} is missing; run scripts/build.sh wasm`);
    process.exit(1);
  }
}
rmSync(dist, { recursive: true, force: true });
cpSync(`${root}web`, dist, { recursive: true });
mkdirSync(`${dist}/wasm`, { recursive: true });
for (const file of wasmFiles) cpSync(`${root}build/wasm/${file}`, `${dist}/wasm/${file}`);
console.log('assemble-dist: dist/ is ready');
