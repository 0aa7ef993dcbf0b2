// Internal: small helpers shared by the readers and writers of tokenizer.json
// sections (loader.cpp and the components' own *_json functions): errors that
// name their section, the "type" field, optional fields. Not a JSON library.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "json/json_text.h"

namespace attnplay::detail {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;  // for writing: keeps the key order of the format

[[noreturn]] inline void fail(const std::string& section, const std::string& message) {
  throw std::invalid_argument("tokenizer.json " + section + ": " + message);
}

inline std::string type_of(const json& j, const std::string& section) {
  if (!j.is_object()) fail(section, "expected an object");
  if (!j.contains("type") || !j["type"].is_string()) fail(section, "missing \"type\"");
  return j["type"].get<std::string>();
}

// The member `key` of an object, or null when it is absent (or j is not an
// object): a reference, never a copy (a model's vocab is 100,000s of nodes).
inline const json& member_or_null(const json& j, const char* key) {
  static const json null_value;
  const auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

template <class T>
T get_or(const json& j, const char* key, T fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  return j[key].get<T>();
}

}  // namespace attnplay::detail
