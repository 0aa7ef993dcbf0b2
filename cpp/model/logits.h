// Reading one row of logits over the vocabulary: its softmax normaliser,
// the loss of a true token, the k most probable tokens; Gemma 2's final
// softcapping of the logits. Kept apart from
// the recipes (model/forward_pass.cpp) so that it stays optimised for speed in the WASM build (it runs
// over every position's 4,096+ logits) while the recipes' orchestration is
// compiled for size (cpp/CMakeLists.txt).
// Not here: computing the logits (model/forward_pass.cpp), sampling (generate.h).
#pragma once
#include <cstdint>

#include "model/model.h"

namespace attnplay {

// The max and the softmax denominator Σ exp(logit - max) of one row of logits.
struct SoftmaxNorm {
  float max = 0, sum = 0;
};
SoftmaxNorm softmax_norm(const float* logits, int vocab);

// Gemma 2's final logit softcapping, in place: logits [N, V] become
// cap·tanh(logits / cap); nothing when cap is 0.
void softcap_logits(MatrixRef logits, float cap);

// -log softmax(logits)[target] (one row), given the row's softmax_norm.
float token_loss_of(const float* logits, const SoftmaxNorm& n, std::int32_t target);

// The k most probable entries of softmax(logits) (one row, its softmax_norm
// n), best first (ties: lower id first).
TopK top_k_of(const float* logits, int vocab, int k, const SoftmaxNorm& n);

}  // namespace attnplay
