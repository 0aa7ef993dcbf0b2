// A command's flags as a table: each flag is its name and what it sets, and
// parse_flags applies a command line to the table. A command is its flags and
// a function (main.cpp's command table holds each one's usage). The flags of
// the model request (`attention`'s --ids, --type-ids, --top-k, --token-loss,
// --ablate, --ablation) write the ForwardRequest's fields (model/model.h) of
// the same names, as the JS request's do (web/engine/engine-inputs.js).
// Not here: what the values mean beyond their type (each command checks them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "cli/commands.h"
#include "cli/ids.h"

namespace attnplay::cli {

// A command line that the command cannot take: main prints the message and
// the command's usage, and exits with status 2.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct Flag {
  std::string name;                             // "--top-k"
  std::function<void(const std::string&)> set;  // given the flag's value ("" for a switch)
  bool is_switch = false;                       // takes no value
};

// Applies `args` to `flags` in order. Throws UsageError for an argument that
// is no flag of the table or lacks its value, and what a flag's set() throws.
inline void parse_flags(const Args& args, const std::vector<Flag>& flags) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto flag = std::find_if(flags.begin(), flags.end(), [&](const Flag& f) { return f.name == args[i]; });
    if (flag == flags.end() || (!flag->is_switch && i + 1 >= args.size())) {
      throw UsageError("unknown or incomplete argument '" + args[i] + "'");
    }
    flag->set(flag->is_switch ? std::string() : args[++i]);
  }
}

// Flags that write their value into `out`.
inline Flag text_flag(const std::string& name, std::string& out) {
  return {name, [&out](const std::string& value) { out = value; }};
}
inline Flag text_flag(const std::string& name, std::optional<std::string>& out) {
  return {name, [&out](const std::string& value) { out = value; }};
}
inline Flag switch_flag(const std::string& name, bool& out) {
  return {name, [&out](const std::string&) { out = true; }, true};
}
inline Flag ids_flag(const std::string& name, std::vector<std::int32_t>& out) {
  return {name, [&out, name](const std::string& value) { out = parse_ids(value, name); }};
}
// One integer (parse_ids' checks: a 32-bit integer, named in the error).
inline Flag int_flag(const std::string& name, int& out) {
  return {name, [&out, name](const std::string& value) {
            const std::vector<std::int32_t> number = parse_ids(value, name);
            if (number.size() != 1) throw std::invalid_argument(name + ": give one number");
            out = number[0];
          }};
}

// --ablation zero|mean (attention/attention.h's names).
inline Flag ablation_flag(AblationMode& out) {
  return {"--ablation", [&out](const std::string& value) {
            const std::optional<AblationMode> mode = ablation_mode_from_name(value);
            if (!mode) throw UsageError("--ablation is zero or mean, not '" + value + "'");
            out = *mode;
          }};
}

}  // namespace attnplay::cli
