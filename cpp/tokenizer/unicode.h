// Unicode lookups over the generated tables (general category, White_Space,
// combining class, canonical and compatibility decomposition, composition,
// lowercase, grapheme cluster boundaries) and UTF-8/UTF-16
// helpers. Invalid UTF-8 is decoded as "maximal subparts" (as TextDecoder
// does: each becomes one U+FFFD there), flagged so callers can keep the bytes.
// Not here: normalization or tokenization rules (normalizer.h, pre_tokenizer.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "tokenizer/unicode_tables.h"

namespace attnplay::unicode {

// General categories; the order matches scripts/gen-unicode-tables.mjs.
enum class Category : std::uint8_t {
  Cn, Lu, Ll, Lt, Lm, Lo, Mn, Mc, Me, Nd, Nl, No, Pc, Pd, Ps,
  Pe, Pi, Pf, Po, Sm, Sc, Sk, So, Zs, Zl, Zp, Cc, Cf, Cs, Co
};

inline std::uint8_t properties(char32_t cp) {
  if (cp >= 0x110000) return 0;
  return tables::kBlocks[tables::kBlockIndex[cp >> 8]][cp & 0xFF];
}
inline Category category(char32_t cp) { return static_cast<Category>(properties(cp) & 0x1F); }
inline bool is_white_space(char32_t cp) { return (properties(cp) & 0x20) != 0; }
inline bool is_letter(char32_t cp) {  // L*
  const Category c = category(cp);
  return c >= Category::Lu && c <= Category::Lo;
}
inline bool is_number(char32_t cp) {  // N*
  const Category c = category(cp);
  return c >= Category::Nd && c <= Category::No;
}
inline bool is_punctuation(char32_t cp) {  // P*
  const Category c = category(cp);
  return c >= Category::Pc && c <= Category::Po;
}
inline bool is_other(char32_t cp) {  // C*: Cc, Cf, Cs, Co and unassigned (Cn)
  const Category c = category(cp);
  return c == Category::Cn || c >= Category::Cc;
}
inline bool is_nonspacing_mark(char32_t cp) { return category(cp) == Category::Mn; }

std::uint8_t combining_class(char32_t cp);

// Appends the full canonical decomposition of cp (itself when it has none),
// Hangul syllables included; no reordering (see normalizer.cpp for NFD).
void append_canonical_decomposition(char32_t cp, std::u32string& out);

// Appends the full compatibility decomposition of cp (NFKD's, before
// reordering): its canonical one where the two agree.
void append_compatibility_decomposition(char32_t cp, std::u32string& out);

// The primary composite of first + second (Hangul included), or 0.
char32_t compose(char32_t first, char32_t second);

// Appends the lowercase mapping of cp (Rust's char::to_lowercase).
void append_lowercase(char32_t cp, std::u32string& out);

// Grapheme_Cluster_Break values; the order matches scripts/gen-unicode-tables.mjs.
enum class GraphemeBreak : std::uint8_t {
  Other, CR, LF, Control, Extend, ZWJ, RegionalIndicator, Prepend, SpacingMark, L, V, T, LV, LVT
};

// The end (one past the last character) of the extended grapheme cluster
// that starts at text[start] (UAX #29's rules GB3-GB13 of Unicode 15.0, as
// the unicode-segmentation crate Hugging Face tokenizers uses; start < size).
std::size_t grapheme_end(std::u32string_view text, std::size_t start);

struct Decoded {
  char32_t code_point;   // U+FFFD when !valid
  std::uint32_t length;  // bytes consumed, >= 1
  bool valid;
};

// Decodes one character at p (p < end). An invalid sequence consumes its
// maximal subpart (at least one byte) and comes back with valid == false.
inline Decoded decode_utf8(const unsigned char* p, const unsigned char* end) {
  const unsigned char b0 = p[0];
  if (b0 < 0x80) return {b0, 1, true};
  int need;
  char32_t cp;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return {0xFFFD, 1, false};
  }
  std::uint32_t i = 1;
  for (; i <= static_cast<std::uint32_t>(need); ++i) {
    if (p + i >= end) return {0xFFFD, i, false};
    const unsigned char b = p[i];
    if (b < lo || b > hi) return {0xFFFD, i, false};
    lo = 0x80;
    hi = 0xBF;
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, i, true};
}

inline void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

inline std::uint32_t utf16_length(char32_t cp) { return cp >= 0x10000 ? 2 : 1; }

// Whether text is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

}  // namespace attnplay::unicode
