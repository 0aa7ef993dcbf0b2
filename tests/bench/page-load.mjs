// Page-load CPU benchmark (a `npm run bench` section, not a test): what one
// page load costs the machine, as the browser tests load pages (a new
// context and page each time, tests/browser/browser.mjs), with the tests'
// Chromium switches and with the same switches less the one that turns off
// the omnibox popup's WebUI (a renderer of ~200 files that headless Chromium
// builds for every new window). CPU-seconds of the whole machine from
// /proc/stat, so run it on an otherwise idle machine; a blank page, and the
// playground up to its first attention drawn with the default model.
import { existsSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

import { startServer } from '../../scripts/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../browser/browser.mjs';

const LOADS = 8;
const OMNIBOX_SWITCH = CHROMIUM_ARGS.find((arg) => arg.includes('WebUIOmniboxPopup'));

/** CPU-seconds the machine has spent busy (user, nice, system, irq, softirq), from /proc/stat. */
function busySeconds() {
  const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq) / 100;
}

/** Mean CPU-seconds per load of `open(page)` over LOADS fresh pages, after one load to warm up. */
async function cpuPerLoad(browser, open) {
  let before = 0;
  for (let i = 0; i <= LOADS; i += 1) {
    if (i === 1) before = busySeconds();
    const page = await browser.newPage();
    await open(page);
    await page.close();
  }
  return (busySeconds() - before) / LOADS;
}

export const pageLoad = {
  id: 'page-load',
  title: 'Page load: CPU per page as the browser tests load pages, with and without the omnibox popup',
  async run({ log }) {
    if (!existsSync('/proc/stat')) return { markdown: '- No /proc/stat on this machine: not measured.' };
    const { server, url } = await startServer({ port: 0 });
    const rows = [];
    try {
      for (const [name, args] of [['the tests\' switches', CHROMIUM_ARGS], ['without the omnibox switch', CHROMIUM_ARGS.filter((arg) => arg !== OMNIBOX_SWITCH)]]) {
        const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args });
        try {
          const blank = await cpuPerLoad(browser, async () => {});
          const playground = await cpuPerLoad(browser, async (page) => {
            await page.goto(url);
            await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 120000 });
          });
          log(`${name}: blank page ${blank.toFixed(2)} CPU-s, playground ${playground.toFixed(2)} CPU-s per load`);
          rows.push(`| ${name} | ${blank.toFixed(2)} | ${playground.toFixed(2)} |`);
        } finally {
          await browser.close();
        }
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    return {
      markdown: [
        `Command: \`node tests/bench/run.mjs page-load\` (headless Chromium through tests/browser/chromium.sh, a new context and page per load as the browser tests open them, ${LOADS} loads each; the machine's busy CPU time from /proc/stat, so every process counts).`,
        '',
        '| Chromium switches | blank page, CPU-s per load | playground to its first attention, CPU-s per load |',
        '|---|---:|---:|',
        ...rows,
        '',
        `The omnibox switch: \`${OMNIBOX_SWITCH}\`.`,
      ].join('\n'),
    };
  },
};
