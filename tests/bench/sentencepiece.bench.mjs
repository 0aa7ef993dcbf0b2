// SentencePiece-style encoding throughput, on the first MB of austen.txt
// (English prose), in one run: our WASM tokenizer (string -> UTF-8
// marshalling included) against
//   - Hugging Face's Rust tokenizers (@anush008/tokenizers) on the
//     tokenizer.json shapes of Llama 2 (BPE with byte fallback and no
//     pre-tokenizer: the whole text is one word) and of T5 / Marian (Unigram,
//     Metaspace), tests/tokenizer/families.mjs;
//   - Google's sentencepiece (its C++ library through Debian's
//     python3-sentencepiece, timed inside its own Python process on the same
//     text) on .model files as they ship: the Unigram source.spm of
//     models/gettext-en-fr and a BPE model of tests/tokenizer/sentencepiece.
// The best of three calls each; prints MB/s, our speed-up, and whether each
// peer gave the same ids as ours.
// Run: npm run build && node tests/bench/sentencepiece.bench.mjs [--quick]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import hf from '@anush008/tokenizers';
import { createEngine } from '../../dist/engine/engine.js';
import * as families from '../tokenizer/families.mjs';
import * as fx from '../tokenizer/fixtures.mjs';
import { requireProgram } from '../programs.mjs';

const quick = process.argv.includes('--quick');
const runs = quick ? 1 : 3;
const text = fx.austen().slice(0, quick ? 250_000 : 1_000_000);
const mb = Buffer.byteLength(text) / 1e6;
const engine = await createEngine();

async function best(fn) {
  await fn(text.slice(0, 20_000));  // warm up
  let ms = Infinity;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    await fn(text);
    ms = Math.min(ms, performance.now() - t0);
  }
  return ms;
}

function sameIds(a, b) {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

const rows = [];
function row(tokenizer, peer, oursMs, peerMs, same, tokens) {
  rows.push(`| ${tokenizer} | ${tokens} | ${(mb / (oursMs / 1000)).toFixed(2)} | ${peer} | ${(mb / (peerMs / 1000)).toFixed(2)} | ` +
    `${(peerMs / oursMs).toFixed(2)} | ${same ? 'yes' : 'NO'} |`);
}

// tokenizer.json shapes: ours against Hugging Face's tokenizers.
for (const [name, json] of [['Llama 2 shape: BPE, byte fallback (tokenizer.json)', families.llama2()],
  ['T5 / Marian shape: Unigram (tokenizer.json)', families.unigram()]]) {
  const ours = engine.loadTokenizer(json);
  const ref = hf.Tokenizer.fromString(JSON.stringify(json));
  const ids = Array.from(ours.encodeIds(text, { addSpecialTokens: false }));
  const refIds = (await ref.encode(text, null, { addSpecialTokens: false })).getIds();
  const oursMs = await best((s) => ours.encodeIds(s, { addSpecialTokens: false }));
  const refMs = await best((s) => ref.encode(s, null, { addSpecialTokens: false }));
  row(name, 'Hugging Face tokenizers (Rust)', oursMs, refMs, sameIds(ids, refIds), ids.length);
  ours.dispose();
}

// .model files: ours against sentencepiece itself, in Python.
requireProgram('python3:sentencepiece', 'the SentencePiece bench');
const spmScript = `
import json, sys, time
import sentencepiece as spm
sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
text = open(sys.argv[2], encoding='utf-8').read()
runs = int(sys.argv[3])
sp.encode(text[:20000])
best = float('inf')
for _ in range(runs):
    t = time.perf_counter(); ids = sp.encode(text); best = min(best, time.perf_counter() - t)
json.dump({'ms': best * 1000, 'ids': ids}, sys.stdout)
`;
const scratch = mkdtempSync(join(tmpdir(), 'attnplay-spm-bench-'));
try {
  const textPath = join(scratch, 'text.txt');
  writeFileSync(textPath, text);
  for (const [name, url] of [['gettext-en-fr source.spm: Unigram (.model)', new URL('../../models/gettext-en-fr/source.spm', import.meta.url)],
    ['bpe-rules.model: BPE (.model)', new URL('../tokenizer/sentencepiece/bpe-rules.model', import.meta.url)]]) {
    const path = fileURLToPath(url);
    const ours = engine.loadTokenizer(new Uint8Array(readFileSync(path)));
    const ids = Array.from(ours.encodeIds(text, { addSpecialTokens: false }));
    const oursMs = await best((s) => ours.encodeIds(s, { addSpecialTokens: false }));
    ours.dispose();
    const python = spawnSync('/usr/bin/python3', ['-c', spmScript, path, textPath, String(runs)], { encoding: 'utf8', maxBuffer: 1 << 28 });
    if (python.status !== 0) throw new Error(`sentencepiece in Python failed: ${python.stderr}`);
    const ref = JSON.parse(python.stdout);
    row(name, 'sentencepiece (C++, from Python)', oursMs, ref.ms, sameIds(ids, ref.ids), ids.length);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

console.log(`austen.txt, first ${mb.toFixed(2)} MB, encoded in one call without special tokens; the best of ${runs}:`);
console.log('| tokenizer | tokens | attnplay MB/s | peer | peer MB/s | attnplay is x faster | same ids |');
console.log('|---|---:|---:|---|---:|---:|---|');
for (const line of rows) console.log(line);
