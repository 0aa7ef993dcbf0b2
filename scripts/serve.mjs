// Static server for dist/ (the playground), on http://localhost:8080 or $PORT,
// with the cross-origin isolation headers (COOP/COEP), so the page uses the
// pthreads build; a plain static host without them keeps the single-threaded
// build. Also imported by the browser tests, which start it on a free port.
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import sirv from 'sirv';

const distDir = fileURLToPath(new URL('../dist', import.meta.url));

/**
 * The headers that make the page cross-origin isolated (SharedArrayBuffer,
 * hence threads). COEP "credentialless" rather than "require-corp": files
 * from other origins (the Hugging Face hub's CDN) still load through CORS,
 * and no-cors requests are allowed (without credentials).
 */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'credentialless',
};

/**
 * Starts serving `root`; resolves to { server, url }. port 0 picks a free one.
 * mounts: { '/prefix/': folder } serves more folders under URL prefixes
 * (the browser tests' fixture pages). headers: { name: value } sent with
 * every response (the widget test's Content-Security-Policy).
 */
export function startServer({ root = distDir, port = 8080, host = 'localhost', mounts = {}, headers = {} } = {}) {
  const serveStatic = sirv(root, { dev: true, etag: true });
  const mounted = Object.entries(mounts).map(([prefix, folder]) => [prefix, sirv(folder, { dev: true, etag: true })]);
  const server = createServer((req, res) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    const notFound = () => {
      res.statusCode = 404;
      res.end('Not found');
    };
    const mount = mounted.find(([prefix]) => req.url.startsWith(prefix));
    if (mount) {
      req.url = req.url.slice(mount[0].length - 1);
      mount[1](req, res, notFound);
    } else {
      serveStatic(req, res, notFound);
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve({ server, url: `http://${host}:${address.port}/` });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.env.PORT ?? 8080);
  startServer({ port, headers: ISOLATION_HEADERS })
    .then(({ url }) => console.log(`attnplay: serving the playground on ${url}, cross-origin isolated (threads on) (Ctrl+C to stop)`))
    .catch((error) => {
      console.error(`attnplay: cannot serve on port ${port}: ${error.message}`);
      process.exit(1);
    });
}
