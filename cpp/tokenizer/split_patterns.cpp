// Scanners of cl100k (Llama 3), Qwen2 and o200k pre-tokenization patterns;
// GPT-2's is split_gpt2 (pre_tokenizer.cpp). Each scanner follows the
// pattern's alternatives in order, as a backtracking regex engine would, at
// each position: the first alternative that matches wins.
#include "tokenizer/split_patterns.h"

#include "tokenizer/unicode.h"

namespace attnplay {
namespace {

using unicode::Category;

constexpr std::string_view kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kCl100k =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kO200k =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// One character: its length and the classes the patterns test.
struct Char {
  std::uint32_t length = 0;
  char32_t cp = 0;
  bool space = false;   // \s
  bool letter = false;  // \p{L}
  bool number = false;  // \p{N}
  bool upper = false;   // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
  bool lower = false;   // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
  bool newline() const { return cp == '\r' || cp == '\n'; }
  bool other() const { return !space && !letter && !number; }  // [^\s\p{L}\p{N}]
};

class Text {
 public:
  explicit Text(std::string_view text)
      : base_(reinterpret_cast<const unsigned char*>(text.data())), n_(static_cast<std::uint32_t>(text.size())) {}
  std::uint32_t size() const { return n_; }
  Char at(std::uint32_t pos) const {
    const unicode::Decoded d = unicode::decode_utf8(base_ + pos, base_ + n_);
    Char c;
    c.length = d.length;
    if (!d.valid) return c;  // "other"
    c.cp = d.code_point;
    const std::uint8_t props = unicode::properties(d.code_point);
    c.space = (props & 0x20) != 0;
    const auto cat = static_cast<Category>(props & 0x1F);
    c.letter = cat >= Category::Lu && cat <= Category::Lo;
    c.number = cat >= Category::Nd && cat <= Category::No;
    const bool mark = cat >= Category::Mn && cat <= Category::Me;
    const bool both = cat == Category::Lm || cat == Category::Lo || mark;
    c.upper = both || cat == Category::Lu || cat == Category::Lt;
    c.lower = both || cat == Category::Ll;
    return c;
  }
  // End of the run of characters satisfying pred from pos.
  template <class Pred>
  std::uint32_t run(std::uint32_t pos, Pred pred) const {
    while (pos < n_) {
      const Char c = at(pos);
      if (!pred(c)) break;
      pos += c.length;
    }
    return pos;
  }
  // Length of a contraction ('s 't 're 've 'm 'll 'd; ASCII case-insensitive) at pos, or 0.
  std::uint32_t contraction(std::uint32_t pos) const {
    if (pos + 2 > n_ || base_[pos] != '\'') return 0;
    const auto low = [&](std::uint32_t i) { return static_cast<unsigned char>(base_[i] | 0x20); };
    const unsigned char a = low(pos + 1);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (pos + 3 > n_) return 0;
    const unsigned char b = low(pos + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
  }

 private:
  const unsigned char* base_;
  std::uint32_t n_;
};

// The whitespace alternatives shared by cl100k, Qwen2 and o200k at a
// whitespace character: \s*[\r\n]+ | \s+(?!\S) | \s+ . Returns the end.
std::uint32_t match_space(const Text& t, std::uint32_t pos) {
  std::uint32_t end = pos, last_newline_end = 0, last_start = pos;
  while (end < t.size()) {
    const Char c = t.at(end);
    if (!c.space) break;
    last_start = end;
    end += c.length;
    if (c.newline()) last_newline_end = end;
  }
  if (last_newline_end) return last_newline_end;   // \s*[\r\n]+ backtracks to the last newline
  if (end == t.size() || last_start == pos) return end;  // \s+(?!\S) at the end, or \s+
  return last_start;                                // \s+(?!\S) leaves the last space
}

// " ?[^\s\p{L}\p{N}]+[\r\n]*" (with '/' among the trailing characters for
// o200k) at pos, or 0 when it does not match.
std::uint32_t match_other(const Text& t, std::uint32_t pos, const Char& c, bool slash) {
  std::uint32_t start = pos;
  if (c.cp == ' ' && c.space) {
    if (pos + 1 >= t.size() || !t.at(pos + 1).other()) return 0;
    start = pos + 1;
  } else if (!c.other()) {
    return 0;
  }
  const std::uint32_t end = t.run(start, [](const Char& x) { return x.other(); });
  return t.run(end, [slash](const Char& x) { return x.newline() || (slash && x.cp == '/'); });
}

// cl100k and Qwen2 (max_digits 3 or 1).
void split_cl100k(std::string_view text, std::uint32_t max_digits, std::vector<Span>& out) {
  const Text t(text);
  std::uint32_t pos = 0;
  while (pos < t.size()) {
    const std::uint32_t start = pos;
    if (const std::uint32_t len = t.contraction(pos)) {
      out.push_back({start, pos += len});
      continue;
    }
    const Char c = t.at(pos);
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (c.letter) {
      out.push_back({start, pos = t.run(pos, [](const Char& x) { return x.letter; })});
      continue;
    }
    if (!c.newline() && !c.number && pos + c.length < t.size() && t.at(pos + c.length).letter) {
      out.push_back({start, pos = t.run(pos + c.length, [](const Char& x) { return x.letter; })});
      continue;
    }
    // \p{N}{1,max_digits}
    if (c.number) {
      std::uint32_t k = 0;
      pos = t.run(pos, [&](const Char& x) { return x.number && k++ < max_digits; });
      out.push_back({start, pos});
      continue;
    }
    if (const std::uint32_t end = match_other(t, pos, c, false)) {
      out.push_back({start, pos = end});
      continue;
    }
    out.push_back({start, pos = match_space(t, pos)});
  }
}

// o200k's letter alternatives from s (after the optional prefix):
//   U* W+ C?  (first)   and   U+ W* C?  (second),
// U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}], C the
// optional contraction. Returns the end, or 0 when neither matches.
std::uint32_t match_o200k_word(const Text& t, std::uint32_t s, bool second) {
  std::uint32_t e = s, last_lower_end = 0;
  while (e < t.size()) {  // U* (greedy), remembering the last W character in it
    const Char c = t.at(e);
    if (!c.upper) break;
    e += c.length;
    if (c.lower) last_lower_end = e;
  }
  std::uint32_t end = 0;
  if (!second) {
    const std::uint32_t f = t.run(e, [](const Char& x) { return x.lower; });
    if (f > e) {
      end = f;  // W+ right after U*
    } else if (last_lower_end) {
      end = last_lower_end;  // U* gives back up to its last W character, which W+ takes alone
    } else {
      return 0;
    }
  } else {
    if (e == s) return 0;
    end = t.run(e, [](const Char& x) { return x.lower; });
  }
  return end + t.contraction(end);
}

void split_o200k(std::string_view text, std::vector<Span>& out) {
  const Text t(text);
  std::uint32_t pos = 0;
  while (pos < t.size()) {
    const std::uint32_t start = pos;
    const Char c = t.at(pos);
    const bool prefix = !c.newline() && !c.letter && !c.number;  // [^\r\n\p{L}\p{N}]
    std::uint32_t end = 0;
    for (const bool second : {false, true}) {
      if (prefix && pos + c.length < t.size()) end = match_o200k_word(t, pos + c.length, second);
      if (!end) end = match_o200k_word(t, pos, second);
      if (end) break;
    }
    if (!end && c.number) {
      std::uint32_t k = 0;
      end = t.run(pos, [&](const Char& x) { return x.number && k++ < 3; });
    }
    if (!end) end = match_other(t, pos, c, true);
    if (!end) end = match_space(t, pos);
    out.push_back({start, pos = end});
  }
}

}  // namespace

std::optional<SplitRegex> split_regex_of(std::string_view pattern) {
  for (const SplitRegex r : {SplitRegex::Gpt2, SplitRegex::Cl100k, SplitRegex::Qwen2, SplitRegex::O200k}) {
    if (pattern == split_regex_pattern(r)) return r;
  }
  return std::nullopt;
}

std::string_view split_regex_pattern(SplitRegex regex) {
  switch (regex) {
    case SplitRegex::Gpt2:
      return kGpt2;
    case SplitRegex::Cl100k:
      return kCl100k;
    case SplitRegex::Qwen2:
      return kQwen2;
    case SplitRegex::O200k:
      return kO200k;
  }
  return {};
}

void split_by_regex(SplitRegex regex, std::string_view text, std::vector<Span>& out) {
  switch (regex) {
    case SplitRegex::Gpt2:
      split_gpt2(text, out);
      return;
    case SplitRegex::Cl100k:
      split_cl100k(text, 3, out);
      return;
    case SplitRegex::Qwen2:
      split_cl100k(text, 1, out);
      return;
    case SplitRegex::O200k:
      split_o200k(text, out);
      return;
  }
}

}  // namespace attnplay
