// Tokenizer throughput, GPT-2 encoding, in one Node process: our WASM
// tokenizer (string -> UTF-8 marshalling included), tiktoken (WASM of the Rust
// original), gpt-tokenizer and js-tiktoken (pure JS). Prints MB/s and ratios,
// checks every peer gives the same ids as tiktoken on the text it timed, then
// times 100,000 letters without a space and training on Austen.
// Run: npm run build && node tests/bench/tokenizer.bench.mjs [--quick]
import { performance } from 'node:perf_hooks';
import { get_encoding } from 'tiktoken';
import { encode as gptTokenizerEncode } from 'gpt-tokenizer/encoding/gpt2';
import { getEncoding } from 'js-tiktoken';
import { createEngine } from '../../dist/engine/engine.js';
import * as fx from '../tokenizer/fixtures.mjs';

const quick = process.argv.includes('--quick');
const engine = await createEngine();
const ours = engine.loadTokenizer(fx.gpt2TokenizerJson());
const tiktoken = get_encoding('gpt2');
const jsTiktoken = getEncoding('gpt2');

const peers = [
  ['attnplay (WASM)', (s) => ours.encodeIds(s)],
  ['tiktoken (WASM)', (s) => tiktoken.encode(s, 'all')],
  ['gpt-tokenizer', (s) => gptTokenizerEncode(s, { allowedSpecial: 'all' })],
  ['js-tiktoken', (s) => jsTiktoken.encode(s, 'all')],
];

function measure(fn, text) {
  fn(text.slice(0, 100_000)); // warm up
  const runs = quick ? 1 : 3;
  let best = Infinity;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    fn(text);
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

const austen = fx.austen();
const corpora = [
  ['English prose (austen.txt, first 2 MB)', austen.slice(0, quick ? 500_000 : 2_000_000)],
  ['mixed parity corpus (1.1 MB)', fx.parityCorpus()],
];
for (const [name, text] of corpora) {
  const mb = Buffer.byteLength(text) / 1e6;
  const reference = Array.from(tiktoken.encode(text, 'all'));
  console.log(`\n${name}: ${mb.toFixed(2)} MB, ${reference.length} tokens`);
  console.log('| tokenizer | MB/s | attnplay is x faster | same ids as tiktoken |');
  console.log('|---|---:|---:|---|');
  const results = peers.map(([peer, fn]) => {
    const ids = Array.from(fn(text));
    const same = ids.length === reference.length && ids.every((v, i) => v === reference[i]);
    return [peer, mb / (measure(fn, text) / 1000), same];
  });
  const oursRate = results[0][1];
  for (const [peer, rate, same] of results) {
    console.log(`| ${peer} | ${rate.toFixed(1)} | ${(oursRate / rate).toFixed(2)} | ${same ? 'yes' : 'NO'} |`);
  }
}

// One run each: the references that go quadratic here take seconds to minutes.
console.log('\nletters without a space (ms, one run):');
console.log('| tokenizer | 10,000 letters | 100,000 letters |');
console.log('|---|---:|---:|');
for (const [peer, fn] of peers) {
  const once = (n) => {
    const text = 'a'.repeat(n);
    const t = performance.now();
    fn(text);
    return performance.now() - t;
  };
  const small = once(10_000);
  const large = small > 1000 ? NaN : once(100_000); // skip 100k where 10k already takes over a second
  console.log(`| ${peer} | ${small.toFixed(1)} | ${Number.isNaN(large) ? 'skipped (quadratic)' : large.toFixed(1)} |`);
}

const t0 = performance.now();
const trained = engine.trainTokenizer(austen, { vocabSize: 4096 });
console.log(`\ntraining byte-level BPE on austen.txt (${(austen.length / 1e6).toFixed(1)} MB) to 4,096 tokens: ${((performance.now() - t0) / 1000).toFixed(2)} s (WASM)`);
trained.dispose();
ours.dispose();
tiktoken.free();
