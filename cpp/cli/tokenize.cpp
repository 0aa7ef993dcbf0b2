// `attnplay tokenize --tokenizer PATH (--text TEXT | --file PATH) [--pair TEXT] [--no-special]`:
// prints {"ids", "tokens", "offsets" (byte [start, end) in each token's own text), "type_ids"}.
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/tokenizer_file.h"
#include "json/json_text.h"

namespace attnplay::cli {

int run_tokenize(const Args& args) {
  std::string tokenizer_path;
  std::optional<std::string> text, pair;
  bool no_special = false;
  parse_flags(args, {text_flag("--tokenizer", tokenizer_path), text_flag("--text", text),
                     {"--file", [&](const std::string& path) { text = read_file(path); }}, text_flag("--pair", pair),
                     switch_flag("--no-special", no_special)});
  if (tokenizer_path.empty() || !text) throw UsageError("--tokenizer and one of --text / --file are required");
  const Tokenizer tokenizer = load_tokenizer_file(tokenizer_path);
  const Encoding encoding =
      tokenizer.encode(*text, pair ? std::optional<std::string_view>(*pair) : std::nullopt, !no_special);
  nlohmann::json out;
  out["ids"] = nlohmann::json::array();
  out["tokens"] = nlohmann::json::array();
  out["offsets"] = nlohmann::json::array();
  out["type_ids"] = nlohmann::json::array();
  for (const Token& t : encoding.tokens) {
    out["ids"].push_back(t.id);
    out["tokens"].push_back(t.piece);
    out["offsets"].push_back({t.byte_begin, t.byte_end});
    out["type_ids"].push_back(t.type_id);
  }
  // Pieces of invalid UTF-8 input are bytes: replace rather than fail on output.
  std::cout << json_text::write_replacing_invalid_utf8(out) << "\n";
  return 0;
}

}  // namespace attnplay::cli
