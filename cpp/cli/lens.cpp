// `attnplay lens --model DIR (--text TEXT | --ids 1,2,3) [--top-k K]`
// The logit lens of a model folder (analysis/logit_lens.h) as JSON
// {"model_type", "truncated", "ids", "tokens", "top_k", "layers": [L + 1][T] of
// {"ids": [k], "tokens": [k], "probabilities": [k]}}: row 0 reads the
// embeddings, row l the output of layer l; the last row is the model's own
// predictions (causal: the next token; BERT: the masked-LM head at every position).
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/logit_lens.h"
#include "cli/commands.h"
#include "cli/text_or_ids.h"
#include "json/json_text.h"

namespace attnplay::cli {

int run_lens(const Args& args) {
  TextOrIds input;
  int top_k = 5;
  std::vector<Flag> flags = input.flags();
  flags.push_back(int_flag("--top-k", top_k));
  parse_flags(args, flags);
  if (!input.complete() || top_k < 1) throw UsageError("--model and either --text or --ids are required; --top-k is at least 1");
  const TextModel model = load_text_model(input.dir);
  const TextOrIdsRun run = run_text_or_ids(model, input, true);
  const LogitLens lens = logit_lens(model.model(), run.forward.hidden_states, top_k);
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();  // [L + 1][T]
  for (int r = 0; r < lens.rows; ++r) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (int t = 0; t < lens.tokens; ++t) {
      const TopK& cell = lens.at(r, t);
      nlohmann::ordered_json names = nlohmann::ordered_json::array();
      for (const std::int32_t id : cell.ids) {
        names.push_back(model.tokenizer() ? model.tokenizer()->display(id) : std::to_string(id));
      }
      row.push_back({{"ids", cell.ids}, {"tokens", std::move(names)}, {"probabilities", cell.probabilities}});
    }
    layers.push_back(std::move(row));
  }
  const nlohmann::ordered_json out = {{"model_type", model.model().config().model_type},
                                      {"truncated", run.truncated},
                                      {"ids", run.ids},
                                      {"tokens", run.tokens},
                                      {"top_k", top_k},
                                      {"layers", std::move(layers)}};
  std::cout << json_text::write_replacing_invalid_utf8(out) << "\n";
  return 0;
}

}  // namespace attnplay::cli
