// tokenizer.json components beyond GPT-2 and BERT, natively: NFC/NFD/NFKC/NFKD
// against the Unicode consortium's NormalizationTest.txt (Debian unicode-data),
// extended grapheme clusters (the Precompiled normalizer's) against its
// GraphemeBreakTest.txt,
// the Split scanners against the matches their regexes define on hand-checked
// strings, Hugging Face's Split behaviours, the character-level BPE options,
// decoders, loader errors (an unknown Regex is quoted) and to_json round trips.
// Parity with Hugging Face on the whole corpus is tests/node/tokenizer-components.test.mjs.
#include <doctest/doctest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/decoder.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/split_patterns.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

using namespace attnplay;

namespace {

std::string utf8(const std::u32string& s) {
  std::string out;
  for (char32_t c : s) unicode::append_utf8(out, c);
  return out;
}

std::u32string parse_code_points(const std::string& field) {
  std::u32string out;
  std::istringstream in(field);
  std::string hex;
  while (in >> hex) out += static_cast<char32_t>(std::stoul(hex, nullptr, 16));
  return out;
}

std::string normalized(Normalizer::Kind kind, const std::u32string& text) {
  Normalizer n;
  n.kind = kind;
  NormalizedText t;
  for (char32_t c : text) t.push(c, 0, 0);
  return utf8(normalize(n, t).chars);
}

std::vector<std::string> matches(SplitRegex regex, const std::string& text) {
  std::vector<Span> spans;
  split_by_regex(regex, text, spans);
  std::vector<std::string> out;
  for (const Span& s : spans) out.push_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

}  // namespace

TEST_CASE("NFC, NFD, NFKC, NFKD equal every line of NormalizationTest.txt") {
  const std::unique_ptr<FILE, int (*)(FILE*)> in(popen("bzip2 -dc /usr/share/unicode/NormalizationTest.txt.bz2", "r"),
                                                  pclose);
  REQUIRE(in);
  std::string data;
  char buffer[1 << 16];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, in.get())) > 0;) data.append(buffer, n);
  std::istringstream lines(data);
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#' || line[0] == '@') continue;
    std::vector<std::u32string> c;
    std::istringstream fields(line);
    std::string field;
    for (int i = 0; i < 5 && std::getline(fields, field, ';'); ++i) c.push_back(parse_code_points(field));
    REQUIRE(c.size() == 5);
    INFO(line);
    for (int i = 0; i < 5; ++i) {
      const bool compat_column = i >= 3;
      CHECK(normalized(Normalizer::Kind::NFC, c[i]) == utf8(compat_column ? c[3] : c[1]));
      CHECK(normalized(Normalizer::Kind::NFD, c[i]) == utf8(compat_column ? c[4] : c[2]));
      CHECK(normalized(Normalizer::Kind::NFKC, c[i]) == utf8(c[3]));
      CHECK(normalized(Normalizer::Kind::NFKD, c[i]) == utf8(c[4]));
    }
    ++checked;
  }
  CHECK(checked > 19000);
}

// UAX #29's own test data: every line's breaks, from the clusters grapheme_end finds.
TEST_CASE("extended grapheme clusters equal every line of GraphemeBreakTest.txt") {
  const std::unique_ptr<FILE, int (*)(FILE*)> in(fopen("/usr/share/unicode/auxiliary/GraphemeBreakTest.txt", "r"), fclose);
  REQUIRE(in);
  char buffer[4096];
  int checked = 0;
  while (fgets(buffer, sizeof buffer, in.get())) {
    const std::string line = std::string(buffer).substr(0, std::string(buffer).find('#'));
    if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    // "÷ 0020 × 0308 ÷ 0020 ÷": code points, and after each whether a cluster ends there.
    std::u32string text;
    std::vector<std::size_t> want;  // cluster ends
    std::istringstream fields(line);
    for (std::string field; fields >> field;) {
      if (field == "\xC3\xB7") {  // ÷
        if (!text.empty()) want.push_back(text.size());
      } else if (field != "\xC3\x97") {  // not ×: a code point
        text += static_cast<char32_t>(std::stoul(field, nullptr, 16));
      }
    }
    std::vector<std::size_t> got;
    for (std::size_t start = 0; start < text.size(); start = got.back()) got.push_back(attnplay::unicode::grapheme_end(text, start));
    INFO(line);
    CHECK(got == want);
    ++checked;
  }
  CHECK(checked > 600);
}

TEST_CASE("a composed character keeps the original range of its first part, as Hugging Face") {
  Normalizer nfc;
  nfc.kind = Normalizer::Kind::NFC;
  const NormalizedText t = normalize(nfc, NormalizedText::from_utf8("e\xCC\x81x"));  // e + U+0301, x
  REQUIRE(t.chars == U"\u00e9x");
  CHECK(t.begin[0] == 0);
  CHECK(t.end[0] == 1);
  CHECK(t.begin[1] == 3);
}

TEST_CASE("Split scanners: the matches of their regexes") {
  using V = std::vector<std::string>;
  CHECK(matches(SplitRegex::Cl100k, "Hello world123456 I'M\n\n  x") ==
        V{"Hello", " world", "123", "456", " I", "'M", "\n\n", " ", " x"});
  CHECK(matches(SplitRegex::Qwen2, "abc 2024!!\r\n") == V{"abc", " ", "2", "0", "2", "4", "!!\r\n"});
  CHECK(matches(SplitRegex::Cl100k, "$x ...y  \t\nz") == V{"$x", " ...", "y", "  \t\n", "z"});
  CHECK(matches(SplitRegex::O200k, "HelloWorld don't HTTPServer a/b//\n") ==
        V{"Hello", "World", " don't", " HTTPServer", " a", "/b", "//\n"});
  CHECK(matches(SplitRegex::O200k, "\xE4\xB8\xAD" "A") == V{"\xE4\xB8\xAD", "A"});  // 中A: U*W+ gives back to 中
  CHECK(split_regex_of("\\s+") == std::nullopt);
}

TEST_CASE("an unknown Split regex is refused with the pattern quoted") {
  const std::string json = R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
    "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\p{L}+|x"}, "behavior": "Isolated", "invert": false}})";
  CHECK_THROWS_WITH_AS(Tokenizer::from_json(json), doctest::Contains("Split regex \"\\\\p{L}+|x\" is not supported"),
                       std::invalid_argument);
}

TEST_CASE("character-level BPE: byte fallback, fused unknowns, ignore_merges; its decoders") {
  // Llama 2's shape around a tiny vocabulary.
  const std::string json = R"({
    "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                                      {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
    "pre_tokenizer": null,
    "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
      {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
      "vocab": {"<unk>": 0, "<0xC3>": 1, "<0xA9>": 2, "▁": 3, "a": 4, "b": 5, "▁a": 6, "ab": 7, "▁ab": 8},
      "merges": [["a", "b"], ["▁", "a"], ["▁", "ab"]]}})";
  const Tokenizer t = Tokenizer::from_json(json);
  CHECK(t.encode_ids("ab a") == std::vector<std::int32_t>{8, 6});
  CHECK(t.encode_ids("a\xC3\xA9") == std::vector<std::int32_t>{6, 1, 2});  // é by its bytes
  CHECK(t.encode_ids("axy") == std::vector<std::int32_t>{6, 0});           // x y: one fused <unk>
  CHECK(t.decode({6, 1, 2}) == "a\xC3\xA9");
  CHECK(t.decode({8, 6}) == "ab a");
  CHECK(t.display(3) == "\xE2\x90\xA3");  // "▁" shown as ␣
  const Tokenizer back = Tokenizer::from_json(t.to_json());
  CHECK(back.encode_ids("ab a\xC3\xA9xy b") == t.encode_ids("ab a\xC3\xA9xy b"));
  CHECK(back.to_json() == t.to_json());
}

TEST_CASE("ByteFallback decodes invalid byte runs as one U+FFFD per byte") {
  Decoder d;
  d.kind = Decoder::Kind::ByteFallback;
  std::vector<std::string> pieces{"a", "<0xE2>", "<0x82>", "b", "<0xE2>", "<0x82>", "<0xAC>"};
  d.decode_chain(pieces);
  CHECK(pieces == std::vector<std::string>{"a", "\xEF\xBF\xBD", "\xEF\xBF\xBD", "b", "\xE2\x82\xAC"});
}
