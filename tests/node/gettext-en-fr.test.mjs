// The shipped translation model gettext-en-fr in WASM, loaded as the page
// loads it: its tokenizer.json encodes 800 validation sentences (both
// languages) to the ids Google's sentencepiece gives with the spm_train model
// it was made from (tests/golden/models/gettext-en-fr-spm.json, written by
// models/train/train_marian.py), and the engine reproduces PyTorch's encoder,
// decoder and cross attention (1e-5) and logits (1e-4 relative) on the
// fidelity pairs, and PyTorch's greedy translation of the last one; its
// decoder tokens carry their offsets into the target text and into the
// translation, as Hugging Face tokenizers encodes and decodes them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';

import hf from '@anush008/tokenizers';

import { createEngine } from '../../dist/engine/engine.js';

const read = (path, encoding) => readFileSync(new URL(path, import.meta.url), encoding);

let engine;
before(async () => {
  engine = await createEngine();
});

test('gettext-en-fr: tokenizer.json gives sentencepiece\'s ids on validation sentences', () => {
  const golden = JSON.parse(read('../golden/models/gettext-en-fr-spm.json', 'utf8'));
  assert.equal(golden.cases.length, 800);
  const tokenizer = engine.loadTokenizer(read('../../models/gettext-en-fr/tokenizer.json', 'utf8'));
  try {
    const wrong = golden.cases.filter(({ text, ids }) => JSON.stringify(Array.from(tokenizer.encodeIds(text))) !== JSON.stringify(ids));
    assert.deepEqual(wrong.map((c) => c.text), []);
  } finally {
    tokenizer.dispose();
  }
});

test('gettext-en-fr reproduces PyTorch\'s encoder, decoder and cross attention and logits', async () => {
  const model = await engine.loadModel({
    config: read('../../models/gettext-en-fr/config.json', 'utf8'),
    weights: read('../../models/gettext-en-fr/model.safetensors'),
    tokenizer: read('../../models/gettext-en-fr/tokenizer.json', 'utf8'),
  });
  try {
    const golden = JSON.parse(read('../golden/models/gettext-en-fr.json', 'utf8'));
    const data = read(`../golden/models/${golden.data}`);
    const floats = ({ shape, offset }) => new Float32Array(data.buffer.slice(data.byteOffset + offset, data.byteOffset + offset + 4 * shape.reduce((a, b) => a * b, 1)));
    const worst = (reference, ours) => reference.reduce((m, v, i) => Math.max(m, Math.abs(v - ours[i])), 0);
    golden.cases.forEach((c, n) => {
      if (n < 2) {  // reference translations, tokenized by us
        const r = model.run(c.source, { target: c.target });
        assert.deepEqual(r.sourceTokens.map((t) => t.id), c.ids);
        assert.deepEqual(r.decoderTokens.map((t) => t.id), c.decoder_ids);
      } else {      // PyTorch's greedy translation: ours is the same, then </s>
        const t = model.translate(c.source);
        assert.deepEqual(t.decoderTokens.slice(0, -1).map((tok) => tok.id), c.decoder_ids);
        assert.equal(t.text, c.target);
      }
      const r = model.forward(c.ids, c.decoder_ids, { logits: true });
      for (const [ours, key] of [['encoderAttentions', 'encoder_attentions'], ['decoderAttentions', 'decoder_attentions'], ['crossAttentions', 'cross_attentions']]) {
        assert.deepEqual(r[ours].shape, c[key].shape);
        const error = worst(floats(c[key]), r[ours].data);
        assert.ok(error < 1e-5, `${c.source}: ${key} differs by ${error}`);
      }
      const logits = floats(c.logits);
      const largest = logits.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      assert.ok(worst(logits, r.logits.data) / largest < 1e-4, c.source);
    });
  } finally {
    model.dispose();
  }
});

// Decoder tokens carry their text: a target's tokens their offsets into it, as
// Hugging Face tokenizers (@anush008/tokenizers) encodes that target; a
// translation's tokens the part of the translation each wrote, as Hugging
// Face's decoder writes each prefix of the ids.
test('gettext-en-fr: decoder tokens carry offsets into the target and into the translation, as Hugging Face tokenizers gives them', async () => {
  const tokenizerJson = read('../../models/gettext-en-fr/tokenizer.json', 'utf8');
  const reference = hf.Tokenizer.fromString(tokenizerJson);
  const model = await engine.loadModel({
    config: read('../../models/gettext-en-fr/config.json', 'utf8'),
    weights: read('../../models/gettext-en-fr/model.safetensors'),
    tokenizer: tokenizerJson,
  });
  try {
    const target = 'Impossible d\'ouvrir le fichier « %s » : données binaires incorrectes';
    const run = model.run('Could not open the file "%s": incorrect binary data', { target });
    const [start, ...tokens] = run.decoderTokens;
    assert.equal(start.id, model.config.decoderStartTokenId);
    assert.deepEqual([start.special, start.segment, start.start, start.end], [true, -1, 0, 0]);
    const expected = await reference.encode(target, null, { addSpecialTokens: false });
    assert.deepEqual(tokens.map((t) => t.id), expected.getIds());
    assert.deepEqual(tokens.map((t) => [t.start, t.end]), expected.getOffsets()); // a BMP text: code points = UTF-16 units

    for (const source of ['File not found', 'Could not open the file "%s": incorrect binary data', 'Cancel']) {
      const translation = model.translate(source, { maxNewTokens: 40 });
      const ids = translation.decoderTokens.slice(1).map((t) => t.id);
      assert.equal(translation.text, await reference.decode(ids, true));
      let written = 0;
      for (const [i, token] of translation.decoderTokens.slice(1).entries()) {
        const prefix = await reference.decode(ids.slice(0, i + 1), true);
        assert.ok(translation.text.startsWith(prefix), `${source}: the prefix ${JSON.stringify(prefix)} starts the translation`);
        assert.deepEqual([token.start, token.end], [written, prefix.length], `${source}: token ${i + 1} (${token.display})`);
        written = prefix.length;
      }
      assert.equal(written, translation.text.length);
    }
  } finally {
    model.dispose();
  }
});
