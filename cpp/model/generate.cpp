// Implementation of model/generate.h.
#include "model/generate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "model/logits.h"
#include "tensor/fast_exp.h"

namespace attnplay {
namespace {

void check(const Model& model, const std::vector<std::int32_t>& prompt, const GenerationOptions& options) {
  if (!model.config().causal()) throw std::invalid_argument("generation needs a causal model; BERT fills masks instead");
  if (prompt.empty()) throw std::invalid_argument("generation needs a prompt of at least one token");
  if (static_cast<int>(prompt.size()) >= model.config().positions) {
    throw std::invalid_argument("the prompt's " + std::to_string(prompt.size()) + " tokens leave no room in the model's " +
                                std::to_string(model.config().positions) + " positions");
  }
  if (options.max_new_tokens < 0) throw std::invalid_argument("max_new_tokens must not be negative");
  const SamplingOptions& s = options.sampling;
  if (!s.greedy) {
    if (!(s.temperature > 0.0f) || !std::isfinite(s.temperature)) {
      throw std::invalid_argument("temperature must be a positive number");
    }
    if (s.top_k < 0) throw std::invalid_argument("top_k must not be negative");
    if (!(s.top_p > 0.0f && s.top_p <= 1.0f)) throw std::invalid_argument("top_p must be in (0, 1]");
  }
}

// Every id, the largest logit first (ties: lower id first): a stable radix
// sort, three passes of 11 bits, of keys that order the floats as numbers
// (-0 and +0 alike, as a comparison has them), over the ids in id order:
// sampling without top-k ranks 49,152 ids in well under a millisecond in WASM,
// where std::sort of (logit, id) pairs took about 7 ms.
std::vector<std::int32_t> rank_all(const float* logits, int vocab) {
  const std::size_t n = static_cast<std::size_t>(vocab);
  std::vector<std::uint32_t> keys(n), next_keys(n);  // [V] ascending key = descending logit
  std::vector<std::int32_t> ids(n), next_ids(n);     // [V]
  for (std::size_t i = 0; i < n; ++i) {
    const float logit = logits[i] == 0.0f ? 0.0f : logits[i];
    std::uint32_t bits;
    std::memcpy(&bits, &logit, sizeof bits);
    const std::uint32_t ascending = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;  // float order as unsigned
    keys[i] = ~ascending;
    ids[i] = static_cast<std::int32_t>(i);
  }
  constexpr int kDigitBits = 11;
  constexpr std::uint32_t kDigits = 1u << kDigitBits;
  for (int shift = 0; shift < 32; shift += kDigitBits) {
    std::array<std::size_t, kDigits> start{};  // where each digit's run begins
    for (const std::uint32_t key : keys) ++start[(key >> shift) & (kDigits - 1)];
    std::size_t position = 0;
    for (std::size_t& s : start) position += std::exchange(s, position);
    for (std::size_t i = 0; i < n; ++i) {  // in order: stable
      const std::size_t to = start[(keys[i] >> shift) & (kDigits - 1)]++;
      next_keys[to] = keys[i];
      next_ids[to] = ids[i];
    }
    keys.swap(next_keys);
    ids.swap(next_ids);
  }
  return ids;
}

// The `keep` ids of the largest logits [V], most probable first (ties: lower
// id first): a partial sort of (logit, id) pairs, which read memory in order,
// or the whole vocabulary ranked (rank_all).
std::vector<std::int32_t> most_probable(const float* logits, int vocab, std::size_t keep) {
  if (keep == static_cast<std::size_t>(vocab)) return rank_all(logits, vocab);
  std::vector<std::pair<float, std::int32_t>> ranked(static_cast<std::size_t>(vocab));  // [V] (logit, id)
  for (int i = 0; i < vocab; ++i) ranked[static_cast<std::size_t>(i)] = {logits[i], i};
  const auto better = [](const std::pair<float, std::int32_t>& a, const std::pair<float, std::int32_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  const auto end = ranked.begin() + static_cast<std::ptrdiff_t>(keep);
  std::partial_sort(ranked.begin(), end, ranked.end(), better);
  std::vector<std::int32_t> order(keep);
  for (std::size_t i = 0; i < keep; ++i) order[i] = ranked[i].second;
  return order;
}

// The query row [L, H, Tk] of the last token of a pass (attentions [L, H, T, Tk]),
// taken as it is when the pass ran one token (every step but the prompt's).
std::vector<float> last_row(ForwardResult& r) {
  if (r.tokens == 1) return std::move(r.attentions);
  std::vector<float> row;
  row.reserve(static_cast<std::size_t>(r.layers) * r.heads * r.keys);
  for (int l = 0; l < r.layers; ++l) {
    for (int h = 0; h < r.heads; ++h) {
      const float* w = &r.attentions[((static_cast<std::size_t>(l) * r.heads + h) * r.tokens + (r.tokens - 1)) * r.keys];
      row.insert(row.end(), w, w + r.keys);
    }
  }
  return row;
}

// The model's softmax(logits) [V]: the chosen token's probability and the
// `rivals` most probable ids (ties: lower id first), as the forward pass's
// top-k reads a row (model/logits.h: float, vectorized).
void model_probabilities(const float* logits, int vocab, int rivals, GenerationStep& s) {
  const SoftmaxNorm norm = softmax_norm(logits, vocab);
  s.probability = fast_exp(logits[s.token] - norm.max) / norm.sum;  // the exp of the normaliser and of top_k_of
  TopK top = top_k_of(logits, vocab, std::min(rivals, vocab), norm);
  s.top_ids = std::move(top.ids);
  s.top_probabilities = std::move(top.probabilities);
}

}  // namespace

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

TokenChoice next_token(const float* logits, int vocab, const SamplingOptions& options, SplitMix64& rng) {
  if (vocab <= 0) throw std::invalid_argument("next_token: empty vocabulary");
  for (int i = 0; i < vocab; ++i) {
    if (std::isnan(logits[i])) {
      throw std::invalid_argument("the model's logits contain NaN (token id " + std::to_string(i) +
                                  "): its weights hold NaN or infinite values, so there is nothing to choose from");
    }
  }
  if (options.greedy) return {static_cast<std::int32_t>(std::max_element(logits, logits + vocab) - logits), 1.0};
  const std::size_t keep = options.top_k > 0 ? std::min<std::size_t>(options.top_k, vocab) : static_cast<std::size_t>(vocab);
  const std::vector<std::int32_t> order = most_probable(logits, vocab, keep);
  std::vector<double> p(keep);  // softmax of logit / temperature over the kept ids
  const double max = logits[order[0]];
  double sum = 0;
  for (std::size_t i = 0; i < keep; ++i) sum += p[i] = std::exp((logits[order[i]] - max) / options.temperature);
  std::size_t nucleus = 0;  // shortest prefix reaching top_p
  double mass = 0;
  while (nucleus < keep && (nucleus == 0 || mass < options.top_p * sum)) mass += p[nucleus++];
  const double u = rng.uniform() * mass;
  double cumulative = 0;
  for (std::size_t i = 0; i < nucleus; ++i) {
    cumulative += p[i];
    if (u < cumulative) return {order[i], p[i] / mass};
  }
  return {order[nucleus - 1], p[nucleus - 1] / mass};
}

Generator::Generator(const Model& model, std::vector<std::int32_t> prompt, GenerationOptions options)
    : model_(model), options_(options), rng_(options.sampling.seed), ids_(std::move(prompt)) {
  check(model_, ids_, options_);
  if (options_.rivals < 0) throw std::invalid_argument("rivals must not be negative");
  pending_ = ids_;
  // The prompt and every token to come: no step copies the cache to grow it.
  cache_.reserved = static_cast<int>(std::min<std::int64_t>(model_.config().positions,
                                                             static_cast<std::int64_t>(ids_.size()) + options_.max_new_tokens));
}

std::optional<GenerationStep> Generator::step() {
  const ModelConfig& c = model_.config();
  if (done_ || steps_ >= options_.max_new_tokens || static_cast<int>(ids_.size()) >= c.positions) return std::nullopt;
  ForwardRequest request;
  request.ids = pending_;
  request.logits = true;
  request.prediction_positions = {-1};
  ForwardResult r = model_.forward(request, cache_);  // logits [1, V], attentions [L, H, T, Tk]
  const float* logits = r.logits.data();
  const TokenChoice choice = next_token(logits, c.vocab_size, options_.sampling, rng_);
  GenerationStep s;
  s.token = choice.id;
  s.sampling_probability = choice.probability;
  s.position = r.keys - 1;
  s.keys = r.keys;
  s.attention = last_row(r);
  model_probabilities(logits, c.vocab_size, options_.rivals, s);
  ids_.push_back(s.token);
  pending_ = {s.token};
  ++steps_;
  done_ = options_.stop_at_eos && std::count(c.eos_token_ids.begin(), c.eos_token_ids.end(), s.token) != 0;
  return s;
}

std::vector<std::int32_t> generate(const Model& model, const std::vector<std::int32_t>& prompt,
                                   const GenerationOptions& options,
                                   const std::function<bool(const GenerationStep&)>& on_step) {
  Generator generator(model, prompt, options);
  while (const std::optional<GenerationStep> s = generator.step()) {
    if (on_step && !on_step(*s)) break;
  }
  return generator.ids();
}

}  // namespace attnplay
