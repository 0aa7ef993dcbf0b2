// SentencePiece's normalizer, as its own library runs it (normalizer.cc of
// google/sentencepiece 0.1.97), with alignment to the original text: the
// precompiled charsmap (a Darts double-array trie of byte strings and a blob
// of NUL-terminated replacements; at each position a user-defined symbol is
// kept as it is, else the longest rule that matches wins, else the character
// is kept, an invalid UTF-8 byte becomes
// U+FFFD), then removal of leading, trailing and repeated spaces
// (remove_extra_whitespaces), the dummy "▁" in front (add_dummy_prefix), and
// spaces written as "▁" (escape_whitespaces). Each output character covers
// the original bytes of the rule that produced it, and those of the deleted
// characters and removed spaces after it up to the next output (as in
// sentencepiece's offsets, where tokens tile the text); the dummy prefix,
// which is not in the text, an empty range in front of the first character.
// Not here: reading the .model file (sentencepiece_model.h), the models.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/normalizer.h"
#include "tokenizer/prefix_matcher.h"

namespace attnplay {

class PrecompiledCharsmap {
 public:
  // normalizer_spec.precompiled_charsmap: a little-endian uint32 size of the
  // trie in bytes, the trie's 32-bit units, then the replacements. Throws
  // std::invalid_argument when the sizes or the replacements are malformed.
  explicit PrecompiledCharsmap(std::string_view blob);

  // The longest rule matching a prefix of text: its length in bytes (0: none)
  // and its replacement (possibly empty: a deletion).
  std::pair<std::size_t, std::string_view> longest_prefix(std::string_view text) const;
  // The shortest such rule, as Hugging Face's Precompiled normalizer reads the
  // charsmap (spm_precompiled's transform: the first common-prefix match).
  std::pair<std::size_t, std::string_view> shortest_prefix(std::string_view text) const;

 private:
  std::pair<std::size_t, std::string_view> prefix_match(std::string_view text, bool shortest) const;
  std::vector<std::uint32_t> units_;
  std::string replacements_;  // NUL-terminated strings, ends with a NUL
};

struct SentencePieceNormalization {
  std::optional<PrecompiledCharsmap> charsmap;  // none: identity (no rules)
  PrefixMatcher user_defined;                   // symbols passed through unchanged
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

// text: aligned text whose ranges are the original bytes (an invalid
// sequence's range gives its bytes, one U+FFFD each, as SentencePiece does).
NormalizedText normalize_sentencepiece(const SentencePieceNormalization& spec, const NormalizedText& text);

}  // namespace attnplay
