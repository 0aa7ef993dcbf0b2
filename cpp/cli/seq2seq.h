// What the CLI's encoder-decoder code (translate.cpp) offers the other
// commands: loading a translation model from a folder, and the
// encoder-decoder form of `attnplay attention`.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "model/directory.h"
#include "pipeline/translation_model.h"

namespace attnplay::cli {

// The encoder-decoder form of `attnplay attention`: the pass (model/model.h's
// ForwardRequest: --ids as its source_ids, --decoder-ids as its ids,
// --ablate PART:L:H, --ablation, --top-k, --token-loss), or the texts the ids
// come from, and whether to rank every head.
struct Seq2SeqAttentionRequest {
  ForwardRequest forward;                 // its ids empty: the target's, or the start token only
  std::optional<std::string> text;        // --text / --file: the source, tokenized with </s>
  std::optional<std::string> target;      // --target: the target, after the decoder's start token
  bool rank_heads = false;                // --rank-heads: "head_ranking" over the three parts
};

TranslationModel load_translation_model(const ModelFiles& files);

// Writes the JSON of encoder, decoder and cross attentions to `out`; returns the exit code.
int seq2seq_attention(const ModelFiles& files, const Seq2SeqAttentionRequest& request, std::ostream& out);

}  // namespace attnplay::cli
