// The one place that instantiates nlohmann/json's parser and writer (see
// json_text.h).
#include "json/json_text.h"

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

}  // namespace attnplay::json_text
