// Declarations of the generated Unicode tables (unicode_tables.cpp, made by
// scripts/gen-unicode-tables.mjs from Debian's unicode-data). Raw data only:
// the lookups that use them are in unicode.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnplay::unicode::tables {

struct CombiningClassEntry {
  char32_t code_point;
  std::uint8_t combining_class;
};

// code_point maps to pool[offset .. offset + length).
struct MappingEntry {
  char32_t code_point;
  std::uint32_t offset;
  std::uint32_t length;
};

// first + second compose canonically to composite (Hangul excluded: algorithmic).
struct CompositionEntry {
  char32_t first, second, composite;
};

// Code points first..last share `value`: their Grapheme_Cluster_Break (low 4
// bits, unicode.h's GraphemeBreak) and 0x10 when Extended_Pictographic.
struct GraphemeRange {
  char32_t first, last;
  std::uint8_t value;
};

extern const char* const kUnicodeVersion;
// props = kBlocks[kBlockIndex[cp >> 8]][cp & 0xFF]: low 5 bits the Category, bit 5 White_Space.
extern const std::uint16_t kBlockIndex[0x110000 >> 8];
extern const std::uint8_t kBlocks[][256];
extern const CombiningClassEntry kCombiningClasses[];  // sorted by code point, non-zero classes only
extern const std::size_t kCombiningClassCount;
extern const MappingEntry kDecompositions[];  // full canonical decompositions, sorted
extern const char32_t kDecompositionsPool[];
extern const std::size_t kDecompositionsCount;
extern const MappingEntry kCompatibilityDecompositions[];  // full NFKD where it differs from NFD, sorted
extern const char32_t kCompatibilityDecompositionsPool[];
extern const std::size_t kCompatibilityDecompositionsCount;
extern const CompositionEntry kCompositions[];  // primary composites, sorted by (first, second)
extern const std::size_t kCompositionCount;
extern const MappingEntry kLowercase[];  // lowercase mappings, sorted
extern const char32_t kLowercasePool[];
extern const std::size_t kLowercaseCount;
extern const GraphemeRange kGraphemeRanges[];  // sorted; code points in none are Other, not pictographic
extern const std::size_t kGraphemeRangeCount;

}  // namespace attnplay::unicode::tables
