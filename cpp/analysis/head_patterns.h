// Head-pattern scores: numbers that say what an attention head does, computed
// from its attention map A [T, T] (rows = queries, each summing to 1).
// Used to label heads in the page and the model cards. Definitions:
//   previous-token  mean over i >= 1 of A[i, i-1]
//   next-token      mean over i < T-1 of A[i, i+1] (bidirectional models;
//                   always 0 under a causal mask)
//   self            mean over i of A[i, i]
//   sink            mean over i of the weight on "sink" keys (the first token
//                   and separators such as [SEP]; positions given by caller)
//   local           mean over i of the weight on keys 1..window tokens away
//   induction       on a sequence whose second half repeats the first
//                   (period P), mean over queries q in the second half of
//                   A[q, q - P + 1]: the token after the query's earlier
//                   occurrence (Olsson et al. 2022)
//   broad           mean over rows with at least two keys of the row's
//                   entropy divided by the log of its number of keys (i+1
//                   under a causal mask, T otherwise): 1 = uniform attention
//                   over everything the query may see, 0 = one key only
// Not here: running a model to get the maps (see the model runtime).
#pragma once

#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace attnplay {

float previous_token_score(const ConstMatrixRef& attention);
float next_token_score(const ConstMatrixRef& attention);
float self_score(const ConstMatrixRef& attention);
float sink_score(const ConstMatrixRef& attention, const std::vector<int>& sink_positions);
float local_score(const ConstMatrixRef& attention, int window = 3);
float induction_score(const ConstMatrixRef& attention, int period);
float broad_score(const ConstMatrixRef& attention, bool causal);

struct HeadScores {
  float previous_token = 0;
  float next_token = 0;
  float induction = 0;
  float sink = 0;
  float self = 0;
  float local = 0;
  float broad = 0;
};

// Thresholds above which a head gets a label.
struct LabelThresholds {
  float previous_token = 0.5f;
  float next_token = 0.5f;
  float induction = 0.3f;
  float sink = 0.6f;
  float self = 0.5f;
  float local = 0.7f;
  float broad = 0.9f;
};

// Names of the patterns whose score passes its threshold, strongest first:
// "previous-token", "next-token", "induction", "sink", "self", "local", "broad".
std::vector<std::string> head_labels(const HeadScores& scores, const LabelThresholds& thresholds = {});

}  // namespace attnplay
