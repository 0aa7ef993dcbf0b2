// Parsing of comma-separated lists given on the command line: token ids
// ("--ids 1,2,3"), shared by the model commands, and heads ("--ablate 0:1,2:3").
#pragma once

#include <climits>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/model.h"

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

// "0:1,2:3" -> heads (layer 0, head 1), (layer 2, head 3). Throws
// std::invalid_argument naming `option` for an item that is not L:H with two
// non-negative integers (whether the head exists is the model's check).
inline std::vector<ForwardRequest::Head> parse_heads(const std::string& text, const std::string& option) {
  std::vector<ForwardRequest::Head> heads;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::size_t colon = item.find(':');
    const auto number = [&](const std::string& part) {
      std::size_t used = 0;
      long long value = -1;
      try {
        value = std::stoll(part, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != part.size() || part[0] == '-' || part[0] == '+' || value > INT32_MAX) {
        throw std::invalid_argument(option + ": '" + item + "' is not LAYER:HEAD (two numbers from 0, e.g. 0:3)");
      }
      return static_cast<int>(value);
    };
    if (colon == std::string::npos) number("");  // throws with the message above
    heads.push_back({number(item.substr(0, colon)), number(item.substr(colon + 1))});
  }
  if (heads.empty()) throw std::invalid_argument(option + ": no heads given (LAYER:HEAD[,LAYER:HEAD...])");
  return heads;
}

}  // namespace attnplay::cli
