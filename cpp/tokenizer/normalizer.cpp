// Normalizers over aligned text; each stage maps every output character to
// the original range of the character(s) that produced it. Also their
// tokenizer.json reading and writing.
#include "tokenizer/normalizer.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/json_util.h"
#include "tokenizer/sentencepiece_normalizer.h"
#include "tokenizer/unicode.h"

namespace attnplay {
namespace {

bool is_bert_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r' || c == kInvalidUtf8) return false;
  return unicode::is_other(c);
}

bool is_bert_whitespace(char32_t c) { return c == '\t' || c == '\n' || c == '\r' || unicode::is_white_space(c); }

NormalizedText clean(const NormalizedText& in) {
  NormalizedText out;
  for (std::size_t i = 0; i < in.chars.size(); ++i) {
    const char32_t c = in.chars[i];
    if (c == 0 || c == 0xFFFD || is_bert_control(c)) continue;
    out.push(is_bert_whitespace(c) ? U' ' : c, in.begin[i], in.end[i]);
  }
  return out;
}

NormalizedText pad_chinese(const NormalizedText& in) {
  NormalizedText out;
  for (std::size_t i = 0; i < in.chars.size(); ++i) {
    const char32_t c = in.chars[i];
    if (is_chinese_char(c)) {
      out.push(U' ', in.begin[i], in.end[i]);
      out.push(c, in.begin[i], in.end[i]);
      out.push(U' ', in.begin[i], in.end[i]);
    } else {
      out.push(c, in.begin[i], in.end[i]);
    }
  }
  return out;
}

// NFD or NFKD: full decomposition, then canonical ordering of each run of
// non-starters (stable sort by combining class).
NormalizedText decompose(const NormalizedText& in, bool compatibility) {
  NormalizedText nfd;
  std::u32string parts;
  for (std::size_t i = 0; i < in.chars.size(); ++i) {
    const char32_t c = in.chars[i];
    if (c < 0xA0) {  // no decomposition below U+00A0
      nfd.push(c, in.begin[i], in.end[i]);
      continue;
    }
    parts.clear();
    if (c == kInvalidUtf8) {
      parts += kInvalidUtf8;
    } else if (compatibility) {
      unicode::append_compatibility_decomposition(c, parts);
    } else {
      unicode::append_canonical_decomposition(c, parts);
    }
    for (char32_t p : parts) nfd.push(p, in.begin[i], in.end[i]);
  }
  std::size_t i = 0;
  const std::size_t n = nfd.chars.size();
  std::vector<std::size_t> order;
  while (i < n) {
    if (nfd.chars[i] < 0x300 || unicode::combining_class(nfd.chars[i]) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < n && unicode::combining_class(nfd.chars[j]) != 0) ++j;
    if (j - i > 1) {
      order.resize(j - i);
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = i + k;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return unicode::combining_class(nfd.chars[a]) < unicode::combining_class(nfd.chars[b]);
      });
      NormalizedText run;
      for (std::size_t k : order) run.push(nfd.chars[k], nfd.begin[k], nfd.end[k]);
      std::copy(run.chars.begin(), run.chars.end(), nfd.chars.begin() + static_cast<std::ptrdiff_t>(i));
      std::copy(run.begin.begin(), run.begin.end(), nfd.begin.begin() + static_cast<std::ptrdiff_t>(i));
      std::copy(run.end.begin(), run.end.end(), nfd.end.begin() + static_cast<std::ptrdiff_t>(i));
    }
    i = j;
  }
  return nfd;
}

// Canonical composition (UAX #15) of decomposed text: a character joins the
// last starter when nothing between them blocks it.
NormalizedText compose(const NormalizedText& in) {
  NormalizedText out;
  std::size_t starter = SIZE_MAX;  // index in out of the last starter
  int last_class = -1;             // combining class of the last character appended after it (-1: none)
  for (std::size_t i = 0; i < in.chars.size(); ++i) {
    const char32_t c = in.chars[i];
    const int cc = c < 0x300 || c == kInvalidUtf8 ? 0 : unicode::combining_class(c);
    if (starter != SIZE_MAX && c != kInvalidUtf8 && last_class < cc) {
      if (const char32_t composite = unicode::compose(out.chars[starter], c)) {
        out.chars[starter] = composite;  // keeps the starter's original range, as Hugging Face
        continue;
      }
    }
    out.push(c, in.begin[i], in.end[i]);
    if (cc == 0) {
      starter = out.chars.size() - 1;
      last_class = -1;
    } else {
      last_class = cc;
    }
  }
  return out;
}

// NFD followed by removal of non-spacing marks (Mn).
NormalizedText strip_accents(const NormalizedText& in) {
  const NormalizedText nfd = decompose(in, false);
  NormalizedText out;
  for (std::size_t k = 0; k < nfd.chars.size(); ++k) {
    if (!unicode::is_nonspacing_mark(nfd.chars[k])) out.push(nfd.chars[k], nfd.begin[k], nfd.end[k]);
  }
  return out;
}

NormalizedText lowercase(const NormalizedText& in) {
  NormalizedText out;
  std::u32string parts;
  for (std::size_t i = 0; i < in.chars.size(); ++i) {
    parts.clear();
    unicode::append_lowercase(in.chars[i], parts);
    for (char32_t p : parts) out.push(p, in.begin[i], in.end[i]);
  }
  return out;
}

// Rust's char::is_whitespace is White_Space.
NormalizedText strip(const NormalizedText& in, bool left, bool right) {
  std::size_t b = 0, e = in.chars.size();
  auto space = [&](std::size_t i) { return in.chars[i] != kInvalidUtf8 && unicode::is_white_space(in.chars[i]); };
  if (left) {
    while (b < e && space(b)) ++b;
  }
  if (right) {
    while (e > b && space(e - 1)) --e;
  }
  NormalizedText out;
  for (std::size_t i = b; i < e; ++i) out.push(in.chars[i], in.begin[i], in.end[i]);
  return out;
}

NormalizedText prepend(const NormalizedText& in, const std::u32string& content) {
  if (in.chars.empty()) return in;
  NormalizedText out;
  for (char32_t c : content) out.push(c, in.begin[0], in.end[0]);  // the first character's range, as Hugging Face
  for (std::size_t i = 0; i < in.chars.size(); ++i) out.push(in.chars[i], in.begin[i], in.end[i]);
  return out;
}

// Non-overlapping occurrences of pattern, left to right, each replaced by
// content whose characters cover the matched characters' original range.
NormalizedText replace(const NormalizedText& in, const std::u32string& pattern, const std::u32string& content) {
  if (pattern.empty()) return in;
  NormalizedText out;
  std::size_t i = 0;
  const std::size_t n = in.chars.size();
  while (i < n) {
    if (in.chars.compare(i, pattern.size(), pattern) == 0) {
      const std::uint32_t b = in.begin[i];
      const std::uint32_t e = in.end[i + pattern.size() - 1];
      for (char32_t c : content) out.push(c, b, e);
      i += pattern.size();
    } else {
      out.push(in.chars[i], in.begin[i], in.end[i]);
      ++i;
    }
  }
  return out;
}

std::u32string to_u32(const std::string& s) { return NormalizedText::from_utf8(s).chars; }

// Hugging Face's Precompiled normalizer: each extended grapheme cluster of
// under 6 bytes is replaced whole when a rule matches a prefix of it (the
// shortest rule: its replacement stands for the whole cluster), else each
// character by the rule matching a prefix of it, or kept. The alignment is
// NormalizedString::transform's over the (char, change) list Hugging Face
// builds: a replacement's characters replace the original ones in order
// (change 0); when it is longer, its last extra characters are insertions
// (change 1: the range of the character before); when shorter, its last
// character removes the rest (change -n; a deletion makes the character
// before it remove the deleted one, and at the very start nothing records
// it, as in Hugging Face); a kept character is change 0.
NormalizedText precompiled(const NormalizedText& in, const PrecompiledCharsmap& charsmap) {
  std::vector<std::pair<char32_t, long>> changes;  // (character, change), as Hugging Face's transformations
  const auto replace = [&changes](std::string_view replacement, std::size_t old_count) {
    const std::u32string chars = to_u32(std::string(replacement));
    for (const char32_t c : chars) changes.emplace_back(c, 0);
    const long diff = static_cast<long>(chars.size()) - static_cast<long>(old_count);
    if (diff > 0) {  // the last `diff` characters are insertions
      for (std::size_t k = changes.size() - static_cast<std::size_t>(diff); k < changes.size(); ++k) changes[k].second = 1;
    } else if (diff < 0 && !changes.empty()) {  // the last character removes the rest (the one before, for a deletion)
      changes.back().second += diff;
    }
  };
  std::string chunk;
  const auto utf8_of = [&in, &chunk](std::size_t first, std::size_t last) {
    chunk.clear();
    for (std::size_t i = first; i < last; ++i) unicode::append_utf8(chunk, in.chars[i] == kInvalidUtf8 ? U'\uFFFD' : in.chars[i]);
    return std::string_view(chunk);
  };
  for (std::size_t start = 0; start < in.chars.size();) {
    const std::size_t end = unicode::grapheme_end(in.chars, start);
    if (const std::string_view cluster = utf8_of(start, end); cluster.size() < 6) {
      if (const auto [length, replacement] = charsmap.shortest_prefix(cluster); length > 0) {
        replace(replacement, end - start);
        start = end;
        continue;
      }
      if (end - start == 1) {  // one character without a rule: the lookup per character would be this one again
        changes.emplace_back(in.chars[start], 0);
        start = end;
        continue;
      }
    }
    for (std::size_t i = start; i < end; ++i) {
      if (const auto [length, replacement] = charsmap.shortest_prefix(utf8_of(i, i + 1)); length > 0) {
        replace(replacement, 1);
      } else {
        changes.emplace_back(in.chars[i], 0);
      }
    }
    start = end;
  }
  // NormalizedString::transform: change <= 0 takes the next original character's range (and skips
  // -change more); change > 0 is an insertion with the range of the character before.
  NormalizedText out;
  std::size_t next = 0;  // the next original character
  for (const auto& [c, change] : changes) {
    if (change > 0) {
      out.push(c, next > 0 ? in.begin[next - 1] : 0, next > 0 ? in.end[next - 1] : 0);
    } else if (next < in.chars.size()) {
      out.push(c, in.begin[next], in.end[next]);
      next = std::min(in.chars.size(), next + 1 + static_cast<std::size_t>(-change));
    } else {  // nothing left to replace (Hugging Face would not get here): the last range
      out.push(c, in.begin.back(), in.end.back());
    }
  }
  return out;
}

std::string to_utf8(const std::u32string& s) {
  std::string out;
  for (char32_t c : s) unicode::append_utf8(out, c);
  return out;
}

}  // namespace

NormalizedText normalize(const Normalizer& n, NormalizedText text) {
  switch (n.kind) {
    case Normalizer::Kind::Bert:
      return bert_normalize(std::move(text), n.bert);
    case Normalizer::Kind::NFC:
      return compose(decompose(text, false));
    case Normalizer::Kind::NFD:
      return decompose(text, false);
    case Normalizer::Kind::NFKC:
      return compose(decompose(text, true));
    case Normalizer::Kind::NFKD:
      return decompose(text, true);
    case Normalizer::Kind::Lowercase:
      return lowercase(text);
    case Normalizer::Kind::Strip:
      return strip(text, n.strip_left, n.strip_right);
    case Normalizer::Kind::Prepend:
      return prepend(text, n.content);
    case Normalizer::Kind::Replace:
      return replace(text, n.pattern, n.content);
    case Normalizer::Kind::Precompiled:
      return precompiled(text, *n.charsmap);
    case Normalizer::Kind::Sequence:
      for (const Normalizer& step : n.sequence) text = normalize(step, std::move(text));
      return text;
    case Normalizer::Kind::SentencePiece:
      return normalize_sentencepiece(*n.sentencepiece, text);
  }
  return text;
}

// Size-optimised ([[clang::minsize]]): JSON is read and written once per load or
// save, and this source's encode path stays -O3; the core WASM has a 400 KB budget.
[[clang::minsize]] Normalizer Normalizer::from_json(const nlohmann::json& j) {
  using detail::fail;
  using detail::get_or;
  const std::string type = detail::type_of(j, "normalizer");
  Normalizer n;
  if (type == "BertNormalizer") {
    n.kind = Kind::Bert;
    n.bert.clean_text = get_or<bool>(j, "clean_text", true);
    n.bert.handle_chinese_chars = get_or<bool>(j, "handle_chinese_chars", true);
    if (j.contains("strip_accents") && !j["strip_accents"].is_null()) n.bert.strip_accents = j["strip_accents"].get<bool>();
    n.bert.lowercase = get_or<bool>(j, "lowercase", true);
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD" || type == "Lowercase") {
    n.kind = type == "NFC" ? Kind::NFC : type == "NFD" ? Kind::NFD : type == "NFKC" ? Kind::NFKC
           : type == "NFKD" ? Kind::NFKD : Kind::Lowercase;
  } else if (type == "Strip") {
    n.kind = Kind::Strip;
    n.strip_left = get_or<bool>(j, "strip_left", true);
    n.strip_right = get_or<bool>(j, "strip_right", true);
  } else if (type == "Prepend") {
    n.kind = Kind::Prepend;
    if (!j.contains("prepend") || !j["prepend"].is_string()) fail("normalizer", "Prepend needs a \"prepend\" string");
    n.content = to_u32(j["prepend"].get<std::string>());
  } else if (type == "Replace") {
    n.kind = Kind::Replace;
    const nlohmann::json& pattern = j.contains("pattern") ? j["pattern"] : nlohmann::json();
    if (!pattern.is_object() || !pattern.contains("String") || !pattern["String"].is_string()) {
      fail("normalizer", "Replace is supported with a {\"String\": ...} pattern only, not " + json_text::write(pattern));
    }
    if (!j.contains("content") || !j["content"].is_string()) fail("normalizer", "Replace needs a \"content\" string");
    n.pattern = to_u32(pattern["String"].get<std::string>());
    n.content = to_u32(j["content"].get<std::string>());
  } else if (type == "Precompiled") {
    n.kind = Kind::Precompiled;
    const nlohmann::json& blob = detail::member_or_null(j, "precompiled_charsmap");
    if (!blob.is_string()) fail("normalizer", "Precompiled needs a \"precompiled_charsmap\" string (base64)");
    std::optional<std::string> bytes = json_text::base64_decode(blob.get<std::string>());
    if (!bytes) fail("normalizer", "Precompiled's precompiled_charsmap is not base64");
    n.charsmap_blob = std::move(*bytes);
    try {
      n.charsmap = std::make_shared<const PrecompiledCharsmap>(n.charsmap_blob);
    } catch (const std::invalid_argument& e) {
      fail("normalizer", std::string("Precompiled: ") + e.what());
    }
  } else if (type == "Sequence") {
    n.kind = Kind::Sequence;
    if (!j.contains("normalizers") || !j["normalizers"].is_array()) fail("normalizer", "Sequence needs a \"normalizers\" array");
    for (const nlohmann::json& step : j["normalizers"]) n.sequence.push_back(from_json(step));
  } else {
    fail("normalizer", "type \"" + type +
                           "\" is not supported (BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, Strip, Prepend, "
                           "Replace, Precompiled, Sequence or null)");
  }
  return n;
}

// Size-optimised, as from_json above.
[[clang::minsize]] nlohmann::ordered_json Normalizer::to_json() const {
  using ojson = nlohmann::ordered_json;
  switch (kind) {
    case Kind::Bert:
      return {{"type", "BertNormalizer"},
              {"clean_text", bert.clean_text},
              {"handle_chinese_chars", bert.handle_chinese_chars},
              {"strip_accents", bert.strip_accents ? ojson(*bert.strip_accents) : ojson(nullptr)},
              {"lowercase", bert.lowercase}};
    case Kind::NFC:
      return {{"type", "NFC"}};
    case Kind::NFD:
      return {{"type", "NFD"}};
    case Kind::NFKC:
      return {{"type", "NFKC"}};
    case Kind::NFKD:
      return {{"type", "NFKD"}};
    case Kind::Lowercase:
      return {{"type", "Lowercase"}};
    case Kind::Strip:
      return {{"type", "Strip"}, {"strip_left", strip_left}, {"strip_right", strip_right}};
    case Kind::Prepend:
      return {{"type", "Prepend"}, {"prepend", to_utf8(content)}};
    case Kind::Replace:
      return {{"type", "Replace"}, {"pattern", {{"String", to_utf8(pattern)}}}, {"content", to_utf8(content)}};
    case Kind::Precompiled:
      return {{"type", "Precompiled"}, {"precompiled_charsmap", json_text::base64_encode(charsmap_blob)}};
    case Kind::Sequence: {
      ojson steps = ojson::array();
      for (const Normalizer& step : sequence) steps.push_back(step.to_json());
      return {{"type", "Sequence"}, {"normalizers", steps}};
    }
    case Kind::SentencePiece:
      throw std::invalid_argument(
          "a SentencePiece model's normalizer has no tokenizer.json form (SentencePiece's own whitespace rules)");
  }
  return nullptr;
}

NormalizedText NormalizedText::from_utf8(std::string_view text) {
  NormalizedText out;
  out.chars.reserve(text.size());
  out.begin.reserve(text.size());
  out.end.reserve(text.size());
  const auto* base = reinterpret_cast<const unsigned char*>(text.data());
  const auto* p = base;
  const auto* end = base + text.size();
  while (p < end) {
    const unicode::Decoded d = unicode::decode_utf8(p, end);
    const auto b = static_cast<std::uint32_t>(p - base);
    out.push(d.valid ? d.code_point : kInvalidUtf8, b, b + d.length);
    p += d.length;
  }
  return out;
}

bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

NormalizedText bert_normalize(NormalizedText text, const BertNormalizerOptions& options) {
  if (options.clean_text) text = clean(text);
  if (options.handle_chinese_chars) text = pad_chinese(text);
  if (options.strip_accents.value_or(options.lowercase)) text = strip_accents(text);
  if (options.lowercase) text = lowercase(text);
  return text;
}

}  // namespace attnplay
