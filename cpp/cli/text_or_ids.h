// One forward pass of a model folder over text or token ids, for the model
// commands that print per-token analyses (rollout, lens): the ids run, their
// display strings, and the ForwardResult.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pipeline/text_model.h"

namespace attnplay::cli {

struct TextOrIdsRun {
  std::vector<std::int32_t> ids;   // [T] the tokens run (text: after truncation to the model's positions)
  nlohmann::ordered_json tokens;   // [T] display strings ("␣the", "[CLS]"); the ids as text without a tokenizer
  ForwardResult forward;           // attentions [L, H, T, T]; hidden states on request
  bool truncated = false;          // the text had more tokens than the model's positions
};

// Text is tokenized as the model was trained (BERT: [CLS] ... [SEP]); ids run as given.
inline TextOrIdsRun run_text_or_ids(const TextModel& model, const std::optional<std::string>& text,
                                    const std::vector<std::int32_t>& ids, bool hidden_states) {
  TextOrIdsRun out;
  out.tokens = nlohmann::ordered_json::array();
  if (text) {
    RunOptions options;
    options.hidden_states = hidden_states;
    RunResult run = model.run(*text, std::nullopt, options);
    out.ids = run.encoding.ids();
    for (const Token& t : run.encoding.tokens) out.tokens.push_back(t.display);
    out.forward = std::move(run.forward);
    out.truncated = run.truncated;
    return out;
  }
  ForwardRequest request;
  request.ids = ids;
  request.hidden_states = hidden_states;
  out.ids = ids;
  for (const std::int32_t id : ids) {
    out.tokens.push_back(model.tokenizer() ? model.tokenizer()->display(id) : std::to_string(id));
  }
  out.forward = model.model().forward(request);
  return out;
}

}  // namespace attnplay::cli
