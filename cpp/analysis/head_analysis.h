// Scores every head of a loaded model with the head-pattern measures of
// head_patterns.h and labels the clear ones. Previous-token, next-token, self,
// sink, local and broad scores are averaged over a few fixed English sentences tokenized by
// the model's own tokenizer; the induction score over sequences of random
// tokens repeated twice (seeded, so reports are reproducible).
// Not here: the measures themselves (head_patterns.h), drawing the labels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/head_patterns.h"
#include "pipeline/text_model.h"

namespace attnplay {

struct HeadReport {
  int layer = 0;
  int head = 0;
  HeadScores scores;
  std::vector<std::string> labels;  // head_labels(scores)
};

struct HeadAnalysisOptions {
  int random_sequences = 8;  // induction: how many repeated random sequences
  int period = 40;           // induction: length of each half (capped by the model's positions)
  std::uint32_t seed = 1;
};

// The fixed English sentences the text scores are averaged over.
const std::vector<std::string>& head_analysis_sentences();

// One report per head, layer-major. Needs the model's tokenizer.
std::vector<HeadReport> analyze_heads(const TextModel& model, const HeadAnalysisOptions& options = {});

}  // namespace attnplay
