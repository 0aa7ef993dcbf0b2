// `attnplay rollout --model DIR (--text TEXT | --ids 1,2,3) [--method rollout|flow]`
// Runs a self-attention model folder and prints attention rollout or attention
// flow (analysis/rollout.h) as JSON {"model_type", "method", "truncated", "ids", "tokens",
// "rollout": [T][T]}: row i is how much the last layer's token i draws on
// input token j. Flow is printed under the same "rollout" key, "method" says
// which map it is.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/rollout.h"
#include "cli/commands.h"
#include "cli/text_or_ids.h"
#include "json/json_text.h"

namespace attnplay::cli {

int run_rollout(const Args& args) {
  TextOrIds input;
  RolloutMethod method = RolloutMethod::rollout;
  std::vector<Flag> flags = input.flags();
  flags.push_back({"--method", [&](const std::string& value) { method = parse_rollout_method(value); }});
  parse_flags(args, flags);
  if (!input.complete()) throw UsageError("--model and either --text or --ids are required");
  const TextModel model = load_text_model(input.dir);
  const TextOrIdsRun run = run_text_or_ids(model, input, false);
  const ForwardResult& f = run.forward;  // attentions [L, H, T, T]
  const std::vector<double> map = rolled_out(f.attentions, f.layers, f.heads, f.tokens, method);  // [T, T]
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int i = 0; i < f.tokens; ++i) {
    rows.push_back(std::vector<double>(map.begin() + static_cast<std::ptrdiff_t>(i) * f.tokens,
                                       map.begin() + static_cast<std::ptrdiff_t>(i + 1) * f.tokens));
  }
  const nlohmann::ordered_json out = {{"model_type", model.model().config().model_type},
                                      {"method", rollout_method_name(method)},
                                      {"truncated", run.truncated},
                                      {"ids", run.ids},
                                      {"tokens", run.tokens},
                                      {"rollout", std::move(rows)}};
  std::cout << json_text::write_replacing_invalid_utf8(out) << "\n";
  return 0;
}

}  // namespace attnplay::cli
