// GPT-2 pre-tokenization scanner, BertPreTokenizer, and the general
// pre-tokenizers over aligned text with their tokenizer.json reading/writing.
#include "tokenizer/pre_tokenizer.h"

#include <algorithm>

#include "tokenizer/json_util.h"
#include "tokenizer/split_patterns.h"
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

namespace {

// A piece of a pre-token: a character range and whether it is a match.
struct Piece {
  std::uint32_t begin, end;
  bool match;
};

NormalizedText slice(const NormalizedText& w, std::uint32_t b, std::uint32_t e) {
  NormalizedText out;
  out.chars.assign(w.chars, b, e - b);
  out.begin.assign(w.begin.begin() + b, w.begin.begin() + e);
  out.end.assign(w.end.begin() + b, w.end.begin() + e);
  return out;
}

// Hugging Face's NormalizedString::split: pieces covering the word, combined
// by behavior; appends the non-empty results to out.
void split_pieces(const NormalizedText& w, std::vector<Piece> pieces, SplitBehavior behavior, bool invert,
                  std::vector<NormalizedText>& out) {
  if (invert) {
    for (Piece& p : pieces) p.match = !p.match;
  }
  std::vector<Piece> kept;
  switch (behavior) {
    case SplitBehavior::Removed:
      for (const Piece& p : pieces) {
        if (!p.match) kept.push_back(p);
      }
      break;
    case SplitBehavior::Isolated:
      kept = pieces;
      break;
    case SplitBehavior::MergedWithPrevious: {
      bool previous_match = false;
      for (const Piece& p : pieces) {
        if (p.match && !previous_match && !kept.empty()) {
          kept.back().end = p.end;
        } else {
          kept.push_back(p);
        }
        previous_match = p.match;
      }
      break;
    }
    case SplitBehavior::MergedWithNext: {
      bool previous_match = false;
      for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
        if (it->match && !previous_match && !kept.empty()) {
          kept.back().begin = it->begin;
        } else {
          kept.push_back(*it);
        }
        previous_match = it->match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
    }
    case SplitBehavior::Contiguous: {
      bool previous_match = false;
      for (const Piece& p : pieces) {
        if (p.match == previous_match && !kept.empty()) {
          kept.back().end = p.end;
        } else {
          kept.push_back(p);
        }
        previous_match = p.match;
      }
      break;
    }
  }
  for (const Piece& p : kept) {
    if (p.end > p.begin) out.push_back(slice(w, p.begin, p.end));
  }
}

// Pieces of a per-character predicate: each matching character alone, the
// runs between them as non-matches.
template <class Pred>
std::vector<Piece> char_pieces(const NormalizedText& w, Pred pred) {
  std::vector<Piece> pieces;
  std::uint32_t last = 0;
  const auto n = static_cast<std::uint32_t>(w.chars.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!pred(w.chars[i])) continue;
    if (last < i) pieces.push_back({last, i, false});
    pieces.push_back({i, i + 1, true});
    last = i + 1;
  }
  if (last < n) pieces.push_back({last, n, false});
  return pieces;
}

// Pieces of a pattern's matches (byte spans of the UTF-8) with the gaps between them.
std::vector<Piece> span_pieces(const NormalizedText& w, std::string_view original, const PreTokenizer& p) {
  std::vector<std::uint32_t> starts;
  const std::string text = pre_token_utf8(w, original, &starts);
  std::vector<Span> spans;
  if (p.pattern_is_regex) {
    split_by_regex(*split_regex_of(p.pattern), text, spans);
  } else if (!p.pattern.empty()) {
    for (std::size_t at = text.find(p.pattern); at != std::string::npos; at = text.find(p.pattern, at + p.pattern.size())) {
      spans.push_back({static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(at + p.pattern.size())});
    }
  }
  // Byte offsets to character indices (spans start and end on characters).
  std::vector<std::uint32_t> char_at(text.size() + 1, 0);
  for (std::uint32_t c = 0; c + 1 < starts.size(); ++c) char_at[starts[c]] = c;
  char_at[text.size()] = static_cast<std::uint32_t>(w.chars.size());
  std::vector<Piece> pieces;
  std::uint32_t last = 0;
  for (const Span& s : spans) {
    const std::uint32_t b = char_at[s.begin], e = char_at[s.end];
    if (last < b) pieces.push_back({last, b, false});
    pieces.push_back({b, e, true});
    last = e;
  }
  if (last < w.chars.size()) pieces.push_back({last, static_cast<std::uint32_t>(w.chars.size()), false});
  return pieces;
}

// As Hugging Face's NormalizedString::prepend: the new character covers the
// original range of the character it is put in front of.
void prepend_char(NormalizedText& w, char32_t c) {
  const std::uint32_t b = w.begin.empty() ? 0 : w.begin[0];
  const std::uint32_t e = w.end.empty() ? 0 : w.end[0];
  w.chars.insert(w.chars.begin(), c);
  w.begin.insert(w.begin.begin(), b);
  w.end.insert(w.end.begin(), e);
}

void pre_tokenize_one(const PreTokenizer& p, std::string_view original, bool segment_start, NormalizedText w,
                      std::vector<NormalizedText>& out) {
  switch (p.kind) {
    case PreTokenizer::Kind::ByteLevel: {
      if (p.byte_level.add_prefix_space && (w.chars.empty() || w.chars[0] != U' ')) prepend_char(w, U' ');
      if (!p.byte_level.use_regex) {
        out.push_back(std::move(w));
        return;
      }
      PreTokenizer gpt2;
      gpt2.pattern = std::string(split_regex_pattern(SplitRegex::Gpt2));
      gpt2.pattern_is_regex = true;
      split_pieces(w, span_pieces(w, original, gpt2), SplitBehavior::Isolated, false, out);
      return;
    }
    case PreTokenizer::Kind::Bert:
      for (const Span& s : split_bert(w)) out.push_back(slice(w, s.begin, s.end));
      return;
    case PreTokenizer::Kind::Split:
      split_pieces(w, span_pieces(w, original, p), p.behavior, p.invert, out);
      return;
    case PreTokenizer::Kind::Digits:
      split_pieces(w, char_pieces(w, [](char32_t c) { return c != kInvalidUtf8 && unicode::is_number(c); }),
                   p.individual_digits ? SplitBehavior::Isolated : SplitBehavior::Contiguous, false, out);
      return;
    case PreTokenizer::Kind::Metaspace: {
      for (char32_t& c : w.chars) {
        if (c == U' ') c = p.replacement;
      }
      const bool starts = !w.chars.empty() && w.chars[0] == p.replacement;
      if (!starts && (p.prepend_scheme == PrependScheme::Always ||
                      (p.prepend_scheme == PrependScheme::First && segment_start && !w.begin.empty() && w.begin[0] == 0))) {
        prepend_char(w, p.replacement);
      }
      if (!p.split) {
        out.push_back(std::move(w));
        return;
      }
      const char32_t r = p.replacement;
      split_pieces(w, char_pieces(w, [r](char32_t c) { return c == r; }), SplitBehavior::MergedWithNext, false, out);
      return;
    }
    case PreTokenizer::Kind::Sequence: {
      std::vector<NormalizedText> words{std::move(w)};
      for (const PreTokenizer& step : p.sequence) pre_tokenize(step, original, segment_start, words);
      for (NormalizedText& x : words) out.push_back(std::move(x));
      return;
    }
  }
}

const char* behavior_name(SplitBehavior b) {
  switch (b) {
    case SplitBehavior::Removed:
      return "Removed";
    case SplitBehavior::Isolated:
      return "Isolated";
    case SplitBehavior::MergedWithPrevious:
      return "MergedWithPrevious";
    case SplitBehavior::MergedWithNext:
      return "MergedWithNext";
    case SplitBehavior::Contiguous:
      return "Contiguous";
  }
  return "";
}

const char* prepend_scheme_name(PrependScheme s) {
  return s == PrependScheme::Always ? "always" : s == PrependScheme::First ? "first" : "never";
}

}  // namespace

std::string pre_token_utf8(const NormalizedText& word, std::string_view original, std::vector<std::uint32_t>* char_starts) {
  std::string out;
  out.reserve(word.chars.size());
  if (char_starts) char_starts->clear();
  for (std::size_t i = 0; i < word.chars.size(); ++i) {
    if (char_starts) char_starts->push_back(static_cast<std::uint32_t>(out.size()));
    if (word.chars[i] == kInvalidUtf8) {
      out.append(original.substr(word.begin[i], word.end[i] - word.begin[i]));
    } else {
      unicode::append_utf8(out, word.chars[i]);
    }
  }
  if (char_starts) char_starts->push_back(static_cast<std::uint32_t>(out.size()));
  return out;
}

void pre_tokenize(const PreTokenizer& p, std::string_view original, bool segment_start,
                  std::vector<NormalizedText>& words) {
  std::vector<NormalizedText> out;
  out.reserve(words.size());
  for (NormalizedText& w : words) pre_tokenize_one(p, original, segment_start, std::move(w), out);
  words.clear();
  for (NormalizedText& w : out) {
    if (!w.chars.empty()) words.push_back(std::move(w));
  }
}

bool PreTokenizer::ends_with_byte_level() const {
  if (kind == Kind::ByteLevel) return true;
  return kind == Kind::Sequence && !sequence.empty() && sequence.back().ends_with_byte_level();
}

// Size-optimised ([[clang::minsize]]): JSON is read and written once per load or
// save, and this source's encode path stays -O3; the core WASM has a 400 KB budget.
[[clang::minsize]] PreTokenizer PreTokenizer::from_json(const nlohmann::json& j) {
  using detail::fail;
  using detail::get_or;
  const std::string type = detail::type_of(j, "pre_tokenizer");
  PreTokenizer p;
  if (type == "ByteLevel") {
    p.kind = Kind::ByteLevel;
    p.byte_level.add_prefix_space = get_or<bool>(j, "add_prefix_space", false);
    p.byte_level.trim_offsets = get_or<bool>(j, "trim_offsets", true);
    p.byte_level.use_regex = get_or<bool>(j, "use_regex", true);
  } else if (type == "BertPreTokenizer") {
    p.kind = Kind::Bert;
  } else if (type == "Split") {
    p.kind = Kind::Split;
    const nlohmann::json& pattern = j.contains("pattern") ? j["pattern"] : nlohmann::json();
    if (pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string()) {
      p.pattern = pattern["Regex"].get<std::string>();
      p.pattern_is_regex = true;
      if (!split_regex_of(p.pattern)) {
        fail("pre_tokenizer", "Split regex " + json_text::write(nlohmann::json(p.pattern)) +
                                  " is not supported (known: the GPT-2, cl100k/Llama 3, Qwen2 and o200k patterns)");
      }
    } else if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string()) {
      p.pattern = pattern["String"].get<std::string>();
    } else {
      fail("pre_tokenizer", "Split needs a pattern {\"Regex\": ...} or {\"String\": ...}");
    }
    const std::string behavior = get_or<std::string>(j, "behavior", "");
    bool known = false;
    for (const SplitBehavior b : {SplitBehavior::Removed, SplitBehavior::Isolated, SplitBehavior::MergedWithPrevious,
                                  SplitBehavior::MergedWithNext, SplitBehavior::Contiguous}) {
      if (behavior == behavior_name(b)) {
        p.behavior = b;
        known = true;
      }
    }
    if (!known) fail("pre_tokenizer", "Split behavior \"" + behavior + "\" is not one of Removed, Isolated, "
                                      "MergedWithPrevious, MergedWithNext, Contiguous");
    p.invert = get_or<bool>(j, "invert", false);
  } else if (type == "Digits") {
    p.kind = Kind::Digits;
    p.individual_digits = get_or<bool>(j, "individual_digits", false);
  } else if (type == "Metaspace") {
    p.kind = Kind::Metaspace;
    const std::u32string r = NormalizedText::from_utf8(get_or<std::string>(j, "replacement", "\u2581")).chars;
    if (r.size() != 1 || r[0] == kInvalidUtf8) fail("pre_tokenizer", "Metaspace replacement must be one character");
    p.replacement = r[0];
    if (j.contains("prepend_scheme") && !j["prepend_scheme"].is_null()) {
      const std::string scheme = j["prepend_scheme"].get<std::string>();
      if (scheme == "always") {
        p.prepend_scheme = PrependScheme::Always;
      } else if (scheme == "first") {
        p.prepend_scheme = PrependScheme::First;
      } else if (scheme == "never") {
        p.prepend_scheme = PrependScheme::Never;
      } else {
        fail("pre_tokenizer", "Metaspace prepend_scheme \"" + scheme + "\" is not always, first or never");
      }
    } else {  // files before tokenizers 0.14: add_prefix_space
      p.prepend_scheme = get_or<bool>(j, "add_prefix_space", true) ? PrependScheme::Always : PrependScheme::Never;
    }
    p.split = get_or<bool>(j, "split", true);
  } else if (type == "Sequence") {
    p.kind = Kind::Sequence;
    if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array()) {
      fail("pre_tokenizer", "Sequence needs a \"pretokenizers\" array");
    }
    for (const nlohmann::json& step : j["pretokenizers"]) p.sequence.push_back(from_json(step));
    for (std::size_t i = 0; i + 1 < p.sequence.size(); ++i) {
      if (p.sequence[i].ends_with_byte_level()) fail("pre_tokenizer", "ByteLevel is supported as the last step only");
    }
  } else {
    fail("pre_tokenizer", "type \"" + type + "\" is not supported (ByteLevel, BertPreTokenizer, Split, Digits, "
                                               "Metaspace or Sequence)");
  }
  return p;
}

// Size-optimised, as from_json above.
[[clang::minsize]] nlohmann::ordered_json PreTokenizer::to_json() const {
  using ojson = nlohmann::ordered_json;
  switch (kind) {
    case Kind::ByteLevel:
      return {{"type", "ByteLevel"},
              {"add_prefix_space", byte_level.add_prefix_space},
              {"trim_offsets", byte_level.trim_offsets},
              {"use_regex", byte_level.use_regex}};
    case Kind::Bert:
      return {{"type", "BertPreTokenizer"}};
    case Kind::Split:
      return {{"type", "Split"},
              {"pattern", {{pattern_is_regex ? "Regex" : "String", pattern}}},
              {"behavior", behavior_name(behavior)},
              {"invert", invert}};
    case Kind::Digits:
      return {{"type", "Digits"}, {"individual_digits", individual_digits}};
    case Kind::Metaspace: {
      std::string r;
      unicode::append_utf8(r, replacement);
      return {{"type", "Metaspace"}, {"replacement", r}, {"prepend_scheme", prepend_scheme_name(prepend_scheme)},
              {"split", split}};
    }
    case Kind::Sequence: {
      ojson steps = ojson::array();
      for (const PreTokenizer& step : sequence) steps.push_back(step.to_json());
      return {{"type", "Sequence"}, {"pretokenizers", steps}};
    }
  }
  return nullptr;
}

}  // namespace attnplay
