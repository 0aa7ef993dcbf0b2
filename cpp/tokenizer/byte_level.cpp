// The byte-level alphabet (as in OpenAI's encoder.py bytes_to_unicode) and display.
#include "tokenizer/byte_level.h"

#include "tokenizer/unicode.h"

namespace attnplay {
namespace {

struct Alphabet {
  std::array<char32_t, 256> to_char{};
  std::array<std::int16_t, 324> to_byte{};  // the alphabet lies below U+0144
  Alphabet() {
    to_byte.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      to_char[b] = printable ? static_cast<char32_t>(b) : next++;
      to_byte[to_char[b]] = static_cast<std::int16_t>(b);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

const std::array<char32_t, 256>& byte_level_alphabet() { return alphabet().to_char; }

std::string bytes_to_byte_level(std::string_view bytes) {
  const auto& to_char = alphabet().to_char;
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char b : bytes) unicode::append_utf8(out, to_char[static_cast<unsigned char>(b)]);
  return out;
}

bool byte_level_to_bytes(std::string_view piece, std::string& out) {
  const auto& to_byte = alphabet().to_byte;
  const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
  const auto* end = p + piece.size();
  while (p < end) {
    const unicode::Decoded d = unicode::decode_utf8(p, end);
    if (!d.valid || d.code_point >= to_byte.size() || to_byte[d.code_point] < 0) return false;
    out += static_cast<char>(to_byte[d.code_point]);
    p += d.length;
  }
  return true;
}

std::string display_bytes(std::string_view bytes) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string out;
  const auto* base = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto* p = base;
  const auto* end = base + bytes.size();
  while (p < end) {
    const unicode::Decoded d = unicode::decode_utf8(p, end);
    if (!d.valid) {
      for (std::uint32_t i = 0; i < d.length; ++i) {
        out += "<0x";
        out += kHex[p[i] >> 4];
        out += kHex[p[i] & 15];
        out += '>';
      }
    } else if (d.code_point == ' ') {
      out += "\u2423";  // ␣
    } else if (d.code_point == '\n') {
      out += "\u21B5";  // ↵
    } else if (d.code_point == '\t') {
      out += "\u21E5";  // ⇥
    } else if (d.code_point < 0x20) {
      unicode::append_utf8(out, 0x2400 + d.code_point);  // control pictures ␀..␟ (␍ for \r)
    } else if (d.code_point == 0x7F) {
      out += "\u2421";  // ␡
    } else if (unicode::is_white_space(d.code_point) || unicode::category(d.code_point) == unicode::Category::Cf ||
               unicode::category(d.code_point) == unicode::Category::Cc) {
      // Invisible characters (NBSP, U+0085, ZWJ, BOM, ...) as <U+XXXX>.
      out += "<U+";
      char buf[8];
      int n = 0;
      for (char32_t v = d.code_point; v > 0 || n < 4; v >>= 4) buf[n++] = kHex[v & 15];
      while (n > 0) out += buf[--n];
      out += '>';
    } else {
      out.append(reinterpret_cast<const char*>(p), d.length);
    }
    p += d.length;
  }
  return out;
}

}  // namespace attnplay
