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
#include "cli/flags.h"
#include "cli/ids.h"
#include "cli/text_or_ids.h"
#include "model/directory.h"
#include "model/generate.h"
#include "pipeline/text_model.h"
#include "json/json_text.h"

namespace attnplay::cli {

int run_generate(const Args& args) {
  std::string dir;
  std::optional<std::string> text;
  std::vector<std::int32_t> ids;
  GenerationOptions options;
  bool greedy_flag = false, sampling_flag = false;
  // A sampling option: sets its value and marks the generation as sampled.
  const auto sampling = [&](const std::string& name, auto parse) {
    return Flag{name, [&sampling_flag, parse](const std::string& value) {
                  parse(value);
                  sampling_flag = true;
                }};
  };
  SamplingOptions& s = options.sampling;
  parse_flags(args, {text_flag("--model", dir), text_flag("--text", text), ids_flag("--ids", ids),
                     int_flag("--max-new-tokens", options.max_new_tokens), switch_flag("--greedy", greedy_flag),
                     sampling("--temperature", [&s](const std::string& v) { s.temperature = std::stof(v); }),
                     sampling("--top-k", [&s](const std::string& v) { s.top_k = std::stoi(v); }),
                     sampling("--top-p", [&s](const std::string& v) { s.top_p = std::stof(v); }),
                     sampling("--seed", [&s](const std::string& v) { s.seed = std::stoull(v); })});
  if (dir.empty() || ids.empty() == !text.has_value() || (greedy_flag && sampling_flag)) {
    throw UsageError("--model and either --text or --ids are required; --greedy excludes sampling options");
  }
  options.sampling.greedy = !sampling_flag;

  const ModelFiles files = read_model_directory(dir);
  const TextModel model = text_model_of(files);
  if (text) {
    if (!model.tokenizer()) throw std::invalid_argument("this model has no tokenizer (tokenizer.json or a SentencePiece model), so it cannot read text");
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
