// Parsing of comma-separated lists given on the command line: token ids
// ("--ids 1,2,3"), shared by the model commands, and heads ("--ablate 0:1,2:3",
// an encoder-decoder's "--ablate encoder:0:1,cross:2:3").
#pragma once

#include <climits>
#include <optional>
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

// "0:1,2:3" -> heads (layer 0, head 1), (layer 2, head 3); with `parts`
// (encoder-decoders) each item is PART:LAYER:HEAD, PART one of encoder,
// decoder, cross ("cross:0:1"). Throws std::invalid_argument naming `option`
// for an item of another form (whether the head exists is the model's check).
inline std::vector<ForwardRequest::Head> parse_heads(const std::string& text, const std::string& option, bool parts) {
  const std::string form = parts ? "PART:LAYER:HEAD (PART: encoder, decoder or cross; e.g. cross:0:3)"
                                 : "LAYER:HEAD (two numbers from 0, e.g. 0:3)";
  std::vector<ForwardRequest::Head> heads;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::vector<std::string> fields;
    std::stringstream pieces(item);
    for (std::string field; std::getline(pieces, field, ':');) fields.push_back(field);
    if (!item.empty() && item.back() == ':') fields.push_back("");
    const auto bad = [&]() { return std::invalid_argument(option + ": '" + item + "' is not " + form); };
    const auto number = [&](const std::string& field) {
      std::size_t used = 0;
      long long value = -1;
      try {
        value = std::stoll(field, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != field.size() || field[0] == '-' || field[0] == '+' || value > INT32_MAX) throw bad();
      return static_cast<int>(value);
    };
    if (fields.size() != (parts ? 3u : 2u)) throw bad();
    ForwardRequest::Head h;
    if (parts) {
      const std::optional<AttentionPart> part = part_from_name(fields[0]);
      if (!part) throw bad();
      h.part = *part;
    }
    h.layer = number(fields[parts ? 1 : 0]);
    h.head = number(fields[parts ? 2 : 1]);
    heads.push_back(h);
  }
  if (heads.empty()) throw std::invalid_argument(option + ": no heads given (" + form + "[,...])");
  return heads;
}

}  // namespace attnplay::cli
