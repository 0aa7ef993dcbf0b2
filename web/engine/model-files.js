// Model files: where the files of a model come from (a folder URL, a dropped
// folder, or { config, weights, tokenizer?, index?, ... } of buffers, Blobs,
// URLs or strings), opening them (fetch, with clear errors and sizes for progress),
// finding a sharded checkpoint's shards, and streaming a file's bytes to a
// sink with its announced size checked. Plain JS: the engine (engine.js)
// decides where the bytes go (WASM memory) and reads the index.
// Not here: parsing any of the files (the C++ core does), the WASM module.
import { AttnplayError } from './errors.js';

export const MODEL_FILES = {
  config: 'config.json', weights: 'model.safetensors', index: 'model.safetensors.index.json', tokenizer: 'tokenizer.json',
  sentencepiece: 'tokenizer.model', // or another of SENTENCEPIECE_FILES
  // Marian (opus-mt) folders without tokenizer.json: SentencePiece models of
  // each language and the joint vocabulary (the core's tokenizer/marian_tokenizer.h).
  sourceSpm: 'source.spm', targetSpm: 'target.spm', vocab: 'vocab.json',
  // GPT-2's original files (facebook/opt-*, GPT-2 fine-tunes): vocab.json and merges.txt.
  merges: 'merges.txt',
  // A vision transformer's image processor (resize, crop, normalise: the core's image/image_processor.h).
  preprocessor: 'preprocessor_config.json',
};
const MARIAN_KEYS = ['sourceSpm', 'targetSpm', 'vocab'];
/**
 * The names a SentencePiece model goes by in a folder without tokenizer.json,
 * looked for in this order (the core's kTokenizerFiles, model/directory.h):
 * Llama 2's and Mistral's, T5's, XLM-R's.
 */
export const SENTENCEPIECE_FILES = ['tokenizer.model', 'spiece.model', 'sentencepiece.bpe.model'];

/**
 * Opens the files of a loadModel() source (see Engine.loadModel) and reads the
 * small ones. helpers: { fetch, pickleMessage(name): the message for a
 * checkpoint only in pickle format, shardNames(indexText): the shard file
 * names of a model.safetensors.index.json, in order }.
 * -> { config: Uint8Array, tokenizer: Uint8Array | null (tokenizer.json, or
 *      where there is none a SentencePiece model, SENTENCEPIECE_FILES), tokenizerName,
 *      marian: { sourceSpm, targetSpm, vocab } (Uint8Arrays of source.spm,
 *      target.spm, vocab.json) where there is neither but source.spm, else null,
 *      gpt2: { vocab, merges } (Uint8Arrays of vocab.json, merges.txt) where
 *      there is none of those but both of these, else null,
 *      preprocessor: Uint8Array | null (preprocessor_config.json: vision models),
 *      index: string | null
 *      (sharded checkpoints), shards: opened files of the weights (one when not
 *      sharded), total: bytes of all files, or null while a size is unknown }
 * Each opened file keeps its fetch Response until its body is read (see openSource).
 */
export async function openModelFiles(source, { fetch: fetchImpl, pickleMessage, shardNames }) {
  const files = modelSources(source, pickleMessage);
  const opened = {};
  await Promise.all(['config', 'weights', 'tokenizer', 'preprocessor'].map(async (key) => {
    // A folder URL's model.safetensors is absent when the checkpoint is sharded.
    const optional = key === 'tokenizer' || key === 'preprocessor' || (key === 'weights' && files.index instanceof URL);
    opened[key] = await openSource(files[key], MODEL_FILES[key], fetchImpl, optional, pickleMessage);
  }));
  // The JSON files are small: read now, so that no response waits unread
  // while the shards are looked up.
  const config = await readAll(opened.config, () => {});
  const preprocessor = opened.preprocessor ? await readAll(opened.preprocessor, () => {}) : null;
  // A folder without tokenizer.json may have a SentencePiece model (tokenizer.model, spiece.model, ...).
  opened.tokenizer ??= await openSentencepiece(files.sentencepiece, fetchImpl, pickleMessage);
  const tokenizer = opened.tokenizer ? await readAll(opened.tokenizer, () => {}) : null;
  // Nor that: a Marian folder's source.spm, target.spm and vocab.json (all three).
  const marianOpened = opened.tokenizer ? null : await openMarian(files, fetchImpl, pickleMessage);
  let marian = null;
  if (marianOpened) {
    marian = {};
    for (const key of MARIAN_KEYS) marian[key] = await readAll(marianOpened[key], () => {});
  }
  // Nor those: GPT-2's vocab.json and merges.txt (both).
  const gpt2Opened = opened.tokenizer || marianOpened ? null : await openGpt2Files(files, fetchImpl, pickleMessage);
  const gpt2 = gpt2Opened && { vocab: await readAll(gpt2Opened.vocab, () => {}), merges: await readAll(gpt2Opened.merges, () => {}) };
  // Sharded: the index names the shards.
  let index = null;
  let shards = [opened.weights];
  if (!opened.weights) {
    const indexFile = await openSource(files.index, MODEL_FILES.index, fetchImpl, files.index instanceof URL, pickleMessage);
    if (!indexFile) {
      throw new AttnplayError(`cannot fetch ${files.weights.href} nor ${MODEL_FILES.index}: HTTP 404 ` +
        `(if the model only has pytorch_model.bin: ${pickleMessage('pytorch_model.bin')})`);
    }
    index = new TextDecoder().decode(await readAll(indexFile, () => {}));
    const names = shardNames(index);
    shards = await Promise.all(names.map((name, i) => {
      const src = files.shards instanceof Map ? files.shards.get(name)
        : Array.isArray(files.shards) ? files.shards[i] : new URL(name, files.index);
      if (src == null) throw new AttnplayError(`shard '${name}' is missing (${MODEL_FILES.index} places tensors in it)`);
      return openSource(src, name, fetchImpl, false, pickleMessage);
    }));
  }
  const marianFiles = marianOpened ? MARIAN_KEYS.map((key) => marianOpened[key]) : [];
  const gpt2Files = gpt2Opened ? [gpt2Opened.vocab, gpt2Opened.merges] : [];
  const sizes = [opened.config, opened.preprocessor, opened.tokenizer, ...marianFiles, ...gpt2Files, ...shards].filter(Boolean).map((o) => o.size);
  const total = sizes.every((n) => n != null) ? sizes.reduce((a, b) => a + b, 0) : null;
  return { config, tokenizer, tokenizerName: opened.tokenizer?.name ?? null, marian, gpt2, preprocessor, index, shards, total };
}

// Marian's three files opened ({ sourceSpm, targetSpm, vocab }), or null when
// there is no source.spm; with it, a missing target.spm or vocab.json is an error.
async function openMarian(files, fetchImpl, pickleMessage) {
  const sourceSpm = await openSource(files.sourceSpm, MODEL_FILES.sourceSpm, fetchImpl, true, pickleMessage);
  if (!sourceSpm) return null;
  const out = { sourceSpm };
  for (const key of ['targetSpm', 'vocab']) {
    if (files[key] == null) {
      throw new AttnplayError(`${MODEL_FILES[key]} is missing (a Marian model without tokenizer.json needs source.spm, target.spm and vocab.json)`);
    }
    out[key] = await openSource(files[key], MODEL_FILES[key], fetchImpl, false, pickleMessage);
  }
  return out;
}

// GPT-2's files opened ({ vocab, merges }), or null unless both are there.
async function openGpt2Files(files, fetchImpl, pickleMessage) {
  const [vocab, merges] = await Promise.all(['vocab', 'merges'].map((key) => openSource(files[key], MODEL_FILES[key], fetchImpl, true, pickleMessage)));
  if (vocab && merges) return { vocab, merges };
  await cancelUnread([vocab, merges].filter(Boolean));
  return null;
}

// The first of the SentencePiece candidates ([{ source, name }], in
// SENTENCEPIECE_FILES' order) that opens, or null.
async function openSentencepiece(candidates, fetchImpl, pickleMessage) {
  for (const { source, name } of candidates) {
    const opened = await openSource(source, name, fetchImpl, true, pickleMessage);
    if (opened) return opened;
  }
  return null;
}

// The sources of the files beside config and weights (the tokenizer's and the
// image processor's): each key of MODEL_FILES -> `pick(name)`, and
// sentencepiece -> [{ source: pick(name), name }] for each of SENTENCEPIECE_FILES.
function companionSources(pick) {
  return {
    ...Object.fromEntries(['tokenizer', ...MARIAN_KEYS, 'merges', 'preprocessor'].map((key) => [key, pick(MODEL_FILES[key])])),
    sentencepiece: SENTENCEPIECE_FILES.map((name) => ({ source: pick(name), name })).filter(({ source }) => source != null),
  };
}

// The model files of a loadModel() source: { config, weights, tokenizer? }
// or, sharded, { config, index, shards, tokenizer? } (shards: a Map by file
// name, an array in file-name order, or absent: next to the index URL). A
// folder URL gives both weights and index; the index is read only when
// model.safetensors is not found.
function modelSources(source, pickleMessage) {
  if (typeof source === 'string' || source instanceof URL) {
    const base = new URL(String(source).endsWith('/') ? String(source) : `${source}/`, globalThis.location?.href);
    return {
      config: new URL(MODEL_FILES.config, base),
      weights: new URL(MODEL_FILES.weights, base),
      index: new URL(MODEL_FILES.index, base),
      ...companionSources((name) => new URL(name, base)),
    };
  }
  const isFileList = Array.isArray(source) || (typeof FileList !== 'undefined' && source instanceof FileList);
  if (isFileList) {
    const byName = new Map(Array.from(source, (file) => [file.name, file]));
    const sharded = !byName.has(MODEL_FILES.weights) && byName.has(MODEL_FILES.index);
    if (!byName.has(MODEL_FILES.weights) && !sharded && byName.has('pytorch_model.bin')) {
      throw new AttnplayError(pickleMessage('pytorch_model.bin'));
    }
    for (const key of ['config', sharded ? 'index' : 'weights']) {
      if (!byName.has(MODEL_FILES[key])) throw new AttnplayError(`${MODEL_FILES[key]} is missing from the given files`);
    }
    const companions = companionSources((name) => byName.get(name));
    if (sharded) return { config: byName.get(MODEL_FILES.config), index: byName.get(MODEL_FILES.index), shards: byName, ...companions };
    return { config: byName.get(MODEL_FILES.config), weights: byName.get(MODEL_FILES.weights), ...companions };
  }
  // An object's keys are MODEL_FILES' (its sentencepiece goes by tokenizer.model).
  const byKey = (name) => source[Object.keys(MODEL_FILES).find((key) => MODEL_FILES[key] === name)];
  if (source && source.config != null && source.weights != null && source.index != null) {
    if (!Array.isArray(source.weights)) throw new AttnplayError('loadModel: with an index, weights is the array of shards');
    return { config: source.config, index: source.index, shards: source.weights, ...companionSources(byKey) };
  }
  if (source && source.config != null && source.weights != null) {
    return { config: source.config, weights: source.weights, ...companionSources(byKey) };
  }
  throw new AttnplayError('loadModel: expected a base URL, { config, weights, tokenizer?, sentencepiece?, sourceSpm?, targetSpm?, vocab?, merges?, preprocessor? } ' +
    'or a list of files');
}

// -> { name, size (bytes or null), and either bytes or stream (with the
// response that owns it) }, or null for an optional file that is absent.
async function openSource(source, name, fetchImpl, optional, pickleMessage) {
  if (source == null) return null;
  if (typeof source === 'string') {
    const bytes = new TextEncoder().encode(source);
    return { name, size: bytes.length, bytes };
  }
  if (source instanceof ArrayBuffer) return { name, size: source.byteLength, bytes: new Uint8Array(source) };
  if (ArrayBuffer.isView(source)) {
    const bytes = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    return { name, size: bytes.length, bytes };
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) return { name, size: source.size, stream: source.stream() };
  if (source instanceof URL) {
    let response;
    try {
      response = await fetchImpl(source);
    } catch (error) {
      throw new AttnplayError(`cannot fetch ${source.href}: ${error.message}`);
    }
    if (!response.ok) {
      await response.body?.cancel(); // an unread body would hold the connection
      if (optional && response.status === 404) return null;
      const hint = name === MODEL_FILES.weights ? ` (if the model only has pytorch_model.bin: ${pickleMessage('pytorch_model.bin')})` : '';
      throw new AttnplayError(`cannot fetch ${source.href}: HTTP ${response.status}${hint}`);
    }
    return openedResponse(response, name);
  }
  if (typeof Response !== 'undefined' && source instanceof Response) return openedResponse(source, name);
  throw new AttnplayError(`${name}: expected an ArrayBuffer, typed array, Blob, URL, Response or string`);
}

// A successful response whose body is not read yet, opened as a source.
function openedResponse(response, name) {
  const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
  const length = Number(response.headers.get('content-length'));
  // `response` is kept: Node's fetch cancels the body of a Response that is
  // garbage-collected before its body is read (the body then reads as empty).
  return { name, size: !encoded && Number.isSafeInteger(length) && length >= 0 && response.headers.has('content-length') ? length : null, stream: response.body, response };
}

/** Cancels the bodies of opened files not read yet, so that no download goes on after a failure. */
export async function cancelUnread(openedFiles) {
  await Promise.all(openedFiles.map((opened) => (opened.stream && !opened.stream.locked ? opened.stream.cancel() : null)));
}

/** All bytes of an opened file, reporting each chunk's length to onBytes. */
export async function readAll(opened, onBytes) {
  if (opened.bytes) {
    onBytes(opened.bytes.length);
    return opened.bytes;
  }
  const chunks = [];
  let length = 0;
  for (const reader = opened.stream.getReader(); ;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    length += value.length;
    onBytes(value.length);
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/**
 * Streams an opened file of known size to write(chunk, offset), reporting each
 * chunk's length to onBytes; fails when the source sends more or fewer bytes
 * than its announced size.
 */
export async function streamInto(opened, write, onBytes) {
  if (opened.bytes) {
    write(opened.bytes, 0);
    onBytes(opened.bytes.length);
    return;
  }
  let offset = 0;
  for (const reader = opened.stream.getReader(); ;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (offset + value.length > opened.size) {
      await reader.cancel();
      throw new AttnplayError(`${opened.name}: received more than the announced ${opened.size} bytes`);
    }
    write(value, offset);
    offset += value.length;
    onBytes(value.length);
  }
  if (offset !== opened.size) {
    throw new AttnplayError(`${opened.name}: download ended after ${offset} of ${opened.size} bytes`);
  }
}
