// The precompiled charsmap (Darts-clone's double array, read in place) and
// SentencePiece's normalization loop.
#include "tokenizer/sentencepiece_normalizer.h"

#include <stdexcept>

#include "tokenizer/unicode.h"

namespace attnplay {
namespace {

[[noreturn]] void bad_charsmap(const std::string& message) {
  throw std::invalid_argument("SentencePiece normalizer_spec.precompiled_charsmap: " + message);
}

// A Darts-clone unit: label in the low byte, a leaf flag, an offset to the
// children, or a value (for the unit under a leaf).
bool has_leaf(std::uint32_t unit) { return ((unit >> 8) & 1) != 0; }
std::uint32_t value_of(std::uint32_t unit) { return unit & ((1u << 31) - 1); }
std::uint32_t label_of(std::uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
std::uint32_t offset_of(std::uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

constexpr char32_t kSpaceSymbol = U'\u2581';

}  // namespace

PrecompiledCharsmap::PrecompiledCharsmap(std::string_view blob) {
  if (blob.size() <= 4) bad_charsmap("shorter than its header (" + std::to_string(blob.size()) + " bytes)");
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const std::uint32_t trie_bytes = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
  if (trie_bytes % 4 != 0 || trie_bytes == 0) bad_charsmap("trie size " + std::to_string(trie_bytes) + " is not a positive multiple of 4");
  if (trie_bytes >= blob.size() - 4) {
    bad_charsmap("trie size " + std::to_string(trie_bytes) + " leaves no room for the replacements in " +
                 std::to_string(blob.size()) + " bytes");
  }
  units_.resize(trie_bytes / 4);
  for (std::size_t i = 0; i < units_.size(); ++i) {
    const unsigned char* u = p + 4 + 4 * i;
    units_[i] = u[0] | (u[1] << 8) | (u[2] << 16) | (static_cast<std::uint32_t>(u[3]) << 24);
  }
  replacements_ = std::string(blob.substr(4 + trie_bytes));
  if (replacements_.back() != '\0') bad_charsmap("the replacements do not end with a NUL");
}

std::pair<std::size_t, std::string_view> PrecompiledCharsmap::longest_prefix(std::string_view text) const {
  return prefix_match(text, false);
}

std::pair<std::size_t, std::string_view> PrecompiledCharsmap::shortest_prefix(std::string_view text) const {
  return prefix_match(text, true);
}

std::pair<std::size_t, std::string_view> PrecompiledCharsmap::prefix_match(std::string_view text, bool shortest) const {
  // Darts-clone's commonPrefixSearch, keeping the longest match (or stopping at the first).
  std::size_t longest = 0;
  std::uint32_t value = 0;
  std::size_t node = offset_of(units_[0]);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    node ^= byte;
    if (node >= units_.size()) break;  // outside the array: no such key (a malformed trie)
    const std::uint32_t unit = units_[node];
    if (label_of(unit) != byte) break;
    node ^= offset_of(unit);
    if (node >= units_.size()) break;
    if (has_leaf(unit)) {
      longest = i + 1;
      value = value_of(units_[node]);
      if (shortest) break;
    }
  }
  if (longest == 0) return {0, {}};
  if (value >= replacements_.size()) {
    throw std::invalid_argument("SentencePiece normalizer_spec.precompiled_charsmap: a rule points at byte " +
                                std::to_string(value) + " of " + std::to_string(replacements_.size()) +
                                " bytes of replacements");
  }
  const std::string_view rest = std::string_view(replacements_).substr(value);
  return {longest, rest.substr(0, rest.find('\0'))};
}

NormalizedText normalize_sentencepiece(const SentencePieceNormalization& spec, const NormalizedText& text) {
  // The bytes SentencePiece sees and the original range of each: a valid
  // character's bytes share its range; an invalid sequence is one byte
  // (0xFF, never valid UTF-8) per original byte.
  std::string bytes;
  std::vector<std::uint32_t> byte_begin, byte_end;
  for (std::size_t i = 0; i < text.chars.size(); ++i) {
    const std::size_t mark = bytes.size();
    if (text.chars[i] == kInvalidUtf8) {
      for (std::uint32_t b = text.begin[i]; b < text.end[i]; ++b) {
        bytes += '\xFF';
        byte_begin.push_back(b);
        byte_end.push_back(b + 1);
      }
      continue;
    }
    unicode::append_utf8(bytes, text.chars[i]);
    for (std::size_t k = mark; k < bytes.size(); ++k) {
      byte_begin.push_back(text.begin[i]);
      byte_end.push_back(text.end[i]);
    }
  }
  const std::string_view all(bytes);
  const auto* base = reinterpret_cast<const unsigned char*>(bytes.data());
  // SentencePiece's NormalizePrefix: (bytes consumed, replacement).
  auto prefix = [&](std::size_t at) -> std::pair<std::size_t, std::string_view> {
    if (const std::size_t n = spec.user_defined.longest_prefix(all.substr(at))) return {n, all.substr(at, n)};
    if (spec.charsmap) {
      const auto rule = spec.charsmap->longest_prefix(all.substr(at));
      if (rule.first > 0) return rule;
    }
    const unicode::Decoded d = unicode::decode_utf8(base + at, base + bytes.size());
    if (!d.valid) return {1, "\xEF\xBF\xBD"};  // one byte at a time, as SentencePiece
    return {d.length, all.substr(at, d.length)};
  };

  NormalizedText out;
  std::size_t pos = 0;
  if (spec.remove_extra_whitespaces) {
    while (pos < bytes.size()) {
      const auto [length, replacement] = prefix(pos);
      if (replacement != " ") break;
      pos += length;
    }
  }
  if (pos == bytes.size()) return out;
  const char32_t space = spec.escape_whitespaces ? kSpaceSymbol : U' ';
  if (spec.add_dummy_prefix) out.push(space, byte_begin[pos], byte_begin[pos]);  // not in the text: empty
  bool previous_space = spec.remove_extra_whitespaces;
  while (pos < bytes.size()) {
    const auto [length, replacement] = prefix(pos);
    std::string_view piece = replacement;
    if (previous_space) {
      while (!piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
    }
    if (!piece.empty()) {
      if (!unicode::is_valid_utf8(piece)) {
        throw std::invalid_argument(
            "SentencePiece normalizer_spec.precompiled_charsmap: a replacement is not valid UTF-8");
      }
      const std::uint32_t b = byte_begin[pos], e = byte_end[pos + length - 1];
      const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
      for (const auto* end = p + piece.size(); p < end;) {
        const unicode::Decoded d = unicode::decode_utf8(p, end);
        out.push(d.code_point == U' ' ? space : d.code_point, b, e);
        p += d.length;
      }
      previous_space = piece.back() == ' ';
    } else if (!out.chars.empty()) {
      out.end.back() = byte_end[pos + length - 1];  // deleted: part of the character before, as in sentencepiece
    }
    pos += length;
    if (!spec.remove_extra_whitespaces) previous_space = false;
  }
  if (spec.remove_extra_whitespaces) {
    while (!out.chars.empty() && out.chars.back() == space) {
      out.chars.pop_back();
      out.begin.pop_back();
      out.end.pop_back();
    }
  }
  return out;
}

}  // namespace attnplay
