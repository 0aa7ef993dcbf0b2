// The one place that instantiates nlohmann/json's parser and writer, and
// base64 (see json_text.h).
#include "json/json_text.h"

#include <cstdint>

namespace attnplay::json_text {

nlohmann::json parse(std::string_view text) { return nlohmann::json::parse(text.begin(), text.end()); }

nlohmann::json parse_or_discarded(std::string_view text) {
  return nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

std::string write(const nlohmann::json& value, int indent) { return value.dump(indent); }
std::string write(const nlohmann::ordered_json& value, int indent) { return value.dump(indent); }

std::string write_replacing_invalid_utf8(const nlohmann::json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}
std::string write_replacing_invalid_utf8(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace);
}

namespace {
constexpr std::string_view kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

std::string base64_encode(std::string_view bytes) {
  const std::size_t size = bytes.size();
  const auto byte = [&bytes](std::size_t i) { return std::uint32_t{static_cast<unsigned char>(bytes[i])}; };
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (std::size_t i = 0; i < size; i += 3) {
    const std::uint32_t n = (byte(i) << 16) | (i + 1 < size ? byte(i + 1) << 8 : 0) | (i + 2 < size ? byte(i + 2) : 0);
    out += kBase64[(n >> 18) & 63];
    out += kBase64[(n >> 12) & 63];
    out += i + 1 < size ? kBase64[(n >> 6) & 63] : '=';
    out += i + 2 < size ? kBase64[n & 63] : '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t bits = 0;
  int count = 0;
  std::size_t padding = 0;
  for (const char c : text) {
    if (c == '=') {
      ++padding;
      continue;
    }
    const std::size_t value = kBase64.find(c);
    if (value == std::string_view::npos || padding > 0) return std::nullopt;
    bits = (bits << 6) | static_cast<std::uint32_t>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xFF);
    }
  }
  if (padding > 2 || (text.size() % 4 != 0 && padding > 0)) return std::nullopt;
  return out;
}

}  // namespace attnplay::json_text
