// BertNormalizer over aligned text; each stage maps every output character to
// the original range of the character that produced it.
#include "tokenizer/normalizer.h"

#include <algorithm>

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

// NFD (full canonical decomposition, then canonical ordering of each run of
// non-starters), followed by removal of non-spacing marks (Mn).
NormalizedText strip_accents(const NormalizedText& in) {
  NormalizedText nfd;
  std::u32string parts;
  for (std::size_t i = 0; i < in.chars.size(); ++i) {
    parts.clear();
    if (in.chars[i] == kInvalidUtf8) {
      parts += kInvalidUtf8;
    } else {
      unicode::append_canonical_decomposition(in.chars[i], parts);
    }
    for (char32_t p : parts) nfd.push(p, in.begin[i], in.end[i]);
  }
  // Canonical ordering: stable sort by combining class within runs of class > 0.
  std::size_t i = 0;
  const std::size_t n = nfd.chars.size();
  std::vector<std::size_t> order;
  while (i < n) {
    if (unicode::combining_class(nfd.chars[i]) == 0) {
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
  NormalizedText out;
  for (std::size_t k = 0; k < n; ++k) {
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

}  // namespace

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
