// Parity of the WASM tokenizer with Hugging Face's Rust tokenizers
// (@anush008/tokenizers, which wraps tokenizers 0.22), shared by
// hf-parity-families.test.mjs (the families' tokenizer.json shapes) and
// hf-parity-sweeps.test.mjs (every Split behaviour and normalizer): the two
// halves run as two files, side by side, and are named to start early in the
// Node stage's alphabetical order (started last, they kept one core idle). assertParity compares ids,
// code-point offsets and decode on the >= 1 MB parity corpus, zero mismatches,
// and the to_json round trip in both libraries.
import assert from 'node:assert/strict';
import hf from '@anush008/tokenizers';
import { createEngine } from '../../dist/engine/engine.js';
import * as fx from '../tokenizer/fixtures.mjs';

export const engine = await createEngine();
export const corpus = fx.parityCorpus();
export const lines = corpus.split('\n').filter((l) => l.trim()).slice(0, 300);
export const sweepText = corpus.slice(0, 250_000);  // the sweeps over components use a quarter of the corpus

export function firstDifference(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i === a.length && i === b.length ? -1 : i;
}

export async function assertParity(name, json, { text = corpus, offsets = true } = {}) {
  const ours = engine.loadTokenizer(json);
  const ref = hf.Tokenizer.fromString(JSON.stringify(json));
  try {
    const r = await ref.encode(text, null, { addSpecialTokens: true });
    const o = ours.encode(text);
    const ids = Array.from(o.ids);
    const refIds = r.getIds();
    const i = firstDifference(ids, refIds);
    if (i >= 0) {
      const at = o.utf16Offsets[2 * i];
      assert.fail(`${name}: first id mismatch at token ${i} of ${ids.length}/${refIds.length}: ours ${ids.slice(i, i + 6)} vs ${refIds.slice(i, i + 6)} near ${JSON.stringify(text.slice(Math.max(0, at - 30), at + 30))}`);
    }
    if (offsets) {
      const cp = fx.codePointIndex(text);
      const refOffsets = r.getOffsets();
      for (let k = 0; k < ids.length; k++) {
        const got = [cp[o.utf16Offsets[2 * k]], cp[o.utf16Offsets[2 * k + 1]]];
        if (o.special[k] && got[0] === 0 && got[1] === 0) continue;  // post-processor tokens: empty offsets both sides
        if (got[0] !== refOffsets[k][0] || got[1] !== refOffsets[k][1]) {
          assert.fail(`${name}: offsets of token ${k} (${o.pieces[k]}): ours ${got} vs ${refOffsets[k]} near ${JSON.stringify(text.slice(Math.max(0, o.utf16Offsets[2 * k] - 20), o.utf16Offsets[2 * k] + 20))}`);
        }
      }
    }
    for (const line of lines) {
      const lineIds = Array.from(ours.encodeIds(line));
      assert.equal(ours.decode(lineIds), await ref.decode(lineIds, false), `${name} decode ${JSON.stringify(line)}`);
      assert.equal(ours.decode(lineIds, { skipSpecialTokens: true }), await ref.decode(lineIds, true), `${name} decode skipping specials ${JSON.stringify(line)}`);
    }
    // Our written tokenizer.json reads back the same, in our loader and in Hugging Face's.
    const written = ours.toJson();
    const again = engine.loadTokenizer(written);
    try {
      const sample = lines.join('\n');
      assert.deepEqual(Array.from(again.encodeIds(sample)), Array.from(ours.encodeIds(sample)), `${name}: to_json round trip`);
      const refAgain = await hf.Tokenizer.fromString(written).encode(sample, null, { addSpecialTokens: true });
      assert.deepEqual(refAgain.getIds(), Array.from(ours.encodeIds(sample)), `${name}: Hugging Face reads our to_json`);
    } finally {
      again.dispose();
    }
  } finally {
    ours.dispose();
  }
}

