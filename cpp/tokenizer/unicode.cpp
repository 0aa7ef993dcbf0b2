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

}  // namespace attnplay::unicode
