// The logit lens in the browser: the page's Logit lens tab and the widget's
// view="lens" on the shipped models draw the grid the engine computes in Node
// (an independent path: dist/engine/engine.js loading the same model files): every
// cell's top token and probability, its top-5 in the readout on hover or
// keyboard focus (arrow keys move), the last row equal to the predictions
// panel; token text stays text; the lens is computed when its tab is opened;
// a data-mode widget says why the lens is not available.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { DEFAULT_STATE } from '../../web/run/state.js';
import { newPage, openBrowser, resultsDir } from './browser.mjs';

const fixturesDir = new URL('./fixtures/', import.meta.url).pathname;
let session;
let engine;

before(async () => {
  session = await openBrowser({ mounts: { '/fixtures/': fixturesDir } });
  engine = await createEngine();
});
after(async () => {
  await session?.close();
});

async function shippedModel(name) {
  const dir = new URL(`../../models/${name}/`, import.meta.url);
  return engine.loadModel({
    config: readFileSync(new URL('config.json', dir), 'utf8'),
    weights: readFileSync(new URL('model.safetensors', dir)),
    tokenizer: readFileSync(new URL('tokenizer.json', dir), 'utf8'),
  });
}

// The engine's lens in Node, as the view's lensModel() cells: [row][position] { display, probability, top }.
function expectedCells(lens) {
  const [rows, t, k] = lens.shape;
  return Array.from({ length: rows }, (_, r) => Array.from({ length: t }, (__, c) => {
    const at = (r * t + c) * k;
    const top = Array.from({ length: k }, (___, j) => ({ id: lens.ids[at + j], display: lens.displays[at + j], probability: lens.probabilities[at + j] }));
    return { display: top[0].display, probability: top[0].probability, top };
  }));
}

function assertSameGrid(drawn, cells, what) {
  assert.equal(drawn.cells.length, cells.length, `${what}: rows`);
  cells.forEach((row, r) => row.forEach((cell, c) => {
    const got = drawn.cells[r][c];
    assert.equal(got.display, cell.display, `${what} [${r}][${c}]`);
    got.top.forEach((item, j) => {
      assert.equal(item.id, cell.top[j].id, `${what} [${r}][${c}] #${j}`);
      assert.ok(Math.abs(item.probability - cell.top[j].probability) < 1e-6, `${what} [${r}][${c}] #${j} probability`);
    });
  }));
}

test('the Logit lens tab draws the engine\'s lens of the shipped model, opened from another view', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(session.url);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  // The head view's run carries no lens; opening the tab runs again with it.
  await page.click('[role=tab][data-view="lens"]');
  await page.waitForFunction(() => document.querySelector('lens-view').lensModel() !== null, null, { timeout: 30000 });
  const drawn = await page.evaluate(() => document.querySelector('lens-view').lensModel());

  const model = await shippedModel('austen-gpt');
  try {
    const run = model.run(DEFAULT_STATE.text, { lens: 5 });
    assert.deepEqual(drawn.columnLabels, run.tokens.map((token) => token.display));
    assert.equal(drawn.rowLabels.length, model.config.layers + 1);
    assert.equal(drawn.rowLabels[0], 'embeddings');
    assert.match(drawn.rowLabels.at(-1), /\(output\)$/);
    assertSameGrid(drawn, expectedCells(run.lens), 'austen-gpt');
  } finally {
    model.dispose();
  }
  // The last row is the model's prediction: the panel's first token after the last token.
  const predicted = await page.$eval('#predictions .prediction-token', (span) => span.textContent);
  assert.equal(drawn.cells.at(-1).at(-1).display, predicted);
  // Text, never markup: no element inside any cell.
  assert.equal(await page.$$eval('lens-view td', (cells) => cells.filter((td) => td.children.length > 0).length), 0);

  // Keyboard: one tab stop; arrows move the focus, the readout shows the focused cell's top-5.
  await page.focus('lens-view td[tabindex="0"]');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  const focused = await page.evaluate(() => ({ row: document.activeElement.dataset.row, col: document.activeElement.dataset.col, stops: document.querySelectorAll('lens-view td[tabindex="0"]').length }));
  assert.deepEqual(focused, { row: '1', col: '1', stops: 1 });
  const readout = await page.textContent('lens-view .lens-readout');
  const cell = drawn.cells[1][1];
  assert.ok(readout.startsWith(`layer 1, after “${drawn.columnLabels[1]}” (token 2): “${cell.top[0].display}”`), readout);
  assert.equal(readout.split(' · ').length, 5);
  // Hover shows another cell's readout.
  await page.hover('lens-view td[data-row="0"][data-col="2"]');
  assert.match(await page.textContent('lens-view .lens-readout'), /^embeddings, after /);
  await page.screenshot({ path: `${resultsDir}playground-lens.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a long text: the grid scrolls inside the view at 256 tokens', async () => {
  const { page, errors } = await newPage(session.browser);
  const words = Array.from({ length: 300 }, (_, i) => ['the', 'house', 'of', 'Mr', 'Bennet'][i % 5]).join(' ');
  await page.goto(`${session.url}#view=lens&text=${encodeURIComponent(words)}`);
  await page.waitForFunction(() => document.querySelector('lens-view').lensModel() !== null, null, { timeout: 60000 });
  const shape = await page.evaluate(() => {
    const scroller = document.querySelector('lens-view .lens-scroller');
    return { columns: document.querySelector('lens-view').lensModel().columnLabels.length, scrolls: scroller.scrollWidth > scroller.clientWidth, pageWidth: document.documentElement.scrollWidth <= window.innerWidth + 1 };
  });
  assert.ok(shape.columns >= 256, `${shape.columns} tokens`);
  assert.ok(shape.scrolls, 'the grid scrolls sideways');
  assert.ok(shape.pageWidth, 'the page itself does not widen');
  assert.deepEqual(errors, []);
  await page.close();
});

test('widget view="lens": the engine\'s lens of the shipped BERT; data mode says why there is none', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}fixtures/lens.html`);
  await page.waitForFunction(() => document.getElementById('lens').viewElement?.lensModel?.() != null, null, { timeout: 60000 });
  const drawn = await page.evaluate(() => document.getElementById('lens').viewElement.lensModel());
  const model = await shippedModel('austen-bert');
  try {
    const run = model.run('She was not in the [MASK] surprised.', { lens: 5, topK: 5 });
    assertSameGrid(drawn, expectedCells(run.lens), 'austen-bert widget');
    const mask = run.maskPositions[0];
    assert.equal(drawn.cells.at(-1)[mask].display, run.topK.displays[0], 'the last row at [MASK] is the MLM prediction');
  } finally {
    model.dispose();
  }
  await page.locator('#lens-data').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.getElementById('lens-data').shadowRoot.querySelector('[data-unavailable="lens"]'));
  assert.match(await page.evaluate(() => document.getElementById('lens-data').shadowRoot.querySelector('[data-unavailable="lens"]').textContent),
    /logit lens reads the model’s hidden states through its output layer, which attention weights alone do not contain/);
  assert.deepEqual(errors, []);
  await page.close();
});
