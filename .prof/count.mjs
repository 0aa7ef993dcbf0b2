import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { startServer } from '/work/web16/scripts/serve.mjs';
const { server, url } = await startServer({ port: 0 });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const tab = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const corpus = readFileSync('/work/shared/corpus/austen-paragraphs.txt', 'utf8');
const words = corpus.split(/\s+/).slice(1000, 6000).join(' ');
await tab.goto(url);
await tab.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 120000 });
const before = await tab.evaluate(() => Number(document.body.dataset.run));
await tab.fill('#text-a', words);
await tab.waitForFunction((n) => Number(document.body.dataset.run) > n, before, { timeout: 60000 });
for (const layer of ['0', '1', '2', '3']) {
  await tab.selectOption('view-controls select[name="layer"]', layer);
  console.log(layer, await tab.evaluate(() => { const l = document.querySelector('head-view').lineModel(); const per = {}; for (const x of l) per[x.head] = (per[x.head] ?? 0) + 1; return JSON.stringify(per); }));
}
await tab.screenshot({ path: '/tmp/web16prof/head256.png' });
await browser.close(); server.close();
