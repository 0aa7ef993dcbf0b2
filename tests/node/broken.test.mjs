// Broken checkpoints (tests/broken/make-corpus.mjs) never crash: each gets its
// specific message from the CLI (exit code 1, no signal) and as an
// AttnplayError from the WASM engine, which stays usable afterwards.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

import { AttnplayError, createEngine } from '../../dist/engine/engine.js';
import { writeCorpus } from '../broken/make-corpus.mjs';
import { flat, golden, maxAbsDiff, modelFiles } from './model-golden.mjs';

const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
const outDir = mkdtempSync(join(tmpdir(), 'attnplay-broken-'));
const cases = writeCorpus(outDir);
after(() => rmSync(outDir, { recursive: true, force: true }));

test('the CLI reports every broken checkpoint with its message and exit code 1', () => {
  for (const c of cases) {
    const r = spawnSync(cli, ['attention', '--model', c.dir, '--ids', c.ids.join(',')], { encoding: 'utf8' });
    assert.equal(r.signal, null, `${c.name}: killed by ${r.signal}`);
    assert.equal(r.status, 1, `${c.name}: exit ${r.status}, stderr ${r.stderr}`);
    assert.match(r.stderr, c.message, c.name);
    if (c.ids.length <= 16) {
      const info = spawnSync(cli, ['info', '--model', c.dir], { encoding: 'utf8' });
      assert.equal(info.status, 1, `${c.name}: info exit ${info.status}`);
      assert.match(info.stderr, c.message, `${c.name} (info)`);
    }
  }
});

test('the WASM engine raises each message as an AttnplayError and stays usable', async () => {
  const engine = await createEngine();
  for (const c of cases) {
    const files = Object.entries(c.files).map(([name, bytes]) => new File([bytes], name));
    await assert.rejects(
      (async () => {
        const model = await engine.loadModel(files);
        try {
          model.forward(c.ids);
        } finally {
          model.dispose();
        }
      })(),
      (e) => e instanceof AttnplayError && c.message.test(e.message),
      c.name,
    );
  }
  assert.equal(engine.loadedModels(), 0);
  const model = await engine.loadModel(modelFiles('gpt2-l4-h4-k8-bf16'));
  const g = golden('gpt2-l4-h4-k8-bf16').cases[0];
  assert.ok(maxAbsDiff(model.forward(g.ids).attentions.data, flat(g.attentions)) < 1e-5);
  model.dispose();
});
