// Where the WASM core comes from: the Emscripten glue module and its .wasm in
// ../wasm/ beside this folder (attnplay_core for one thread, attnplay_core_mt
// for pthreads). The one-file live page (scripts/make-page-template.mjs)
// bundles a replacement that holds the single-threaded core inline.
// Not here: instantiating it (engine.js's createEngine).

/**
 * The core `name`: { createModule (the glue's factory), wasmUrl (URL of the
 * .wasm; null when this module holds its bytes), wasmBinary (those bytes, or null) }.
 */
export async function coreFiles(name) {
  // A URL, not a relative path, so that bundlers leave the WASM glue beside the module (as they do the .wasm).
  const { default: createModule } = await import(/* webpackIgnore: true */ /* @vite-ignore */ new URL(`../wasm/${name}.mjs`, import.meta.url).href);
  return { createModule, wasmUrl: new URL(`../wasm/${name}.wasm`, import.meta.url), wasmBinary: null };
}
