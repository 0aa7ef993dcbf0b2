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

struct Seq2SeqAttentionRequest {
  std::vector<std::int32_t> source_ids;   // --ids (or from text)
  std::vector<std::int32_t> decoder_ids;  // --decoder-ids; empty: the start token only (or from target)
  std::optional<std::string> text;        // --text / --file: the source, tokenized with </s>
  std::optional<std::string> target;      // --target: the target, after the decoder's start token
  std::vector<Seq2SeqHead> ablate;        // --ablate PART:L:H,...: heads knocked out
  AblationMode ablation = AblationMode::zero;  // --ablation
  int top_k = 0;                          // --top-k: "top_k" of every decoder position
  bool token_loss = false;                // --token-loss: "token_loss", teacher-forced [T - 1]
  bool rank_heads = false;                // --rank-heads: "head_ranking" over the three parts
};

TranslationModel load_translation_model(const ModelFiles& files);

// Writes the JSON of encoder, decoder and cross attentions to `out`; returns the exit code.
int seq2seq_attention(const ModelFiles& files, const Seq2SeqAttentionRequest& request, std::ostream& out);

}  // namespace attnplay::cli
