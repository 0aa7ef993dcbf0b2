// Shared set-up for browser tests: serves dist/ on a free localhost port and
// launches Debian's headless Chromium through playwright-core (no browser
// download). Screenshots go to test-results/ for review.
import { mkdirSync } from 'node:fs';
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
