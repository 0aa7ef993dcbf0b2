// A local server that imitates the Hugging Face hub for the tests (no network):
// its URL layout ({hub}/{id}/resolve/{revision}/{file}), a 302 redirect of
// every .safetensors file to a second origin (the hub's file CDN), CORS
// headers on both (with the preflight a request with an Authorization header
// needs), the hub's answers for a gated model (401, X-Error-Code GatedRepo,
// without a token; its files with the token of an account given access; 403
// GatedRepo with another account's token; 401 with an unknown token; each
// request logs whether it carried a token), an unknown model, revision or file (404, RepoNotFound,
// RevisionNotFound, EntryNotFound). It serves the random golden checkpoints
// of tests/golden/models (one per supported family, with their tokenizer.json
// and PyTorch outputs), one of them split into a sharded checkpoint, and
// models that exercise the loader's refusals: a pickle-only model, an
// unsupported architecture, no tokenizer.json, a T5 model with only
// spiece.model, an OPT model with only vocab.json and merges.txt, a Marian model with only
// source.spm, target.spm and vocab.json (and one lacking vocab.json), a model too big for WASM
// memory, one without CORS headers, and one whose weights stop halfway until
// the test releases them (for Cancel). Every request is logged. Folders on
// disk can be added as more models (the benchmark's 124M-parameter ones).
// Not here: the tests themselves (tests/node/hub.test.mjs, tests/browser/hub.test.mjs).
import { createReadStream, readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

const modelsDir = fileURLToPath(new URL('../golden/models/', import.meta.url));
const FILES = ['config.json', 'model.safetensors', 'tokenizer.json'];
const REVISIONS = ['main', 'v1.0'];

/** Hub id -> the golden checkpoint (tests/golden/models/<name>) it serves. */
export const SENTENCEPIECE = { id: 'tiny/sentencepiece', model: 'bpe-identity-bytes.model' };
export const FAMILY_MODELS = {
  'tiny/gpt2': 'gpt2-l2-h12-k8-f16',
  gpt2: 'gpt2-l4-h4-k8-bf16', // an id without an organisation, as "gpt2" is on the hub
  'tiny/bert': 'bert-l2-h2-k32-f32',
  'tiny/distilbert': 'distilbert-l2-h4-k8-f32',
  'tiny/electra': 'electra-generator-l2-h2-k16-e24-f32',
  'tiny/roberta': 'roberta-l2-h2-k16-f32',
  'tiny/xlm-roberta': 'xlm-roberta-l1-h4-k8-bf16',
  'tiny/opt': 'opt-post-ln-proj-f16',
  'tiny/gemma2': 'gemma2-softcap-window-f32',
  'tiny/gemma3': 'gemma3-layer-types-f16',
  'tiny/olmo2': 'olmo2-gqa-f16',
  'tiny/smollm3': 'smollm3-norope-f32',
  'tiny/phi3': 'phi3-partial-window-bf16',
  'tiny/llama': 'llama-gqa-llama3-bf16',
  'tiny/mistral': 'mistral-window3-f16',
  'tiny/qwen2': 'qwen2-bias-f32',
  'tiny/qwen3': 'qwen3-qknorm-bf16',
  'tiny/pythia': 'pythia-parallel-f16',
};
/** An encoder-decoder of the T5 family (gated GELU, d_kv 12, untied lm_head), as a hub repository holds it. */
export const T5 = { id: 'tiny/t5', golden: 't5-gated-gelu-dkv12-untied-bf16' };
/** A T5 repository without tokenizer.json, as google/mt5-small is: its SentencePiece model as spiece.model (T5's golden checkpoint grown to that model's 1,000 pieces and 100 sentinels). */
export const T5_SENTENCEPIECE = { id: 'tiny/t5-spiece', golden: T5.golden, model: 'unigram-nmt-nfkc.model', vocabSize: 1100 };
/** An OPT repository without tokenizer.json, as facebook/opt-125m's: GPT-2's vocab.json and merges.txt (written from the golden's tokenizer.json). */
export const OPT_GPT2_FILES = { id: 'tiny/opt-gpt2-files', golden: 'opt-l2-h4-k8-f32' };
/** The gated model, and the access tokens the fake hub knows: one of an account given access, one of an account without it. */
export const GATED = { id: 'tiny/gated', token: 'hf_attnplayTestTokenWithAccess', noAccessToken: 'hf_attnplayTestTokenWithoutAccess' };
/** The Marian model without tokenizer.json (models/gettext-en-fr less its tokenizer.json). */
export const MARIAN = { id: 'tiny/opus-mt-en-fr' };
/** The sharded model: this golden checkpoint in two shards with model.safetensors.index.json. */
export const SHARDED = { id: 'tiny/llama-sharded', golden: 'llama-mqa-bias-linear-f32' };
/** The model whose model.safetensors stops halfway until release() (for Cancel). */
export const HELD = { id: 'tiny/held', golden: 'gpt2-l2-h12-k8-f16' };
/** A vision model (DINOv2 with registers): config.json, model.safetensors and preprocessor_config.json, no tokenizer. */
export const VISION = { id: 'tiny/dinov2-registers', golden: 'dinov2-registers-swiglu-bf16' };
/** The size the "too big" model's weights announce. */
export const HUGE_BYTES = 5 * 2 ** 30;

const golden = (name) => Object.fromEntries(FILES.map((file) => [file, readFileSync(`${modelsDir}${name}/${file}`)]));

// A safetensors file -> { header (name -> { dtype, shape, data_offsets }), data }.
function parseSafetensors(bytes) {
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8'));
  delete header.__metadata__;
  return { header, data: bytes.subarray(8 + headerLength) };
}

// [{ name, dtype, shape, data }] -> a safetensors file's bytes.
function safetensorsBytes(tensors) {
  const header = {};
  let offset = 0;
  for (const { name, dtype, shape, data } of tensors) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + data.length] };
    offset += data.length;
  }
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([length, json, ...tensors.map((t) => t.data)]);
}

// The tensors of a parsed file, by name: { name, dtype, shape, data }.
const tensorsOf = ({ header, data }, names) => names.map((name) => {
  const { dtype, shape, data_offsets: [begin, end] } = header[name];
  return { name, dtype, shape, data: data.subarray(begin, end) };
});

/** A safetensors file split in two: { 'model-00001-of-00002.safetensors': bytes, ..., index JSON }. */
export function shard(safetensors) {
  const parsed = parseSafetensors(safetensors);
  const names = Object.keys(parsed.header).sort();
  const halves = [names.slice(0, names.length >> 1), names.slice(names.length >> 1)];
  const files = {};
  const weightMap = {};
  halves.forEach((part, i) => {
    const file = `model-0000${i + 1}-of-00002.safetensors`;
    files[file] = safetensorsBytes(tensorsOf(parsed, part));
    for (const name of part) weightMap[name] = file;
  });
  const total = Object.values(files).reduce((sum, b) => sum + b.length, 0);
  files['model.safetensors.index.json'] = Buffer.from(JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }));
  return files;
}

/** GPT-2's original files of a golden checkpoint's byte-level BPE tokenizer.json: { 'vocab.json', 'merges.txt' } (Buffers). */
export function gpt2FilesOf(name) {
  const { model } = JSON.parse(readFileSync(`${modelsDir}${name}/tokenizer.json`, 'utf8'));
  const merges = model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m));
  return { 'vocab.json': Buffer.from(JSON.stringify(model.vocab)), 'merges.txt': Buffer.from(['#version: 0.2', ...merges, ''].join('\n')) };
}

/**
 * A safetensors file with every tensor whose first dimension is `rows` (the
 * token embeddings, the output layer and its bias) grown to `newRows` by rows
 * of zeros: a golden checkpoint made to take the ids of a larger tokenizer.
 */
export function widenVocabulary(safetensors, rows, newRows) {
  const parsed = parseSafetensors(safetensors);
  return safetensorsBytes(tensorsOf(parsed, Object.keys(parsed.header)).map((t) => (t.shape[0] !== rows ? t : {
    ...t, shape: [newRows, ...t.shape.slice(1)], data: Buffer.concat([t.data, Buffer.alloc((t.data.length / rows) * (newRows - rows))]),
  })));
}

function repositories() {
  const repos = {};
  for (const [id, name] of Object.entries(FAMILY_MODELS)) repos[id] = { files: golden(name) };
  repos[T5.id] = { files: golden(T5.golden) };
  repos[VISION.id] = { files: Object.fromEntries(['config.json', 'model.safetensors', 'preprocessor_config.json']
    .map((file) => [file, readFileSync(`${modelsDir}${VISION.golden}/${file}`)])) };
  const sharded = golden(SHARDED.golden);
  repos[SHARDED.id] = { files: { 'config.json': sharded['config.json'], 'tokenizer.json': sharded['tokenizer.json'], ...shard(sharded['model.safetensors']) } };
  repos[HELD.id] = { files: golden(HELD.golden), held: true };
  const gpt2 = golden('gpt2-l2-h12-k8-f16');
  repos[GATED.id] = { files: gpt2, gated: true };
  repos['tiny/no-cors'] = { files: gpt2, noCors: true };
  repos['tiny/pickle-only'] = { files: { 'config.json': gpt2['config.json'], 'tokenizer.json': gpt2['tokenizer.json'], 'pytorch_model.bin': Buffer.from('PK\x03\x04 not read') } };
  repos['tiny/no-tokenizer'] = { files: { 'config.json': gpt2['config.json'], 'model.safetensors': gpt2['model.safetensors'] } };
  // SentencePiece's tokenizer.model and no tokenizer.json (as Llama 2): austen-gpt's
  // weights (4,096 rows) with a 1,000-piece model trained by spm_train.
  const opt = golden(OPT_GPT2_FILES.golden);
  repos[OPT_GPT2_FILES.id] = { files: { 'config.json': opt['config.json'], 'model.safetensors': opt['model.safetensors'], ...gpt2FilesOf(OPT_GPT2_FILES.golden) } };
  const t5 = golden(T5_SENTENCEPIECE.golden);
  const t5Vocab = JSON.parse(t5['config.json']).vocab_size;
  repos[T5_SENTENCEPIECE.id] = { files: {
    'config.json': Buffer.from(JSON.stringify({ ...JSON.parse(t5['config.json']), vocab_size: T5_SENTENCEPIECE.vocabSize })),
    'model.safetensors': widenVocabulary(t5['model.safetensors'], t5Vocab, T5_SENTENCEPIECE.vocabSize),
    'spiece.model': readFileSync(fileURLToPath(new URL(`../tokenizer/sentencepiece/${T5_SENTENCEPIECE.model}`, import.meta.url))),
  } };
  const austen = fileURLToPath(new URL('../../models/austen-gpt/', import.meta.url));
  repos[SENTENCEPIECE.id] = { files: {
    'config.json': readFileSync(`${austen}config.json`), 'model.safetensors': readFileSync(`${austen}model.safetensors`),
    'tokenizer.model': readFileSync(fileURLToPath(new URL(`../tokenizer/sentencepiece/${SENTENCEPIECE.model}`, import.meta.url))),
  } };
  // A Marian model laid out as Helsinki-NLP's opus-mt folders are: source.spm,
  // target.spm and vocab.json, no tokenizer.json (gettext-en-fr's files);
  // and one that lacks vocab.json.
  const gettext = fileURLToPath(new URL('../../models/gettext-en-fr/', import.meta.url));
  const opus = Object.fromEntries(['config.json', 'model.safetensors', 'source.spm', 'target.spm', 'vocab.json']
    .map((file) => [file, readFileSync(`${gettext}${file}`)]));
  repos[MARIAN.id] = { files: opus };
  const { 'vocab.json': _, ...noVocab } = opus;
  repos['tiny/opus-mt-no-vocab'] = { files: noVocab };
  repos['tiny/mamba'] = { files: { 'config.json': Buffer.from(JSON.stringify({ model_type: 'mamba', architectures: ['MambaForCausalLM'] })), 'model.safetensors': gpt2['model.safetensors'], 'tokenizer.json': gpt2['tokenizer.json'] } };
  // A 7B-sized sharded checkpoint: the index says 15.2 GB; its shards do not exist (they must never be asked for).
  const bigIndex = { metadata: { total_size: 15231233024 }, weight_map: Object.fromEntries([1, 2, 3, 4].map((i) => [`t${i}`, `model-0000${i}-of-00004.safetensors`])) };
  repos['tiny/huge-sharded'] = { files: { 'config.json': gpt2['config.json'], 'tokenizer.json': gpt2['tokenizer.json'], 'model.safetensors.index.json': Buffer.from(JSON.stringify(bigIndex)) } };
  repos['tiny/huge'] = { files: { 'config.json': gpt2['config.json'], 'model.safetensors': null, 'tokenizer.json': gpt2['tokenizer.json'] }, huge: true };
  return repos;
}

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Content-Length, ETag, X-Error-Code, X-Error-Message, X-Linked-Size',
};
// The answer to a browser's preflight of a request with an Authorization header (a wildcard does not cover it).
const PREFLIGHT = { ...CORS, 'Access-Control-Allow-Headers': 'Authorization, Range', 'Access-Control-Allow-Methods': 'GET, HEAD' };

function listen(handler) {
  const server = createServer(handler);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, 'localhost', () => resolve({ server, url: `http://localhost:${server.address().port}` }));
  });
}

// A model folder on disk, its files streamed when asked for: { files: { name: { path, length } } }.
function folderRepository(dir) {
  const files = {};
  for (const name of readdirSync(dir)) files[name] = { path: `${dir}/${name}`, length: statSync(`${dir}/${name}`).size };
  return { files, onDisk: true };
}

// Sends a file of a repository: bytes in memory, or a file on disk.
function sendFile(res, repo, file) {
  const entry = repo.files[file];
  if (repo.onDisk) createReadStream(entry.path).pipe(res);
  else res.end(entry);
}

/**
 * Starts the hub and its CDN on two free ports (two origins). options.folders:
 * { id: directory } serves more models from disk. Resolves to
 * { hub, cdn (their base URLs), requests ([{ server: 'hub' | 'cdn', method,
 * path }] in arrival order), aborted (paths whose answer the client closed
 * before it was complete), release() (lets the held model's weights finish),
 * repos, close() }.
 */
export async function startFakeHub({ folders = {} } = {}) {
  const repos = repositories();
  for (const [id, dir] of Object.entries(folders)) repos[id] = folderRepository(dir);
  const requests = [];
  const aborted = [];
  let releaseHeld;
  const held = new Promise((resolve) => { releaseHeld = resolve; });
  const track = (req, res) => res.on('close', () => { if (!res.writableFinished) aborted.push(req.url); });

  const cdn = await listen(async (req, res) => {
    requests.push({ server: 'cdn', method: req.method, path: req.url, token: 'authorization' in req.headers });
    track(req, res);
    if (req.method === 'OPTIONS') return void res.writeHead(204, PREFLIGHT).end();
    const match = /^\/blobs\/(.+)\/([^/]+)$/.exec(decodeURI(req.url));
    const repo = match && repos[match[1]];
    if (!repo || !(match[2] in repo.files)) {
      res.writeHead(404, CORS).end('no such blob');
      return;
    }
    const headers = repo.noCors ? {} : CORS;
    if (repo.huge) {
      // Announces HUGE_BYTES and sends a first chunk; the rest never comes (the client must hang up).
      res.writeHead(200, { ...headers, 'Content-Type': 'application/octet-stream', 'Content-Length': String(HUGE_BYTES) });
      res.write(Buffer.alloc(65536));
      return;
    }
    const bytes = repo.files[match[2]];
    res.writeHead(200, { ...headers, 'Content-Type': 'application/octet-stream', 'Content-Length': String(bytes.length) });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    if (repo.held) {
      res.write(bytes.subarray(0, bytes.length >> 1));
      await held;
      if (!res.destroyed) res.end(bytes.subarray(bytes.length >> 1));
      return;
    }
    sendFile(res, repo, match[2]);
  });

  const hub = await listen((req, res) => {
    requests.push({ server: 'hub', method: req.method, path: req.url, token: 'authorization' in req.headers });
    track(req, res);
    if (req.method === 'OPTIONS') return void res.writeHead(204, PREFLIGHT).end();
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const match = /^\/(.+?)\/resolve\/(.+?)\/([^/]+)$/.exec(path);
    const repo = match && repos[match[1]];
    const headers = repo?.noCors ? {} : CORS;
    const fail = (status, code, message) => res.writeHead(status, { ...headers, 'X-Error-Code': code, 'X-Error-Message': message }).end(message);
    if (!repo) return fail(404, 'RepoNotFound', 'Repository not found');
    if (repo.gated) {  // as the hub answers: no token, an unknown one, an account without access, one with it
      const auth = req.headers.authorization;
      if (!auth) return fail(401, 'GatedRepo', 'Access to this model is restricted. You must be authenticated to access it.');
      if (auth === `Bearer ${GATED.noAccessToken}`) return fail(403, 'GatedRepo', 'Access to this model is restricted and you are not in the authorized list.');
      if (auth !== `Bearer ${GATED.token}`) return res.writeHead(401, headers).end('Invalid credentials in Authorization header');
    }
    if (!REVISIONS.includes(match[2])) return fail(404, 'RevisionNotFound', 'Invalid rev id');
    const file = match[3];
    if (!(file in repo.files)) return fail(404, 'EntryNotFound', 'Entry not found');
    if (file.endsWith('.safetensors')) {
      // Large files live on the CDN, as on the hub (X-Linked-Size: their size).
      const size = repo.huge ? HUGE_BYTES : repo.files[file].length;
      res.writeHead(302, { ...headers, Location: `${cdn.url}/blobs/${match[1]}/${file}`, 'X-Linked-Size': String(size) }).end();
      return undefined;
    }
    res.writeHead(200, { ...headers, 'Content-Type': file.endsWith('.json') ? 'application/json' : 'application/octet-stream', 'Content-Length': String(repo.files[file].length) });
    if (req.method === 'HEAD') res.end();
    else sendFile(res, repo, file);
    return undefined;
  });

  return {
    hub: hub.url,
    cdn: cdn.url,
    requests,
    aborted,
    repos,
    release: () => releaseHeld(),
    async close() {
      releaseHeld();
      for (const { server } of [hub, cdn]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}
