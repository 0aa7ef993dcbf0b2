// JSON text in and out for the whole core: nlohmann/json's parser and writer
// are instantiated once, in json_text.cpp, instead of in every file that reads
// a config, a safetensors header or a tokenizer.json, or writes the CLI's
// output (each file that parsed compiled the parser again: 2-4 s per file
// natively, more in the fuzz build's ASan + UBSan).
// Not a JSON library: the values are nlohmann's, and the rest of its API
// (members, types, iteration) is used directly.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace attnplay::json_text {

// nlohmann::json::parse(text): throws nlohmann::json::parse_error on a syntax
// error or invalid UTF-8.
nlohmann::json parse(std::string_view text);

// The same, but a discarded value (is_discarded()) instead of an exception.
nlohmann::json parse_or_discarded(std::string_view text);

// value.dump(indent): one line when indent is -1, else `indent` spaces per
// level; invalid UTF-8 in a string throws nlohmann::json::type_error (316).
std::string write(const nlohmann::json& value, int indent = -1);
std::string write(const nlohmann::ordered_json& value, int indent = -1);

// One line, invalid UTF-8 replaced by U+FFFD (the CLI's output: a token's
// text may be part of a character).
std::string write_replacing_invalid_utf8(const nlohmann::json& value);
std::string write_replacing_invalid_utf8(const nlohmann::ordered_json& value);

}  // namespace attnplay::json_text
