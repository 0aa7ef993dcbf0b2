import { readFileSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { startServer } from '/work/web16/scripts/serve.mjs';
const { server, url } = await startServer({ port: 0 });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const tab = await browser.newPage({ viewport: { width: 1280, height: 900 } });
await tab.goto(url);
await tab.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 120000 });
await tab.evaluate(() => { window.__long = []; new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); }).observe({ type: 'longtask' }); });
const corpus = readFileSync('/work/shared/corpus/austen-paragraphs.txt', 'utf8');
const words = corpus.split(/\s+/).slice(1000, 6000).join(' ');
const cdp = await tab.context().newCDPSession(tab);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
const mode = process.argv[2] ?? 'paste';
await cdp.send('Profiler.start');
const before = await tab.evaluate(() => Number(document.body.dataset.run));
if (mode === 'paste') {
  await tab.fill('#text-a', words);
  await tab.waitForFunction((n) => Number(document.body.dataset.run) > n, before, { timeout: 60000 });
  await tab.waitForTimeout(500);
} else {
  await tab.fill('#text-a', words);
  await tab.waitForFunction((n) => Number(document.body.dataset.run) > n, before, { timeout: 60000 });
  await tab.waitForTimeout(500);
  await tab.evaluate(() => { window.__long = []; });
  for (const layer of ['1', '2', '3', '0']) { await tab.selectOption('view-controls select[name="layer"]', layer); await tab.waitForTimeout(400); }
}
const { profile } = await cdp.send('Profiler.stop');
console.log(mode, 'long tasks', await tab.evaluate(() => window.__long.map((d) => Math.round(d))));
// self time per function
const self = new Map();
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const dt = profile.timeDeltas; 
profile.samples.forEach((id, i) => { const n = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + (dt[i] ?? 0) / 1000); });
console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${v.toFixed(1)} ms ${k}`).join('\n'));
await browser.close(); server.close();
