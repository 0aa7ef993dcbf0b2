// Implementation of analysis/rollout.h: Ā per layer, the rollout product, and
// Dinic's max flow on the layered graph (the same algorithm as web/attention/rollout.js).
#include "analysis/rollout.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace attnplay {
namespace {

std::string shape_text(int layers, int heads, int tokens) {
  return "[" + std::to_string(layers) + ", " + std::to_string(heads) + ", " + std::to_string(tokens) + ", " +
         std::to_string(tokens) + "]";
}

// Ā of every layer: attentions [L, H, T, T] -> [L, T, T], Ā_l = ½·mean_h(A_l) + ½·I, rows divided by their sum.
std::vector<double> residual_attention(const std::vector<float>& attentions, int layers, int heads, int tokens) {
  if (layers <= 0 || heads <= 0 || tokens <= 0) {
    throw std::invalid_argument("rollout needs at least one layer, head and token, not " +
                                shape_text(layers, heads, tokens));
  }
  const std::size_t t = static_cast<std::size_t>(tokens), plane = t * t;
  if (attentions.size() != static_cast<std::size_t>(layers) * heads * plane) {
    throw std::invalid_argument("attention has " + std::to_string(attentions.size()) + " values, shape " +
                                shape_text(layers, heads, tokens) + " needs " +
                                std::to_string(static_cast<std::size_t>(layers) * heads * plane));
  }
  std::vector<double> out(static_cast<std::size_t>(layers) * plane, 0.0);  // [L, T, T]
  for (std::size_t l = 0; l < static_cast<std::size_t>(layers); ++l) {
    double* bar = out.data() + l * plane;
    for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
      const float* a = attentions.data() + (l * heads + h) * plane;
      for (std::size_t i = 0; i < plane; ++i) bar[i] += a[i];
    }
    for (std::size_t r = 0; r < t; ++r) {
      double sum = 0;
      for (std::size_t c = 0; c < t; ++c) {
        const double value = 0.5 * (bar[r * t + c] / heads) + (r == c ? 0.5 : 0.0);
        bar[r * t + c] = value;
        sum += value;
      }
      for (std::size_t c = 0; c < t; ++c) bar[r * t + c] /= sum;
    }
  }
  return out;
}

// Residual capacities below this count as none (float round-off of the weights).
constexpr double kEpsilon = 1e-12;

// Dinic's algorithm on the layered graph of one attention stack: nodes l·T + a
// (token a at layer l, 0 = input); a node's residual neighbours are the T
// tokens one layer down (k < T) and the T tokens one layer up (k ≥ T).
class LayeredFlow {
 public:
  LayeredFlow(const std::vector<double>& capacity, int layers, int tokens)
      : capacity_(capacity), L_(layers), T_(tokens), flow_(capacity.size()),
        level_(static_cast<std::size_t>(layers + 1) * tokens), next_(level_.size()), queue_(level_.size()) {}

  double max_flow(int source, int sink) {
    std::fill(flow_.begin(), flow_.end(), 0.0);
    double total = 0;
    for (;;) {
      std::fill(level_.begin(), level_.end(), -1);
      level_[source] = 0;
      std::size_t head = 0, tail = 0;
      queue_[tail++] = source;
      while (head < tail) {
        const int u = queue_[head++];
        for (int k = 0; k < 2 * T_; ++k) {
          if (residual(u, k) <= kEpsilon) continue;
          const int v = neighbour(u, k);
          if (level_[v] >= 0) continue;
          level_[v] = level_[u] + 1;
          queue_[tail++] = v;
        }
      }
      if (level_[sink] < 0) return total;
      std::fill(next_.begin(), next_.end(), 0);
      for (double pushed = augment(source, sink, std::numeric_limits<double>::infinity()); pushed > 0;
           pushed = augment(source, sink, std::numeric_limits<double>::infinity())) {
        total += pushed;
      }
    }
  }

 private:
  // Index into capacity/flow of edge (l+1, a) → (l, b).
  std::size_t edge(int l, int a, int b) const { return (static_cast<std::size_t>(l) * T_ + a) * T_ + b; }
  double residual(int u, int k) const {
    const int l = u / T_, a = u % T_;
    if (k < T_) return l > 0 ? capacity_[edge(l - 1, a, k)] - flow_[edge(l - 1, a, k)] : 0.0;
    return l < L_ ? flow_[edge(l, k - T_, a)] : 0.0;
  }
  int neighbour(int u, int k) const { return (u / T_) * T_ + k - (k < T_ ? T_ : 0); }
  void push(int u, int k, double amount) {
    const int l = u / T_, a = u % T_;
    if (k < T_) {
      flow_[edge(l - 1, a, k)] += amount;
    } else {
      flow_[edge(l, k - T_, a)] -= amount;
    }
  }
  double augment(int u, int sink, double limit) {
    if (u == sink) return limit;
    for (; next_[u] < 2 * T_; ++next_[u]) {
      const int k = next_[u];
      const double room = residual(u, k);
      if (room <= kEpsilon) continue;
      const int v = neighbour(u, k);
      if (level_[v] != level_[u] + 1) continue;
      const double pushed = augment(v, sink, std::min(limit, room));
      if (pushed > 0) {
        push(u, k, pushed);
        return pushed;
      }
    }
    return 0;
  }

  const std::vector<double>& capacity_;  // [L, T, T]: (l+1, a) → (l, b) at (l·T + a)·T + b
  const int L_, T_;
  std::vector<double> flow_;  // same layout as capacity
  std::vector<int> level_, next_, queue_;  // per node
};

}  // namespace

RolloutMethod parse_rollout_method(const std::string& name) {
  if (name == "rollout") return RolloutMethod::rollout;
  if (name == "flow") return RolloutMethod::flow;
  throw std::invalid_argument("unknown rollout method '" + name + "' (use rollout or flow)");
}

const char* rollout_method_name(RolloutMethod method) { return method == RolloutMethod::flow ? "flow" : "rollout"; }

std::vector<double> attention_rollout(const std::vector<float>& attentions, int layers, int heads, int tokens) {
  const std::vector<double> bars = residual_attention(attentions, layers, heads, tokens);  // [L, T, T]
  const std::size_t t = static_cast<std::size_t>(tokens), plane = t * t;
  std::vector<double> rolled(bars.begin(), bars.begin() + static_cast<std::ptrdiff_t>(plane));  // Ā_1
  std::vector<double> next(plane);
  for (std::size_t l = 1; l < static_cast<std::size_t>(layers); ++l) {
    const double* bar = bars.data() + l * plane;
    std::fill(next.begin(), next.end(), 0.0);  // Ā_l · rolled
    for (std::size_t i = 0; i < t; ++i) {
      for (std::size_t k = 0; k < t; ++k) {
        const double a = bar[i * t + k];
        if (a == 0) continue;
        for (std::size_t j = 0; j < t; ++j) next[i * t + j] += a * rolled[k * t + j];
      }
    }
    rolled.swap(next);
  }
  return rolled;
}

std::vector<double> attention_flow(const std::vector<float>& attentions, int layers, int heads, int tokens) {
  const std::vector<double> capacity = residual_attention(attentions, layers, heads, tokens);  // [L, T, T]
  if (layers * std::pow(static_cast<double>(tokens), 4) > kMaxFlowWork) {
    throw std::invalid_argument("attention flow over " + std::to_string(layers) + " layers of " +
                                std::to_string(tokens) + " tokens is too much work (" + std::to_string(tokens) +
                                "² max-flow problems); use rollout, or fewer tokens or layers");
  }
  LayeredFlow graph(capacity, layers, tokens);
  std::vector<double> out(static_cast<std::size_t>(tokens) * tokens);  // [T, T]
  for (int i = 0; i < tokens; ++i) {
    for (int j = 0; j < tokens; ++j) out[static_cast<std::size_t>(i) * tokens + j] = graph.max_flow(layers * tokens + i, j);
  }
  return out;
}

std::vector<double> rolled_out(const std::vector<float>& attentions, int layers, int heads, int tokens,
                               RolloutMethod method) {
  return method == RolloutMethod::flow ? attention_flow(attentions, layers, heads, tokens)
                                       : attention_rollout(attentions, layers, heads, tokens);
}

}  // namespace attnplay
