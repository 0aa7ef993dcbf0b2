// Parsing of comma-separated token id lists given on the command line
// ("--ids 1,2,3"), shared by the model commands.
#pragma once

#include <climits>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnplay::cli {

// "1,2,3" -> {1, 2, 3}. Throws std::invalid_argument naming `option` for an
// item that is not a 32-bit integer.
inline std::vector<std::int32_t> parse_ids(const std::string& text, const std::string& option) {
  std::vector<std::int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value < INT32_MIN || value > INT32_MAX) {
      throw std::invalid_argument(option + ": '" + item + "' is not an integer");
    }
    ids.push_back(static_cast<std::int32_t>(value));
  }
  return ids;
}

}  // namespace attnplay::cli
