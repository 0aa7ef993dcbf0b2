// Where the page's engine worker comes from: engine-worker.js beside this
// module, as a module worker. The one-file live page (the Python package's
// playground cell, scripts/make-page-template.mjs) bundles a replacement that
// starts the same worker from its bundled source held in the page.
// Not here: the worker's protocol (engine-client.js, engine-worker.js).

/** A new engine worker. */
export function startEngineWorker() {
  return new Worker(new URL('./engine-worker.js', import.meta.url), { type: 'module' });
}
