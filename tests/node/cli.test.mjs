// The native CLI (build/native/attnplay): version, the from-scratch command on
// the seed's worked example, and readable errors with non-zero exit codes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const goldenPath = fileURLToPath(new URL('../golden/seed_numpy_example.json', import.meta.url));
const golden = JSON.parse(readFileSync(goldenPath, 'utf8'));
const run = (args, input) => spawnSync(cli, args, { input, encoding: 'utf8' });

test('attnplay --version', () => {
  const r = run(['--version']);
  assert.equal(r.status, 0);
  assert.match(r.stdout, /^attnplay \d+\.\d+\.\d+\n$/);
});

test('attnplay scratch reproduces the seed example, -inf shown as "-inf"', () => {
  const r = run(['scratch', '--spec', goldenPath]);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  out.output.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - golden.expected_output[i][j]) < 1e-6)));

  const causal = JSON.parse(run(['scratch'], JSON.stringify({ ...golden, causal: true })).stdout);
  assert.equal(causal.heads[0].masked[0][1], '-inf');
  assert.equal(causal.heads[0].weights[0][1], 0);
});

test('attnplay reports bad input on stderr with a non-zero exit code', () => {
  const cases = [
    [['scratch'], '{"x": [[1, 2]], "wq": [[1]], "wk": [[1]], "wv": [[1]]}', /Wq, Wk and Wv need 2 rows/],
    [['scratch'], '{not json', /parse error/],
    [['scratch', '--spec', '/nonexistent.json'], '', /cannot open/],
    [['bogus'], '', /unknown command 'bogus'/],
  ];
  for (const [args, input, message] of cases) {
    const r = run(args, input);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, message);
  }
});
