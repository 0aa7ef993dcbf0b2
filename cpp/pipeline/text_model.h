// A model with its tokenizer: text in, tokens and the traced forward pass out.
// run(text [, text_b]) tokenizes exactly as the model was trained, finds the
// mask token's positions ([MASK] or <mask>), truncates input longer than the
// model's positions explicitly (and says so in the result), runs every layer, and names the
// top-k predictions by their display strings (as the tokens are named). The
// options of a run are a ForwardRequest's (model/model.h): one request type
// from the bindings and the CLI down to the forward pass.
// Not here: the tokenizer (tokenizer/), the forward pass (model/), bindings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "pipeline/tokens.h"
#include "tokenizer/tokenizer.h"

namespace attnplay {

struct RunResult {
  Encoding encoding;               // the tokens the model saw (after truncation)
  ForwardResult forward;           // attentions [L, H, T, T], trace, top-k, ...
  std::vector<int> mask_positions; // encoders: positions of the mask token (top_k rows follow them)
  std::vector<std::string> top_k_displays;  // display string of each top-k id, row by row [rows * k]
  int input_tokens = 0;            // tokens before truncation
  bool truncated = false;          // input_tokens > the model's positions
};

class TextModel {
 public:
  // tokenizer_file: tokenizer.json or a SentencePiece .model
  // (Tokenizer::from_file_bytes); empty: then only forward() on ids works.
  static TextModel from_buffers(std::string_view config_json, std::string_view safetensors,
                                std::string_view tokenizer_file);
  // The same from a checkpoint of one file or several shards.
  static TextModel from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint,
                                   std::string_view tokenizer_file);
  TextModel(Model model, std::optional<Tokenizer> tokenizer);

  const Model& model() const { return model_; }
  const std::optional<Tokenizer>& tokenizer() const { return tokenizer_; }

  // The display string of vocabulary id `id`, as tokens are named; an id past
  // the tokenizer's entries (an embedding may have more rows: Qwen2.5 pads
  // 151,665 tokens to 151,936) is named "<no token: id N>". Needs a tokenizer.
  std::string display(std::int32_t id) const;
  // display() of each id of `rows`, row by row [rows * k] (RunResult::top_k_displays). Needs a tokenizer.
  std::vector<std::string> top_k_displays(const std::vector<TopK>& rows) const;

  // The token a text writes where an encoder should predict: "[MASK]" (BERT's
  // WordPiece vocabularies) or "<mask>" (RoBERTa's, XLM-R's), whichever the
  // tokenizer has; none for a causal model or without a tokenizer.
  std::optional<std::string> mask_token() const;
  // The positions of mask_token() in ids. Throws std::invalid_argument when
  // the model has none.
  std::vector<int> mask_positions(const std::vector<std::int32_t>& ids) const;
  // request.ids from the encoding, its segment ids where the model reads them
  // (BERT, ELECTRA; RoBERTa and DistilBERT read segment 0 throughout) and,
  // when the request asks for predictions (top_k, token_loss) of an encoder
  // with a masked-LM head, its mask positions (top_k 0 when there are none).
  void set_text_inputs(const Encoding& encoding, ForwardRequest& request) const;

  // The request's options (trace, hidden_states, top_k, ablate, ablation,
  // token_loss, mask_labels, ...) with its ids, type_ids and mask_positions
  // taken from the text (the caller leaves those empty). Throws
  // std::invalid_argument when there is no tokenizer or the text is empty.
  RunResult run(std::string_view text, std::optional<std::string_view> text_b, ForwardRequest request) const;

 private:
  Model model_;
  std::optional<Tokenizer> tokenizer_;
};

}  // namespace attnplay
