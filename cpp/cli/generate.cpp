// `attnplay generate --model DIR (--text TEXT | --ids 1,2,3) [--max-new-tokens N]
//                    [--greedy | --temperature T --top-k K --top-p P --seed S]`
// Continues a prompt with a causal model folder (KV cache: one token's work
// per step) and prints JSON {"ids": prompt and generated ids, "text": the
// decoded ids, "tokens": display string of each id} (text and tokens need the
// folder's tokenizer.json; null without it). Greedy unless a sampling option
// is given; sampling is deterministic for a seed (see model/generate.h).
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/ids.h"
#include "model/directory.h"
#include "model/generate.h"
#include "pipeline/text_model.h"
#include "json/json_text.h"

namespace attnplay::cli {
namespace {

const char* const kGenerateUsage =
    "usage: attnplay generate --model DIR (--text TEXT | --ids 1,2,3) [--max-new-tokens N]\n"
    "                         [--greedy | --temperature T --top-k K --top-p P --seed S]\n";

}  // namespace

int run_generate(const Args& args) {
  std::string dir;
  std::optional<std::string> text;
  std::vector<std::int32_t> ids;
  GenerationOptions options;
  bool greedy_flag = false, sampling_flag = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    if (args[i] == "--model" && has_value) {
      dir = args[++i];
    } else if (args[i] == "--text" && has_value) {
      text = args[++i];
    } else if (args[i] == "--ids" && has_value) {
      ids = parse_ids(args[++i], "--ids");
    } else if (args[i] == "--max-new-tokens" && has_value) {
      options.max_new_tokens = std::stoi(args[++i]);
    } else if (args[i] == "--greedy") {
      greedy_flag = true;
    } else if (args[i] == "--temperature" && has_value) {
      options.sampling.temperature = std::stof(args[++i]);
      sampling_flag = true;
    } else if (args[i] == "--top-k" && has_value) {
      options.sampling.top_k = std::stoi(args[++i]);
      sampling_flag = true;
    } else if (args[i] == "--top-p" && has_value) {
      options.sampling.top_p = std::stof(args[++i]);
      sampling_flag = true;
    } else if (args[i] == "--seed" && has_value) {
      options.sampling.seed = std::stoull(args[++i]);
      sampling_flag = true;
    } else {
      std::cerr << "attnplay generate: unknown or incomplete argument '" << args[i] << "'\n" << kGenerateUsage;
      return 2;
    }
  }
  if (dir.empty() || ids.empty() == !text.has_value() || (greedy_flag && sampling_flag)) {
    std::cerr << kGenerateUsage << "(--model and either --text or --ids are required; --greedy excludes sampling options)\n";
    return 2;
  }
  options.sampling.greedy = !sampling_flag;

  const ModelFiles files = read_model_directory(dir);
  const TextModel model = TextModel::from_checkpoint(files.config_json, files.checkpoint, files.tokenizer.value_or(""));
  if (text) {
    if (!model.tokenizer()) throw std::invalid_argument("this model has no tokenizer.json or tokenizer.model, so it cannot read text");
    ids = model.tokenizer()->encode_ids(*text);
  }
  const std::vector<std::int32_t> all = generate(model.model(), ids, options);

  nlohmann::ordered_json out = {{"ids", all}, {"text", nullptr}, {"tokens", nullptr}};
  if (model.tokenizer()) {
    out["text"] = model.tokenizer()->decode(all);
    nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
    for (const std::int32_t id : all) tokens.push_back(model.tokenizer()->display(id));
    out["tokens"] = std::move(tokens);
  }
  std::cout << json_text::write_replacing_invalid_utf8(out) << "\n";
  return 0;
}

}  // namespace attnplay::cli
