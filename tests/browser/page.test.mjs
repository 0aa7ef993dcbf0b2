// The playground page in headless Chromium: the engine loads from WASM with
// SIMD (in a worker), and the from-scratch mode computes the seeds' examples:
// the NumPy printout, the ×100 saturation, the causal mask, permutation
// equivariance. Screenshots of each step go to test-results/. Also: the test
// browser itself gets one merged --disable-features list (chromium.sh).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { CHROMIUM_ARGS, newPage, openBrowser, resultsDir } from './browser.mjs';

const golden = JSON.parse(readFileSync(new URL('../golden/seed_numpy_example.json', import.meta.url)));
let session;

before(async () => {
  session = await openBrowser();
});
after(async () => {
  await session?.close();
});

const tableValues = (page, key) => page.$$eval(`matrix-table[data-key="${key}"] tbody tr`, (rows) =>
  rows.map((row) => [...row.querySelectorAll('td')].map((td) => Number(td.dataset.value))));

test('the engine loads in a worker and the from-scratch mode reproduces the seeds', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#view=scratch&model=__own__`);
  await page.waitForSelector('#engine-status[data-state="ready"]', { timeout: 20000 });
  assert.match(await page.textContent('#engine-status'), /Engine loaded: attnplay core \d+\.\d+\.\d+, WASM SIMD on/);
  await page.waitForSelector('scratch-view[data-state="ready"]');

  // Step 4: "bank" differs by context after parameter-free self-attention.
  const bank = await tableValues(page, 'bank-compare');
  assert.deepEqual(bank[0].map((v) => Math.round(v * 10) / 10), [0.6, 0.2, 0.1, 0.7]);
  assert.ok(bank[1][0] > bank[2][0], 'bank in "money bank grows" leans to finance');
  assert.ok(bank[2][1] > bank[1][1], 'bank in "river bank" leans to nature');

  // Step 7: the NumPy example's printed output.
  const output = await tableValues(page, 'output');
  output.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - golden.expected_output[i][j]) < 1e-6, `[${i}][${j}] = ${v}`)));
  assert.match(await page.textContent('#scratch-printed-check'), /Matches the tutorial's printed output/);

  for (let step = 0; step < 12; step += 1) {
    await page.click(`.step-list li:nth-child(${step + 1}) button`);
    await page.screenshot({ path: `${resultsDir}scratch-step-${String(step + 1).padStart(2, '0')}.png`, fullPage: true });
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('from-scratch controls: x100 saturates, the causal mask gives -inf and zeros, shuffling is equivariant', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(`${session.url}#view=scratch&model=__own__`);
  await page.waitForSelector('scratch-view[data-state="ready"]');
  await page.click('.step-list li:nth-child(7) button');
  const barWidths = async () => page.$$eval('#scratch-bars figure', (figures) =>
    figures.map((f) => [...f.querySelectorAll('.bar-value')].map((v) => Number(v.textContent))));
  const [, times100] = await barWidths();
  assert.ok(Math.max(...times100) > 0.99, `x100 row: ${times100}`);

  await page.click('.step-list li:nth-child(8) button');
  await page.check('#scratch-causal');
  await page.waitForFunction(() => document.querySelector('matrix-table[data-key="masked-weights"] tbody tr td:last-child')?.dataset.value === '0');
  const masked = await page.$$eval('matrix-table[data-key="masked"] tbody tr', (rows) => rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent)));
  assert.equal(masked[0][1], '−∞');
  assert.notEqual(masked[1][0], '−∞');
  assert.match(await page.textContent('#scratch-printed-check'), /Matches the tutorial's printed output/, 'the mask is step 8\'s own');

  await page.click('.step-list li:nth-child(11) button');
  await page.click('#scratch-shuffle');
  await page.waitForFunction(() => /same in both orders/.test(document.querySelector('#scratch-perm-check').textContent));
  await page.check('#scratch-with-pe');
  await page.waitForFunction(() => /With positions/.test(document.querySelector('#scratch-perm-check').textContent));

  // Editing a matrix recomputes: scale W_V by editing one entry.
  await page.click('.step-list li:nth-child(5) button');
  await page.fill('matrix-table[data-key="wv"] tbody tr:first-child td:first-of-type input', '5');
  await page.press('matrix-table[data-key="wv"] tbody tr:first-child td:first-of-type input', 'Enter');
  await page.waitForFunction(() => document.querySelector('matrix-table[data-key="v"] tbody tr td')?.dataset.value === '5');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the test browser runs with one --disable-features list, Playwright\'s and the tests\' together (tests/browser/chromium.sh)', () => {
  // The browser process is a child of this one (chromium.sh execs Chromium in its place).
  const children = readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).flatMap((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return parent === process.pid ? [readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')] : [];
    } catch {
      return []; // a process that ended meanwhile
    }
  });
  const browserArgs = children.find((args) => args.some((arg) => arg.startsWith('--remote-debugging-pipe')));
  assert.ok(browserArgs, `no Chromium among this process's children: ${JSON.stringify(children.map((args) => args[0]))}`);
  const lists = browserArgs.filter((arg) => arg.startsWith('--disable-features='));
  assert.equal(lists.length, 1, `Chromium keeps only the last list: ${JSON.stringify(lists)}`);
  const features = lists[0].slice('--disable-features='.length).split(',');
  const ours = CHROMIUM_ARGS.find((arg) => arg.startsWith('--disable-features=')).slice('--disable-features='.length).split(',');
  for (const feature of ours) assert.ok(features.includes(feature), `${feature} in ${lists[0]}`);
  assert.ok(features.length > ours.length, `Playwright's own list is kept: ${lists[0]}`);
});
