// Shared set-up for browser tests: serves dist/ on a free localhost port and
// launches Debian's headless Chromium through playwright-core (no browser
// download). Screenshots and downloaded exports go to test-results/ for
// review; helpers read the exports (PNG size, SVG elements and texts).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { startServer } from '../../scripts/serve.mjs';
import { requireProgram } from '../programs.mjs';

export const resultsDir = fileURLToPath(new URL('../../test-results/', import.meta.url));

/** The program Playwright starts: Debian's Chromium behind chromium.sh, which merges the feature lists (see there). */
export const CHROMIUM = fileURLToPath(new URL('./chromium.sh', import.meta.url));

// Headless Chromium's switches here (no sandbox in the container, no GPU, no
// background traffic); the benches use them too. The omnibox's popup is a
// WebUI page that headless Chromium 156 builds for every new window, in a
// renderer of its own (~200 files): a third of the CPU time of each page a
// test opens (`node tests/bench/run.mjs page-load`).
export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup',
];

// The tests' browser compiles WebAssembly with Liftoff only: V8's optimizing
// tier (TurboFan) recompiles the engine's hot functions in the background of
// every page a test opens, 0.3–0.6 of its 3 CPU-seconds here (`node
// tests/bench/run.mjs page-load`; the whole browser suite ran in 347 s against
// 387 s), and the tests' models are too small to gain from it. The results are
// the same (WebAssembly is deterministic, and no relaxed SIMD is used); the
// benches keep both tiers, as readers' browsers do.
export const TEST_ONLY_ARGS = ['--js-flags=--liftoff-only'];

/**
 * Starts the server and the browser; returns { url, browser, close }.
 * mounts: extra folders served under URL prefixes, headers: sent with every
 * response (see startServer).
 */
export async function openBrowser({ mounts = {}, headers = {} } = {}) {
  requireProgram('/usr/bin/chromium', 'the browser tests');
  const { server, url } = await startServer({ port: 0, mounts, headers });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, ...TEST_ONLY_ARGS] });
  mkdirSync(resultsDir, { recursive: true });
  return {
    url,
    browser,
    async close() {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A new page that records console errors and uncaught exceptions. */
export async function newPage(browser) {
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, errors };
}

// evaluateJson's tag for the values JSON cannot carry (NaN, ±Infinity, -0, undefined).
const UNJSONABLE = '\u0000unjsonable:';
const UNJSONABLE_VALUES = { undefined, NaN, Infinity, '-Infinity': -Infinity, '-0': -0 };

/**
 * What `fn(arg)` returns in the page, as page.evaluate gives it, sent back as
 * one JSON text: Playwright's own serializer checks every array element, which
 * took seconds for the views' models of 100,000s of numbers. NaN, ±Infinity,
 * -0 and undefined travel as tagged strings and arrive as themselves.
 * Evaluated as an expression over the DevTools protocol, as page.evaluate is,
 * so a page's strict CSP does not stop it.
 */
export async function evaluateJson(page, fn, arg) {
  const tag = `(key, value) => value === undefined ? ${JSON.stringify(`${UNJSONABLE}undefined`)}
    : typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0))
      ? ${JSON.stringify(UNJSONABLE)} + (Object.is(value, -0) ? '-0' : String(value)) : value`;
  return untag(JSON.parse(await page.evaluate(`JSON.stringify((${fn})(${JSON.stringify(arg)}), ${tag})`)));
}

/** evaluateJson's parsed value with its tagged strings replaced in place (a reviver would drop undefined). */
function untag(value) {
  if (typeof value === 'string' && value.startsWith(UNJSONABLE)) return UNJSONABLE_VALUES[value.slice(UNJSONABLE.length)];
  if (value !== null && typeof value === 'object') for (const key of Object.keys(value)) value[key] = untag(value[key]);
  return value;
}

/**
 * The page's about:srcdoc frame (a notebook cell's), once Playwright knows it by that URL: page.goto can
 * return while the frame is still attached as about:blank. Fails after `timeout` ms.
 */
export async function srcdocFrame(page, timeout = 30000) {
  const end = Date.now() + timeout;
  for (;;) {
    const frame = page.frames().find((f) => f.url() === 'about:srcdoc');
    if (frame) return frame;
    assert.ok(Date.now() < end, `no about:srcdoc frame within ${timeout} ms: ${page.frames().map((f) => f.url()).join(', ')}`);
    await page.waitForTimeout(50);
  }
}

/** The download a click on `selector` starts, as { name, bytes }; a copy is kept in test-results/ for review. */
export async function downloadOf(page, selector) {
  const [file] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const bytes = readFileSync(await file.path());
  writeFileSync(`${resultsDir}${file.suggestedFilename()}`, bytes);
  return { name: file.suggestedFilename(), bytes };
}

/** Width and height of a PNG file (its IHDR chunk). */
export function pngSize(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

/** Attributes of every <tag ...> element of an SVG text, as objects. */
export function svgElements(svg, tag) {
  return [...svg.matchAll(new RegExp(`<${tag}\\b([^>]*)>`, 'g'))].map(([, attributes]) =>
    Object.fromEntries([...attributes.matchAll(/([\w:-]+)="([^"]*)"/g)].map(([, k, v]) => [k, v])));
}
/** The texts of an SVG's <text> elements (as written, entities escaped). */
export const svgTexts = (svg) => [...svg.matchAll(/<text\b[^>]*>([^<]*)<\/text>/g)].map(([, text]) => text);

/**
 * The lines the head view (web/views/head-view.js) draws for weight(head, query, key) over `rows` × `keys`:
 * opacity = weight / the row's strongest weight in that head; the full drawing keeps each row's 8
 * strongest keys down to a tenth of the strongest, a focused row (focusRow) every non-zero weight
 * (opacity at least 0.06). Returns a Map from "head query key" to { w, opacity }.
 */
export function headViewLines(weight, heads, rows, keys, focusRow = null) {
  const lines = new Map();
  for (const head of heads) {
    for (const q of rows) {
      if (focusRow !== null && q !== focusRow) continue;
      const row = keys.map((k) => weight(head, q, k));
      const sorted = [...row].sort((a, b) => b - a);
      const max = sorted[0];
      const cut = Math.max(sorted[Math.min(7, sorted.length - 1)], 0.1 * max);
      keys.forEach((k, i) => {
        const w = row[i];
        if (w <= 0 || (focusRow === null && w < cut)) return;
        lines.set(`${head} ${q} ${k}`, { w, opacity: focusRow === null ? w / max : Math.max(0.06, w / max) });
      });
    }
  }
  return lines;
}

/** Every drawn line (lineModel()) against headViewLines(): the same set, weights within `tolerance`. */
export function assertHeadLines(lines, expected, tolerance = 1e-6) {
  assert.equal(lines.length, expected.size, 'one line per drawn weight');
  for (const line of lines) {
    const want = expected.get(`${line.head} ${line.from} ${line.to}`);
    assert.ok(want !== undefined, `unexpected line ${JSON.stringify(line)}`);
    assert.ok(Math.abs(line.weight - want.w) <= tolerance, `head ${line.head} ${line.from} → ${line.to}: ${line.weight} vs ${want.w}`);
    assert.ok(Math.abs(line.opacity - want.opacity) < 1e-5, `opacity of ${JSON.stringify(line)} vs ${want.opacity}`);
  }
}

/** The playground's link once the state has settled (web/page/app.js writes it a moment after each change). */
export async function settledHash(page) {
  await page.waitForFunction(() => document.body.dataset.link !== 'pending');
  return page.evaluate(() => location.hash);
}
