// The CLI's model commands on the golden checkpoints: `info`, and `attention`
// as JSON and as .npy on every golden family, against the PyTorch goldens
// (1e-5 absolute).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

import { MODELS, flat, golden, maxAbsDiff, modelFiles } from './model-golden.mjs';

const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const dirOf = (name) => fileURLToPath(new URL(`../golden/models/${name}`, import.meta.url));
const run = (args) => spawnSync(cli, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
const tmp = mkdtempSync(join(tmpdir(), 'attnplay-cli-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

// Minimal .npy reader: version 1.0, little-endian float32, C order.
function readNpy(path) {
  const bytes = readFileSync(path);
  assert.equal(bytes.subarray(0, 8).toString('latin1'), '\x93NUMPY\x01\x00');
  const headerLength = bytes.readUInt16LE(8);
  const header = bytes.subarray(10, 10 + headerLength).toString('latin1');
  assert.equal((10 + headerLength) % 64, 0);
  assert.match(header, /'descr': '<f4', 'fortran_order': False/);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset + 10 + headerLength, bytes.byteOffset + bytes.length));
  return { shape, data };
}

test('attnplay info prints the architecture, parameter count and tensors', () => {
  const r = run(['info', '--model', dirOf('gpt2-l2-h12-k8-f16')]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^model_type: gpt2 \(causal\)\nlayers: 2\nheads: 12\nwidth: 96\nhead width: 8\nMLP width: 128\npositions: 32\nvocabulary: 257\n/);
  const d = 96, V = 257, P = 32, I = 128;
  const perLayer = 2 * d + d * 3 * d + 3 * d + d * d + d + 2 * d + d * I + I + I * d + d;
  assert.match(r.stdout, new RegExp(`parameters: ${V * d + P * d + 2 * perLayer + 2 * d}\n`));
  assert.match(r.stdout, /tensors: 30\n/); // wte, wpe, ln_f × 2, and per layer 12 weights + the attn.bias buffer
  assert.match(r.stdout, /transformer\.h\.1\.attn\.c_attn\.weight +F16 +\[96, 288\]/);
  assert.match(r.stdout, /transformer\.h\.0\.attn\.bias +F32 +\[1, 1, 32, 32\]/);
});

for (const name of MODELS) { // every family and option
  test(`attnplay attention (JSON and .npy) matches PyTorch: ${name}`, () => {
    const c = golden(name).cases.at(-1);
    const args = ['attention', '--model', dirOf(name), '--ids', c.ids.join(','), '--type-ids', c.type_ids.join(',')];
    const r = run(args);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.model_type, JSON.parse(modelFiles(name).config).model_type);
    assert.deepEqual(out.tokens.map((t) => t.id), c.ids);
    assert.deepEqual(out.tokens.map((t) => t.type_id), c.type_ids);
    assert.equal(out.attentions.length, c.attentions.length);
    assert.equal(out.attentions[0].length, c.attentions[0].length);
    assert.ok(maxAbsDiff(flat(out.attentions), flat(c.attentions)) < 1e-5);

    const npyPath = join(tmp, `${name}.npy`);
    assert.equal(run([...args, '--format', 'npy', '--out', npyPath]).status, 0);
    const npy = readNpy(npyPath);
    const T = c.ids.length;
    assert.deepEqual(npy.shape, [c.attentions.length, c.attentions[0].length, T, T]);
    assert.deepEqual(Array.from(npy.data), flat(out.attentions).map(Math.fround));
  });
}

test('attnplay attention rejects bad arguments', () => {
  const model = dirOf('gpt2-l1-h1-k64-f32');
  const cases = [
    [['attention', '--model', model], 2, /--model and either text or --ids are required/],
    [['attention', '--model', model, '--ids', '1', '--text', 'a'], 2, /either text or --ids/],
    [['attention', '--model', model, '--ids', '1', '--pair', 'a'], 2, /either text or --ids/],
    [['attention', '--model', model, '--file', '/nonexistent.txt'], 1, /cannot open \/nonexistent.txt/],
    [['heads'], 2, /usage: attnplay heads --model DIR/],
    [['attention', '--model', model, '--ids', '1,2', '--format', 'npy'], 2, /--format npy needs --out/],
    [['attention', '--model', model, '--ids', '1,x'], 1, /--ids: 'x' is not an integer/],
    [['attention', '--model', model, '--ids', '1,,2'], 1, /--ids: '' is not an integer/],
    [['attention', '--model', model, '--ids', '99999999999'], 1, /--ids: '99999999999' is not an integer/],
    [['attention', '--model', model, '--bogus'], 2, /unknown or incomplete argument '--bogus'/],
    [['info'], 2, /usage: attnplay info --model DIR/],
  ];
  for (const [args, status, message] of cases) {
    const r = run(args);
    assert.equal(r.status, status, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
});

test('attnplay attention --text/--pair tokenizes with the folder\'s tokenizer.json (golden ids)', () => {
  for (const name of ['bert-l2-h2-k32-f32', 'gpt2-l2-h12-k8-f16']) {
    for (const c of golden(name).cases) {
      const args = ['attention', '--model', dirOf(name), '--text', c.text];
      if (c.text_pair) args.push('--pair', c.text_pair);
      const r = run(args);
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.deepEqual(out.tokens.map((t) => t.id), c.ids);
      assert.equal(out.truncated, false);
      assert.ok(maxAbsDiff(out.attentions.flat(3), flat(c.attentions)) < 1e-5);
    }
  }
});

test('attnplay heads prints every head\'s scores and labels', () => {
  const r = run(['heads', '--model', dirOf('gpt2-l4-h4-k8-bf16'), '--sequences', '2']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.heads.length, 16);
  for (const h of out.heads) {
    for (const key of ['previous_token', 'induction', 'sink', 'self', 'local']) assert.ok(h[key] >= 0 && h[key] <= 1 + 1e-5);
    assert.ok(Array.isArray(h.labels));
  }
});
