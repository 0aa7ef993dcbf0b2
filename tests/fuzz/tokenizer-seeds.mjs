// Writes fuzzing seeds for fuzz_tokenizer: each tokenizer.json shape of
// tests/tokenizer/families.mjs (Llama 3, Qwen2, o200k, SmolLM2, Pythia,
// Llama 2, Metaspace, Unigram with and without a Precompiled charsmap, every
// Split behaviour and normalizer) shrunk to its
// first few hundred pieces, + NUL + a text. Also a few broken variants
// (an unknown Split regex, a Split without a pattern, wrong field types).
// Usage: node tests/fuzz/tokenizer-seeds.mjs OUT_DIR   (called by scripts/fuzz.sh)
import { writeFileSync } from 'node:fs';
import * as families from '../tokenizer/families.mjs';

const out = process.argv[2];
const text = "Hello, café! The cat sat. 😀 <|endoftext|> 2024 don't\r\n  x\u00a0ﬁ e\u0301";

// Keeps the pieces with ids below keep, the merges among them, and gives the added tokens ids from keep on.
function shrink(json, keep) {
  if (json.model.type === 'Unigram') return json;  // 1,000 pieces: small already
  const vocab = {};
  for (const piece in json.model.vocab) if (json.model.vocab[piece] < keep) vocab[piece] = json.model.vocab[piece];
  const merges = json.model.merges.filter((m) => {
    const [a, b] = Array.isArray(m) ? m : [m.slice(0, m.indexOf(' ')), m.slice(m.indexOf(' ') + 1)];
    return a in vocab && b in vocab && a + b in vocab;
  });
  const remap = new Map();
  let next = keep;
  const added_tokens = json.added_tokens.map((t) => {
    if (t.id < keep) return t;
    remap.set(t.id, next);
    return { ...t, id: next++ };
  });
  const fix = (p) => {
    if (!p) return p;
    if (p.processors) return { ...p, processors: p.processors.map(fix) };
    if (!p.special_tokens) return p;
    const special_tokens = Object.fromEntries(Object.entries(p.special_tokens).map(([k, v]) => [k, { ...v, ids: v.ids.map((i) => remap.get(i) ?? i) }]));
    return { ...p, special_tokens };
  };
  return { ...json, added_tokens, post_processor: fix(json.post_processor), model: { ...json.model, vocab, merges } };
}

const shapes = [
  ['llama3', families.llama3()], ['qwen2', families.qwen2()], ['o200k', families.o200k()], ['smollm2', families.smollm2()],
  ['pythia', families.pythia()], ['gpt2-split', families.gpt2Split()], ['llama2', families.llama2()],
  ['llama2-unknowns', families.llama2Unknowns()], ['metaspace', families.metaspace()], ['unigram', families.unigram()], ['unigram-precompiled', families.unigram({ precompiled: 'rules' })],
  ...families.splitBehaviours().map(([, json], i) => [`split-${i}`, json]),
  ...families.normalizers().map(([, json], i) => [`normalizer-${i}`, json]),
];
const broken = (json, pre_tokenizer) => ({ ...json, pre_tokenizer });
const small = shapes.map(([name, json]) => [name, shrink(json, 600)]);
const llama3 = small[0][1];
small.push(['broken-regex', broken(llama3, { type: 'Split', pattern: { Regex: '\\p{L}+' }, behavior: 'Isolated', invert: false })]);
small.push(['broken-split', broken(llama3, { type: 'Split', behavior: 7 })]);
small.push(['broken-types', { ...llama3, normalizer: { type: 'Sequence', normalizers: { type: 'NFC' } }, decoder: { type: 'Strip', content: 3 } }]);
for (const [name, json] of small) writeFileSync(`${out}/${name}`, `${JSON.stringify(json)}\0${text}`);
