// Models by Hugging Face id in headless Chromium, against the local imitation
// of the hub (tests/hub/fake-hub.mjs: its URL layout, a 302 to a second
// origin for the weights, CORS, a gated model, 404s): the page opened from a
// link #model=hf:...&hub=... draws the attention the engine computes in Node
// from the same files, shows per-file and overall progress, Cancel aborts the
// download on the server's side, each failure gets its message, a reload is
// served from Cache Storage (no request reaches the hub) until "Forget
// downloaded models"; the widget with model="hf:..." hub="..."; and the page
// served as `npm start` serves it (COOP/COEP) runs threaded and still reaches
// the hub.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { ISOLATION_HEADERS, startServer } from '../../scripts/serve.mjs';
import { FAMILY_MODELS, GATED, HELD, startFakeHub } from '../hub/fake-hub.mjs';
import { assertHeadLines, headViewLines, newPage, openBrowser, settledHash } from './browser.mjs';

const modelsDir = fileURLToPath(new URL('../golden/models/', import.meta.url));
const fixturesDir = fileURLToPath(new URL('./fixtures/', import.meta.url));
// What a failed request prints in the console (the page shows its own message).
const NETWORK_NOISE = /Failed to load resource|CORS policy|ERR_CONNECTION_REFUSED|net::ERR_/;

let session;
let fake;
let engine;
before(async () => {
  session = await openBrowser({ mounts: { '/fixtures/': fixturesDir, '/test-models/': modelsDir } });
  fake = await startFakeHub();
  engine = await createEngine();
});
after(async () => {
  await session?.close();
  await fake?.close();
});

const link = (id, hash = '') => `${session.url}#model=${encodeURIComponent(`hf:${id}`)}&hub=${encodeURIComponent(fake.hub)}${hash}`;
const runs = (page) => page.evaluate(() => Number(document.body.dataset.run ?? 0));

/** The engine's run of `text` on a golden checkpoint, in Node. */
async function engineRun(golden, text) {
  const dir = `${modelsDir}${golden}/`;
  const model = await engine.loadModel({
    config: readFileSync(`${dir}config.json`, 'utf8'), weights: readFileSync(`${dir}model.safetensors`), tokenizer: readFileSync(`${dir}tokenizer.json`, 'utf8'),
  });
  try {
    return model.run(text);
  } finally {
    model.dispose();
  }
}

function assertDrawn(lines, want, layer) {
  const [, H, T] = want.attentions.shape;
  const weight = (head, q, k) => want.attentions.data[((layer * H + head) * T + q) * T + k];
  const all = Array.from({ length: T }, (_, i) => i);
  assertHeadLines(lines, headViewLines(weight, [...Array(H).keys()], all, all));
}

test('a link to hf:ORG/NAME opens the model from the hub, draws its attention, and a reload downloads nothing', async () => {
  const { page, errors } = await newPage(session.browser);
  const text = 'The hub serves small models.';
  await page.goto(link('tiny/gpt2', `&layer=1&text=${encodeURIComponent(text)}`));
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  assert.match(await page.textContent('#engine-status'), /^tiny\/gpt2 · \d+ tokens · 2 layers × 12 heads/);
  assert.match(await page.textContent('#load-label'), /tiny\/gpt2: gpt2, [\d.]+M parameters · kept in this browser/);
  assertDrawn(await page.evaluate(() => document.querySelector('head-view').lineModel()), await engineRun(FAMILY_MODELS['tiny/gpt2'], text), 1);
  const hash = await settledHash(page);
  assert.match(hash, /model=hf%3Atiny%2Fgpt2/);
  assert.ok(hash.includes(`hub=${encodeURIComponent(fake.hub)}`), hash);
  const fetched = fake.requests.filter((r) => r.path.includes('tiny/gpt2/'));
  assert.ok(fetched.some((r) => r.server === 'cdn' && r.path.endsWith('/model.safetensors')), 'weights came from the CDN after the redirect');
  assert.match(await page.textContent('#downloads-size'), /kept/);

  // Reload: everything comes from Cache Storage.
  const before = fake.requests.length;
  await page.reload();
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  assert.match(await page.textContent('#load-label'), /opened from this browser's copy, nothing downloaded/);
  assert.deepEqual(fake.requests.slice(before), [], 'no request reached the hub or its CDN');
  assertDrawn(await page.evaluate(() => document.querySelector('head-view').lineModel()), await engineRun(FAMILY_MODELS['tiny/gpt2'], text), 1);

  // Forget: the cache is emptied, and the next open downloads again.
  await page.click('#forget-downloads');
  await page.waitForFunction(() => /nothing kept/.test(document.querySelector('#downloads-size').textContent));
  assert.equal(await page.evaluate(() => caches.has('attnplay-models-v1')), false);
  await page.reload();
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  assert.ok(fake.requests.slice(before).some((r) => r.server === 'cdn' && r.path.endsWith('tiny/gpt2/model.safetensors')));
  assert.deepEqual(errors, []);
  await page.close();
});

// A gated model with the reader's access token: the page sends it to the hub only (the worker's requests carry
// it; the CDN the hub redirects to never sees it), keeps it out of the link and the page's text, and remembers it
// in this origin's storage only when asked ("Forget it" removes it).
test('a gated model opens with an access token typed once; the token stays out of the link, the page and the CDN', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#hub=${encodeURIComponent(fake.hub)}`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  await page.selectOption('#model-select', '__hub__');
  await page.click('#hub-token-box summary');
  await page.fill('#hub-token', GATED.token);
  await page.check('#hub-token-remember');
  assert.equal(await page.evaluate(() => localStorage.getItem('attnplay:hub-token')), GATED.token, 'remembered when asked');
  const before = await runs(page);
  const seenBefore = fake.requests.length;
  await page.fill('#hub-id', GATED.id);
  await page.click('#hub-form button');
  await page.waitForFunction((n) => Number(document.body.dataset.run ?? 0) > n && /^tiny\/gated ·/.test(document.querySelector('#engine-status').textContent), before, { timeout: 60000 });
  const hash = await settledHash(page);
  assert.match(hash, /model=hf%3Atiny%2Fgated/);
  assert.ok(!hash.includes(GATED.token) && !(await page.evaluate(() => document.body.innerText)).includes(GATED.token), 'not in the link nor the page');
  assertDrawn(await page.evaluate(() => document.querySelector('head-view').lineModel()), await engineRun('gpt2-l2-h12-k8-f16', await page.inputValue('#text-a')), 0);
  const seen = fake.requests.slice(seenBefore).filter((r) => r.method === 'GET');
  assert.ok(seen.some((r) => r.server === 'hub') && seen.filter((r) => r.server === 'hub').every((r) => r.token), 'the hub got the token');
  assert.ok(seen.some((r) => r.server === 'cdn') && seen.filter((r) => r.server === 'cdn').every((r) => !r.token), 'the CDN never did');
  await page.click('#hub-token-forget');
  assert.equal(await page.evaluate(() => localStorage.getItem('attnplay:hub-token')), null, 'forgotten');
  assert.equal(await page.inputValue('#hub-token'), '');
  assert.deepEqual(errors.filter((e) => !NETWORK_NOISE.test(e)), []);
  assert.ok(!errors.some((e) => e.includes(GATED.token)), 'nor in the console');
  await page.close();
});

test('the id field and the gallery open models; a Llama (GQA) model is drawn as the engine computes it', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#hub=${encodeURIComponent(fake.hub)}`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  const options = await page.$$eval('#model-select option', (os) => os.map((o) => o.value));
  assert.ok(options.includes('hf:gpt2') && options.includes('hf:HuggingFaceTB/SmolLM2-135M') && options.includes('__hub__'), options.join());
  await page.selectOption('#model-select', '__hub__');
  assert.equal(await page.isVisible('#hub-form'), true);
  const gallery = JSON.parse(readFileSync(new URL('../../models/gallery.json', import.meta.url), 'utf8')).models;
  assert.equal(await page.locator('#gallery article').count(), gallery.length, 'one card per models/gallery.json entry');
  assert.match(await page.textContent('#gallery'), /SmolLM2-135M.*Llama · 135M parameters · BF16 · about 269 MB to download/s);
  assert.match(await page.textContent('#gallery'), /not yet measured/);
  // The models the page cannot hold say so and have no Open button, nor a place in the pickers.
  for (const m of gallery.filter((entry) => entry.large)) {
    const card = page.locator('#gallery article', { hasText: m.id });
    assert.match(await card.textContent(), /Large: More than a page's WebAssembly memory holds .*run it with the CLI/);
    assert.equal(await card.locator('button').count(), 0, m.id);
    assert.ok(!options.includes(`hf:${m.id}`), m.id);
  }
  assert.equal(await page.locator('#gallery button[data-model]').count(), gallery.filter((m) => !m.large).length);
  const before = await runs(page);
  await page.fill('#hub-id', 'tiny/llama');
  await page.click('#hub-form button');
  await page.waitForFunction((n) => Number(document.body.dataset.run ?? 0) > n && /^tiny\/llama ·/.test(document.querySelector('#engine-status').textContent), before, { timeout: 60000 });
  assert.match(await settledHash(page), /model=hf%3Atiny%2Fllama/);
  const text = await page.inputValue('#text-a');
  const llama = await engineRun(FAMILY_MODELS['tiny/llama'], text);
  assertDrawn(await page.evaluate(() => document.querySelector('head-view').lineModel()), llama, 0);
  // GQA: 4 query heads read 2 key/value heads, grouped behind "KV n" marks; each chip carries its sink score.
  const chips = await page.$$eval('head-view .head-chip', (cs) => cs.map((c) => ({ kv: c.dataset.kv, sink: Number(c.dataset.sink), title: c.title })));
  assert.deepEqual(chips.map((c) => c.kv), ['0', '0', '1', '1']);
  assert.deepEqual(await page.$$eval('head-view .kv-mark', (ms) => ms.map((m) => m.textContent)), ['KV1', 'KV2']);
  const [, H, T] = llama.attentions.shape;
  chips.forEach((chip, head) => {
    let sum = 0;
    for (let q = 1; q < T; q += 1) sum += llama.attentions.data[(head * T + q) * T]; // layer 0
    assert.ok(Math.abs(chip.sink - sum / (T - 1)) < 1e-4, `head ${head}: ${chip.sink} vs ${sum / (T - 1)}`);
    assert.match(chip.title, new RegExp(`key/value head ${head < 2 ? 1 : 2} · sink ${Math.round((100 * sum) / (T - 1))}%`));
  });
  await page.click('[role=tab][data-view="model"]');
  await page.waitForFunction(() => document.querySelectorAll('model-view .thumb-facts').length === 8 && document.querySelector('model-view .thumb-facts').textContent !== '');
  assert.match(await page.textContent('model-view .model-thumb[data-layer="0"][data-head="3"] .thumb-facts'), /^KV2 · sink \d+%$/);
  await page.click('[role=tab][data-view="head"]');
  // The bare id "gpt2" (no organisation), by the gallery's button, is fetched from the given hub.
  await page.click('#gallery button[data-model="hf:gpt2"]');
  await page.waitForFunction(() => /^gpt2 ·/.test(document.querySelector('#engine-status').textContent), null, { timeout: 60000 });
  assert.ok(fake.requests.some((r) => r.path === '/gpt2/resolve/main/config.json'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('progress per file and overall, and Cancel aborts the download', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(link(HELD.id));
  // The CDN sends half of model.safetensors, then waits.
  await page.waitForFunction(() => Number(document.querySelector('#load-files li[data-file="model.safetensors"] progress')?.value) > 0.3, null, { timeout: 60000 });
  assert.equal(await page.isVisible('#load-progress'), true);
  const label = await page.textContent('#load-label');
  assert.match(label, /^Loading tiny\/held: [\d.]+ of [\d.]+ MB \((\d+)%\)$/);
  const percent = Number(/\((\d+)%\)/.exec(label)[1]);
  assert.ok(percent > 20 && percent < 100, label);
  assert.match(await page.textContent('#load-files li[data-file="model.safetensors"]'), /model\.safetensors\s*\d+ kB of 317 kB \((4|5)\d%\)/);
  assert.match(await page.textContent('#load-files li[data-file="tokenizer.json"]'), /3 kB of 3 kB \(100%\)/);
  await page.click('#load-cancel');
  await page.waitForSelector('#model-note:not([hidden])');
  assert.match(await page.textContent('#model-note'), /Download of tiny\/held cancelled/);
  assert.equal(await page.isVisible('#load-progress'), false);
  assert.equal(await page.isVisible('#load-cancel'), false);
  for (let i = 0; i < 100 && !fake.aborted.includes(`/blobs/${HELD.id}/model.safetensors`); i += 1) await page.waitForTimeout(20);
  assert.ok(fake.aborted.includes(`/blobs/${HELD.id}/model.safetensors`), 'the server saw the download hung up');
  const weightsUrl = `${fake.hub}/${HELD.id}/resolve/main/model.safetensors`;
  assert.equal(await page.evaluate(async (url) => (await (await caches.open('attnplay-models-v1')).match(url)) === undefined, weightsUrl), true,
    'nothing of the cancelled weights is kept');
  assert.deepEqual(errors, []);
  await page.close();
});

test('each failure says what happened', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#view=head`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  const cases = [
    ['tiny/gated', fake.hub, /Could not load tiny\/gated: tiny\/gated is a gated model: accept its licence on its hub page.*then give an access token/],
    ['nobody/nothing', fake.hub, /no model nobody\/nothing on http:\/\/localhost:\d+ \(HTTP 404 for config\.json\)/],
    ['tiny/gpt2@no-branch', fake.hub, /tiny\/gpt2 has no revision "no-branch"/],
    ['tiny/no-cors', fake.hub, /answered, but without the CORS headers \(Access-Control-Allow-Origin\)/],
    ['tiny/gpt2', 'http://localhost:9', /cannot reach http:\/\/localhost:9 .*network is down/],
    ['tiny/huge', fake.hub, /tiny\/huge is too big for a browser: its weights are 5\.4 GB.*at most 4 GiB/],
    ['tiny/mamba', fake.hub, /model_type "mamba".*which attnplay cannot run/],
    ['tiny/pickle-only', fake.hub, /pickled one \(pytorch_model\.bin\).*never loaded/],
  ];
  for (const [id, hub, pattern] of cases) {
    await page.evaluate(() => { document.querySelector('#model-error').textContent = ''; });
    await page.goto(`${session.url}#model=${encodeURIComponent(`hf:${id}`)}&hub=${encodeURIComponent(hub)}`);
    await page.waitForFunction(() => document.querySelector('#model-error').textContent !== '', null, { timeout: 60000 })
      .catch(async (error) => assert.fail(`${id}: no message (${error.message}); link ${await page.evaluate(() => location.hash)}, status ${await page.textContent('#engine-status')}`));
    assert.match(await page.textContent('#model-error'), pattern, id);
    // The model still shown is the one before, and the link says so again.
    assert.equal(await page.inputValue('#model-select'), 'austen-gpt');
    assert.match(await page.textContent('#engine-status'), /^austen-gpt ·/);
  }
  assert.deepEqual(errors.filter((e) => !NETWORK_NOISE.test(e)), []);
  await page.close();
});

test('a model loaded from a URL stays in the link; the folder picker loads a folder', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#model=__own__`);
  await page.waitForSelector('#engine-status[data-state="ready"]');
  const url = `${session.url}test-models/${FAMILY_MODELS['tiny/mistral']}/`;
  await page.fill('#model-url', url);
  await page.click('#model-url-form button');
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  const hash = await settledHash(page);
  assert.ok(hash.includes(`model=${encodeURIComponent(url)}`), hash);
  // The link reopens it.
  await page.goto('about:blank');
  await page.goto(`${session.url}${hash}`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  assert.match(await page.textContent('#engine-status'), new RegExp(`^${FAMILY_MODELS['tiny/mistral']} ·`));
  assert.equal(await page.inputValue('#model-url'), url);
  // The folder picker (webkitdirectory): the files directly inside the chosen folder.
  const before = await runs(page);
  await page.setInputFiles('#model-folder', `${modelsDir}${FAMILY_MODELS['tiny/qwen3']}`);
  await page.waitForFunction((n) => Number(document.body.dataset.run ?? 0) > n, before, { timeout: 60000 });
  assert.match(await page.textContent('#engine-status'), new RegExp(`^${FAMILY_MODELS['tiny/qwen3']} ·`));
  const text = await page.inputValue('#text-a');
  assertDrawn(await page.evaluate(() => document.querySelector('head-view').lineModel()), await engineRun(FAMILY_MODELS['tiny/qwen3'], text), 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the widget opens model="hf:..." from hub="..." and draws what the engine computes', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}fixtures/hub-widget.html`);
  const text = 'Qwen reads this.';
  await page.evaluate(({ hub, text: t }) => {
    const widget = document.createElement('attention-view');
    Object.assign(widget, { id: 'w' });
    widget.setAttribute('model', 'hf:tiny/qwen2@v1.0');
    widget.setAttribute('hub', hub);
    widget.setAttribute('text', t);
    widget.setAttribute('layer', '1');
    document.body.append(widget);
  }, { hub: fake.hub, text });
  await page.waitForFunction(() => document.querySelector('#w').runs >= 1, null, { timeout: 60000 });
  assert.ok(fake.requests.some((r) => r.path === '/tiny/qwen2/resolve/v1.0/config.json'));
  const want = await engineRun(FAMILY_MODELS['tiny/qwen2'], text);
  const attentions = await page.evaluate(() => Array.from(document.querySelector('#w').result.attentions.data));
  assert.equal(attentions.length, want.attentions.data.length);
  attentions.forEach((w, i) => assert.ok(Math.abs(w - want.attentions.data[i]) < 1e-6, `weight ${i}`));
  assertDrawn(await page.evaluate(() => document.querySelector('#w').viewElement.lineModel()), want, 1);
  assert.equal(await page.evaluate(() => document.querySelector('#w').hub), fake.hub);
  // An id that is not one says so in the widget.
  await page.evaluate(() => document.querySelector('#w').setAttribute('model', 'hf:../x'));
  await page.waitForFunction(() => document.querySelector('#w').dataset.state === 'error');
  assert.match(await page.evaluate(() => document.querySelector('#w').shadowRoot.querySelector('.status').textContent), /Could not load the model hf:\.\.\/x: "hf:\.\.\/x" is not a Hugging Face model id/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('served as npm start serves it (COOP/COEP), the page runs threaded and still opens hub models', async () => {
  const isolated = await startServer({ port: 0, headers: ISOLATION_HEADERS });
  try {
    const { page, errors } = await newPage(session.browser);
    await page.goto(`${isolated.url}#model=${encodeURIComponent('hf:tiny/pythia')}&hub=${encodeURIComponent(fake.hub)}`);
    await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    assert.match(await page.textContent('#engine-status'), /^tiny\/pythia · \d+ tokens/);
    const text = await page.inputValue('#text-a');
    assertDrawn(await page.evaluate(() => document.querySelector('head-view').lineModel()), await engineRun(FAMILY_MODELS['tiny/pythia'], text), 0);
    assert.deepEqual(errors, []);
    // The status line named the threads when the engine started (data-engine keeps that line after the model's replaces it).
    const plain = await newPage(session.browser);
    await plain.page.goto(`${session.url}#view=scratch`);
    await plain.page.waitForSelector('#engine-status[data-state="ready"]');
    assert.match(await plain.page.getAttribute('#engine-status', 'data-engine'), /WASM SIMD on, one thread,/);
    const threaded = await newPage(session.browser);
    await threaded.page.goto(`${isolated.url}#view=scratch`);
    await threaded.page.waitForSelector('#engine-status[data-state="ready"]');
    assert.match(await threaded.page.getAttribute('#engine-status', 'data-engine'), /WASM SIMD on, [2-9] threads \(cross-origin isolated\),/);
    await Promise.all([page.close(), plain.page.close(), threaded.page.close()]);
  } finally {
    await new Promise((resolve) => isolated.server.close(resolve));
  }
});
