// Checks that the shipped WASM really computes with SIMD128: disassembles
// dist/wasm/attnplay_core.wasm and attnplay_core_mt.wasm (the pthreads build)
// with binaryen's wasm-dis and requires f32x4
// arithmetic inside the hot functions (the build keeps function names).
// If a compiler flag or code change drops vectorization, this fails.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

/** Map of function name -> Set of f32x4 instructions it contains. */
function simdByFunction(wasmPath) {
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

// Hot function (name prefix as in the name section) -> instructions it must use.
// The GEMM's microkernels are inlined (by binaryen) into the tile loop, the
// lambda that attnplay::gemm::multiply hands to the thread pool.
const HOT = {
  'std::__2::__function::__func<attnplay::gemm::multiply\\28': ['f32x4.mul', 'f32x4.add'], // GEMM microkernel
  'attnplay::attend\\28': ['f32x4.mul'], // scaling the scores
  'attnplay::layer_norm\\28': ['f32x4.sub', 'f32x4.mul', 'f32x4.add'],
};

for (const build of ['attnplay_core', 'attnplay_core_mt']) test(`hot loops of ${build}.wasm contain f32x4 instructions`, () => {
  const functions = simdByFunction(fileURLToPath(new URL(`../../dist/wasm/${build}.wasm`, import.meta.url)));
  assert.ok(functions.size > 100, 'the name section is missing: build with --profiling-funcs');
  for (const [prefix, required] of Object.entries(HOT)) {
    const matches = [...functions.entries()].filter(([name]) => name.startsWith(prefix));
    assert.ok(matches.length > 0, `no function named ${prefix}…`);
    const ops = new Set(matches.flatMap(([, set]) => [...set]));
    for (const op of required) assert.ok(ops.has(op), `${prefix}… has no ${op}; found ${[...ops].join(', ') || 'no SIMD'}`);
  }
});
