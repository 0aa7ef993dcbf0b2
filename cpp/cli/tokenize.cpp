// `attnplay tokenize --tokenizer PATH (--text TEXT | --file PATH) [--pair TEXT] [--no-special]`:
// prints {"ids", "tokens", "offsets" (byte [start, end) in each token's own text), "type_ids"}.
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/tokenizer_file.h"
#include "json/json_text.h"

namespace attnplay::cli {

int run_tokenize(const Args& args) {
  std::string tokenizer_path;
  std::optional<std::string> text, pair;
  bool add_special = true;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    if (args[i] == "--tokenizer" && has_value) {
      tokenizer_path = args[++i];
    } else if (args[i] == "--text" && has_value) {
      text = args[++i];
    } else if (args[i] == "--file" && has_value) {
      text = read_file(args[++i]);
    } else if (args[i] == "--pair" && has_value) {
      pair = args[++i];
    } else if (args[i] == "--no-special") {
      add_special = false;
    } else {
      std::cerr << "attnplay tokenize: unknown argument '" << args[i] << "'\n"
                << "usage: attnplay tokenize --tokenizer PATH (--text TEXT | --file PATH) [--pair TEXT] [--no-special]\n";
      return 2;
    }
  }
  if (tokenizer_path.empty() || !text) {
    std::cerr << "attnplay tokenize: --tokenizer and one of --text / --file are required\n";
    return 2;
  }
  const Tokenizer tokenizer = load_tokenizer_file(tokenizer_path);
  const Encoding encoding =
      tokenizer.encode(*text, pair ? std::optional<std::string_view>(*pair) : std::nullopt, add_special);
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
