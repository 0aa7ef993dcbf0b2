// The input of the model commands that print per-token analyses (rollout,
// lens): --model DIR and either --text TEXT or --ids 1,2,3, and one forward
// pass over it: the ids run, their display strings, and the ForwardResult.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/ids.h"
#include "model/directory.h"
#include "pipeline/text_model.h"

namespace attnplay::cli {

struct TextOrIds {
  std::string dir;                  // --model
  std::optional<std::string> text;  // --text
  std::vector<std::int32_t> ids;    // --ids

  // The flags --model, --text and --ids, writing into this object.
  std::vector<Flag> flags() { return {text_flag("--model", dir), text_flag("--text", text), ids_flag("--ids", ids)}; }
  // A model folder and exactly one of text and ids.
  bool complete() const { return !dir.empty() && ids.empty() == text.has_value(); }
};

struct TextOrIdsRun {
  std::vector<std::int32_t> ids;   // [T] the tokens run (text: after truncation to the model's positions)
  nlohmann::ordered_json tokens;   // [T] display strings ("␣the", "[CLS]"); the ids as text without a tokenizer
  ForwardResult forward;           // attentions [L, H, T, T]; hidden states on request
  bool truncated = false;          // the text had more tokens than the model's positions
};

// The text model of a folder's files, reading text with the tokenizer they make (folder_tokenizer).
inline TextModel text_model_of(const ModelFiles& files) {
  Model model = Model::from_checkpoint(files.config_json, files.checkpoint);
  std::optional<Tokenizer> tokenizer = folder_tokenizer(files, model.config().model_type);
  return TextModel(std::move(model), std::move(tokenizer));
}

inline TextModel load_text_model(const std::string& dir) { return text_model_of(read_model_directory(dir)); }

// Text is tokenized as the model was trained (BERT: [CLS] ... [SEP]); ids run as given.
inline TextOrIdsRun run_text_or_ids(const TextModel& model, const TextOrIds& input, bool hidden_states) {
  TextOrIdsRun out;
  out.tokens = nlohmann::ordered_json::array();
  ForwardRequest request;
  request.hidden_states = hidden_states;
  if (input.text) {
    RunResult run = model.run(*input.text, std::nullopt, request);
    out.ids = run.encoding.ids();
    for (const Token& t : run.encoding.tokens) out.tokens.push_back(t.display);
    out.forward = std::move(run.forward);
    out.truncated = run.truncated;
    return out;
  }
  request.ids = input.ids;
  out.ids = input.ids;
  for (const std::int32_t id : input.ids) {
    out.tokens.push_back(model.tokenizer() ? model.tokenizer()->display(id) : std::to_string(id));
  }
  out.forward = model.model().forward(request);
  return out;
}

}  // namespace attnplay::cli
