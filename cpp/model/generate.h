// Text generation with a causal model: the prompt runs once, then each new
// token runs alone against the KV cache (one token's work per step). The next
// token is the most probable one (greedy) or drawn from the softmax of
// logits / temperature, restricted to the top-k ids and then to the smallest
// set whose probability reaches top-p (nucleus), with a deterministic PRNG
// (SplitMix64 from the seed), so native and WASM builds give the same tokens
// for the same seed. Every step reports the new token, the attention row of
// the position that predicted it in every layer and head, the token's
// probability (under the model and under the sampler) and its most probable
// rivals. A Generator runs one step per call (a caller can stop between
// steps); generate() runs them all.
// Not here: tokenization (tokenizer/), the forward pass (model/model.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "model/model.h"

namespace attnplay {

struct SamplingOptions {
  bool greedy = true;        // argmax (lowest id on ties); the fields below are ignored
  float temperature = 1.0f;  // > 0; logits are divided by it
  int top_k = 0;             // keep the k most probable ids; 0 = all
  float top_p = 1.0f;        // in (0, 1]: keep the most probable ids until their probability reaches top_p
  std::uint64_t seed = 0;    // SplitMix64 state: one uniform draw in [0, 1) per step
};

struct GenerationOptions {
  int max_new_tokens = 16;  // at most this many tokens (fewer when the context is full or EOS is drawn)
  SamplingOptions sampling;
  bool stop_at_eos = true;  // stop after a token of config.json's eos_token_id
  int rivals = 10;          // how many of the most probable ids each step reports (top_ids)
};

struct GenerationStep {
  std::int32_t token = 0;        // the new token
  int position = 0;              // position of the query row that predicted it (the token before it)
  int keys = 0;                  // Tk = position + 1
  std::vector<float> attention;  // [L, H, Tk]: that query row in every layer and head
  double probability = 0;        // softmax(logits)[token]: the model's probability of the token (temperature 1)
  double sampling_probability = 1;  // the chance the sampler gave it (after temperature, top-k, top-p; 1 when greedy)
  std::vector<std::int32_t> top_ids;     // [rivals] the most probable ids under the model, best first (ties: lower id)
  std::vector<float> top_probabilities;  // [rivals] their softmax(logits) probabilities
};

// SplitMix64 (Steele, Lea & Flood 2014): next() advances the state by
// 0x9E3779B97F4A7C15 and mixes it; uniform() is next()'s top 53 bits / 2^53.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform();  // [0, 1)

 private:
  std::uint64_t state_;
};

// The next token from one row of logits [V]. Sampling: ids ordered by logit
// (ties: lower id first), the first top_k kept, softmax of logit / temperature
// in double precision, then the shortest prefix whose probability sum reaches
// top_p; one uniform draw u picks the first id whose cumulative probability
// exceeds u · (the prefix's sum). Throws std::invalid_argument for bad options.
struct TokenChoice {
  std::int32_t id = 0;
  double probability = 1;  // the probability the rule gave id: 1 when greedy, else its share of the nucleus
};
TokenChoice next_token(const float* logits, int vocab, const SamplingOptions& options, SplitMix64& rng);

// One generation in progress: the KV cache, the PRNG and the ids so far, so
// that a caller runs one step at a time. The model must outlive it. The
// constructor throws std::invalid_argument for a non-causal model, an empty or
// invalid prompt, a prompt that fills the context, or bad options.
class Generator {
 public:
  Generator(const Model& model, std::vector<std::int32_t> prompt, GenerationOptions options);
  // The next token, or nullopt once done: max_new_tokens reached, the context
  // full, or (stop_at_eos) the last token was an EOS id.
  std::optional<GenerationStep> step();
  const std::vector<std::int32_t>& ids() const { return ids_; }  // the prompt and the tokens so far

 private:
  const Model& model_;
  GenerationOptions options_;
  SplitMix64 rng_;
  KvCache cache_;
  std::vector<std::int32_t> ids_;
  std::vector<std::int32_t> pending_;  // ids the next pass runs: the prompt, then the last token
  int steps_ = 0;
  bool done_ = false;
};

// The prompt followed by the generated ids (a Generator run to the end).
// on_step (may be empty) runs after each new token; returning false stops
// generation. Throws as Generator's constructor.
std::vector<std::int32_t> generate(const Model& model, const std::vector<std::int32_t>& prompt,
                                   const GenerationOptions& options,
                                   const std::function<bool(const GenerationStep&)>& on_step = {});

}  // namespace attnplay
