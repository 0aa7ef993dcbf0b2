// Fills the one-file page template (see html_page.h).
#include "cli/html_page.h"
#include "json/json_text.h"

#include <cstring>
#include <map>
#include <stdexcept>

namespace attnplay::cli {
namespace {

std::string escape_html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
}

// One pass over the template, so that a value holding a placeholder's name stays as it is.
std::string fill(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  std::size_t at = 0;
  for (std::size_t found = text.find("@@ATTNPLAY_"); found != std::string::npos; found = text.find("@@ATTNPLAY_", at)) {
    const std::size_t end = text.find("@@", found + 2);
    const auto value = values.find(text.substr(found, end + 2 - found));
    if (end == std::string::npos || value == values.end()) throw std::logic_error("unknown placeholder in the page template");
    out += text.substr(at, found - at);
    out += value->second;
    at = end + 2;
  }
  return out + text.substr(at);
}

}  // namespace

nlohmann::ordered_json base64_tensor(const std::vector<std::int64_t>& shape, const std::vector<float>& values) {
  std::string bytes(values.size() * 4, '\0');  // little-endian whatever the machine's order
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &values[i], 4);
    for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<char>((bits >> (8 * b)) & 0xFF);
  }
  return {{"dtype", "float32"}, {"shape", shape}, {"base64", json_text::base64_encode(bytes)}};
}

std::string html_page(const std::string& title, const std::vector<std::pair<std::string, std::string>>& attributes,
                      const nlohmann::ordered_json& data) {
  std::string page = kPageTemplate;
  // The placeholders sit before the widget's script; only that part is filled.
  const std::size_t script = page.find("<script type=\"module\">");
  if (script == std::string::npos) throw std::logic_error("the page template has no widget script");
  std::string attribute_text;
  for (const auto& [name, value] : attributes) attribute_text += (attribute_text.empty() ? "" : " ") + name + "=\"" + escape_html(value) + "\"";
  // Inside <script type="application/json">, "<" must not start a tag: JSON lets it be written \u003c.
  std::string json = json_text::write_replacing_invalid_utf8(data);
  replace_all(json, "<", "\\u003c");
  const std::map<std::string, std::string> values = {
      {"@@ATTNPLAY_TITLE@@", escape_html(title)}, {"@@ATTNPLAY_ATTRIBUTES@@", attribute_text}, {"@@ATTNPLAY_DATA@@", json}};
  return fill(page.substr(0, script), values) + page.substr(script);
}

}  // namespace attnplay::cli
