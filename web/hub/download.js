// Downloads of model files: a fetch that answers from the browser's Cache
// Storage when it holds the URL (so reopening a model, or its link, does not
// download it again) and otherwise fetches with the load's AbortSignal (Cancel
// aborts every request of the load) and keeps a copy of each successful
// answer as it streams in; the progress of a load per file and overall; what
// the cache holds and forgetting it.
// Not here: which files a model needs and the messages about them (hub.js),
// reading the files into the WASM memory (engine.js), the DOM.

/** The Cache Storage cache that keeps downloaded model files. */
export const MODEL_CACHE = 'attnplay-models-v1';

// Cache Storage exists only in secure contexts (https, localhost) of browsers.
const cacheStorage = () => (typeof caches === 'undefined' ? null : caches);

/**
 * A fetch(url) for one load. options: { signal (aborts every request it
 * made), cacheName = MODEL_CACHE (null: no cache), fetch = globalThis.fetch }.
 * Answers from the cache when it holds the URL; otherwise fetches, and a successful answer is
 * stored while its body is read. Extra members:
 *   stored(): resolves once every copy has been written (rejects with the
 *     reason a copy could not be kept, e.g. the storage is full);
 *   cached: the URLs answered from the cache; fetched: those fetched.
 */
export function cachingFetch({ signal, cacheName = MODEL_CACHE, fetch: fetchImpl = globalThis.fetch } = {}) {
  const storage = cacheStorage();
  const cache = storage && cacheName ? storage.open(cacheName) : null;
  const writes = [];
  // init: the request's headers (an access token), used on the network only: the cache is keyed by URL.
  const get = async (url, init = {}) => {
    const key = String(url);
    const hit = cache ? await (await cache).match(key) : undefined;
    if (hit) {
      get.cached.push(key);
      return hit;
    }
    signal?.throwIfAborted();
    const response = await fetchImpl(key, { ...init, signal });
    get.fetched.push(key);
    if (cache && response.ok && response.status === 200) {
      // The copy is read as the original is; an aborted or failed body stores nothing.
      const write = (await cache).put(key, response.clone());
      write.catch(() => {}); // a cancelled load aborts its copies; stored() reports a refusal
      writes.push(write);
    }
    return response;
  };
  get.cached = [];
  get.fetched = [];
  get.stored = () => Promise.all(writes);
  return get;
}

/** What the cache holds: { files, bytes } (bytes as the answers' Content-Length said). */
export async function downloadedSize(cacheName = MODEL_CACHE) {
  const storage = cacheStorage();
  if (!storage || !(await storage.has(cacheName))) return { files: 0, bytes: 0 };
  const cache = await storage.open(cacheName);
  const responses = await cache.matchAll();
  const bytes = responses.reduce((sum, r) => sum + (Number(r.headers.get('content-length')) || 0), 0);
  return { files: responses.length, bytes };
}

/** Deletes every kept model file; resolves to whether there was anything to delete. */
export async function forgetDownloads(cacheName = MODEL_CACHE) {
  const storage = cacheStorage();
  return storage ? storage.delete(cacheName) : false;
}

/** Whether downloads can be kept in this context (Cache Storage needs https or localhost). */
export const canKeepDownloads = () => cacheStorage() !== null;

/**
 * Progress of one load, per file and overall. files: [{ name, size (bytes
 * or null) }]. update({ file, loaded }) takes Engine.loadModel's progress
 * (loaded: bytes of all files so far); snapshot() -> { files: [{ name, size,
 * loaded }], loaded, total (null while a size is unknown) }.
 */
export class DownloadProgress {
  #files;
  #loaded = 0;

  constructor(files) {
    this.#files = files.map(({ name, size }) => ({ name, size: size ?? null, loaded: 0 }));
  }

  update({ file, loaded }) {
    const entry = this.#files.find((f) => f.name === file);
    if (entry) entry.loaded += loaded - this.#loaded;
    this.#loaded = loaded;
  }

  snapshot() {
    const known = this.#files.every((f) => f.size !== null);
    return {
      files: this.#files.map((f) => ({ ...f })),
      loaded: this.#files.reduce((sum, f) => sum + f.loaded, 0),
      total: known ? this.#files.reduce((sum, f) => sum + f.size, 0) : null,
    };
  }
}
