// Checks that the shipped WASM really computes with SIMD128: disassembles
// build/wasm/attnplay_core.wasm and build/wasm-mt/attnplay_core_mt.wasm (the
// build keeps function names) with binaryen's wasm-dis and requires f32x4
// arithmetic inside the hot functions, then checks that the files under
// dist/wasm/ are those binaries without their name section (WebAssembly's own
// parser reads both; the code is the same bytes).
// If a compiler flag or code change drops vectorization, this fails.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

import { withoutNameSection } from '../../scripts/wasm-names.mjs';
import { requireProgram } from '../programs.mjs';

/** Map of function name -> Set of f32x4 instructions it contains. */
function simdByFunction(wasmPath) {
  requireProgram('wasm-dis', 'the SIMD test');
  const text = execFileSync('wasm-dis', [wasmPath], { maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' });
  const result = new Map();
  let current = null;
  for (const line of text.split('\n')) {
    const header = /^\s*\(func \$(\S+)/.exec(line);
    if (header) {
      current = header[1];
      result.set(current, new Set());
      continue;
    }
    if (current) for (const op of line.matchAll(/\bf32x4\.\w+/g)) result.get(current).add(op[0]);
  }
  return result;
}

// Hot functions (a part of their names in the name section) -> instructions
// they must use together. The GEMM's microkernels may be inlined (by
// binaryen) into the tile loop, the lambda that the GEMM hands to the thread
// pool, so the GEMM is every function of its namespace.
const HOT = {
  'attnplay::gemm::': ['f32x4.mul', 'f32x4.add'], // GEMM microkernel
  'attnplay::attend\\28': ['f32x4.mul'], // scaling the scores
  'attnplay::layer_norm\\28': ['f32x4.sub', 'f32x4.mul', 'f32x4.add'],
};

const BUILDS = { attnplay_core: 'build/wasm', attnplay_core_mt: 'build/wasm-mt' };
const path = (relative) => fileURLToPath(new URL(`../../${relative}`, import.meta.url));

for (const [build, folder] of Object.entries(BUILDS)) test(`hot loops of ${build}.wasm contain f32x4 instructions`, () => {
  const functions = simdByFunction(path(`${folder}/${build}.wasm`));
  assert.ok(functions.size > 100, 'the name section is missing: build with --profiling-funcs');
  for (const [part, required] of Object.entries(HOT)) {
    const matches = [...functions.entries()].filter(([name]) => name.includes(part));
    assert.ok(matches.length > 0, `no function named …${part}…`);
    const ops = new Set(matches.flatMap(([, set]) => [...set]));
    for (const op of required) assert.ok(ops.has(op), `${part}… has no ${op}; found ${[...ops].join(', ') || 'no SIMD'}`);
  }
});

for (const [build, folder] of Object.entries(BUILDS)) test(`dist/wasm/${build}.wasm is the built module without function names`, () => {
  const built = readFileSync(path(`${folder}/${build}.wasm`));
  const shipped = readFileSync(path(`dist/wasm/${build}.wasm`));
  assert.deepEqual(shipped, Buffer.from(withoutNameSection(built)));
  assert.ok(shipped.length < built.length - 100_000, 'the name section was not removed');
  const sections = (bytes) => WebAssembly.Module.customSections(new WebAssembly.Module(bytes), 'name').length;
  assert.equal(sections(built), 1);
  assert.equal(sections(shipped), 0);
});
