// Running the engine under Node: whether this is Node, Node's built-in
// modules imported lazily (so browser bundlers leave them alone), and the Web
// Worker and navigator that the pthreads WASM build expects, made from
// worker_threads. Never touches the WASM module. Not here: loading it (engine.js).

// Node's built-in modules, imported only when running under Node. The
// specifier is not a literal so that browser bundlers (esbuild, Vite, webpack)
// leave these imports alone instead of failing to resolve them.
export const importNode = (name) => import(/* webpackIgnore: true */ /* @vite-ignore */ `node:${name}`);

export const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null;

/**
 * Node 20 has no Web Worker and no navigator; the pthreads build starts its
 * workers with new Worker(url) and sizes its pool from
 * navigator.hardwareConcurrency. Installs a minimal Worker on top of
 * worker_threads and that navigator field (once), and returns the list of
 * workers it creates.
 */
export async function installNodeWorkers() {
  if (globalThis.Worker?.attnplayNodeWorkers) return globalThis.Worker.attnplayNodeWorkers;
  const threads = await importNode('worker_threads');
  const os = await importNode('os');
  globalThis.navigator ??= { hardwareConcurrency: os.availableParallelism() };
  // Runs inside the worker thread: gives the Emscripten worker script the
  // self/postMessage/onmessage it expects, then loads it.
  const bootstrap = `
    const { parentPort, workerData } = require('node:worker_threads');
    globalThis.self = globalThis;
    globalThis.postMessage = (message, transfer) => parentPort.postMessage(message, transfer);
    const early = [];
    let loaded = false;
    parentPort.on('message', (data) => (loaded ? self.onmessage({ data }) : early.push(data)));
    import(workerData.url).then(() => {
      loaded = true;
      for (const data of early) self.onmessage({ data });
    });`;
  const created = [];
  class NodeWorker {
    #thread;
    constructor(url) {
      this.#thread = new threads.Worker(bootstrap, { eval: true, workerData: { url: String(url) } });
      this.#thread.on('message', (data) => this.onmessage?.({ data }));
      this.#thread.on('error', (error) => this.onerror?.(error));
      created.push(this);
    }
    postMessage(message, transfer) {
      this.#thread.postMessage(message, transfer);
    }
    terminate() {
      return this.#thread.terminate();
    }
    unref() {
      this.#thread.unref();
    }
    static attnplayNodeWorkers = created;
  }
  globalThis.Worker = NodeWorker;
  return created;
}
