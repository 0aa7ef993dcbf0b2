// Decoders and their tokenizer.json reading and writing.
#include "tokenizer/decoder.h"

#include <string_view>

#include "tokenizer/byte_level.h"
#include "tokenizer/json_util.h"
#include "tokenizer/unicode.h"

namespace attnplay {
namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// The byte of a "<0xNN>" piece, or -1.
int fallback_byte(const std::string& piece) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
  int value = 0;
  for (std::size_t i = 3; i < 5; ++i) {
    const char c = piece[i];
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

void byte_fallback(std::vector<std::string>& pieces) {
  std::vector<std::string> out;
  std::string bytes;
  auto flush = [&] {
    if (bytes.empty()) return;
    if (unicode::is_valid_utf8(bytes)) {
      out.push_back(bytes);
    } else {
      for (std::size_t i = 0; i < bytes.size(); ++i) out.emplace_back("\uFFFD");
    }
    bytes.clear();
  };
  for (std::string& p : pieces) {
    const int b = fallback_byte(p);
    if (b >= 0) {
      bytes += static_cast<char>(b);
    } else {
      flush();
      out.push_back(std::move(p));
    }
  }
  flush();
  pieces = std::move(out);
}

void sentencepiece_decode(const SentencePieceDecoding& spm, std::vector<std::string>& pieces) {
  std::string text, bytes;
  auto flush_bytes = [&] {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const auto* end = p + bytes.size();
    while (p < end) {
      const unicode::Decoded d = unicode::decode_utf8(p, end);
      if (d.valid) {
        text.append(reinterpret_cast<const char*>(p), d.length);
        p += d.length;
      } else {
        text += "\uFFFD";  // one byte at a time, as SentencePiece
        ++p;
      }
    }
    bytes.clear();
  };
  bool at_start = true, start_space_seen = false;
  for (const std::string& piece : pieces) {
    const int b = spm.byte_pieces ? fallback_byte(piece) : -1;
    if (b >= 0) {
      bytes += static_cast<char>(b);
      continue;
    }
    flush_bytes();
    if (start_space_seen || !text.empty()) at_start = false;
    start_space_seen = false;
    if (spm.control.count(piece)) continue;
    if (piece == spm.unk_piece) {
      text += spm.unk_surface;
      continue;
    }
    std::string_view rest = piece;
    if (at_start && spm.strip_first_space && rest.substr(0, 3) == "\u2581") {
      rest.remove_prefix(3);
      start_space_seen = !spm.strip_until_text;
    }
    std::string decoded(rest);
    replace_all(decoded, "\u2581", " ");
    text += decoded;
  }
  flush_bytes();
  if (spm.strip_white_space) {  // as Python's str.strip() on ASCII white space
    const char* space = " \t\n\r\f\v";
    const std::size_t first = text.find_first_not_of(space);
    text = first == std::string::npos ? std::string() : text.substr(first, text.find_last_not_of(space) + 1 - first);
  }
  pieces.assign(1, std::move(text));
}

const std::pair<std::string_view, std::string_view> kWordPieceCleanup[] = {
    {" .", "."},   {" ?", "?"},          {" !", "!"},   {" ,", ","},    {" ' ", "'"},   {" n't", "n't"},
    {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};

}  // namespace

void Decoder::decode_chain(std::vector<std::string>& pieces) const {
  switch (kind) {
    case Kind::ByteLevel: {
      std::string out;
      for (const std::string& piece : pieces) {
        const std::size_t mark = out.size();
        if (!byte_level_to_bytes(piece, out)) {
          out.resize(mark);
          out.append(piece);  // an added token outside the byte-level alphabet
        }
      }
      pieces.assign(1, std::move(out));
      return;
    }
    case Kind::WordPiece:
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        std::string& token = pieces[i];
        if (i != 0) {
          if (token.compare(0, prefix.size(), prefix) == 0) {
            token.erase(0, prefix.size());
          } else {
            token.insert(0, " ");
          }
        }
        if (cleanup) {
          for (const auto& [from, to] : kWordPieceCleanup) replace_all(token, from, to);
        }
      }
      return;
    case Kind::ByteFallback:
      byte_fallback(pieces);
      return;
    case Kind::Fuse: {
      std::string out;
      for (const std::string& p : pieces) out += p;
      pieces.assign(1, std::move(out));
      return;
    }
    case Kind::Strip:
      for (std::string& p : pieces) {
        std::size_t b = 0, e = p.size();
        for (std::size_t k = 0; k < start && e - b >= content.size() && p.compare(b, content.size(), content) == 0; ++k) {
          b += content.size();
        }
        for (std::size_t k = 0; k < stop && e - b >= content.size() && p.compare(e - content.size(), content.size(), content) == 0; ++k) {
          e -= content.size();
        }
        p = p.substr(b, e - b);
      }
      return;
    case Kind::Replace:
      for (std::string& p : pieces) replace_all(p, pattern, content);
      return;
    case Kind::Metaspace:
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        const bool drop = i == 0 && prepend_scheme != PrependScheme::Never;
        replace_all(pieces[i], replacement, drop ? "" : " ");
      }
      return;
    case Kind::Sequence:
      for (const Decoder& step : sequence) step.decode_chain(pieces);
      return;
    case Kind::SentencePiece:
      sentencepiece_decode(*sentencepiece, pieces);
      return;
  }
}

Decoder Decoder::from_json(const nlohmann::json& j) {
  using detail::fail;
  using detail::get_or;
  const std::string type = detail::type_of(j, "decoder");
  Decoder d;
  if (type == "ByteLevel") {
    d.kind = Kind::ByteLevel;
  } else if (type == "WordPiece") {
    d.kind = Kind::WordPiece;
    d.prefix = get_or<std::string>(j, "prefix", "##");
    d.cleanup = get_or<bool>(j, "cleanup", true);
  } else if (type == "ByteFallback") {
    d.kind = Kind::ByteFallback;
  } else if (type == "Fuse") {
    d.kind = Kind::Fuse;
  } else if (type == "Strip") {
    d.kind = Kind::Strip;
    d.content = get_or<std::string>(j, "content", " ");
    if (NormalizedText::from_utf8(d.content).chars.size() != 1) fail("decoder", "Strip content must be one character");
    d.start = get_or<std::size_t>(j, "start", 0);
    d.stop = get_or<std::size_t>(j, "stop", 0);
  } else if (type == "Replace") {
    d.kind = Kind::Replace;
    const nlohmann::json& pattern = j.contains("pattern") ? j["pattern"] : nlohmann::json();
    if (!pattern.is_object() || !pattern.contains("String") || !pattern["String"].is_string()) {
      fail("decoder", "Replace is supported with a {\"String\": ...} pattern only, not " + json_text::write(pattern));
    }
    d.pattern = pattern["String"].get<std::string>();
    if (!j.contains("content") || !j["content"].is_string()) fail("decoder", "Replace needs a \"content\" string");
    d.content = j["content"].get<std::string>();
  } else if (type == "Metaspace") {
    const PreTokenizer p = PreTokenizer::from_json(j);  // same fields as the pre-tokenizer
    d.kind = Kind::Metaspace;
    d.replacement.clear();
    unicode::append_utf8(d.replacement, p.replacement);
    d.prepend_scheme = p.prepend_scheme;
    d.split = p.split;
  } else if (type == "Sequence") {
    d.kind = Kind::Sequence;
    if (!j.contains("decoders") || !j["decoders"].is_array()) fail("decoder", "Sequence needs a \"decoders\" array");
    for (const nlohmann::json& step : j["decoders"]) d.sequence.push_back(from_json(step));
  } else {
    fail("decoder", "type \"" + type + "\" is not supported (ByteLevel, WordPiece, ByteFallback, Fuse, Strip, "
                                       "Replace, Metaspace, Sequence or null)");
  }
  return d;
}

nlohmann::ordered_json Decoder::to_json() const {
  using ojson = nlohmann::ordered_json;
  switch (kind) {
    case Kind::ByteLevel:
      return {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
    case Kind::WordPiece:
      return {{"type", "WordPiece"}, {"prefix", prefix}, {"cleanup", cleanup}};
    case Kind::ByteFallback:
      return {{"type", "ByteFallback"}};
    case Kind::Fuse:
      return {{"type", "Fuse"}};
    case Kind::Strip:
      return {{"type", "Strip"}, {"content", content}, {"start", start}, {"stop", stop}};
    case Kind::Replace:
      return {{"type", "Replace"}, {"pattern", {{"String", pattern}}}, {"content", content}};
    case Kind::Metaspace: {
      PreTokenizer p;
      p.kind = PreTokenizer::Kind::Metaspace;
      p.replacement = NormalizedText::from_utf8(replacement).chars[0];
      p.prepend_scheme = prepend_scheme;
      p.split = split;
      return p.to_json();
    }
    case Kind::Sequence: {
      ojson steps = ojson::array();
      for (const Decoder& step : sequence) steps.push_back(step.to_json());
      return {{"type", "Sequence"}, {"decoders", steps}};
    }
    case Kind::SentencePiece:
      throw std::invalid_argument("a SentencePiece model's decoder has no tokenizer.json form");
  }
  return nullptr;
}

}  // namespace attnplay
