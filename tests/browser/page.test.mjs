// The playground page in headless Chromium: the engine loads from WASM with
// SIMD and the seed's worked example computed in the page matches the
// tutorial's printed output.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { newPage, openBrowser, resultsDir } from './browser.mjs';

const golden = JSON.parse(readFileSync(new URL('../golden/seed_numpy_example.json', import.meta.url)));
let session;

before(async () => {
  session = await openBrowser();
});
after(async () => {
  await session?.close();
});

test('the page loads the engine and shows the seed example computed by WASM', async () => {
  const { page, errors } = await newPage(session.browser);
  await page.goto(session.url);
  await page.waitForSelector('#engine-status[data-state="ready"]', { timeout: 20000 });
  assert.match(await page.textContent('#engine-status'), /Engine loaded: attnplay core \d+\.\d+\.\d+, WASM SIMD on/);

  const output = await page.$$eval('#seed-output tbody tr', (rows) =>
    rows.map((row) => [...row.querySelectorAll('td')].map((td) => Number(td.dataset.value))));
  assert.equal(output.length, 4);
  output.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - golden.expected_output[i][j]) < 1e-6, `[${i}][${j}] = ${v}`)));
  const labels = await page.$$eval('#seed-weights tbody th', (ths) => ths.map((th) => th.textContent));
  assert.deepEqual(labels, golden.tokens);

  await page.screenshot({ path: `${resultsDir}page-seed-example.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});
