// Shared set-up for browser tests: serves dist/ on a free localhost port and
// launches Debian's headless Chromium through playwright-core (no browser
// download). Screenshots and downloaded exports go to test-results/ for
// review; helpers read the exports (PNG size, SVG elements and texts).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { startServer } from '../../scripts/serve.mjs';

export const resultsDir = fileURLToPath(new URL('../../test-results/', import.meta.url));

const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/**
 * Starts the server and the browser; returns { url, browser, close }.
 * mounts: extra folders served under URL prefixes, headers: sent with every
 * response (see startServer).
 */
export async function openBrowser({ mounts = {}, headers = {} } = {}) {
  const { server, url } = await startServer({ port: 0, mounts, headers });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
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
