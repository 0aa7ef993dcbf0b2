// Models by hub id (web/hub/hub.js, web/hub/download.js) against the local imitation
// of the Hugging Face hub (tests/hub/fake-hub.mjs), in Node: id parsing and
// resolve URLs; every supported family (and a sharded checkpoint) opened from
// the hub, through its redirect to a second origin, runs and gives PyTorch's
// attention (golden.json); the refusals (unsupported architecture before any
// weight request, pickles never requested, no tokenizer.json, a Marian model
// with source.spm, target.spm and vocab.json instead, too big for
// WASM memory with the download hung up, gated, unknown model, revision,
// unreachable hub) and aborting a download midway.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { PNG } from 'pngjs';

import { createEngine } from '../../dist/engine/engine.js';
import { DownloadProgress, cachingFetch } from '../../dist/hub/download.js';
import {
  DEFAULT_HUB, ENCODER_DECODER_TYPES, MAX_MODEL_BYTES, SUPPORTED_MODEL_TYPES, hubReference, openHubModel, parseModelId, resolveUrl,
} from '../../dist/hub/hub.js';
import { parseNpy } from '../../web/attention/attention-data-source.js';
import { FAMILY_MODELS, GATED, HELD, MARIAN, SENTENCEPIECE, SHARDED, OPT_GPT2_FILES, T5, T5_SENTENCEPIECE, VISION, startFakeHub } from '../hub/fake-hub.mjs';
import { flat, golden, maxAbsDiff } from './model-golden.mjs';

let engine;
let fake;
before(async () => {
  engine = await createEngine();
  fake = await startFakeHub();
});
after(() => fake?.close());

const ref = (id, revision = 'main') => ({ hub: fake.hub, id, revision });
const requestsFor = (id) => fake.requests.filter((r) => decodeURIComponent(r.path).includes(`/${id}/`));

test('model ids: NAME, ORG/NAME, @revision, hf: and hub page addresses', () => {
  assert.deepEqual(parseModelId('gpt2'), { id: 'gpt2', revision: 'main' });
  assert.deepEqual(parseModelId(' hf:HuggingFaceTB/SmolLM2-135M '), { id: 'HuggingFaceTB/SmolLM2-135M', revision: 'main' });
  assert.deepEqual(parseModelId('hf:EleutherAI/pythia-160m@step1000'), { id: 'EleutherAI/pythia-160m', revision: 'step1000' });
  assert.deepEqual(parseModelId('Qwen/Qwen2.5-0.5B@refs/pr/1'), { id: 'Qwen/Qwen2.5-0.5B', revision: 'refs/pr/1' });
  assert.deepEqual(parseModelId('https://huggingface.co/distilbert/distilgpt2'), { id: 'distilbert/distilgpt2', revision: 'main' });
  assert.deepEqual(parseModelId('https://huggingface.co/gpt2/tree/v1'), { id: 'gpt2', revision: 'v1' });
  for (const bad of ['', 'a/b/c', '../etc', '-x', 'a--b/c', 'org/<script>', 'gpt2@', 'gpt2@a b']) {
    assert.throws(() => parseModelId(bad), /is not a (Hugging Face model id|revision)/, bad);
  }
  assert.equal(hubReference({ id: 'gpt2', revision: 'main' }), 'hf:gpt2');
  assert.equal(hubReference({ id: 'EleutherAI/pythia-160m', revision: 'step1000' }), 'hf:EleutherAI/pythia-160m@step1000');
  assert.equal(resolveUrl({ id: 'gpt2' }, 'config.json'), `${DEFAULT_HUB}/gpt2/resolve/main/config.json`);
  assert.equal(resolveUrl({ hub: 'http://mirror.test/hf/', id: 'a/b', revision: 'refs/pr/1' }, 'tokenizer.json'),
    'http://mirror.test/hf/a/b/resolve/refs%2Fpr%2F1/tokenizer.json');
  assert.throws(() => resolveUrl({ hub: 'javascript:alert(1)', id: 'gpt2' }, 'config.json'), /not an http\(s\) address/);
});

test('the architectures the loader accepts are the ones the core runs', async () => {
  const config = JSON.stringify({ model_type: 'not-a-model' });
  const weights = fake.repos['tiny/gpt2'].files['model.safetensors'];
  await assert.rejects(engine.loadModel({ config, weights }), (error) => {
    const [, listed, encoderDecoders] = /\(supported: ([^;)]+); encoder-decoders: ([^)]+)\)/.exec(error.message) ?? [];
    assert.deepEqual(listed?.split(', '), SUPPORTED_MODEL_TYPES, error.message);
    assert.deepEqual(encoderDecoders?.split(', '), ENCODER_DECODER_TYPES, error.message);
    return true;
  });
});

test(`hf:${T5.id} opens from the hub as an encoder-decoder and gives PyTorch's attention of both sides (${T5.golden})`, async () => {
  const opened = await openHubModel(ref(T5.id), { fetch: cachingFetch() });
  assert.deepEqual(opened.files.map((f) => f.name).sort(), ['model.safetensors', 'tokenizer.json']);
  const model = await engine.loadModel(opened.source);
  try {
    assert.equal(model.config.modelType, 't5');
    for (const c of golden(T5.golden).cases) {
      const r = model.forward(c.ids, c.decoder_ids);
      assert.ok(maxAbsDiff(r.encoderAttentions.data, flat(c.encoder_attentions)) < 1e-5, c.source);
      assert.ok(maxAbsDiff(r.crossAttentions.data, flat(c.cross_attentions)) < 1e-5, c.source);
    }
  } finally {
    model.dispose();
  }
});

test(`hf:${VISION.id} opens as a vision model: its image processor instead of a tokenizer, and PyTorch's attention (${VISION.golden})`, async () => {
  const opened = await openHubModel(ref(VISION.id), { fetch: cachingFetch() });
  assert.deepEqual(opened.files.map((f) => f.name).sort(), ['model.safetensors', 'preprocessor_config.json']);
  assert.ok(!requestsFor(VISION.id).some((r) => /tokenizer|\.spm|vocab\.json|merges/.test(r.path)), 'no tokenizer file is asked for');
  const model = await engine.loadModel(opened.source);
  try {
    assert.equal(model.config.imageModel, true);
    assert.equal(model.config.vision.registers, 4);
    const picture = PNG.sync.read(readFileSync(new URL(`../golden/models/${VISION.golden}/picture.png`, import.meta.url)));
    const r = model.run({ data: picture.data, width: picture.width, height: picture.height });
    const reference = parseNpy(readFileSync(new URL(`../golden/models/${VISION.golden}/attentions.npy`, import.meta.url))).data;
    assert.ok(maxAbsDiff(r.attentions.data, reference) < 1e-5);
  } finally {
    model.dispose();
  }
});

for (const [id, name] of [...Object.entries(FAMILY_MODELS), [SHARDED.id, SHARDED.golden]]) {
  test(`hf:${id} opens from the hub (via its CDN) and gives PyTorch's attention (${name})`, async () => {
    const fetched = cachingFetch();
    const opened = await openHubModel(ref(id), { fetch: fetched });
    const sizes = Object.fromEntries(Object.entries(fake.repos[id].files).map(([file, bytes]) => [file, bytes.length]));
    for (const file of opened.files) assert.equal(file.size, sizes[file.name], file.name);
    assert.equal(opened.total, opened.files.reduce((sum, f) => sum + f.size, 0));
    assert.equal(opened.files.length, id === SHARDED.id ? 3 : 2, 'tokenizer.json and the weights');
    const progress = new DownloadProgress(opened.files);
    const model = await engine.loadModel(opened.source, { onProgress: (p) => progress.update(p) });
    try {
      const done = progress.snapshot();
      assert.equal(done.loaded, opened.total);
      for (const file of done.files) assert.equal(file.loaded, file.size, file.name);
      for (const c of golden(name).cases) {
        const r = model.forward(c.ids, { typeIds: c.type_ids });
        const error = maxAbsDiff(r.attentions.data, flat(c.attentions));
        assert.ok(error < 1e-5, `attention differs by ${error}`);
      }
    } finally {
      model.dispose();
    }
    const seen = requestsFor(id);
    const weights = opened.files.filter((f) => f.name.endsWith('.safetensors')).map((f) => f.name);
    for (const file of weights) {
      assert.ok(seen.some((r) => r.server === 'hub' && r.path.endsWith(`/resolve/main/${file}`)), `${file} asked of the hub`);
      assert.ok(seen.some((r) => r.server === 'cdn' && r.path.endsWith(`/${file}`)), `${file} followed to the CDN`);
    }
    assert.ok(!seen.some((r) => /pytorch_model|\.bin$/.test(r.path)), 'no pickle is ever requested');
  });
}

test('a revision is part of the resolve URL; an unknown revision says so', async () => {
  const opened = await openHubModel(ref('tiny/gpt2', 'v1.0'));
  assert.ok(requestsFor('tiny/gpt2').some((r) => r.path === '/tiny/gpt2/resolve/v1.0/config.json'));
  await opened.source.weights.body.cancel();
  await opened.source.tokenizer.body.cancel();
  await assert.rejects(openHubModel(ref('tiny/gpt2', 'no-such-branch')), { code: 'not-found', message: /tiny\/gpt2 has no revision "no-such-branch"/ });
});

test('an unsupported architecture is refused after config.json, before any weight is requested', async () => {
  await assert.rejects(openHubModel(ref('tiny/mamba')),
    { code: 'unsupported', message: /tiny\/mamba has model_type "mamba" \(MambaForCausalLM\), which attnplay cannot run; it runs gpt2, bert, distilbert, electra, roberta, xlm-roberta, camembert, opt, llama/ });
  assert.deepEqual(requestsFor('tiny/mamba').map((r) => r.path), ['/tiny/mamba/resolve/main/config.json']);
});

test('a pickle-only model is refused without requesting the pickle', async () => {
  await assert.rejects(openHubModel(ref('tiny/pickle-only')), { code: 'files', message: /no model\.safetensors nor model\.safetensors\.index\.json.*pickled one \(pytorch_model\.bin\).*never loaded/ });
  assert.ok(!requestsFor('tiny/pickle-only').some((r) => r.path.includes('pytorch_model')));
});

test('a model without tokenizer.json, a SentencePiece model or GPT-2\'s files says it needs one', async () => {
  await assert.rejects(openHubModel(ref('tiny/no-tokenizer')),
    { code: 'files', message: /tiny\/no-tokenizer has no tokenizer\.json, no SentencePiece model \(tokenizer\.model, spiece\.model, sentencepiece\.bpe\.model\) and not both of vocab\.json and merges\.txt/ });
});

test('an OPT model with only vocab.json and merges.txt opens and reads text as OPT\'s tokenizer (</s> first)', async () => {
  const opened = await openHubModel(ref(OPT_GPT2_FILES.id), { fetch: cachingFetch() });
  assert.deepEqual(opened.files.map((f) => f.name), ['vocab.json', 'merges.txt', 'model.safetensors']);
  const model = await engine.loadModel(opened.source);
  try {
    const [c] = JSON.parse(readFileSync(new URL(`../golden/models/${OPT_GPT2_FILES.golden}/golden.json`, import.meta.url), 'utf8')).cases;
    assert.deepEqual(model.run(c.text).tokens.map((t) => t.id), c.ids);
  } finally {
    model.dispose();
  }
});

test('a T5 model with only spiece.model opens and reads text as T5Tokenizer (sentencepiece\'s ids, then </s>)', async () => {
  const opened = await openHubModel(ref(T5_SENTENCEPIECE.id), { fetch: cachingFetch() });
  assert.deepEqual(opened.files.map((f) => f.name), ['spiece.model', 'model.safetensors']);
  assert.deepEqual(requestsFor(T5_SENTENCEPIECE.id).map((r) => r.path.split('/').pop()).filter((f) => !f.endsWith('.safetensors')),
    ['config.json', 'tokenizer.json', 'tokenizer.model', 'spiece.model']);
  const model = await engine.loadModel(opened.source);
  try {
    const goldens = JSON.parse(readFileSync(new URL('../tokenizer/sentencepiece/goldens.json', import.meta.url), 'utf8'));
    const spm = goldens.models[T5_SENTENCEPIECE.model];
    const { text } = goldens.texts[0];
    assert.deepEqual(model.run(text).sourceTokens.map((t) => t.id), [...spm.results[0].ids, spm.eos_id]);
  } finally {
    model.dispose();
  }
});

test('a model with only SentencePiece\'s tokenizer.model opens and tokenizes as sentencepiece does', async () => {
  const opened = await openHubModel(ref(SENTENCEPIECE.id), { fetch: cachingFetch() });
  assert.deepEqual(opened.files.map((f) => f.name), ['tokenizer.model', 'model.safetensors']);
  const progress = new DownloadProgress(opened.files);
  const model = await engine.loadModel(opened.source, { onProgress: (p) => progress.update(p) });
  try {
    for (const file of progress.snapshot().files) assert.equal(file.loaded, file.size, file.name);
    const goldens = JSON.parse(readFileSync(new URL('../tokenizer/sentencepiece/goldens.json', import.meta.url), 'utf8'));
    const { text } = goldens.texts[0];
    const want = goldens.models[SENTENCEPIECE.model].ids_bos_eos.slice(0, -1); // python3-sentencepiece's ids, <s> added as Llama does
    assert.deepEqual(model.run(text).tokens.map((t) => t.id), want);
  } finally {
    model.dispose();
  }
});

test('a Marian model with source.spm, target.spm and vocab.json and no tokenizer.json opens and reads text as MarianTokenizer', async () => {
  const opened = await openHubModel(ref(MARIAN.id), { fetch: cachingFetch() });
  assert.deepEqual(opened.files.map((f) => f.name), ['source.spm', 'target.spm', 'vocab.json', 'model.safetensors']);
  assert.equal(opened.total, opened.files.reduce((sum, f) => sum + f.size, 0));
  const progress = new DownloadProgress(opened.files);
  const model = await engine.loadModel(opened.source, { onProgress: (p) => progress.update(p) });
  try {
    for (const file of progress.snapshot().files) assert.equal(file.loaded, file.size, file.name);
    const goldens = JSON.parse(readFileSync(new URL('../tokenizer/marian/goldens.json', import.meta.url), 'utf8'));
    for (const c of goldens.cases.slice(0, 20)) { // python3-sentencepiece pieces looked up in vocab.json
      const r = model.run(c.text, { target: c.text });
      assert.deepEqual(r.sourceTokens.map((t) => t.id), c.shipped.source_ids, c.text);
      assert.deepEqual(r.decoderTokens.map((t) => t.id).slice(1), c.shipped.target_ids, c.text);
    }
    assert.equal(model.translate('incorrect binary data format').text.length > 0, true);
  } finally {
    model.dispose();
  }
  assert.ok(!requestsFor(MARIAN.id).some((r) => r.path.endsWith('/tokenizer.model')), 'a Marian model is not asked for tokenizer.model');
  await assert.rejects(openHubModel(ref('tiny/opus-mt-no-vocab')),
    { code: 'files', message: /tiny\/opus-mt-no-vocab has no tokenizer\.json and no vocab\.json: a Marian model needs/ });
});

test('a model bigger than the WASM memory allows is refused by its size, and its download hung up', async () => {
  await assert.rejects(openHubModel(ref('tiny/huge')),
    { code: 'too-big', message: new RegExp(`tiny/huge is too big for a browser: its weights are 5\\.4 GB.*at most 4 GiB.*up to ${(MAX_MODEL_BYTES / 1e9).toFixed(1)} GB`) });
  // The CDN sent 64 KiB of the 5 GiB it announced; the client closed the connection.
  await waitFor(() => fake.aborted.includes('/blobs/tiny/huge/model.safetensors'));
});

test('a sharded model too big by its index is refused before any shard is asked for', async () => {
  await assert.rejects(openHubModel(ref('tiny/huge-sharded')), { code: 'too-big', message: /tiny\/huge-sharded is too big for a browser: its weights are 15 GB/ });
  const asked = requestsFor('tiny/huge-sharded').map((r) => r.path.split('/').pop()).sort();
  assert.deepEqual(asked, ['config.json', 'model.safetensors', 'model.safetensors.index.json', 'tokenizer.json']);
});

test('gated, unknown and unreachable models get messages that name the cause', async () => {
  await assert.rejects(openHubModel(ref('tiny/gated')), { code: 'gated', message: /tiny\/gated is a gated model: accept its licence on its hub page, http:\/\/localhost:\d+\/tiny\/gated, then give an access token \(a "read" token from http:\/\/localhost:\d+\/settings\/tokens\) in the token field/ });
  await assert.rejects(openHubModel(ref('nobody/nothing')), { code: 'not-found', message: /no model nobody\/nothing on http:\/\/localhost:\d+ \(HTTP 404 for config\.json\): check the spelling/ });
  await assert.rejects(openHubModel({ hub: 'http://localhost:9', id: 'gpt2', revision: 'main' }),
    { code: 'network', message: /cannot reach http:\/\/localhost:9 \(asking for http:\/\/localhost:9\/gpt2\/resolve\/main\/config\.json\)/ });
});

// Gated models: the reader's access token goes to the hub alone (a header the CDN it redirects to never gets), and
// a token without access or an unknown one each get their own message, which never holds the token.
test('a gated model opens with an access token sent to the hub only; other tokens get messages without them', async () => {
  for (const [token, message] of [[GATED.noAccessToken, /tiny\/gated is a gated model, and the account of this access token has not been given access: accept its licence on http:\/\/localhost:\d+\/tiny\/gated/],
    ['hf_notATokenTheHubKnows', /the hub did not accept the access token for tiny\/gated \(HTTP 401\): check it, or make a new one/]]) {
    await assert.rejects(openHubModel(ref(GATED.id), { token }), (error) => {
      assert.equal(error.code, 'gated');
      assert.match(error.message, message);
      assert.ok(!error.message.includes(token) && !String(error.stack).includes(token), 'the token is in no message');
      return true;
    });
  }
  const before = fake.requests.length;
  const opened = await openHubModel(ref(GATED.id), { fetch: cachingFetch(), token: GATED.token });
  const model = await engine.loadModel(opened.source);
  try {
    const c = golden('gpt2-l2-h12-k8-f16').cases[0];
    assert.ok(maxAbsDiff(model.forward(c.ids).attentions.data, flat(c.attentions)) < 1e-5);
  } finally {
    model.dispose();
  }
  const seen = fake.requests.slice(before).filter((r) => r.method === 'GET');
  assert.ok(seen.filter((r) => r.server === 'hub').length >= 3 && seen.filter((r) => r.server === 'hub').every((r) => r.token), 'every request to the hub carried the token');
  assert.ok(seen.some((r) => r.server === 'cdn') && seen.filter((r) => r.server === 'cdn').every((r) => !r.token), 'the CDN never received it');
  assert.ok(!JSON.stringify(opened.files).includes(GATED.token), 'nor what openHubModel returns');
});

test('aborting the signal cancels the download midway and the load fails as aborted', async () => {
  const controller = new AbortController();
  const opened = await openHubModel(ref(HELD.id), { fetch: cachingFetch({ signal: controller.signal }) });
  let halfway;
  const reached = new Promise((resolve) => { halfway = resolve; });
  const loading = engine.loadModel(opened.source, { onProgress: ({ loaded, total }) => { if (loaded > total / 3) halfway(); } });
  await reached; // the CDN has sent half of model.safetensors and waits
  controller.abort();
  await assert.rejects(loading, /abort/i);
  await waitFor(() => fake.aborted.includes(`/blobs/${HELD.id}/model.safetensors`));
  assert.equal(engine.loadedModels(), 0);
});

async function waitFor(condition) {
  for (let i = 0; i < 200 && !condition(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(condition(), 'condition not reached within 2 s');
}
