// Page-load CPU benchmark (a `npm run bench` section, not a test): what one
// page load costs the machine, as the browser tests load pages (a new
// context and page each time, tests/browser/browser.mjs), with the tests'
// Chromium switches, without their Liftoff-only WebAssembly (TEST_ONLY_ARGS,
// what readers' browsers do), and without the switch that turns off the
// omnibox popup's WebUI (a renderer of ~200 files that headless Chromium
// builds for every new window). CPU-seconds of the whole machine from
// /proc/stat, so run it on an otherwise idle machine; a blank page, and the
// playground up to its first attention drawn with the default model, as
// dist/ serves it (page/app.js bundled, scripts/assemble-dist.mjs) and with
// web/'s modules in its place (each module its own request).
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { startServer } from '../../scripts/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS, TEST_ONLY_ARGS } from '../browser/browser.mjs';

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

/** A copy of dist/ with web/'s modules over it (page/app.js unbundled): the playground as separate modules. Returns its folder. */
function distWithModules() {
  const folder = mkdtempSync(`${tmpdir()}/attnplay-modules-`);
  cpSync(fileURLToPath(new URL('../../dist/', import.meta.url)), folder, { recursive: true });
  cpSync(fileURLToPath(new URL('../../web/', import.meta.url)), folder, { recursive: true });
  rmSync(`${folder}/page/app.js.map`, { force: true });
  return folder;
}

/** Loads the playground at `url` and waits for its first attention. */
async function openPlayground(page, url) {
  await page.goto(url);
  await page.waitForFunction(() => Number(document.body.dataset.run ?? 0) >= 1, null, { timeout: 120000 });
}

export const pageLoad = {
  id: 'page-load',
  title: 'Page load: CPU per page as the browser tests load pages, with and without the omnibox popup, bundled and as modules',
  async run({ log }) {
    if (!existsSync('/proc/stat')) return { markdown: '- No /proc/stat on this machine: not measured.' };
    const modulesFolder = distWithModules();
    const bundled = await startServer({ port: 0 });
    const modules = await startServer({ port: 0, root: modulesFolder });
    const rows = [];
    try {
      for (const [name, args] of [['the tests\' switches', [...CHROMIUM_ARGS, ...TEST_ONLY_ARGS]], ['without Liftoff-only WebAssembly', CHROMIUM_ARGS],
        ['without the omnibox switch either', CHROMIUM_ARGS.filter((arg) => arg !== OMNIBOX_SWITCH)]]) {
        const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args });
        try {
          const blank = await cpuPerLoad(browser, async () => {});
          const playground = await cpuPerLoad(browser, (page) => openPlayground(page, bundled.url));
          const playgroundModules = await cpuPerLoad(browser, (page) => openPlayground(page, modules.url));
          log(`${name}: blank page ${blank.toFixed(2)} CPU-s, playground ${playground.toFixed(2)} (bundled) / ${playgroundModules.toFixed(2)} (modules) CPU-s per load`);
          rows.push(`| ${name} | ${blank.toFixed(2)} | ${playground.toFixed(2)} | ${playgroundModules.toFixed(2)} |`);
        } finally {
          await browser.close();
        }
      }
    } finally {
      await Promise.all([bundled, modules].map(({ server }) => new Promise((resolve) => server.close(resolve))));
      rmSync(modulesFolder, { recursive: true, force: true });
    }
    return {
      markdown: [
        `Command: \`node tests/bench/run.mjs page-load\` (headless Chromium through tests/browser/chromium.sh, a new context and page per load as the browser tests open them, ${LOADS} loads each; the machine's busy CPU time from /proc/stat, so every process counts).`,
        '',
        'CPU-seconds per load; the playground up to its first attention, as dist/ serves it (app.js bundled) and with web/page/app.js in its place (each module its own request).',
        '',
        '| Chromium switches | blank page | playground, bundled | playground, modules |',
        '|---|---:|---:|---:|',
        ...rows,
        '',
        `The omnibox switch: \`${OMNIBOX_SWITCH}\`; the tests' own: \`${TEST_ONLY_ARGS.join(' ')}\` (tests/browser/browser.mjs).`,
      ].join('\n'),
    };
  },
};
