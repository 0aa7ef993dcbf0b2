// `attnplay lens --model DIR (--text TEXT | --ids 1,2,3) [--top-k K]`
// The logit lens of a model folder (analysis/logit_lens.h) as JSON
// {"model_type", "ids", "tokens", "top_k", "layers": [L + 1][T] of
// {"ids": [k], "tokens": [k], "probabilities": [k]}}: row 0 reads the
// embeddings, row l the output of layer l; the last row is the model's own
// predictions (causal: the next token; BERT: the masked-LM head at every position).
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "analysis/logit_lens.h"
#include "cli/commands.h"
#include "cli/ids.h"
#include "cli/text_or_ids.h"
#include "model/directory.h"

namespace attnplay::cli {
namespace {

const char* const kUsage = "usage: attnplay lens --model DIR (--text TEXT | --ids 1,2,3) [--top-k K]\n";

}  // namespace

int run_lens(const Args& args) {
  std::string dir;
  std::optional<std::string> text;
  std::vector<std::int32_t> ids;
  int top_k = 5;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    if (args[i] == "--model" && has_value) {
      dir = args[++i];
    } else if (args[i] == "--text" && has_value) {
      text = args[++i];
    } else if (args[i] == "--ids" && has_value) {
      ids = parse_ids(args[++i], "--ids");
    } else if (args[i] == "--top-k" && has_value) {
      top_k = std::stoi(args[++i]);
    } else {
      std::cerr << "attnplay lens: unknown or incomplete argument '" << args[i] << "'\n" << kUsage;
      return 2;
    }
  }
  if (dir.empty() || ids.empty() == !text.has_value() || top_k < 1) {
    std::cerr << kUsage << "(--model and either --text or --ids are required; --top-k is at least 1)\n";
    return 2;
  }
  const ModelFiles files = read_model_directory(dir);
  const TextModel model = TextModel::from_checkpoint(files.config_json, files.checkpoint, files.tokenizer.value_or(""));
  const TextOrIdsRun run = run_text_or_ids(model, text, ids, true);
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
  std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return 0;
}

}  // namespace attnplay::cli
