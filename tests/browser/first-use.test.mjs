// What a new user meets first (issue 16), in headless Chromium with the
// shipped models: the from-scratch mode's numbers, step in the link, the ×100
// experiment scoped to its step and undoable, the causal checkbox acting on
// its own step, W_V's column labels, panels hidden where they do not apply;
// hidden special tokens keeping [MASK]; unknown models in a link; clearing
// the text; a failed own-model load; the compressed link after a long paste;
// the embedding guide on a phone and in dark mode; the head view's line
// contrast, read back from its pixels; the model view's width, labels and
// legend; exports with a title and legend; the display marks explained.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { headColour } from '../../web/ui/palette.js';
import { staticEmbeddings, numpySeedExample } from '../../web/scratch/presets.js';
import { downloadOf, newPage, openBrowser, pngSize, resultsDir, settledHash, svgElements, svgTexts } from './browser.mjs';

const modelsDir = fileURLToPath(new URL('../golden/models/', import.meta.url));
let session;

before(async () => {
  session = await openBrowser({ mounts: { '/test-models/': modelsDir } });
});
after(async () => {
  await session?.close();
});

const cells = (page, key) => page.$$eval(`matrix-table[data-key="${key}"] tbody tr`, (rows) =>
  rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.querySelector('input')?.value ?? td.textContent)));
const values = (page, key) => page.$$eval(`matrix-table[data-key="${key}"] tbody tr`, (rows) =>
  rows.map((row) => [...row.querySelectorAll('td')].map((td) => Number(td.dataset.value))));
const visibleStep = (page) => page.$$eval('scratch-view section.step', (sections) => sections.filter((s) => !s.hidden).map((s) => s.id));

async function openScratch(page, hash = '') {
  await page.goto(`${session.url}#view=scratch${hash}`);
  await page.waitForSelector('scratch-view[data-state="ready"]', { timeout: 30000 });
}

/** Opens the page with the shipped default model and waits for its first run. */
async function openDefault(page, hash = '') {
  await page.goto(`${session.url}${hash}`);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
}

test('from scratch: numbers as written, not float32 noise', async () => {
  const { page, errors } = await newPage(session.browser);
  await openScratch(page);
  const shown = await cells(page, 'embeddings');
  assert.deepEqual(shown, Object.values(staticEmbeddings.words).map((row) => row.map(String)));
  const titles = await page.$$eval('matrix-table[data-key="embeddings"] td', (tds) => tds.map((td) => td.title));
  assert.ok(titles.includes('money, finance: 0.9'), titles[0]);
  assert.deepEqual(errors, []);
  await page.close();
});

test('from scratch: the step is in the link, and the link restores it', async () => {
  const context = await session.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  await openScratch(page, '&step=10');
  assert.deepEqual(await visibleStep(page), ['step-positions'], 'step=10 opens step 10');
  await page.click('.step-list li:nth-child(3) button');
  await page.waitForFunction(() => /(^|[#&])step=3(&|$)/.test(location.hash));
  await page.click('#copy-link');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  const again = await context.newPage();
  await again.goto(link);
  await again.waitForSelector('scratch-view[data-state="ready"]');
  assert.deepEqual(await visibleStep(again), ['step-softmax']);
  await context.close();
});

test('from scratch: Scores × 100 changes only its own step and can be undone', async () => {
  const { page, errors } = await newPage(session.browser);
  await openScratch(page, '&step=7');
  const weights = await values(page, 'weights');
  const masked = await values(page, 'masked-weights');
  const permuted = await values(page, 'perm-original');
  await page.click('#scratch-times100');
  await page.waitForFunction(() => document.querySelector('#scratch-times100').getAttribute('aria-pressed') === 'true');
  await page.waitForSelector('scratch-view[data-state="ready"]');
  const saturated = await values(page, 'weights');
  assert.ok(Math.max(...saturated[0]) > 0.99, `step 7 saturates: ${saturated[0]}`);
  assert.deepEqual(await values(page, 'masked-weights'), masked, 'step 8 unchanged');
  assert.deepEqual(await values(page, 'perm-original'), permuted, 'step 11 unchanged');
  assert.match(await page.textContent('#scratch-times100'), /Undo/);
  await page.click('#scratch-times100');
  await page.waitForFunction(() => document.querySelector('#scratch-times100').getAttribute('aria-pressed') === 'false');
  await page.waitForSelector('scratch-view[data-state="ready"]');
  assert.deepEqual(await values(page, 'weights'), weights, 'undone');
  assert.equal(await page.isChecked('#scratch-scale'), true);
  assert.match(await page.textContent('#scratch-printed-check'), /Matches the tutorial's printed output/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('from scratch: step 8\'s causal checkbox changes step 8\'s tables and not step 7\'s', async () => {
  const { page, errors } = await newPage(session.browser);
  await openScratch(page, '&step=8');
  const weights = await values(page, 'weights');
  const unmasked = await cells(page, 'masked');
  assert.ok(!unmasked.flat().includes('−∞'), 'no mask before the checkbox');
  await page.check('#scratch-causal');
  await page.waitForFunction(() => document.querySelector('matrix-table[data-key="masked"] tbody td:last-child')?.textContent === '−∞');
  const masked = await cells(page, 'masked');
  const maskedWeights = await values(page, 'masked-weights');
  const n = numpySeedExample.tokens.length;
  for (let i = 0; i < n; i += 1) {
    for (let j = 0; j < n; j += 1) {
      assert.equal(masked[i][j] === '−∞', j > i, `scores [${i}][${j}]`);
      if (j > i) assert.equal(maskedWeights[i][j], 0);
    }
    assert.ok(Math.abs(maskedWeights[i].reduce((a, b) => a + b) - 1) < 1e-6);
  }
  assert.deepEqual(await values(page, 'weights'), weights, 'step 7 unchanged');
  await page.uncheck('#scratch-causal');
  await page.waitForFunction(() => document.querySelector('matrix-table[data-key="masked"] tbody td:last-child')?.textContent !== '−∞');
  assert.deepEqual(errors, []);
  await page.close();
});

test('from scratch: W_V\'s columns are value dimensions; model-only panels are hidden', async () => {
  const { page, errors } = await newPage(session.browser);
  await openScratch(page, '&step=5');
  const heads = (key) => page.$$eval(`matrix-table[data-key="${key}"] thead th`, (ths) => ths.map((th) => th.textContent));
  assert.deepEqual(await heads('wv'), ['v0', 'v1', 'v2']);
  assert.deepEqual(await heads('wq'), ['k0', 'k1', 'k2']);
  for (const selector of ['.predictions', '#export-json', '#export-npy', '#export-png', '#export-svg']) {
    assert.equal(await page.isVisible(selector), false, `${selector} hidden in the from-scratch view`);
  }
  await page.click('[role=tab][data-view="head"]');
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  for (const selector of ['.predictions', '#export-json', '#export-npy']) assert.equal(await page.isVisible(selector), true, selector);
  assert.deepEqual(errors, []);
  await page.close();
});

test('hiding special tokens keeps [MASK], which the predictions point at', async () => {
  const { page, errors } = await newPage(session.browser);
  const text = encodeURIComponent('Emma walked to the [MASK] with her sister.');
  await openDefault(page, `#model=austen-bert&view=matrix&hideSpecial=1&text=${text}`);
  await page.waitForFunction(() => /^austen-bert/.test(document.querySelector('#engine-status').textContent), null, { timeout: 60000 });
  const { rowLabels } = await page.evaluate(() => document.querySelector('matrix-view').heatModel());
  assert.ok(rowLabels.includes('[MASK]'), rowLabels.join(' '));
  assert.ok(!rowLabels.includes('[CLS]') && !rowLabels.includes('[SEP]'), rowLabels.join(' '));
  assert.match(await page.textContent('#predictions'), /\[MASK\] at token 6/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('an unknown model in the link says so and offers the picker', async () => {
  for (const [name, pattern] of [['gpt2', /“gpt2” is not one of the models this page ships/], ['__own__', /your own model/i]]) {
    const { page, errors } = await newPage(session.browser);
    await page.goto(`${session.url}#model=${name}`);
    await page.waitForSelector('#model-note:not([hidden])', { timeout: 30000 });
    assert.match(await page.textContent('#model-note'), pattern);
    assert.equal(await page.isVisible('#model-select'), true);
    const options = await page.$$eval('#model-select option', (os) => os.map((o) => o.value));
    assert.ok(options.includes('austen-gpt') && options.includes('austen-bert'), options.join());
    assert.equal(await page.isVisible('view-controls'), false, 'no blank Layer menu');
    await page.selectOption('#model-select', 'austen-gpt');
    await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
    assert.equal(await page.isVisible('#model-note'), false);
    assert.equal(await page.isVisible('view-controls'), true);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('clearing the text clears the views, the status and the predictions', async () => {
  const { page, errors } = await newPage(session.browser);
  await openDefault(page);
  await page.fill('#text-a', '');
  await page.waitForFunction(() => /text/i.test(document.querySelector('#run-note').textContent));
  assert.equal(await page.isVisible('head-view'), false);
  assert.doesNotMatch(await page.textContent('#engine-status'), /tokens/);
  assert.equal((await page.textContent('#predictions')).includes('After'), false);
  await page.fill('#text-a', 'Emma smiled.');
  await page.waitForFunction(() => /· \d+ tokens/.test(document.querySelector('#engine-status').textContent));
  assert.equal(await page.isVisible('head-view'), true);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a failed own-model load puts the menu back to the model still shown', async () => {
  const { page, errors } = await newPage(session.browser);
  await openDefault(page);
  await page.selectOption('#model-select', '__own__');
  await page.fill('#model-url', `${session.url}no-such-model/`);
  await page.click('#model-url-form button');
  await page.waitForSelector('#model-error:not([hidden])');
  assert.equal(await page.inputValue('#model-select'), 'austen-gpt');
  assert.match(await page.textContent('#engine-status'), /^austen-gpt ·/);
  assert.doesNotMatch(await settledHash(page), /model=/);
  assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
  await page.close();
});

test('a 5,000-word paste gives a short link that restores the text', async () => {
  const context = await session.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  await openDefault(page);
  const corpus = readFileSync(new URL('../../../shared/corpus/austen-paragraphs.txt', import.meta.url), 'utf8');
  const words = corpus.split(/\s+/).slice(1000, 6000).join(' ');
  const before = await page.evaluate(() => Number(document.body.dataset.run));
  await page.fill('#text-a', words);
  await page.waitForFunction((n) => Number(document.body.dataset.run) > n, before, { timeout: 60000 });
  await page.click('#copy-link');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  const plain = new URLSearchParams({ text: words }).toString().length;
  assert.ok(link.length < plain / 1.8, `link of ${link.length} characters for ${plain} uncompressed`);
  const again = await context.newPage();
  await again.goto(link);
  await again.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  assert.equal(await again.inputValue('#text-a'), words);
  // An old, uncompressed link still opens.
  const old = await context.newPage();
  await old.goto(`${session.url}#text=${encodeURIComponent('Emma smiled at Harriet.')}&view=matrix`);
  await old.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 60000 });
  assert.equal(await old.inputValue('#text-a'), 'Emma smiled at Harriet.');
  await context.close();
});

test('the embedding guide on a phone: no sideways overflow, dark with the system, whole-word neuron demo', async () => {
  const context = await session.browser.newContext({ viewport: { width: 375, height: 740 }, colorScheme: 'dark' });
  const page = await context.newPage();
  await page.goto(`${session.url}embed/`);
  await page.locator('#demo-neuron').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.getElementById('demo-neuron').dataset.state === 'ready', null, { timeout: 60000 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no horizontal overflow');
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const [r, g, b] = background.match(/\d+/g).map(Number);
  assert.ok(r + g + b < 150, `dark background: ${background}`);
  const neuron = await page.$('#demo-neuron');
  const { word, text } = await neuron.evaluate((v) => {
    const t = v.result.tokens[Number(v.getAttribute('token'))];
    return { word: v.text.slice(t.start, t.end).trim(), text: v.text };
  });
  assert.ok(text.split(/[^\p{L}]+/u).includes(word), `the neuron demo locks a whole word, not "${word}"`);
  await context.close();
});

const rgb = (colour) => (colour.startsWith('#')
  ? [1, 3, 5].map((i) => Number.parseInt(colour.slice(i, i + 2), 16))
  : colour.match(/[\d.]+/g).slice(0, 3).map(Number));
const distance = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

// For each head: its strongest line that no other head draws at opacity 0.3 or more (the first
// query's single line, shared by every causal head, aside), and the fraction of points along it
// (15% to 85%) where a pixel within 1 px is nearer the head's colour than the page background.
// Only the pixels around those points leave the page (the whole canvas is millions of values).
async function strongestLineVisibility(page) {
  const { lines, width, height, background } = await page.evaluate(() => {
    const view = document.querySelector('head-view');
    const { width, height } = view.querySelector('canvas');
    return { lines: view.lineModel(), width, height, background: getComputedStyle(document.body).backgroundColor };
  });
  const bg = rgb(background);
  const strong = new Map();
  for (const line of lines) if (line.opacity >= 0.3) strong.set(`${line.from}-${line.to}`, (strong.get(`${line.from}-${line.to}`) ?? 0) + 1);
  const heads = [...new Set(lines.map((line) => line.head))];
  const samples = 15;
  const checks = heads.map((head) => {
    const others = (line) => (strong.get(`${line.from}-${line.to}`) ?? 0) - (line.opacity >= 0.3 ? 1 : 0);
    const own = lines.filter((line) => line.head === head && line.from > 0 && others(line) === 0);
    const best = own.reduce((a, b) => (b.weight > a.weight ? b : a));
    const points = [];
    for (let i = 0; i < samples; i += 1) {
      const t = 0.15 + (0.7 * i) / (samples - 1);
      const x = Math.round(best.x1 + t * (best.x2 - best.x1));
      const y = Math.round(best.y1 + t * (best.y2 - best.y1));
      const around = [];
      for (let dy = -1; dy <= 1; dy += 1) {
        for (let dx = -1; dx <= 1; dx += 1) {
          const px = x + dx;
          const py = y + dy;
          if (px >= 0 && py >= 0 && px < width && py < height) around.push([px, py]);
        }
      }
      points.push(around);
    }
    return { head, best, points };
  });
  const pixels = await page.evaluate((wanted) => { // [head][sample][neighbour] -> [r, g, b, a]
    const canvas = document.querySelector('head-view canvas');
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    return wanted.map((head) => head.map((around) => around.map(([px, py]) => {
      const at = (py * canvas.width + px) * 4;
      return [data[at], data[at + 1], data[at + 2], data[at + 3]];
    })));
  }, checks.map((c) => c.points));
  return checks.map(({ head, best }, h) => {
    const colour = rgb(headColour(head));
    let seen = 0;
    for (const around of pixels[h]) {
      const visible = around.some(([r, g, b, a]) => {
        const alpha = a / 255; // the canvas is transparent over the page background
        const seenColour = [r, g, b].map((value, c) => value * alpha + bg[c] * (1 - alpha));
        return distance(seenColour, colour) < distance(seenColour, bg);
      });
      if (visible) seen += 1;
    }
    return { head, weight: best.weight, seen: seen / samples };
  });
}

test('head view: each head\'s strongest line stays visible with 4 and 12 heads on, light and dark', async () => {
  const text = 'Emma Woodhouse, handsome, clever, and rich, seemed to unite some of the best blessings.';
  for (const theme of ['light', 'dark']) {
    const { page, errors } = await newPage(session.browser);
    await page.setViewportSize({ width: 1280, height: 900 });
    // austen-gpt: 4 heads.
    await openDefault(page, `#theme=${theme}&text=${encodeURIComponent(text)}`);
    const top = await page.$eval('head-view canvas', (c) => c.getBoundingClientRect().top);
    assert.ok(top < 900 - 200, `the head view starts above the fold at 1280 x 900 (top ${top})`);
    // A 12-head GPT-2 (the golden test model).
    const twelve = await newPage(session.browser);
    await twelve.page.setViewportSize({ width: 1280, height: 900 });
    await twelve.page.goto(`${session.url}#model=__own__&theme=${theme}&text=${encodeURIComponent(text)}`);
    await twelve.page.waitForSelector('#engine-status[data-state="ready"]');
    await twelve.page.fill('#model-url', `${session.url}test-models/gpt2-l2-h12-k8-f16/`);
    await twelve.page.click('#model-url-form button');
    await twelve.page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 30000 });
    for (const [tab, heads] of [[page, 4], [twelve.page, 12]]) {
      const heads_ = await strongestLineVisibility(tab);
      assert.equal(heads_.length, heads);
      for (const { head, weight, seen } of heads_) assert.ok(seen >= 0.6, `${theme}, ${heads} heads: head ${head + 1}'s strongest line (weight ${weight.toFixed(2)}) visible at ${(seen * 100).toFixed(0)}% of its points`);
      await tab.screenshot({ path: `${resultsDir}head-view-${heads}-heads-${theme}.png` });
    }
    assert.deepEqual([...errors, ...twelve.errors], []);
    await twelve.page.close();
    await page.close();
  }
});

test('model view: thumbnails fill the width, one badge per row, a legend of the labels, no Layer menu', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.setViewportSize({ width: 1280, height: 900 });
  const corpus = readFileSync(new URL('../../../shared/corpus/austen-paragraphs.txt', import.meta.url), 'utf8');
  await openDefault(page, `#view=model&text=${encodeURIComponent(corpus.split(/\s+/).slice(0, 400).join(' '))}`);
  await page.waitForFunction(() => document.querySelector('#engine-status').textContent.includes('· 256 tokens'));
  assert.equal(await page.isVisible('view-controls select[name="layer"]'), false, 'no Layer menu in the model view');
  const widths = await page.$$eval('model-view .model-thumb canvas', (cs) => cs.map((c) => c.getBoundingClientRect().width));
  assert.ok(Math.min(...widths) > 150, `4 heads share the width: ${Math.min(...widths)} px`);
  const shape = await page.evaluate(() => document.querySelector('model-view').thumbnailModel()[0].shape);
  assert.deepEqual(shape, [128, 128], '256 tokens in 128 blocks (2 tokens each) on a wide thumbnail');
  // Whatever label names the analysis carries become badges, and the legend explains them
  // (after the model's own analysis has arrived, so that it does not replace these).
  await page.waitForSelector('model-view .model-legend:not([hidden])');
  await page.evaluate(() => {
    document.querySelector('model-view').headScores = [
      { layer: 0, head: 0, labels: ['cls-sink'] },
      { layer: 0, head: 1, labels: ['previous-token', 'a-new-label'] },
    ];
  });
  const legend = await page.$$eval('model-view .model-legend dt, model-view .model-legend dd', (items) => items.map((i) => i.textContent));
  assert.deepEqual(legend, ['cls-sink', 'puts most weight on [CLS]', 'previous-token', 'attends to the token just before', 'a-new-label', 'a label of the head-pattern analysis']);
  const badgeBoxes = await page.$$eval('model-view .thumb-badges', (bs) => bs.map((b) => Math.round(b.getBoundingClientRect().height)));
  assert.equal(new Set(badgeBoxes).size, 1, `every thumbnail keeps the same room for badges: ${badgeBoxes}`);
  const tops = await page.$$eval('model-view .model-thumb[data-layer="0"] .head-badge', (bs) => bs.map((b) => Math.round(b.getBoundingClientRect().top)));
  assert.equal(tops.length, 3);
  assert.ok(tops[1] !== tops[2], 'one badge per row');
  // Hovering a thumbnail enlarges it.
  await page.hover('model-view .model-thumb[data-layer="1"][data-head="2"]');
  const zoom = await page.$eval('model-view .model-zoom', (z) => ({ hidden: z.hidden, width: z.getBoundingClientRect().width }));
  assert.deepEqual(zoom.hidden, false);
  assert.ok(zoom.width > 200, `zoom ${zoom.width} px`);
  await page.click('[role=tab][data-view="head"]');
  assert.equal(await page.isVisible('view-controls select[name="layer"]'), true);
  await page.screenshot({ path: `${resultsDir}model-view-256-tokens.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('exports: head and matrix pictures carry a title and legend; head SVG weight marks; file names; raw token text', async () => {
  const { page, errors } = await newPage(session.browser);
  const text = 'It is a truth universally acknowledged,\nthat a single man <b>wants</b> a wife.';
  await openDefault(page, `#text=${encodeURIComponent(text)}&token=3`);
  // The display marks are explained where tokens are shown.
  assert.match(await page.textContent('#token-marks'), /␣ is a space; ↵ a line break/);
  const headSvg = (await downloadOf(page, '#export-svg')).bytes.toString('utf8');
  const texts = svgTexts(headSvg);
  assert.ok(texts.includes('austen-gpt · layer 1 · all 4 heads'), texts.slice(0, 3).join(' | '));
  assert.ok(texts.some((t) => t.startsWith('“It is a truth universally acknowledged, that a single man &lt;b&gt;wants')), 'the text, escaped');
  assert.ok(texts.some((t) => t.includes('opacity is its weight relative')), 'the legend');
  for (const head of ['H1', 'H2', 'H3', 'H4']) assert.ok(texts.includes(head), `swatch ${head}`);
  // Token 3 is locked: each head's weight of every key as a mark, as on the canvas.
  const lines = await page.evaluate(() => document.querySelector('head-view').lineModel());
  const tokens = Number(/· (\d+) tokens/.exec(await page.textContent('#engine-status'))[1]);
  const marks = svgElements(headSvg, 'rect').filter((r) => r['fill-opacity'] !== undefined);
  assert.equal(marks.length, 4 * tokens, 'a mark per head beside every key');
  const head1 = marks.filter((m) => m.fill === headColour(0));
  for (const line of lines.filter((l) => l.head === 0)) {
    assert.equal(head1[line.to]['fill-opacity'], Math.min(1, line.weight).toFixed(4), `head 1's mark for key ${line.to}`);
  }
  const headPng = await downloadOf(page, '#export-png');
  const canvas = await page.evaluate(() => { const c = document.querySelector('head-view canvas'); return [c.width, c.height]; });
  const [width, height] = pngSize(headPng.bytes);
  assert.equal(width, canvas[0]);
  assert.ok(height > canvas[1] + 40, 'title and legend around the view');
  await page.click('[role=tab][data-view="matrix"]');
  const matrixSvg = (await downloadOf(page, '#export-svg')).bytes.toString('utf8');
  assert.ok(svgTexts(matrixSvg).includes('austen-gpt · layer 1 · all 4 heads'));
  assert.ok(svgTexts(matrixSvg).some((t) => t.startsWith('Colour: weight from 0')), 'the matrix legend');
  await page.click('[role=tab][data-view="model"]');
  assert.match((await downloadOf(page, '#export-png')).name, /^attnplay-austen-gpt-all-layers-model\.png$/);
  const json = JSON.parse((await downloadOf(page, '#export-json')).bytes.toString('utf8'));
  const at = json.tokens.indexOf('↵');
  assert.ok(at > 0, json.tokens.join(' '));
  assert.equal(json.token_text[at], '\n', 'the raw text beside its display form');
  assert.equal(json.token_text.join(''), text, 'the raw texts make up the text');
  assert.deepEqual(errors, []);
  await page.close();
});
