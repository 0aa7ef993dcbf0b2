// SentencePiece .model files natively, against goldens from Google's
// sentencepiece (tests/tokenizer/sentencepiece/make.sh): for each model the
// vocabulary read from the protobuf (pieces, scores, types), and on the parity
// texts (accents, CJK, emoji, combining marks, full-width letters that NFKC
// changes, runs of spaces, tabs and newlines, control characters, invalid
// UTF-8) the ids, pieces, offsets of every piece that is not a byte, and the
// decoded text; the ids of 300 KB of Austen (count and hash: sentencepiece
// sums path scores in float, so near ties decide). Also: <s> in front with special tokens, the file sniffing of
// from_file_bytes, and errors for truncated, malformed and unsupported files.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

using namespace attnplay;
using nlohmann::json;

namespace {

const std::string kDir = ATTNPLAY_SENTENCEPIECE_DIR;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

const json& goldens() {
  static const json g = json::parse(read(kDir + "/goldens.json"));
  return g;
}

std::string text_of(const json& entry) {
  if (entry.contains("text")) return entry["text"].get<std::string>();
  const std::string hex = entry["hex"].get<std::string>();
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

std::string message_of(const std::string& bytes) {
  try {
    Tokenizer::from_sentencepiece(bytes);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

// Paragraphs first_line..last_line of the Austen corpus (beside the project), joined by newlines.
std::string long_text(const json& range) {
  std::ifstream in(ATTNPLAY_SHARED_DIR "/corpus/austen-paragraphs.txt", std::ios::binary);
  REQUIRE(in.good());
  std::string line, out;
  for (int i = 0; std::getline(in, line); ++i) {
    if (i < range["first_line"].get<int>() || i > range["last_line"].get<int>()) continue;
    if (!out.empty()) out += '\n';
    out += line;
  }
  return out;
}

// 64-bit FNV-1a of the ids' little-endian uint32 bytes, as make_goldens.py.
std::string fnv1a64(const std::vector<std::int32_t>& ids) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const std::int32_t id : ids) {
    for (int k = 0; k < 4; ++k) h = (h ^ ((static_cast<std::uint32_t>(id) >> (8 * k)) & 0xFF)) * 0x100000001b3ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// Protobuf pieces for hand-made models.
std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  return out + static_cast<char>(v);
}
std::string field(int number, const std::string& bytes) { return varint(number << 3 | 2) + varint(bytes.size()) + bytes; }
std::string piece(const std::string& text, int type) {
  return field(1, field(1, text) + varint(2 << 3 | 5) + std::string("\0\0\x80\xBF", 4) + varint(3 << 3) + varint(type));
}

}  // namespace

TEST_CASE("sentencepiece: every model's vocabulary, ids, pieces, offsets and decoded text equal sentencepiece's") {
  const json& g = goldens();
  const json& texts = g["texts"];
  for (const auto& model : g["models"].items()) {
    const std::string name = model.key();  // named, not bound: clang 14's CAPTURE lambdas cannot capture bindings
    const json& golden = model.value();
    CAPTURE(name);
    const Tokenizer t = Tokenizer::from_sentencepiece(read(kDir + "/" + name));
    const json& vocab = golden["vocab"];
    REQUIRE(t.vocab_size() == static_cast<std::int32_t>(vocab.size()));
    for (std::size_t id = 0; id < vocab.size(); ++id) {
      CHECK(t.id_to_token(static_cast<std::int32_t>(id)) == vocab[id][0].get<std::string>());
      const std::string type = golden["types"].value(std::to_string(id), "normal");
      CHECK(t.is_special(static_cast<std::int32_t>(id)) == (type == "control"));
    }
    const auto unk = golden["unk_id"].get<std::int32_t>();
    std::size_t tokens = 0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const std::string text = text_of(texts[i]);
      CAPTURE(i);
      CAPTURE(text);
      const json& expected = golden["results"][i];
      const Encoding e = t.encode(text, std::nullopt, false);
      const auto ids = e.ids();
      REQUIRE(ids == expected["ids"].get<std::vector<std::int32_t>>());
      CHECK(t.encode_ids(text, {false, true}) == ids);
      tokens += ids.size();
      for (std::size_t k = 0; k < ids.size(); ++k) {
        CAPTURE(k);
        // sentencepiece names a run of unknown characters by its text; we keep <unk>.
        if (ids[k] != unk) CHECK(e.tokens[k].piece == expected["pieces"][k].get<std::string>());
        const bool byte = e.tokens[k].piece.rfind("<0x", 0) == 0 && e.tokens[k].piece.size() == 6;
        if (!expected["offsets"].is_null() && !byte) {
          CHECK(e.tokens[k].byte_begin == expected["offsets"][k][0].get<std::uint32_t>());
          // A character normalized into several (ﬁ -> f i) split between two
          // tokens: each covers it (as for the other tokenizers), sentencepiece
          // gives it to the later one only.
          const bool split = k + 1 < ids.size() && e.tokens[k].byte_end > e.tokens[k + 1].byte_begin;
          CHECK((split ? e.tokens[k + 1].byte_begin : e.tokens[k].byte_end) ==
                expected["offsets"][k][1].get<std::uint32_t>());
        }
      }
      CHECK(t.decode(ids) == expected["decoded"].get<std::string>());
    }
    CHECK(tokens > 1000);
    // <s> in front with special tokens (sentencepiece's add_bos).
    auto with_bos = golden["ids_bos_eos"].get<std::vector<std::int32_t>>();
    with_bos.pop_back();  // </s>: not added
    CHECK(t.encode(text_of(texts[0])).ids() == with_bos);
    CHECK(t.model_type() == (name.rfind("bpe", 0) == 0 ? "BPE" : "Unigram"));
    const auto long_ids = t.encode_ids(long_text(g["long"]), {false, true});
    CHECK(long_ids.size() == golden["long"]["count"].get<std::size_t>());
    CHECK(fnv1a64(long_ids) == golden["long"]["fnv1a64"].get<std::string>());
  }
}

TEST_CASE("sentencepiece: display strings, special pieces and from_file_bytes") {
  const std::string bytes = read(kDir + "/bpe-identity-bytes.model");
  const Tokenizer t = Tokenizer::from_file_bytes(bytes);
  const Encoding e = t.encode("Hi \xF0\x9F\x98\x80");
  REQUIRE(e.tokens.size() >= 3);
  CHECK(e.tokens[0].piece == "<s>");
  CHECK(e.tokens[0].special);
  CHECK(e.tokens[0].segment == -1);
  CHECK(t.display(*t.token_to_id("\u2581the")) == "\u2423the");
  CHECK(t.display(*t.token_to_id("<0x41>")) == "A");
  CHECK(t.display(*t.token_to_id("<0xF0>")) == "<0xF0>");
  // Written out, control pieces are text, as in sentencepiece.
  for (const Token& token : t.encode("<s>", std::nullopt, false).tokens) CHECK(!token.special);
  CHECK_THROWS_WITH_AS(t.to_json(), doctest::Contains("no tokenizer.json form"), std::invalid_argument);
  // tokenizer.json, even with a leading newline, is still JSON.
  CHECK_THROWS_WITH_AS(Tokenizer::from_file_bytes("\n {\"model\": 1}"), doctest::Contains("tokenizer.json"),
                       std::invalid_argument);
}

TEST_CASE("sentencepiece: truncated, malformed and unsupported files get errors that name the problem") {
  const std::string bytes = read(kDir + "/unigram-rules-cased.model");
  // Every truncation of the file is either an error or a smaller valid model, never a crash.
  for (std::size_t cut = 0; cut < bytes.size(); cut += 97) {
    try {
      Tokenizer::from_sentencepiece(bytes.substr(0, cut)).encode("Hello, World!");
    } catch (const std::invalid_argument&) {
    }
  }
  CHECK(message_of(bytes.substr(0, 1)) == "SentencePiece model: ModelProto at byte 1: truncated varint");
  CHECK(message_of(bytes.substr(0, 5)).find("claims") != std::string::npos);
  CHECK(message_of("") == "SentencePiece model: no pieces (is this a SentencePiece .model file?)");
  CHECK(message_of("\x0B") == "SentencePiece model: ModelProto at byte 1: field 1 is a group, which is not supported");
  CHECK(message_of(std::string("\x08\x01", 2)).find("field 1 should be length-delimited") != std::string::npos);
  CHECK(message_of(field(1, varint(3 << 3) + varint(9))).find("piece type 9 is unknown") != std::string::npos);

  const std::string unk = piece("<unk>", 2), a = piece("a", 1), b = piece("b", 1);
  CHECK(message_of(unk + a + b) == "(no error)");
  CHECK(message_of(a + b) == "SentencePiece model: no UNKNOWN piece");
  CHECK(message_of(unk + a + a).find("piece 'a' is defined twice") != std::string::npos);
  CHECK(message_of(unk + a + field(2, varint(3 << 3) + varint(3))).find("model_type WORD is not supported") !=
        std::string::npos);
  CHECK(message_of(unk + a + field(2, varint(3 << 3) + varint(4))).find("model_type CHAR") != std::string::npos);
  CHECK(message_of(unk + a + field(2, varint(3 << 3) + varint(2)) + piece("x", 5)).find("UNUSED piece 'x'") !=
        std::string::npos);
  CHECK(message_of(unk + a + piece("<0x41>", 6)).find("byte_fallback is false") != std::string::npos);
  CHECK(message_of(unk + a + field(2, varint(35 << 3) + varint(1))).find("not all 256 byte pieces") !=
        std::string::npos);
  CHECK(message_of(unk + a + field(2, varint(24 << 3) + varint(1))).find("treat_whitespace_as_suffix") !=
        std::string::npos);
  CHECK(message_of(unk + a + field(5, field(2, "xxxxxxxx"))).find("denormalizer_spec") != std::string::npos);
  CHECK(message_of(unk + a + field(3, field(2, "abc"))).find("precompiled_charsmap") != std::string::npos);
  CHECK(message_of(unk + a + field(3, field(2, std::string("\x08\0\0\0abcdefghi", 13)))).find("end with a NUL") !=
        std::string::npos);
}
