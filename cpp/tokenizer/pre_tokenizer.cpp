// GPT-2 pre-tokenization scanner and BertPreTokenizer.
#include "tokenizer/pre_tokenizer.h"

#include "tokenizer/unicode.h"

namespace attnplay {
namespace {

enum class CharClass : std::uint8_t { Letter, Number, Space, Other };

CharClass classify(char32_t cp, bool valid) {
  if (!valid) return CharClass::Other;
  const std::uint8_t props = unicode::properties(cp);
  if (props & 0x20) return CharClass::Space;
  const auto c = static_cast<unicode::Category>(props & 0x1F);
  if (c >= unicode::Category::Lu && c <= unicode::Category::Lo) return CharClass::Letter;
  if (c >= unicode::Category::Nd && c <= unicode::Category::No) return CharClass::Number;
  return CharClass::Other;
}

// Character classes of ASCII, precomputed from the tables.
struct AsciiClasses {
  CharClass cls[128];
  AsciiClasses() {
    for (char32_t c = 0; c < 128; ++c) cls[c] = classify(c, true);
  }
};

struct Scanner {
  const unsigned char* base;
  const unsigned char* end;
  const AsciiClasses& ascii;

  struct Char {
    CharClass cls;
    std::uint32_t length;
  };
  Char at(std::uint32_t pos) const {
    const unsigned char b = base[pos];
    if (b < 0x80) return {ascii.cls[b], 1};
    const unicode::Decoded d = unicode::decode_utf8(base + pos, end);
    return {classify(d.code_point, d.valid), d.length};
  }
  std::uint32_t size() const { return static_cast<std::uint32_t>(end - base); }
  // End of the run of characters of class cls starting at pos.
  std::uint32_t run(std::uint32_t pos, CharClass cls) const {
    const std::uint32_t n = size();
    while (pos < n) {
      const Char c = at(pos);
      if (c.cls != cls) break;
      pos += c.length;
    }
    return pos;
  }
};

// Length of a contraction ('s 't 'm 'd 're 've 'll) at pos, or 0.
std::uint32_t contraction(const unsigned char* p, std::uint32_t left) {
  if (left < 2 || p[0] != '\'') return 0;
  const unsigned char a = p[1];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (left < 3) return 0;
  const unsigned char b = p[2];
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

}  // namespace

void split_gpt2(std::string_view text, std::vector<Span>& out) {
  static const AsciiClasses ascii;
  const auto* base = reinterpret_cast<const unsigned char*>(text.data());
  const Scanner s{base, base + text.size(), ascii};
  const std::uint32_t n = s.size();
  std::uint32_t pos = 0;
  while (pos < n) {
    const std::uint32_t start = pos;
    if (const std::uint32_t len = contraction(base + pos, n - pos)) {
      out.push_back({start, start + len});
      pos += len;
      continue;
    }
    const Scanner::Char c = s.at(pos);
    // " ?X+" where the space is an optional prefix of a letter, number or other run.
    if (base[pos] == ' ' && pos + 1 < n) {
      const Scanner::Char next = s.at(pos + 1);
      if (next.cls != CharClass::Space) {
        pos = s.run(pos + 1, next.cls);
        out.push_back({start, pos});
        continue;
      }
    }
    if (c.cls != CharClass::Space) {
      pos = s.run(pos, c.cls);
      out.push_back({start, pos});
      continue;
    }
    // Whitespace: \s+(?!\S) keeps the last space for the next word, unless the
    // run ends the text; a single space before a non-space falls to \s+.
    std::uint32_t last = pos;
    std::uint32_t end = pos;
    while (end < n) {
      const Scanner::Char w = s.at(end);
      if (w.cls != CharClass::Space) break;
      last = end;
      end += w.length;
    }
    if (end == n || last == start) {
      pos = end;
    } else {
      pos = last;
    }
    out.push_back({start, pos});
  }
}

bool is_bert_punctuation(char32_t c) {
  if (c < 0x80) return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
  return c != kInvalidUtf8 && unicode::is_punctuation(c);
}

std::vector<Span> split_bert(const NormalizedText& text) {
  std::vector<Span> words;
  const auto n = static_cast<std::uint32_t>(text.chars.size());
  std::uint32_t i = 0;
  while (i < n) {
    const char32_t c = text.chars[i];
    if (c != kInvalidUtf8 && unicode::is_white_space(c)) {
      ++i;
      continue;
    }
    if (is_bert_punctuation(c)) {
      words.push_back({i, i + 1});
      ++i;
      continue;
    }
    std::uint32_t j = i + 1;
    while (j < n) {
      const char32_t d = text.chars[j];
      if ((d != kInvalidUtf8 && unicode::is_white_space(d)) || is_bert_punctuation(d)) break;
      ++j;
    }
    words.push_back({i, j});
    i = j;
  }
  return words;
}

}  // namespace attnplay
