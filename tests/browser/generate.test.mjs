// The generation timeline and the compare view in headless Chromium, on the
// shipped austen-gpt and a golden GPT-2 checkpoint served to the page and
// loaded in Node by the same engine build (the independent path:
// Model.generate and TextModel.forward in Node): a link with seeded sampling settings generates the tokens Node's
// engine generates with those settings, and the Generate button (greedy)
// those of Node's greedy run; stepping back on the timeline (keyboard) shows,
// in the head view, the attention row of that step equal to an uncached
// forward pass over the prefix, and the link names the step; the compare
// view's tables hold both maps and their difference as computed here from
// Node's forward passes (same lengths, and lengths that differ); the widget's
// view="generate" and view="compare" do the same under a strict CSP.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { assertHeadLines, evaluateJson, headViewLines, newPage, openBrowser, resultsDir, settledHash } from './browser.mjs';

const modelsDir = fileURLToPath(new URL('../golden/models/', import.meta.url));
const fixturesDir = fileURLToPath(new URL('./fixtures/', import.meta.url));
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";
const NAME = 'gpt2-l2-h12-k8-f16';
const shippedDir = fileURLToPath(new URL('../../dist/models/austen-gpt/', import.meta.url));
let session;
let model; // the golden checkpoint
let austen; // the shipped default model (sampling: its distributions are not one-hot)

before(async () => {
  session = await openBrowser({ mounts: { '/test-models/': modelsDir, '/fixtures/': fixturesDir } });
  const engine = await createEngine();
  model = await engine.loadModel({
    config: readFileSync(`${modelsDir}${NAME}/config.json`, 'utf8'),
    weights: readFileSync(`${modelsDir}${NAME}/model.safetensors`),
    tokenizer: readFileSync(`${modelsDir}${NAME}/tokenizer.json`, 'utf8'),
  });
  austen = await engine.loadModel({
    config: readFileSync(`${shippedDir}config.json`, 'utf8'),
    weights: readFileSync(`${shippedDir}model.safetensors`),
    tokenizer: readFileSync(`${shippedDir}tokenizer.json`, 'utf8'),
  });
});
after(async () => {
  model?.dispose();
  austen?.dispose();
  await session?.close();
});

/** Node's generation: the prompt's ids (as the page tokenizes it) and the new tokens. */
function nodeGeneration(text, options, on = model) {
  const prompt = on.run(text).tokens.map((token) => token.id);
  return { prompt, tokens: Array.from(on.generate(prompt, options)).slice(prompt.length) };
}

const SAMPLING = { maxNewTokens: 6, temperature: 1.5, topK: 50, topP: 0.95, seed: 12345 };
const SAMPLING_LINK = '6:t1.5:k50:p0.95:s12345';

/** The generation shown by a panel (the page's, or a widget's by its id): tokens and the sampler's probabilities. */
const panelSteps = (page, host) => page.evaluate((id) => {
  const root = id ? document.getElementById(id).shadowRoot : document;
  return root.querySelector('generation-panel').generation.steps.map((step) => ({ token: step.token, sampled: step.samplingProbability }));
}, host);

/** Weight [L][H][q][k] of an uncached forward pass over ids. */
function forwardWeight(ids, on = model) {
  const { attentions: { data, shape: [, H, T] } } = on.forward(ids);
  return (layer, head, q, k) => data[((layer * H + head) * T + q) * T + k];
}

const modelHash = () => `model=${encodeURIComponent(`${session.url}test-models/${NAME}/`)}`;

test('page: a link with seeded sampling settings generates the same tokens as the engine in Node; Generate (greedy) too', async () => {
  const { page, errors } = await newPage(session.browser);
  const text = 'It is a truth universally acknowledged that';
  await page.goto(`${session.url}#text=${encodeURIComponent(text)}&gen=${encodeURIComponent(SAMPLING_LINK)}`); // the default model, austen-gpt
  await page.waitForSelector('generation-panel[data-state=done]', { timeout: 60000 });
  const sampled = nodeGeneration(text, SAMPLING, austen);
  const steps = await panelSteps(page, null);
  assert.deepEqual(steps.map((step) => step.token), sampled.tokens);
  assert.ok(steps.some((step) => step.sampled < 1), 'the sampler drew among several tokens');
  // The strip shows the generated tokens as text, one button each; the form shows the link's settings.
  assert.equal(await page.locator('generation-panel .generation-token').count(), sampled.tokens.length);
  assert.equal(await page.inputValue('generation-panel input[name=seed]'), '12345');

  await page.selectOption('generation-panel select[name=decoding]', 'greedy');
  await page.fill('generation-panel input[name=maxNewTokens]', '5');
  await page.click('generation-panel button[name=generate]');
  await page.waitForFunction(() => document.querySelector('generation-panel').dataset.state === 'done' &&
    document.querySelector('generation-panel').generation.steps.length >= 1 && !document.querySelector('generation-panel').generation.running, null, { timeout: 60000 });
  const greedy = nodeGeneration(text, { maxNewTokens: 5 }, austen);
  assert.deepEqual((await panelSteps(page, null)).map((step) => step.token), greedy.tokens);
  assert.match(await settledHash(page), /[#&]gen=5(&|$)/);

  // Stop: the worker ends after the current token; the link then names the tokens written, so it reproduces them.
  await page.fill('generation-panel input[name=maxNewTokens]', '240');
  await page.click('generation-panel button[name=generate]');
  await page.waitForFunction(() => document.querySelector('generation-panel').generation?.steps.length >= 2, null, { timeout: 60000 });
  await page.click('generation-panel button[name=stop]');
  await page.waitForFunction(() => !document.querySelector('generation-panel').generation.running, null, { timeout: 60000 });
  const stopped = await page.evaluate(() => document.querySelector('generation-panel').generation);
  assert.equal(stopped.stopped, true, `${stopped.steps.length} steps: ${await page.textContent("generation-panel .generation-note")}`);
  assert.ok(stopped.steps.length < 240);
  assert.match(await settledHash(page), new RegExp(`[#&]gen=${stopped.steps.length}(&|$)`));
  assert.deepEqual(stopped.steps.map((step) => step.token), nodeGeneration(text, { maxNewTokens: stopped.steps.length }, austen).tokens);
  await page.screenshot({ path: `${resultsDir}generate-page.png`, fullPage: true });
  assert.deepEqual(errors, []);
});

test('page: sampling with the form\'s default settings generates (temperature 1); a value out of range says why', async () => {
  const { page, errors } = await newPage(session.browser);
  const text = 'Emma was';
  await page.goto(`${session.url}#text=${encodeURIComponent(text)}`); // the default model, austen-gpt
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1 && !document.querySelector('generation-panel button[name=generate]').disabled);
  await page.selectOption('generation-panel select[name=decoding]', 'sample');
  await page.fill('generation-panel input[name=maxNewTokens]', '4');
  assert.equal(await page.inputValue('generation-panel input[name=temperature]'), '1', 'the default temperature');
  await page.click('generation-panel button[name=generate]');
  await page.waitForSelector('generation-panel[data-state=done]', { timeout: 60000 });
  const defaults = { maxNewTokens: 4, greedy: false, temperature: 1, topK: 40, topP: 0.95, seed: 1 }; // generation-run.js's DEFAULT_SETTINGS
  assert.deepEqual((await panelSteps(page, null)).map((step) => step.token), nodeGeneration(text, defaults, austen).tokens);
  assert.match(decodeURIComponent(await settledHash(page)), /[#&]gen=4:t1:k40:p0\.95:s1(&|$)/);

  await page.fill('generation-panel input[name=temperature]', '0');
  await page.click('generation-panel button[name=generate]');
  assert.match(await page.textContent('generation-panel .generation-note'), /^Cannot generate: temperature must be a positive number \(it is 0\)/);
  assert.deepEqual(errors, []);
});

test('page: the Ablation tab on a generation step compares over the step\'s tokens, as the engine in Node does', async () => {
  const { page, errors } = await newPage(session.browser);
  const text = 'Emma was';
  await page.goto(`${session.url}#text=${encodeURIComponent(text)}&gen=5&view=ablation`); // the default model, austen-gpt
  await page.waitForSelector('generation-panel[data-state=done]', { timeout: 60000 });
  const compared = () => evaluateJson(page, () => {
    const { ablation } = document.querySelector('ablation-view').result;
    return ablation && { heads: ablation.heads, before: Array.from(ablation.before.tokenLoss), after: Array.from(ablation.after.tokenLoss), positions: ablation.lossPositions };
  });
  await page.waitForSelector('ablation-view .ablation-loss', { timeout: 30000 });
  const ids = await page.evaluate(() => Array.from(document.querySelector('generation-panel').stepIds));
  assert.equal(ids.length, austen.run(text).tokens.length + 4, 'the last step: the prompt and the 4 tokens before the fifth');
  const close = (got, want, what) => got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-4, `${what} ${i}: ${v} vs ${want[i]}`));
  const intact = Array.from(austen.forward(ids, { tokenLoss: true }).tokenLoss);
  let drawn = await compared();
  assert.deepEqual(drawn.positions, ids.slice(1).map((_, i) => i + 1));
  close(drawn.before, intact, 'intact loss');
  close(drawn.after, intact, 'no head ablated: the same loss');
  // Knock out layer 2, head 3: the comparison follows, over the same step.
  await page.click('ablation-view button.ablation-head[data-layer="1"][data-head="2"]');
  await page.waitForFunction(() => document.querySelector('ablation-view').result.ablation?.heads.length === 1, null, { timeout: 30000 });
  drawn = await compared();
  close(drawn.before, intact, 'intact loss');
  close(drawn.after, Array.from(austen.forward(ids, { tokenLoss: true, ablate: [{ layer: 1, head: 2 }] }).tokenLoss), 'loss with layer 2 head 3 knocked out');
  assert.notDeepEqual(drawn.after, drawn.before);
  // Choosing the first step on the timeline: the comparison is over that step's shorter prefix.
  await page.click('generation-panel button[data-step="1"]');
  await page.waitForFunction((n) => document.querySelector('ablation-view').result.ablation?.lossPositions.length === n - 4 - 1, ids.length, { timeout: 30000 });
  const first = await page.evaluate(() => Array.from(document.querySelector('generation-panel').stepIds));
  assert.deepEqual(first, ids.slice(0, ids.length - 4));
  close((await compared()).after, Array.from(austen.forward(first, { tokenLoss: true, ablate: [{ layer: 1, head: 2 }] }).tokenLoss), 'step 1, layer 2 head 3 knocked out');
  assert.equal(await page.locator('ablation-view', { hasText: 'Running the model' }).count(), 0);
  assert.deepEqual(errors, []);
});

test('page: stepping back on the timeline shows that step\'s attention row, equal to an uncached forward pass on the prefix', async () => {
  const { page, errors } = await newPage(session.browser);
  const text = 'A truth';
  await page.goto(`${session.url}#${modelHash()}&text=${encodeURIComponent(text)}&gen=6&layer=1`);
  await page.waitForSelector('generation-panel[data-state=done]', { timeout: 60000 });
  const { prompt, tokens } = nodeGeneration(text, { maxNewTokens: 6 });
  assert.deepEqual((await panelSteps(page, null)).map((step) => step.token), tokens);
  assert.ok(tokens.length >= 3, 'the test needs three steps');
  // Keyboard: focus the selected token, Home goes to step 1, ArrowRight to step 2.
  await page.focus('generation-panel .generation-token[aria-pressed=true]');
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowRight');
  assert.match(await settledHash(page), /[#&]genStep=2(&|$)/);
  const step = 2;
  const query = prompt.length + step - 2; // the position that predicted token `step`
  const prefix = [...prompt, ...tokens.slice(0, step - 1)];
  assert.equal(await page.evaluate(() => document.querySelector('generation-panel input[name=step]').value), String(step));
  const state = await page.evaluate(() => ({ token: document.querySelector('head-view').store.state.token, chosen: document.querySelector('generation-panel li.chosen')?.dataset.id }));
  assert.equal(state.token, query);
  assert.equal(Number(state.chosen), tokens[step - 1]);
  // The head view draws the prefix (query + 1 tokens) with the query's lines: those of the uncached pass.
  const lines = await page.evaluate(() => document.querySelector('head-view').lineModel());
  const weight = forwardWeight(prefix);
  const keys = Array.from({ length: query + 1 }, (_, i) => i);
  assertHeadLines(lines, headViewLines((head, q, k) => weight(1, head, q, k), [...Array(12).keys()], keys, keys, query), 1e-5);
  // Another view shows the same step: the matrix view's map (mean of the 12 heads) is the prefix's, its last row the query's.
  await page.click('[role=tab][data-view=matrix]');
  const heat = await page.evaluate(() => document.querySelector('matrix-view').heatModel());
  assert.equal(heat.rows.length, query + 1);
  for (let k = 0; k <= query; k += 1) {
    let mean = 0;
    for (let head = 0; head < 12; head += 1) mean += weight(1, head, query, k) / 12;
    assert.ok(Math.abs(heat.values[query * (query + 1) + k] - mean) < 1e-5, `matrix view ${query},${k}`);
  }
  // The neuron view traces the step's text too: softmax(q·k/√d_k) of the query gives the uncached pass's weights.
  await page.click('[role=tab][data-view=neuron]');
  await page.waitForFunction(() => document.querySelector('neuron-view').dataset.state === 'ready', null, { timeout: 30000 });
  const neuron = await page.evaluate(() => document.querySelector('neuron-view').neuronModel());
  assert.equal(neuron.query, query);
  assert.equal(neuron.keys.length, query + 1);
  for (const key of neuron.keys) assert.ok(Math.abs(key.softmax - weight(1, neuron.head, query, key.key)) < 1e-5, `neuron view key ${key.key}`);
  assert.deepEqual(errors, []);
});

/** The three tables of a compare view: { a, b, difference } as [rows][cols] numbers, with their row labels. */
const compareTables = (page, host = null) => page.evaluate((id) => {
  const root = id ? document.getElementById(id).shadowRoot : document;
  const read = (kind) => {
    const table = root.querySelector(`compare-view matrix-table[data-map=${kind}] table`);
    return { rows: [...table.tBodies[0].rows].map((tr) => [...tr.cells].filter((td) => td.tagName === 'TD').map((td) => Number(td.dataset.value))),
      labels: [...table.tBodies[0].rows].map((tr) => tr.querySelector('th').textContent) };
  };
  return { a: read('a'), b: read('b'), difference: read('difference'), note: root.querySelector('compare-view .compare-note').textContent };
}, host);

function assertCompare(tables, textA, textB, layer, head) {
  const ids = (text) => model.run(text).tokens.map((token) => token.id);
  const [idsA, idsB] = [ids(textA), ids(textB)];
  const [wa, wb] = [forwardWeight(idsA), forwardWeight(idsB)];
  const close = (got, want, what) => assert.ok(Math.abs(got - want) < 1e-5, `${what}: ${got} vs ${want}`);
  assert.equal(tables.a.rows.length, idsA.length);
  assert.equal(tables.b.rows.length, idsB.length);
  tables.a.rows.forEach((row, q) => row.forEach((v, k) => close(v, wa(layer, head, q, k), `A ${q},${k}`)));
  tables.b.rows.forEach((row, q) => row.forEach((v, k) => close(v, wb(layer, head, q, k), `B ${q},${k}`)));
  const n = Math.min(idsA.length, idsB.length);
  assert.equal(tables.difference.rows.length, n);
  tables.difference.rows.forEach((row, q) => {
    assert.equal(row.length, n);
    row.forEach((v, k) => close(v, wa(layer, head, q, k) - wb(layer, head, q, k), `A − B ${q},${k}`));
  });
  return { sameLength: idsA.length === idsB.length, n };
}

test('page: the compare view shows both maps of a head and their difference, equal to a direct computation', async () => {
  const { page, errors } = await newPage(session.browser);
  const [textA, textB] = ['The cat sat.', 'The dog sat.'];
  await page.goto(`${session.url}#${modelHash()}&view=compare&layer=1&heads=3&text=${encodeURIComponent(textA)}&compareText=${encodeURIComponent(textB)}`);
  await page.waitForSelector('compare-view matrix-table[data-map=difference]', { timeout: 60000 });
  const tables = await compareTables(page);
  assert.ok(assertCompare(tables, textA, textB, 1, 3).sameLength);
  assert.match(tables.note, /position by position; the tokens differ at/);
  // Token text is text: a hostile text B stays literal in the labels.
  await page.fill('compare-view textarea[name=compareText]', '<b>x</b> sat.');
  await page.waitForFunction(() => [...document.querySelectorAll('compare-view matrix-table[data-map=b] th')].some((th) => th.textContent.includes('<')), null, { timeout: 30000 });
  assert.equal(await page.locator('compare-view b').count(), 0);
  assert.match(await settledHash(page), /compareText=/);
  assert.deepEqual(errors, []);
});

test('page: the compare view\'s text A, maps and note stay in step through "Try" and edits of text A', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#${modelHash()}&view=compare&layer=1&heads=3&text=${encodeURIComponent('The cat sat.')}&compareText=${encodeURIComponent('A dog ran off.')}`);
  await page.waitForSelector('compare-view matrix-table[data-map=difference]', { timeout: 60000 });
  const settled = () => page.waitForFunction(() => {
    const view = document.querySelector('compare-view');
    return view.results?.text === view.store.state.text && view.results.compareText === view.store.state.compareText;
  }, null, { timeout: 30000 });
  // Right after the click, before the run: text A is the example's, and the note does not describe the old maps as the new texts'.
  const clicked = await page.evaluate(() => {
    const view = document.querySelector('compare-view');
    view.querySelector('button[name=example]').click();
    return { shown: view.querySelector('.compare-text-a').textContent, text: view.store.state.text, note: view.querySelector('.compare-note').textContent };
  });
  assert.equal(clicked.shown, clicked.text);
  assert.match(clicked.note, /^Running both texts again: the maps below are of the texts before the change\.$/);
  await settled();
  const example = { text: "The animal didn't cross the street because it was too tired", compareText: "The animal didn't cross the street because it was too wide" };
  assert.equal(await page.textContent('compare-view .compare-text-a'), example.text);
  assert.equal(await page.inputValue('#text-a'), example.text, 'the page\'s text box shows the example\'s text A');
  assert.equal(await page.inputValue('compare-view textarea[name=compareText]'), example.compareText);
  const tables = await compareTables(page);
  assert.ok(assertCompare(tables, example.text, example.compareText, 1, 3).sameLength);
  assert.match(tables.note, /^Both texts have \d+ rows: the difference is position by position/);
  // Text A edited in the page's box: once its run is in, text A, the maps and the note are the new text's.
  await page.fill('#text-a', 'The cat sat on the mat.');
  await page.waitForFunction(() => document.querySelector('compare-view').store.state.text === 'The cat sat on the mat.');
  await settled();
  assert.equal(await page.textContent('compare-view .compare-text-a'), 'The cat sat on the mat.');
  const edited = await compareTables(page);
  assert.equal(assertCompare(edited, 'The cat sat on the mat.', example.compareText, 1, 3).sameLength, false);
  assert.match(edited.note, /^Text A has \d+ rows and text B \d+/);
  assert.deepEqual(errors, []);
});

test('widget: view="generate" writes the seeded tokens of Node\'s engine and shows each step; view="compare" with compare-text of another length', async () => {
  const cspSession = await openBrowser({ mounts: { '/test-models/': modelsDir, '/fixtures/': fixturesDir }, headers: { 'Content-Security-Policy': CSP } });
  try {
    const { page: widgetPage, errors: widgetErrors } = await newPage(cspSession.browser);
    await widgetPage.goto(`${cspSession.url}fixtures/generate-compare.html`);
    await widgetPage.waitForFunction(() => document.getElementById('generate').shadowRoot.querySelector('generation-panel')?.dataset.state === 'done', null, { timeout: 60000 });
    const { prompt, tokens } = nodeGeneration('The cat sat on', SAMPLING, austen);
    assert.deepEqual((await panelSteps(widgetPage, 'generate')).map((step) => step.token), tokens);
    // The widget's head view shows the last step: the prefix up to the query that predicted the last token.
    const query = prompt.length + tokens.length - 2;
    const shown = await widgetPage.evaluate(() => {
      const root = document.getElementById('generate').shadowRoot;
      return { token: document.getElementById('generate').token, lines: root.querySelector('head-view').lineModel() };
    });
    assert.equal(shown.token, query);
    const weight = forwardWeight([...prompt, ...tokens.slice(0, -1)], austen);
    const keys = Array.from({ length: query + 1 }, (_, i) => i);
    assertHeadLines(shown.lines, headViewLines((head, q, k) => weight(0, head, q, k), [...Array(austen.config.heads).keys()], keys, keys, query), 1e-5);

    // New settings by property (and a new text by attribute) generate again.
    await widgetPage.evaluate(() => {
      const widget = document.getElementById('generate');
      widget.setAttribute('text', 'She was');
      widget.generate = '4';
    });
    const greedy = nodeGeneration('She was', { maxNewTokens: 4 }, austen).tokens;
    await widgetPage.waitForFunction((n) => {
      const generation = document.getElementById('generate').shadowRoot.querySelector('generation-panel').generation;
      return generation && !generation.running && generation.steps.length === n;
    }, greedy.length, { timeout: 60000 });
    assert.deepEqual((await panelSteps(widgetPage, 'generate')).map((step) => step.token), greedy);
    await widgetPage.screenshot({ path: `${resultsDir}generate-widget.png`, fullPage: true });

    await widgetPage.locator('#compare').scrollIntoViewIfNeeded();
    await widgetPage.waitForFunction(() => document.getElementById('compare').shadowRoot.querySelector('compare-view matrix-table[data-map=difference]'), null, { timeout: 60000 });
    const tables = await compareTables(widgetPage, 'compare');
    const { sameLength, n } = assertCompare(tables, 'It was too tired', 'It was too wide', 1, 4);
    assert.equal(sameLength, false);
    assert.match(tables.note, new RegExp(`covers the first ${n} positions`));
    assert.deepEqual(widgetErrors, []);
  } finally {
    await cspSession.close();
  }
});
