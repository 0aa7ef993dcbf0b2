// Table lookups that need a search (combining classes, decompositions,
// compositions, lowercase), Hangul decomposition and composition, UTF-8 validation.
#include "tokenizer/unicode.h"

#include <algorithm>

namespace attnplay::unicode {
namespace {

template <class Entry>
const Entry* find_entry(const Entry* table, std::size_t count, char32_t cp) {
  const Entry* end = table + count;
  const Entry* it = std::lower_bound(table, end, cp, [](const Entry& e, char32_t c) { return e.code_point < c; });
  return it != end && it->code_point == cp ? it : nullptr;
}

// Hangul syllable constants (Unicode chapter 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = 19 * kNCount;

}  // namespace

std::uint8_t combining_class(char32_t cp) {
  if (cp < 0x300) return 0;
  const auto* e = find_entry(tables::kCombiningClasses, tables::kCombiningClassCount, cp);
  return e ? e->combining_class : 0;
}

void append_canonical_decomposition(char32_t cp, std::u32string& out) {
  if (cp < 0xC0) {
    out += cp;
    return;
  }
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t s = cp - kSBase;
    out += kLBase + s / kNCount;
    out += kVBase + (s % kNCount) / kTCount;
    if (s % kTCount != 0) out += kTBase + s % kTCount;
    return;
  }
  const auto* e = find_entry(tables::kDecompositions, tables::kDecompositionsCount, cp);
  if (!e) {
    out += cp;
    return;
  }
  out.append(tables::kDecompositionsPool + e->offset, e->length);
}

void append_compatibility_decomposition(char32_t cp, std::u32string& out) {
  if (cp >= 0xA0) {
    const auto* e = find_entry(tables::kCompatibilityDecompositions, tables::kCompatibilityDecompositionsCount, cp);
    if (e) {
      out.append(tables::kCompatibilityDecompositionsPool + e->offset, e->length);
      return;
    }
  }
  append_canonical_decomposition(cp, out);
}

char32_t compose(char32_t first, char32_t second) {
  constexpr char32_t kLCount = 19;
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount) {
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  }
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 && second > kTBase &&
      second < kTBase + kTCount) {
    return first + (second - kTBase);
  }
  const auto* end = tables::kCompositions + tables::kCompositionCount;
  const auto* it = std::lower_bound(tables::kCompositions, end, std::pair{first, second},
                                    [](const tables::CompositionEntry& e, const std::pair<char32_t, char32_t>& k) {
                                      return e.first != k.first ? e.first < k.first : e.second < k.second;
                                    });
  return it != end && it->first == first && it->second == second ? it->composite : 0;
}

void append_lowercase(char32_t cp, std::u32string& out) {
  if (cp < 0x80) {
    out += (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    return;
  }
  const auto* e = find_entry(tables::kLowercase, tables::kLowercaseCount, cp);
  if (!e) {
    out += cp;
    return;
  }
  out.append(tables::kLowercasePool + e->offset, e->length);
}

bool is_valid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const Decoded d = decode_utf8(p, end);
    if (!d.valid) return false;
    p += d.length;
  }
  return true;
}

namespace {

struct GraphemeProperty {
  GraphemeBreak value = GraphemeBreak::Other;
  bool pictographic = false;  // Extended_Pictographic
};

GraphemeProperty grapheme_property(char32_t cp) {
  const tables::GraphemeRange* end = tables::kGraphemeRanges + tables::kGraphemeRangeCount;
  const tables::GraphemeRange* it = std::upper_bound(tables::kGraphemeRanges, end, cp,
                                                     [](char32_t c, const tables::GraphemeRange& r) { return c < r.first; });
  if (it == tables::kGraphemeRanges || cp > (it - 1)->last) return {};
  const std::uint8_t value = (it - 1)->value;
  return {static_cast<GraphemeBreak>(value & 0x0F), (value & 0x10) != 0};
}

bool is_control_break(GraphemeBreak b) { return b == GraphemeBreak::CR || b == GraphemeBreak::LF || b == GraphemeBreak::Control; }

}  // namespace

std::size_t grapheme_end(std::u32string_view text, std::size_t start) {
  using B = GraphemeBreak;
  GraphemeProperty previous = grapheme_property(text[start]);
  bool after_pictographic = previous.pictographic;  // ExtPict Extend* just before
  bool after_pictographic_zwj = false;               // ExtPict Extend* ZWJ just before (GB11)
  int regional_run = previous.value == B::RegionalIndicator ? 1 : 0;  // RI just before (GB12, GB13)
  for (std::size_t i = start + 1; i < text.size(); ++i) {
    const GraphemeProperty current = grapheme_property(text[i]);
    const B p = previous.value, c = current.value;
    bool joined;
    if (p == B::CR && c == B::LF) joined = true;                                               // GB3
    else if (is_control_break(p) || is_control_break(c)) joined = false;                        // GB4, GB5
    else if (p == B::L && (c == B::L || c == B::V || c == B::LV || c == B::LVT)) joined = true;  // GB6
    else if ((p == B::LV || p == B::V) && (c == B::V || c == B::T)) joined = true;              // GB7
    else if ((p == B::LVT || p == B::T) && c == B::T) joined = true;                            // GB8
    else if (c == B::Extend || c == B::ZWJ || c == B::SpacingMark) joined = true;               // GB9, GB9a
    else if (p == B::Prepend) joined = true;                                                    // GB9b
    else if (after_pictographic_zwj && current.pictographic) joined = true;                     // GB11
    else if (c == B::RegionalIndicator && regional_run % 2 == 1) joined = true;                 // GB12, GB13
    else joined = false;                                                                        // GB999
    if (!joined) return i;
    after_pictographic_zwj = after_pictographic && c == B::ZWJ;
    after_pictographic = current.pictographic || (after_pictographic && c == B::Extend);
    regional_run = c == B::RegionalIndicator ? regional_run + 1 : 0;
    previous = current;
  }
  return text.size();
}

}  // namespace attnplay::unicode
