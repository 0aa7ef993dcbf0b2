// A model folder with GPT-2's original tokenizer files (vocab.json and
// merges.txt) and no tokenizer.json, as facebook/opt-125m's repository is:
// the OPT golden checkpoint with those two files written from its
// tokenizer.json loads in WASM from a folder URL and dropped files and in the
// CLI, reads text as OPT's tokenizer does (</s> first, as the golden's
// tokenizer.json and PyTorch case say) and gives the PyTorch golden's
// attentions. The ids of the conventions themselves against Hugging Face's
// converters: tests/node/tokenizer-parity.test.mjs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

import { createEngine } from '../../dist/engine/engine.js';
import { gpt2FilesOf } from '../hub/fake-hub.mjs';
import { flat, golden, maxAbsDiff, modelFiles } from './model-golden.mjs';

const NAME = 'opt-l2-h4-k8-f32';
const engine = await createEngine();
const { config, weights } = modelFiles(NAME);
const files = new Map([['config.json', Buffer.from(config)], ['model.safetensors', weights], ...Object.entries(gpt2FilesOf(NAME))]);
const [c] = golden(NAME).cases;

// A folder URL served by a fetch over `files` (404 for the rest, tokenizer.json included); the names asked for.
function folderFetch() {
  const requested = [];
  const fetch = async (url) => {
    const name = new URL(url).pathname.split('/').pop();
    requested.push(name);
    if (!files.has(name)) return new Response('not found', { status: 404 });
    return new Response(files.get(name), { headers: { 'content-length': String(files.get(name).length) } });
  };
  return { fetch, requested };
}

test('vocab.json + merges.txt without tokenizer.json: OPT reads text as its tokenizer does, attentions equal PyTorch (URL, dropped files)', async () => {
  const { fetch, requested } = folderFetch();
  const dropped = [...files].map(([name, bytes]) => new File([bytes], name));
  for (const [source, options] of [['http://models.test/opt/', { fetch }], [dropped, {}]]) {
    const seen = new Set();
    const model = await engine.loadModel(source, { ...options, onProgress: ({ file }) => seen.add(file) });
    try {
      assert.equal(model.hasTokenizer, true);
      const r = model.run(c.text);
      assert.deepEqual(r.tokens.map((t) => t.id), c.ids);
      assert.equal(r.tokens[0].display, '</s>');
      assert.ok(maxAbsDiff(r.attentions.data, flat(c.attentions)) < 1e-4);
      for (const name of ['vocab.json', 'merges.txt']) assert.ok(seen.has(name), `progress names ${name}`);
    } finally {
      model.dispose();
    }
  }
  assert.deepEqual(requested.filter((name) => !name.endsWith('.json') && !name.endsWith('.safetensors')),
    ['tokenizer.model', 'spiece.model', 'sentencepiece.bpe.model', 'source.spm', 'merges.txt']);
});

test('CLI: attention and info on a folder with vocab.json + merges.txt', () => {
  const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
  const tmp = mkdtempSync(join(tmpdir(), 'attnplay-gpt2-files-'));
  try {
    for (const [name, bytes] of files) writeFileSync(join(tmp, name), bytes);
    const attention = spawnSync(cli, ['attention', '--model', tmp, '--text', c.text], { encoding: 'utf8', maxBuffer: 1 << 26 });
    assert.equal(attention.status, 0, attention.stderr);
    const out = JSON.parse(attention.stdout);
    assert.deepEqual(out.tokens.map((t) => t.id), c.ids);
    assert.ok(maxAbsDiff(out.attentions.flat(Infinity), flat(c.attentions)) < 1e-4);
    assert.match(spawnSync(cli, ['info', '--model', tmp], { encoding: 'utf8' }).stdout, /tokenizer: vocab\.json, merges\.txt \(GPT-2's files\)/);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
