// Models on the Hugging Face hub (or a mirror) by id: parses the references
// the page and the widget write ("hf:ORG/NAME@revision"), builds the hub's
// file URLs ({hub}/{id}/resolve/{revision}/{file}) and opens a model there
// for Engine.loadModel: config.json first (an architecture attnplay cannot
// run is refused before any weight is requested), then model.safetensors or
// the sharded index and its shards (never a pickle), and tokenizer.json (else
// a Marian model's source.spm, target.spm and vocab.json, a SentencePiece
// model: tokenizer.model, spiece.model or sentencepiece.bpe.model, or GPT-2's
// vocab.json and merges.txt); the
// size is checked against the WebAssembly memory before a weight byte is read.
// HTTP and network failures become messages that name the cause (gated or
// private model, not found, CORS, network). A reader's access token (gated
// models) goes in the Authorization header of the requests to the hub alone:
// never in a URL, a message or anything else this module returns.
// Not here: the download itself, its progress and cache (download.js), the
// WASM (engine.js), anything about the DOM.
import { MODEL_FILES as FILES, SENTENCEPIECE_FILES } from '../engine/model-files.js';

/** The hub files come from unless a `hub` is given (the page's URL state, the widget's attribute). */
export const DEFAULT_HUB = 'https://huggingface.co';

/** How the page's link and the widget's `model` attribute write a hub model: hf:ORG/NAME[@revision]. */
export const HUB_PREFIX = 'hf:';

const DEFAULT_REVISION = 'main';

/** The vision transformers' model_type values the core runs (cpp/model/families/vit.cpp, dinov2.cpp): they read a picture. */
export const VISION_MODEL_TYPES = ['vit', 'deit', 'dinov2', 'dinov2_with_registers'];
/**
 * The model_type values the core runs (cpp/model/config.cpp, parse_config;
 * tests/node/hub.test.mjs checks this list against the core's own message).
 */
export const SUPPORTED_MODEL_TYPES = ['gpt2', 'bert', 'distilbert', 'electra', 'roberta', 'xlm-roberta', 'camembert', 'opt', 'llama', 'mistral', 'qwen2', 'qwen3', 'smollm3', 'gemma', 'gemma2', 'gemma3_text', 'olmo2', 'phi3', 'gpt_neox', ...VISION_MODEL_TYPES];
/** The encoder-decoder model_type values the core runs (cpp/model/seq2seq.cpp). */
export const ENCODER_DECODER_TYPES = ['marian', 'bart', 't5', 'mt5'];

/** A WebAssembly (wasm32) memory holds at most 4 GiB. */
export const WASM_MEMORY_LIMIT = 4 * 2 ** 30;

/**
 * The largest download accepted: the weights stay in WASM memory in their own
 * precision, and a forward pass needs about a fifth more on top (1.21× the
 * weights for a Qwen2.5-0.5B-shaped model at 128 tokens, RESULTS.md), so the
 * files may take up to 4 GiB / 1.25.
 */
export const MAX_MODEL_BYTES = Math.floor(WASM_MEMORY_LIMIT / 1.25);

/** An error whose message is meant for the reader as it is. */
export class HubError extends Error {
  constructor(message, code = 'hub') {
    super(message);
    this.name = 'HubError';
    /** 'gated', 'not-found', 'cors', 'network', 'too-big', 'unsupported', 'files', 'id', 'hub', 'http' */
    this.code = code;
  }
}

// One part of a repository id: Hugging Face's rule (letters, digits, '-', '_', '.'; not starting with
// '-' or '.', no '--' or '..', at most 96 characters).
const ID_PART = /^(?!.*(--|\.\.))[A-Za-z0-9][\w.-]{0,95}$/;
const REVISION = /^[\w.-]+(\/[\w.-]+)*$/;

/**
 * A model id as a reader writes it -> { id, revision }. Accepts "gpt2",
 * "ORG/NAME", either with "@revision", with or without the "hf:" prefix, and
 * a model page's address (https://huggingface.co/ORG/NAME[/tree/REVISION]).
 * Throws a HubError saying what is wrong otherwise.
 */
export function parseModelId(text) {
  let rest = String(text ?? '').trim();
  if (rest.startsWith(HUB_PREFIX)) rest = rest.slice(HUB_PREFIX.length);
  const page = /^https?:\/\/(www\.)?(huggingface\.co|hf\.co)\/([^?#]+)/.exec(rest);
  if (page) {
    const [name, tree] = page[3].replace(/\/$/, '').split(/\/(?:tree|blob|resolve)\//);
    rest = tree ? `${name}@${tree.split('/')[0]}` : name;
  }
  const at = rest.lastIndexOf('@');
  const id = at >= 0 ? rest.slice(0, at) : rest;
  const revision = at >= 0 ? rest.slice(at + 1) : DEFAULT_REVISION;
  const parts = id.split('/');
  if (id === '' || parts.length > 2 || !parts.every((part) => ID_PART.test(part))) {
    throw new HubError(`"${String(text).slice(0, 100)}" is not a Hugging Face model id: write NAME or ORG/NAME ` +
      '(letters, digits, "-", "_" and "."), optionally followed by @revision, e.g. gpt2 or HuggingFaceTB/SmolLM2-135M', 'id');
  }
  if (!REVISION.test(revision)) throw new HubError(`"${revision}" is not a revision (a branch, tag or commit)`, 'id');
  return { id, revision };
}

/** Whether a model reference of the link or the widget names a hub model ("hf:..."). */
export const isHubReference = (model) => typeof model === 'string' && model.startsWith(HUB_PREFIX);

/** { id, revision } -> "hf:ID" or "hf:ID@REVISION" (the main branch is not written). */
export function hubReference({ id, revision = DEFAULT_REVISION }) {
  return `${HUB_PREFIX}${id}${revision === DEFAULT_REVISION ? '' : `@${revision}`}`;
}

/** The hub's base address without a trailing slash; throws a HubError unless it is an http(s) URL. */
export function hubBase(hub = DEFAULT_HUB) {
  let url;
  try {
    url = new URL(hub);
  } catch {
    url = null;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol)) throw new HubError(`the hub "${hub}" is not an http(s) address`, 'hub');
  return url.href.replace(/\/+$/, '');
}

/** {hub}/{id}/resolve/{revision}/{file}: where the hub serves a file of a model. */
export function resolveUrl({ hub = DEFAULT_HUB, id, revision = DEFAULT_REVISION }, file) {
  return `${hubBase(hub)}/${id}/resolve/${encodeURIComponent(revision)}/${file}`;
}

/** Bytes in the reader's units: "548 MB", "1.2 GB". */
export function formatBytes(bytes) {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(bytes >= 1e10 ? 0 : 1)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(bytes >= 1e8 ? 0 : 1)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(0)} kB`;
  return `${bytes} bytes`;
}

/**
 * Opens a hub model for Engine.loadModel, reading no weight byte:
 * ref: { hub, id, revision }; options.fetch: the fetch to use (download.js's
 * caching fetch, with the load's AbortSignal); options.maxBytes (default
 * MAX_MODEL_BYTES). Resolves to { source, files: [{ name, size }], total,
 * config }: source is { config, weights, index?, tokenizer or sentencepiece or
 * (Marian without tokenizer.json) sourceSpm, targetSpm and vocab, or a vision
 * model's preprocessor (preprocessor_config.json, when it has one) } for
 * Engine.loadModel, with each weights file and tokenizer file an open
 * Response whose body is not read yet; files and total: what is to be read
 * (size null when the server did not say). options.token: a Hugging Face
 * access token for gated and private models, sent as `Authorization: Bearer`
 * to the hub (a browser drops it when the hub redirects to its CDN, another
 * origin). On failure every response opened so far is cancelled and a
 * HubError says why.
 */
export async function openHubModel(ref, { fetch: fetchImpl = globalThis.fetch, maxBytes = MAX_MODEL_BYTES, token = '' } = {}) {
  const open = [];
  const get = async (file, optional = false) => {
    const response = await fetchFile(fetchImpl, ref, file, optional, token);
    if (response) open.push(response);
    return response;
  };
  try {
    const configText = await (await get(FILES.config)).text();
    const config = checkConfig(configText, ref);
    // The weights and the tokenizer (a vision model: its image processor) are asked for together; neither body is read yet.
    const vision = VISION_MODEL_TYPES.includes(config.model_type);
    const [weights, json] = await Promise.all([get(FILES.weights, true), get(vision ? FILES.preprocessor : FILES.tokenizer, true)]);
    // Without tokenizer.json: a Marian model's source.spm, target.spm and vocab.json
    // (opus-mt), else a SentencePiece model (tokenizer.model: Llama 2, Mistral v0.1;
    // spiece.model: T5, mT5; sentencepiece.bpe.model: XLM-R), else GPT-2's
    // vocab.json and merges.txt (facebook/opt-*).
    const names = { ...FILES };
    const companions = vision ? (json ? { preprocessor: json } : {})
      : json ? { tokenizer: json } : await (config.model_type === 'marian' ? marianFiles(get, ref) : otherTokenizerFiles(get, ref, names));
    let source;
    let weightFiles;
    if (weights) {
      source = { config: configText, weights, ...companions };
      weightFiles = [{ name: FILES.weights, size: contentLength(weights) }];
    } else {
      const indexResponse = await get(FILES.index, true);
      if (!indexResponse) {
        throw new HubError(`${ref.id} has no model.safetensors nor ${FILES.index}. attnplay reads only safetensors ` +
          'checkpoints: a pickled one (pytorch_model.bin) can run arbitrary code when read, so it is never loaded. ' +
          'Look on the hub for a revision or a copy of the model converted to safetensors', 'files');
      }
      const indexText = await indexResponse.text();
      const index = parseJson(indexText, FILES.index, ref.id);
      // The index says the checkpoint's size: a model too big is refused before any shard is asked for.
      const declared = Number(index?.metadata?.total_size);
      if (Number.isFinite(declared)) checkSize(ref, declared, null, maxBytes);
      const names = shardNames(index, ref.id);
      const shards = await Promise.all(names.map((name) => get(name)));
      source = { config: configText, index: indexText, weights: shards, ...companions };
      weightFiles = names.map((name, i) => ({ name, size: contentLength(shards[i]) }));
    }
    const companionFiles = Object.entries(companions).map(([key, response]) => ({ name: names[key], size: contentLength(response) }));
    const files = [...companionFiles, ...weightFiles];
    const total = files.every((f) => f.size !== null) ? files.reduce((sum, f) => sum + f.size, 0) : null;
    checkSize(ref, weightFiles.reduce((sum, f) => sum + (f.size ?? 0), 0), weightFiles.length, maxBytes);
    return { source, files, total, config };
  } catch (error) {
    await Promise.all(open.map((response) => (response.bodyUsed ? null : response.body?.cancel().catch(() => {}))));
    throw error;
  }
}

// { sentencepiece: the open response of the first of SENTENCEPIECE_FILES the
// model has } (its name set in names.sentencepiece), else { vocab, merges }:
// GPT-2's files, or a HubError when there is none of them.
async function otherTokenizerFiles(get, ref, names) {
  for (const name of SENTENCEPIECE_FILES) {
    const sentencepiece = await get(name, true);
    if (sentencepiece) {
      names.sentencepiece = name;
      return { sentencepiece };
    }
  }
  const [vocab, merges] = await Promise.all([get(FILES.vocab, true), get(FILES.merges, true)]);
  if (vocab && merges) return { vocab, merges };
  throw new HubError(`${ref.id} has no tokenizer.json, no SentencePiece model (${SENTENCEPIECE_FILES.join(', ')}) and ` +
    'not both of vocab.json and merges.txt: attnplay needs one of them to read text', 'files');
}

// { sourceSpm, targetSpm, vocab }: the open responses of a Marian model's
// tokenizer files, or a HubError naming the one that is missing.
async function marianFiles(get, ref) {
  const responses = await Promise.all(['sourceSpm', 'targetSpm', 'vocab'].map((key) => get(FILES[key], true)));
  const missing = ['sourceSpm', 'targetSpm', 'vocab'].filter((key, i) => !responses[i]).map((key) => FILES[key]);
  if (missing.length) {
    throw new HubError(`${ref.id} has no tokenizer.json and no ${missing.join(', ')}: a Marian model needs tokenizer.json, ` +
      'or source.spm, target.spm and vocab.json, to read text', 'files');
  }
  const [sourceSpm, targetSpm, vocab] = responses;
  return { sourceSpm, targetSpm, vocab };
}

// A HubError when the weights (`bytes`, in `files` files when known) are more than the WASM memory can hold.
function checkSize(ref, bytes, files, maxBytes) {
  if (bytes <= maxBytes) return;
  throw new HubError(`${ref.id} is too big for a browser: its weights are ${formatBytes(bytes)}` +
    `${files > 1 ? ` in ${files} files` : ''}, and a page's WebAssembly memory holds at most 4 GiB ` +
    `(the weights plus the work of a forward pass), so attnplay opens models up to ${formatBytes(maxBytes)}. ` +
    'Pick a smaller model of the family', 'too-big');
}

function parseJson(text, file, id) {
  try {
    return JSON.parse(text);
  } catch {
    throw new HubError(`the ${file} of ${id} is not valid JSON`, 'files');
  }
}

// The parsed config.json, or a HubError when it is not JSON or its architecture is not one the core runs.
function checkConfig(text, ref) {
  const config = parseJson(text, FILES.config, ref.id);
  const type = config?.model_type;
  if (!SUPPORTED_MODEL_TYPES.includes(type) && !ENCODER_DECODER_TYPES.includes(type)) {
    const named = type ? `model_type "${String(type).slice(0, 60)}"` : 'no model_type';
    const architecture = Array.isArray(config?.architectures) && config.architectures.length ? ` (${config.architectures.join(', ').slice(0, 100)})` : '';
    throw new HubError(`${ref.id} has ${named}${architecture}, which attnplay cannot run; it runs ` +
      `${[...SUPPORTED_MODEL_TYPES, ...ENCODER_DECODER_TYPES].join(', ')} models. Nothing else was downloaded`, 'unsupported');
  }
  return config;
}

// The shard files an index names, in file-name order (the order Engine.loadModel takes them in).
function shardNames(index, id) {
  const map = index?.weight_map;
  if (!map || typeof map !== 'object' || Object.keys(map).length === 0) throw new HubError(`the ${FILES.index} of ${id} has no weight_map`, 'files');
  const names = [...new Set(Object.values(map))].sort();
  for (const name of names) {
    if (typeof name !== 'string' || !/^[\w.-]+\.safetensors$/.test(name)) {
      throw new HubError(`the ${FILES.index} of ${id} names a shard "${String(name).slice(0, 80)}" that is not a .safetensors file beside it`, 'files');
    }
  }
  return names;
}

// Content-Length of an uncompressed response, or null.
function contentLength(response) {
  if ((response.headers.get('content-encoding') ?? 'identity') !== 'identity' || !response.headers.has('content-length')) return null;
  const n = Number(response.headers.get('content-length'));
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/**
 * GETs one file of a hub model; resolves to the Response (body unread), or
 * null for an optional file the hub does not have (404). Any other failure
 * is a HubError that names its cause. token: an access token ('' for none).
 */
export async function fetchFile(fetchImpl, ref, file, optional = false, token = '') {
  const url = resolveUrl(ref, file);
  let response;
  try {
    response = await fetchImpl(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  } catch (error) {
    if (error?.name === 'AbortError') throw error;
    const cause = await corsOrNetwork(url);
    throw new HubError(unreachableMessage(cause, url, ref), cause);
  }
  if (response.ok) return response;
  const errorCode = response.headers.get('x-error-code');
  await response.body?.cancel().catch(() => {});
  if (response.status === 404 && optional && errorCode !== 'RepoNotFound' && errorCode !== 'RevisionNotFound') return null;
  throw statusError(response.status, errorCode, ref, file, url, Boolean(token));
}

// withToken: whether the request carried an access token (never the token itself).
function statusError(status, errorCode, ref, file, url, withToken) {
  const page = `${hubBase(ref.hub)}/${ref.id}`;
  const tokens = `${hubBase(ref.hub)}/settings/tokens`;
  if (withToken && status === 401) {
    return new HubError(`the hub did not accept the access token for ${ref.id} (HTTP 401): check it, or make a new one ` +
      `(a "read" token) on ${tokens}`, 'gated');
  }
  if (errorCode === 'GatedRepo' || (status === 403 && errorCode !== 'RepoNotFound')) {
    return new HubError(withToken
      ? `${ref.id} is a gated model, and the account of this access token has not been given access: accept its ` +
        `licence on ${page} (signed in as that account), then open it again`
      : `${ref.id} is a gated model: accept its licence on its hub page, ${page}, then give an access token ` +
        `(a "read" token from ${tokens}) in the token field and open it again`, 'gated');
  }
  if (status === 401) {
    return new HubError(`the hub refused ${ref.id} (HTTP 401): the model is private or gated, or no such model exists ` +
      `(the hub gives the same answer for all three without an access token). Check the id on ${page}; ` +
      `if it is gated, accept its licence there, then give an access token (from ${tokens}) in the token field`, 'gated');
  }
  if (status === 404) {
    if (errorCode === 'RevisionNotFound') return new HubError(`${ref.id} has no revision "${ref.revision}" (HTTP 404)`, 'not-found');
    if (file === FILES.config || errorCode === 'RepoNotFound') {
      return new HubError(`no model ${ref.id}${ref.revision === DEFAULT_REVISION ? '' : ` at revision "${ref.revision}"`} on ` +
        `${hubBase(ref.hub)} (HTTP 404 for config.json): check the spelling (NAME or ORG/NAME)`, 'not-found');
    }
    return new HubError(`${ref.id} has no ${file} (HTTP 404 for ${url})`, 'not-found');
  }
  return new HubError(`the hub answered HTTP ${status} for ${url}${status >= 500 ? ': it may be down; try again later' : ''}`, 'http');
}

// A request that failed without an answer: the network, or an answer the browser withheld (CORS).
// A no-cors request reaches a server that is up even when it sends no CORS headers.
async function corsOrNetwork(url) {
  if (typeof window === 'undefined' && typeof WorkerGlobalScope === 'undefined') return 'network';
  const controller = new AbortController();
  try {
    await fetch(url, { mode: 'no-cors', signal: controller.signal });
    return 'cors';
  } catch {
    return 'network';
  } finally {
    controller.abort(); // only the answer's arrival matters, not its body
  }
}

function unreachableMessage(cause, url, ref) {
  if (cause === 'cors') {
    return `${hubBase(ref.hub)} answered, but without the CORS headers (Access-Control-Allow-Origin) that let a ` +
      `page read its files, so the browser withheld ${url}. The Hugging Face hub sends them; a mirror must too`;
  }
  return `cannot reach ${hubBase(ref.hub)} (asking for ${url}): the network is down, the address is wrong, or a ` +
    'firewall or browser extension blocks it';
}
