// Implementation of analysis/head_patterns.h.
#include "analysis/head_patterns.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace attnplay {
namespace {

void require_square(const ConstMatrixRef& a, const char* what) {
  if (a.rows() != a.cols()) {
    throw std::invalid_argument(std::string(what) + ": attention map must be square [T, T]");
  }
}

}  // namespace

float previous_token_score(const ConstMatrixRef& a) {
  require_square(a, "previous_token_score");
  if (a.rows() < 2) return 0.0f;
  double sum = 0;
  for (Eigen::Index i = 1; i < a.rows(); ++i) sum += a(i, i - 1);
  return static_cast<float>(sum / static_cast<double>(a.rows() - 1));
}

float next_token_score(const ConstMatrixRef& a) {
  require_square(a, "next_token_score");
  if (a.rows() < 2) return 0.0f;
  double sum = 0;
  for (Eigen::Index i = 0; i + 1 < a.rows(); ++i) sum += a(i, i + 1);
  return static_cast<float>(sum / static_cast<double>(a.rows() - 1));
}

float self_score(const ConstMatrixRef& a) {
  require_square(a, "self_score");
  if (a.rows() == 0) return 0.0f;
  return static_cast<float>(a.diagonal().cast<double>().mean());
}

float sink_score(const ConstMatrixRef& a, const std::vector<int>& sink_positions) {
  require_square(a, "sink_score");
  if (a.rows() == 0) return 0.0f;
  std::vector<int> keys = sink_positions;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  double sum = 0;
  for (int j : keys) {
    if (j < 0 || j >= a.cols()) throw std::invalid_argument("sink_score: sink position out of range");
    sum += a.col(j).cast<double>().sum();
  }
  return static_cast<float>(sum / static_cast<double>(a.rows()));
}

float local_score(const ConstMatrixRef& a, int window) {
  require_square(a, "local_score");
  if (window < 1) throw std::invalid_argument("local_score: window must be at least 1");
  if (a.rows() == 0) return 0.0f;
  double sum = 0;
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (Eigen::Index j = std::max<Eigen::Index>(0, i - window); j <= std::min<Eigen::Index>(a.cols() - 1, i + window); ++j) {
      if (j != i) sum += a(i, j);
    }
  }
  return static_cast<float>(sum / static_cast<double>(a.rows()));
}

float induction_score(const ConstMatrixRef& a, int period) {
  require_square(a, "induction_score");
  if (period < 2 || a.rows() < 2 * period) {
    throw std::invalid_argument("induction_score: need a sequence of at least two periods of length >= 2");
  }
  double sum = 0;
  int count = 0;
  for (Eigen::Index q = period; q < 2 * period - 1; ++q) {  // the token after q's earlier occurrence exists
    sum += a(q, q - period + 1);
    ++count;
  }
  return static_cast<float>(sum / count);
}

float broad_score(const ConstMatrixRef& a, bool causal) {
  require_square(a, "broad_score");
  double sum = 0;
  int rows = 0;
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    const Eigen::Index keys = causal ? i + 1 : a.cols();
    if (keys < 2) continue;
    double entropy = 0;
    for (Eigen::Index j = 0; j < keys; ++j) {
      const double w = a(i, j);
      if (w > 0) entropy -= w * std::log(w);
    }
    sum += entropy / std::log(static_cast<double>(keys));
    ++rows;
  }
  return rows == 0 ? 0.0f : static_cast<float>(sum / rows);
}

std::vector<std::string> head_labels(const HeadScores& s, const LabelThresholds& t) {
  std::vector<std::pair<float, std::string>> found;
  const auto add = [&](float score, float threshold, const char* name) {
    if (score >= threshold) found.emplace_back(score / threshold, name);
  };
  add(s.previous_token, t.previous_token, "previous-token");
  add(s.next_token, t.next_token, "next-token");
  add(s.induction, t.induction, "induction");
  add(s.sink, t.sink, "sink");
  add(s.self, t.self, "self");
  add(s.local, t.local, "local");
  add(s.broad, t.broad, "broad");
  std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> labels;
  for (auto& item : found) labels.push_back(std::move(item.second));
  return labels;
}

}  // namespace attnplay
