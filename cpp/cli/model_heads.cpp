// `attnplay heads --model DIR [--sequences N] [--seed S]`
// Scores every head of a model folder (previous-token, next-token, induction,
// sink, self, local, broad; see analysis/head_analysis.h) and prints JSON
// {"model_type", "heads": [{"layer", "head", "previous_token", ..., "labels"}]}.
#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/head_analysis.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/text_or_ids.h"
#include "model/directory.h"
#include "json/json_text.h"

namespace attnplay::cli {

int run_heads(const Args& args) {
  std::string dir;
  HeadAnalysisOptions options;
  parse_flags(args, {text_flag("--model", dir), int_flag("--sequences", options.random_sequences),
                     {"--seed", [&](const std::string& value) { options.seed = static_cast<std::uint32_t>(std::stoul(value)); }}});
  if (dir.empty() || options.random_sequences < 1) throw UsageError("--model is required; --sequences is at least 1");
  const ModelFiles files = read_model_directory(dir);
  const TextModel model = text_model_of(files);
  nlohmann::ordered_json heads = nlohmann::ordered_json::array();
  for (const HeadReport& r : analyze_heads(model, options)) {
    heads.push_back({{"layer", r.layer},
                     {"head", r.head},
                     {"previous_token", r.scores.previous_token},
                     {"next_token", r.scores.next_token},
                     {"induction", r.scores.induction},
                     {"sink", r.scores.sink},
                     {"self", r.scores.self},
                     {"local", r.scores.local},
                     {"broad", r.scores.broad},
                     {"labels", r.labels}});
  }
  std::cout << json_text::write(nlohmann::ordered_json{{"model_type", model.model().config().model_type}, {"heads", heads}}, /*indent=*/1) << "\n";
  return 0;
}

}  // namespace attnplay::cli
