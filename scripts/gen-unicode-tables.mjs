#!/usr/bin/env node
// Generates cpp/tokenizer/unicode_tables.cpp from Debian's `unicode-data`
// files (/usr/share/unicode): general category and White_Space of every code
// point (two-stage table), canonical combining classes, full canonical
// decompositions (for NFD), full compatibility decompositions of the code
// points whose compatibility decomposition differs (for NFKD/NFKC), primary
// composites (canonical pairs minus Full_Composition_Exclusion, for NFC/NFKC),
// lowercase mappings (char::to_lowercase: the simple mapping plus
// SpecialCasing's unconditional entries), and the Grapheme_Cluster_Break
// property with Extended_Pictographic (UAX #29's extended grapheme clusters,
// for the Precompiled normalizer) as sorted ranges.
// Usage: node scripts/gen-unicode-tables.mjs [UNICODE_DIR]   (rewrites the file)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = process.argv[2] ?? '/usr/share/unicode';
const out = fileURLToPath(new URL('../cpp/tokenizer/unicode_tables.cpp', import.meta.url));
const read = (name) => readFileSync(`${dir}/${name}`, 'utf8');
const version = (read('ReadMe.txt').match(/Version (\d+\.\d+\.\d+)/) ?? [, 'unknown'])[1];

// Order must match enum class Category in unicode.h.
const CATEGORIES = ['Cn', 'Lu', 'Ll', 'Lt', 'Lm', 'Lo', 'Mn', 'Mc', 'Me', 'Nd', 'Nl', 'No', 'Pc', 'Pd', 'Ps',
  'Pe', 'Pi', 'Pf', 'Po', 'Sm', 'Sc', 'Sk', 'So', 'Zs', 'Zl', 'Zp', 'Cc', 'Cf', 'Cs', 'Co'];
const MAX = 0x110000;
const props = new Uint8Array(MAX); // low 5 bits: category index (0 = Cn), bit 5: White_Space
const ccc = new Map();
const decomposition = new Map();
const compatibility = new Map(); // <tag> decompositions only
const lower = new Map();

let rangeStart = null;
for (const line of read('UnicodeData.txt').split('\n')) {
  if (!line) continue;
  const f = line.split(';');
  const cp = parseInt(f[0], 16);
  const cat = CATEGORIES.indexOf(f[2]);
  if (cat < 0) throw new Error(`unknown category ${f[2]}`);
  if (f[1].endsWith(', First>')) { rangeStart = cp; continue; }
  if (f[1].endsWith(', Last>')) { props.fill(cat, rangeStart, cp + 1); rangeStart = null; continue; }
  props[cp] = cat;
  if (f[3] !== '0') ccc.set(cp, Number(f[3]));
  if (f[5] && !f[5].startsWith('<')) decomposition.set(cp, f[5].split(' ').map((h) => parseInt(h, 16)));
  if (f[5].startsWith('<')) compatibility.set(cp, f[5].split(' ').slice(1).map((h) => parseInt(h, 16)));
  if (f[13]) lower.set(cp, [parseInt(f[13], 16)]);
}
for (const line of read('PropList.txt').split('\n')) {
  const m = line.match(/^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*White_Space\b/);
  if (!m) continue;
  const a = parseInt(m[1], 16);
  const b = m[2] ? parseInt(m[2], 16) : a;
  for (let cp = a; cp <= b; cp++) props[cp] |= 0x20;
}
for (const line of read('SpecialCasing.txt').split('\n')) {
  const body = line.split('#')[0].trim();
  if (!body) continue;
  const f = body.split(';').map((s) => s.trim());
  if (f[4]) continue; // conditional (language or context): not used by char::to_lowercase
  const target = f[1].split(' ').map((h) => parseInt(h, 16));
  lower.set(parseInt(f[0], 16), target);
}
// Grapheme_Cluster_Break values; the order must match enum class GraphemeBreak in unicode.h.
const GRAPHEME_BREAKS = ['Other', 'CR', 'LF', 'Control', 'Extend', 'ZWJ', 'Regional_Indicator', 'Prepend',
  'SpacingMark', 'L', 'V', 'T', 'LV', 'LVT'];
const EXTENDED_PICTOGRAPHIC = 0x10; // flag beside the value
const graphemeProperty = new Map(); // code point -> value | flag
const propertyRanges = (file, property) => {
  const ranges = [];
  for (const line of read(file).split('\n')) {
    const m = line.match(/^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*(\w+)/);
    if (m && (property === undefined || m[3] === property)) ranges.push([parseInt(m[1], 16), m[2] ? parseInt(m[2], 16) : parseInt(m[1], 16), m[3]]);
  }
  return ranges;
};
for (const [a, b, name] of propertyRanges('auxiliary/GraphemeBreakProperty.txt')) {
  const value = GRAPHEME_BREAKS.indexOf(name);
  if (value < 0) throw new Error(`unknown Grapheme_Cluster_Break ${name}`);
  for (let cp = a; cp <= b; cp++) graphemeProperty.set(cp, value);
}
for (const [a, b] of propertyRanges('emoji/emoji-data.txt', 'Extended_Pictographic')) {
  for (let cp = a; cp <= b; cp++) graphemeProperty.set(cp, (graphemeProperty.get(cp) ?? 0) | EXTENDED_PICTOGRAPHIC);
}
// Runs of consecutive code points with the same value: [first, last, value].
const graphemeRanges = [];
for (const cp of [...graphemeProperty.keys()].sort((a, b) => a - b)) {
  const value = graphemeProperty.get(cp);
  const last = graphemeRanges[graphemeRanges.length - 1];
  if (last && last[1] === cp - 1 && last[2] === value) last[1] = cp;
  else graphemeRanges.push([cp, cp, value]);
}

const expand = (cp) => (decomposition.has(cp) ? decomposition.get(cp).flatMap(expand) : [cp]);
const expandCompat = (cp) => {
  const one = compatibility.get(cp) ?? decomposition.get(cp);
  return one ? one.flatMap(expandCompat) : [cp];
};
// Code points whose full compatibility decomposition is not their canonical one.
const compatOnly = new Map();
for (const cp of new Set([...compatibility.keys(), ...decomposition.keys()])) {
  const k = expandCompat(cp);
  const c = expand(cp);
  if (k.length !== c.length || k.some((x, i) => x !== c[i])) compatOnly.set(cp, k);
}
const excluded = new Set();
for (const line of read('DerivedNormalizationProps.txt').split('\n')) {
  const m = line.match(/^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*Full_Composition_Exclusion\b/);
  if (!m) continue;
  const a = parseInt(m[1], 16);
  const b = m[2] ? parseInt(m[2], 16) : a;
  for (let cp = a; cp <= b; cp++) excluded.add(cp);
}
const compositions = [...decomposition.entries()]
  .filter(([cp, d]) => d.length === 2 && !excluded.has(cp))
  .map(([cp, [a, b]]) => [a, b, cp])
  .sort((x, y) => x[0] - y[0] || x[1] - y[1]);

// Two-stage table: 256-code-point blocks, identical blocks shared.
const blockIndex = [];
const blocks = [];
const seen = new Map();
for (let b = 0; b < MAX / 256; b++) {
  const block = props.subarray(b * 256, b * 256 + 256);
  const key = Buffer.from(block).toString('base64');
  if (!seen.has(key)) { seen.set(key, blocks.length); blocks.push(Array.from(block)); }
  blockIndex.push(seen.get(key));
}

const wrap = (items, perLine) => {
  const lines = [];
  for (let i = 0; i < items.length; i += perLine) lines.push('    ' + items.slice(i, i + perLine).join(', ') + ',');
  return lines.join('\n');
};
const mappingTable = (name, map, mapped) => {
  const keys = [...map.keys()].sort((a, b) => a - b);
  const pool = [];
  const entries = keys.map((cp) => {
    const seq = mapped(cp);
    const entry = `{0x${cp.toString(16)}, ${pool.length}, ${seq.length}}`;
    pool.push(...seq.map((c) => `0x${c.toString(16)}`));
    return entry;
  });
  return `const MappingEntry k${name}[] = {\n${wrap(entries, 6)}\n};\n` +
    `const char32_t k${name}Pool[] = {\n${wrap(pool, 10)}\n};\n` +
    `const std::size_t k${name}Count = ${entries.length};\n`;
};
const cccKeys = [...ccc.keys()].sort((a, b) => a - b);

const text = `// GENERATED by scripts/gen-unicode-tables.mjs from Debian's unicode-data
// (Unicode ${version}). Do not edit by hand: rerun the script instead.
// What: general category + White_Space per code point, canonical combining
// classes, full canonical and compatibility decompositions, primary
// composites, lowercase mappings, Grapheme_Cluster_Break | Extended_Pictographic ranges.
#include "tokenizer/unicode_tables.h"

namespace attnplay::unicode::tables {

const char* const kUnicodeVersion = "${version}";

const std::uint16_t kBlockIndex[${blockIndex.length}] = {
${wrap(blockIndex, 16)}
};

const std::uint8_t kBlocks[${blocks.length}][256] = {
${blocks.map((b) => '  {\n' + wrap(b, 32) + '\n  },').join('\n')}
};

const CombiningClassEntry kCombiningClasses[] = {
${wrap(cccKeys.map((cp) => `{0x${cp.toString(16)}, ${ccc.get(cp)}}`), 8)}
};
const std::size_t kCombiningClassCount = ${cccKeys.length};

${mappingTable('Decompositions', decomposition, expand)}
${mappingTable('CompatibilityDecompositions', compatOnly, (cp) => compatOnly.get(cp))}
const CompositionEntry kCompositions[] = {
${wrap(compositions.map(([a, b, c]) => `{0x${a.toString(16)}, 0x${b.toString(16)}, 0x${c.toString(16)}}`), 5)}
};
const std::size_t kCompositionCount = ${compositions.length};

${mappingTable('Lowercase', lower, (cp) => lower.get(cp))}
const GraphemeRange kGraphemeRanges[] = {
${wrap(graphemeRanges.map(([a, b, v]) => `{0x${a.toString(16)}, 0x${b.toString(16)}, ${v}}`), 5)}
};
const std::size_t kGraphemeRangeCount = ${graphemeRanges.length};

}  // namespace attnplay::unicode::tables
`;
writeFileSync(out, text);
console.log(`wrote ${out}: Unicode ${version}, ${blocks.length} distinct blocks, ${decomposition.size} decompositions, ${compatOnly.size} compatibility decompositions, ${compositions.length} compositions, ${lower.size} lowercase mappings, ${graphemeRanges.length} grapheme break ranges`);
