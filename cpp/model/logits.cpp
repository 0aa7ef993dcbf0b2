// Implementation of model/logits.h.
#include "model/logits.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/fast_exp.h"

namespace attnplay {

// The max and the softmax denominator Σ exp(logit - max) of one row of
// logits. The max in eight independent lanes (no chain of dependent
// compares, as std::max_element has); the sum in eight partial sums of
// fast_exp, a loop that vectorizes.
void softcap_logits(MatrixRef logits, float cap) {
  if (cap > 0.0f) logits = logits.unaryExpr([cap](float x) { return cap * std::tanh(x / cap); });
}

SoftmaxNorm softmax_norm(const float* logits, int vocab) {
  SoftmaxNorm n;
  n.max = logits[0];
  float highest[8];
  std::fill(highest, highest + 8, logits[0]);
  int tail = 0;
  for (; tail + 8 <= vocab; tail += 8)
    for (int j = 0; j < 8; ++j) highest[j] = logits[tail + j] > highest[j] ? logits[tail + j] : highest[j];
  for (; tail < vocab; ++tail) n.max = logits[tail] > n.max ? logits[tail] : n.max;
  for (const float lane : highest) n.max = lane > n.max ? lane : n.max;
  float lanes[8] = {};
  tail = 0;
  for (; tail + 8 <= vocab; tail += 8)
    for (int j = 0; j < 8; ++j) lanes[j] += fast_exp(logits[tail + j] - n.max);
  for (; tail < vocab; ++tail) n.sum += fast_exp(logits[tail] - n.max);
  for (const float lane : lanes) n.sum += lane;
  return n;
}

// -log softmax(logits)[target] (one row), given the row's softmax_norm.
float token_loss_of(const float* logits, const SoftmaxNorm& n, std::int32_t target) {
  return std::log(n.sum) - (logits[target] - n.max);
}

// The k most probable entries of softmax(logits) (one row, its softmax_norm
// n), best first (ties: lower id first). One pass keeps the k best in order (k is small).
TopK top_k_of(const float* logits, int vocab, int k, const SoftmaxNorm& n) {
  k = std::min(k, vocab);
  if (k <= 0) return {};
  std::vector<std::int32_t> best;  // ids, best first
  best.reserve(static_cast<std::size_t>(k) + 1);
  for (int i = 0; i < vocab; ++i) {
    if (static_cast<int>(best.size()) == k && !(logits[i] > logits[best.back()])) continue;
    auto at = best.end();
    while (at != best.begin() && logits[i] > logits[*(at - 1)]) --at;
    best.insert(at, i);
    if (static_cast<int>(best.size()) > k) best.pop_back();
  }
  TopK top;
  for (const std::int32_t id : best) {
    top.ids.push_back(id);
    top.probabilities.push_back(fast_exp(logits[id] - n.max) / n.sum);
  }
  return top;
}

}  // namespace attnplay
