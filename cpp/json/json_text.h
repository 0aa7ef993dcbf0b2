// JSON text in and out for the whole core: nlohmann/json's parser and writer
// are instantiated once, in json_text.cpp, instead of in every file that reads
// a config, a safetensors header or a tokenizer.json, or writes the CLI's
// output (each file that parsed compiled the parser again: 2-4 s per file
// natively, more in the fuzz build's ASan + UBSan).
// Also base64, the way bytes travel inside JSON text (tokenizer.json's
// precompiled charsmap, the CLI's tensors).
// Not a JSON library: the values are nlohmann's, and the rest of its API
// (members, types, iteration) is used directly.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
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

// Standard base64 (RFC 4648's alphabet, '=' padding) of raw bytes, and back:
// nullopt for a character outside the alphabet, anything after the padding,
// or padding that does not complete a group of four (unpadded text is read).
std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace attnplay::json_text
