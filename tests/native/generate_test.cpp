// Generation with a KV cache on the golden checkpoints of every causal
// family: each cached step (one token run against the cache) gives the logits
// and attention rows of the uncached forward pass over the whole prefix
// (within 1e-5), which the PyTorch goldens pin down, and its top-5 (the same
// ids, log-probabilities within 1e-5): one-row products (tensor/gemv.h)
// against the packed GEMM, in F32, F16 and BF16; greedy generation equals
// an uncached argmax loop; sampling follows its documented rules (SplitMix64's
// published outputs, top-k and nucleus truncation, frequencies of the
// softmax); bad requests get specific errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "golden_models.h"
#include "model/directory.h"
#include "model/generate.h"
#include "model/model.h"

using namespace attnplay;
using namespace golden_models;

namespace {

Model load(const std::string& name) {
  const ModelFiles files = read_model_directory(model_dir(name));
  return Model::from_checkpoint(files.config_json, files.checkpoint);
}

// Exactly `max_new_tokens` steps: no stop at EOS.
GenerationOptions without_eos(int max_new_tokens) {
  GenerationOptions options;
  options.max_new_tokens = max_new_tokens;
  options.stop_at_eos = false;
  return options;
}

}  // namespace

// The cache keeps each head's rows together, grows by doubling and hands attention its rows in place: what was
// appended, head by head, in order, whatever the growth.
TEST_CASE("KvCache: appended rows read back per head in place across the growth of its matrices") {
  constexpr int kHeads = 2, kWidth = 3;
  KvCache cache;
  REQUIRE(cache.ready_for(2));
  CHECK_FALSE(cache.ready_for(3));
  Matrix keys(0, kHeads * kWidth), values(0, kHeads * kWidth);  // [T, heads·width] the rows appended so far
  for (int step = 0; step < 40; ++step) {
    const int n = step % 5 + 1;  // 1 to 5 rows at a time: 120 rows in all, past several doublings
    Matrix k = Matrix::Random(n, kHeads * kWidth), v = Matrix::Random(n, kHeads * kWidth);
    for (int l = 0; l < 2; ++l) {
      const Matrix kl = k * (l + 1.0f), vl = v * (l + 1.0f);
      cache.append(l, HeadRows::side_by_side(kl, kHeads), HeadRows::side_by_side(vl, kHeads));
    }
    keys.conservativeResize(keys.rows() + n, Eigen::NoChange);
    values.conservativeResize(values.rows() + n, Eigen::NoChange);
    keys.bottomRows(n) = k;
    values.bottomRows(n) = v;
    CHECK(cache.length() == keys.rows());
    for (int l = 0; l < 2; ++l) {
      const HeadRows cached_keys = cache.layer_keys(l), cached_values = cache.layer_values(l);
      REQUIRE(cached_keys.heads == kHeads);
      for (int h = 0; h < kHeads; ++h) {
        CAPTURE(h);
        CHECK(cached_keys.head(h) == keys.middleCols(h * kWidth, kWidth) * (l + 1.0f));
        CHECK(cached_values.head(h) == values.middleCols(h * kWidth, kWidth) * (l + 1.0f));
        CHECK(cached_keys.head(h).outerStride() == kWidth);  // a head's rows one after another
      }
    }
  }
}

// A cache reserved for every row it will take is sized once: no step moves it.
TEST_CASE("KvCache: a reserved cache never moves") {
  KvCache cache;
  REQUIRE(cache.ready_for(1));
  cache.reserved = 300;
  const Matrix k = Matrix::Random(1, 8), v = Matrix::Random(1, 8);
  cache.append(0, HeadRows::side_by_side(k, 2), HeadRows::side_by_side(v, 2));
  const float* first = cache.layer_keys(0).data;
  for (int step = 1; step < 300; ++step) cache.append(0, HeadRows::side_by_side(k, 2), HeadRows::side_by_side(v, 2));
  CHECK(cache.length() == 300);
  CHECK(cache.layer_keys(0).data == first);
  CHECK_THROWS_WITH_AS(cache.append(0, HeadRows::side_by_side(k, 4), HeadRows::side_by_side(v, 4)),
                       "KV cache: layer 0 holds 2 heads; appending 4 key and 4 value heads", std::invalid_argument);
}

TEST_CASE("cached steps give the uncached logits, top-5 and attention rows") {
  for (const std::string name : kModels) {
    CAPTURE(name);
    const Model model = load(name);
    if (!model.config().causal()) continue;
    const std::vector<std::int32_t> ids = golden(name)["cases"][0]["ids"].get<std::vector<std::int32_t>>();
    const int T = static_cast<int>(ids.size()), L = model.config().layers, H = model.config().heads;
    ForwardRequest full_request;
    full_request.ids = ids;
    full_request.logits = true;
    full_request.top_k = 5;
    const ForwardResult full = model.forward(full_request);  // logits [T, V], attentions [L, H, T, T], top-5 [T]
    const float scale = full.logits.cwiseAbs().maxCoeff();

    KvCache cache;
    const int prompt = 3;
    for (int start = 0; start < T;) {
      const int n = start == 0 ? prompt : 1;  // the prompt at once, then one token per step
      ForwardRequest step;
      step.ids.assign(ids.begin() + start, ids.begin() + start + n);
      step.logits = true;
      step.top_k = 5;
      const ForwardResult r = model.forward(step, cache);  // logits [n, V], attentions [L, H, n, start + n], top-5 [n]
      REQUIRE(r.keys == start + n);
      CHECK(cache.length() == start + n);
      for (int i = 0; i < n; ++i) {
        const int position = start + i;
        CAPTURE(position);
        CHECK((r.logits.row(i) - full.logits.row(position)).cwiseAbs().maxCoeff() <= 1e-5f * scale);
        // The same five most likely tokens, their log-probabilities within
        // 1e-5 (plus a float's rounding of logits as large as these: its
        // spacing is 7.6e-6 at 64, the largest here).
        const TopK& cached_top = r.top_k[static_cast<std::size_t>(i)];
        const TopK& full_top = full.top_k[static_cast<std::size_t>(position)];
        CHECK(cached_top.ids == full_top.ids);
        for (std::size_t t = 0; t < full_top.probabilities.size(); ++t) {
          CHECK(std::abs(std::log(cached_top.probabilities[t]) - std::log(full_top.probabilities[t])) < 1e-5 + 1e-6 * scale);
        }
        double worst = 0;
        for (int l = 0; l < L; ++l) {
          for (int h = 0; h < H; ++h) {
            for (int j = 0; j < T; ++j) {
              const float cached = j < r.keys ? r.attention(l, h, i, j) : 0.0f;
              worst = std::max(worst, static_cast<double>(std::abs(cached - full.attention(l, h, position, j))));
            }
          }
        }
        CHECK(worst < 1e-5);
      }
      start += n;
    }
  }
}

TEST_CASE("greedy generation equals an uncached argmax loop, and steps report the predicting row") {
  for (const char* name : {"gpt2-l1-h1-k64-f32", "llama-gqa-llama3-bf16", "mistral-window3-f16", "pythia-parallel-f16"}) {
    CAPTURE(name);
    const Model model = load(name);
    const std::vector<std::int32_t> prompt = {40, 50, 60, 70};
    const GenerationOptions options = without_eos(10);
    std::vector<GenerationStep> steps;
    const std::vector<std::int32_t> ids = generate(model, prompt, options, [&](const GenerationStep& s) {
      steps.push_back(s);
      return true;
    });
    REQUIRE(ids.size() == prompt.size() + 10);
    REQUIRE(steps.size() == 10);
    std::vector<std::int32_t> reference = prompt;
    for (int step = 0; step < 10; ++step) {
      ForwardRequest request;
      request.ids = reference;
      request.logits = true;
      const ForwardResult r = model.forward(request);
      const int last = static_cast<int>(reference.size()) - 1;
      const float* row = r.logits.row(last).data();
      reference.push_back(static_cast<std::int32_t>(std::max_element(row, row + model.config().vocab_size) - row));
      const GenerationStep& s = steps[static_cast<std::size_t>(step)];
      CHECK(s.token == reference.back());
      CHECK(s.position == last);
      REQUIRE(s.keys == last + 1);
      double worst = 0;
      for (int l = 0; l < r.layers; ++l) {
        for (int h = 0; h < r.heads; ++h) {
          for (int j = 0; j < s.keys; ++j) {
            const float got = s.attention[(static_cast<std::size_t>(l) * r.heads + h) * s.keys + j];
            worst = std::max(worst, static_cast<double>(std::abs(got - r.attention(l, h, last, j))));
          }
        }
      }
      CHECK(worst < 1e-5);
    }
    CHECK(ids == reference);
  }
}

TEST_CASE("seeded sampling with the cache equals an uncached sampling loop; steps report the model's probabilities") {
  for (const char* name : {"gpt2-l2-h12-k8-f16", "llama-gqa-llama3-bf16", "qwen3-qknorm-bf16"}) {
    CAPTURE(name);
    const Model model = load(name);
    const std::vector<std::int32_t> prompt = {40, 50, 60, 70};
    GenerationOptions options = without_eos(8);
    options.rivals = 5;
    options.sampling = {false, 1.3f, 40, 0.9f, 2024};
    Generator generator(model, prompt, options);
    SplitMix64 rng(options.sampling.seed);
    std::vector<std::int32_t> reference = prompt;
    for (int step = 0; step < 8; ++step) {
      const std::optional<GenerationStep> s = generator.step();
      REQUIRE(s.has_value());
      ForwardRequest request;  // the whole prefix, no cache
      request.ids = reference;
      request.logits = true;
      const ForwardResult r = model.forward(request);
      const float* row = r.logits.row(static_cast<int>(reference.size()) - 1).data();
      const int V = model.config().vocab_size;
      const TokenChoice choice = next_token(row, V, options.sampling, rng);
      CHECK(s->token == choice.id);
      CHECK(s->sampling_probability == doctest::Approx(choice.probability).epsilon(1e-5));
      double sum = 0;  // softmax of the uncached logits, float64
      const double max = *std::max_element(row, row + V);
      for (int v = 0; v < V; ++v) sum += std::exp(row[v] - max);
      CHECK(s->probability == doctest::Approx(std::exp(row[s->token] - max) / sum).epsilon(1e-4));
      REQUIRE(s->top_ids.size() == 5);
      for (std::size_t j = 0; j < 5; ++j) {
        CHECK(s->top_probabilities[j] == doctest::Approx(std::exp(row[s->top_ids[j]] - max) / sum).epsilon(1e-4));
        if (j > 0) CHECK(s->top_probabilities[j] <= s->top_probabilities[j - 1]);
      }
      CHECK(s->top_probabilities[0] == doctest::Approx(1.0 / sum).epsilon(1e-4));  // the best id has the largest logit
      reference.push_back(choice.id);
    }
    CHECK(!generator.step().has_value());  // max_new_tokens reached
    CHECK(generator.ids() == reference);
  }
}

TEST_CASE("generation stops at the context's end and at EOS") {
  const Model model = load("gpt2-l1-h1-k64-f32");  // 16 positions, eos_token_id 256
  GenerationOptions options = without_eos(100);
  CHECK(generate(model, {1, 2, 3}, options).size() == 16);
  options.stop_at_eos = true;
  int steps = 0;
  const std::vector<std::int32_t> ids = generate(model, {1, 2, 3}, options, [&](const GenerationStep& s) {
    ++steps;
    return s.token != 256 && steps < 100;
  });
  const auto eos = std::find(ids.begin() + 3, ids.end(), 256);
  CHECK((eos == ids.end() ? ids.size() == 16 : eos + 1 == ids.end()));
}

TEST_CASE("SplitMix64 gives the reference implementation's outputs") {
  SplitMix64 rng(0);  // outputs of Vigna's splitmix64.c seeded with 0
  CHECK(rng.next() == 0xE220A8397B1DCDAFull);
  CHECK(rng.next() == 0x6E789E6AA1B965F4ull);
  CHECK(rng.next() == 0x06C45D188009454Full);
  SplitMix64 u(42);
  for (int i = 0; i < 1000; ++i) {
    const double x = u.uniform();
    CHECK((x >= 0.0 && x < 1.0));
  }
}

TEST_CASE("sampling draws from the truncated softmax of logits / temperature") {
  const float logits[5] = {2.0f, 1.0f, 0.0f, -1.0f, 1.0f};  // ids 1 and 4 tie: 1 ranks first
  SamplingOptions options;
  options.greedy = false;
  options.top_k = 3;    // keeps ids 0, 1, 4
  options.top_p = 0.9f; // e²:e:e = .576, .212, .212 -> ids 0 and 1 reach .788 < .9, id 4 too: all three
  options.temperature = 1.0f;
  SplitMix64 rng(7);
  std::vector<int> counts(5);
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++counts[static_cast<std::size_t>(next_token(logits, 5, options, rng).id)];
  const double z = std::exp(2.0) + 2 * std::exp(1.0);
  CHECK(counts[0] / double(n) == doctest::Approx(std::exp(2.0) / z).epsilon(0.03));
  CHECK(counts[1] / double(n) == doctest::Approx(std::exp(1.0) / z).epsilon(0.05));
  CHECK(counts[4] / double(n) == doctest::Approx(std::exp(1.0) / z).epsilon(0.05));
  CHECK(counts[2] == 0);
  CHECK(counts[3] == 0);

  options.temperature = 0.5f;  // exp((l - 2) / .5): 1, e⁻², e⁻² -> .787, .106, .106
  options.top_p = 0.85f;       // .787 < .85; + .106 (id 1, the lower id of the tie) reaches it: ids 0 and 1
  std::fill(counts.begin(), counts.end(), 0);
  for (int i = 0; i < n; ++i) ++counts[static_cast<std::size_t>(next_token(logits, 5, options, rng).id)];
  CHECK(counts[0] / double(n) == doctest::Approx(1.0 / (1.0 + std::exp(-2.0))).epsilon(0.02));  // .881
  CHECK(counts[0] + counts[1] == n);

  SamplingOptions greedy;
  CHECK(next_token(logits, 5, greedy, rng).id == 0);
  CHECK(next_token(logits, 5, greedy, rng).probability == 1.0);
  const float tie[3] = {1.0f, 3.0f, 3.0f};
  CHECK(next_token(tie, 3, greedy, rng).id == 1);

  // NaN logits (a checkpoint with NaN weights): a clear error, greedy or sampled, never an arbitrary id.
  const float broken[3] = {1.0f, std::nanf(""), 0.5f};
  CHECK_THROWS_WITH_AS(next_token(broken, 3, greedy, rng), doctest::Contains("logits contain NaN (token id 1)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(next_token(broken, 3, options, rng), doctest::Contains("logits contain NaN"),
                       std::invalid_argument);
}

// The order next_token's header states, written out with a comparison sort: ids by logit, ties lower id first.
std::vector<std::int32_t> documented_order(const std::vector<float>& logits) {
  std::vector<std::int32_t> order(logits.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return logits[a] > logits[b]; });
  return order;
}

// The rest of the rule over that order: the first top_k, softmax of logit / temperature in double, the shortest
// prefix reaching top_p, one uniform draw.
TokenChoice documented_choice(const std::vector<float>& logits, const std::vector<std::int32_t>& order,
                              const SamplingOptions& options, SplitMix64& rng) {
  const std::size_t keep = options.top_k > 0 ? std::min<std::size_t>(options.top_k, order.size()) : order.size();
  const double max = logits[order[0]];
  std::vector<double> p(keep);
  double sum = 0;
  for (std::size_t i = 0; i < keep; ++i) sum += p[i] = std::exp((logits[order[i]] - max) / options.temperature);
  std::size_t nucleus = 0;
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

// Sampling over the whole vocabulary ranks it with a radix sort: the same ids and probabilities as the documented rule,
// with many ties, -0 beside +0, and logits of -infinity.
TEST_CASE("sampling without top-k gives the documented rule's tokens and probabilities") {
  std::mt19937 draws(12);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(6000);
  for (float& l : logits) l = std::round(normal(draws) * 4.0f) / 4.0f;  // quarters: hundreds of ties
  for (std::size_t i = 0; i < logits.size(); i += 97) logits[i] = -0.0f;
  for (std::size_t i = 50; i < logits.size(); i += 131) logits[i] = -std::numeric_limits<float>::infinity();
  const std::vector<std::int32_t> order = documented_order(logits);
  for (const float top_p : {1.0f, 0.95f, 0.5f}) {
    for (const float temperature : {0.3f, 1.0f, 2.5f}) {
      CAPTURE(top_p);
      CAPTURE(temperature);
      SamplingOptions options;
      options.greedy = false;
      options.top_p = top_p;
      options.temperature = temperature;
      SplitMix64 rng(99), reference_rng(99);
      for (int draw = 0; draw < 300; ++draw) {
        const TokenChoice got = next_token(logits.data(), static_cast<int>(logits.size()), options, rng);
        const TokenChoice want = documented_choice(logits, order, options, reference_rng);
        REQUIRE(got.id == want.id);
        REQUIRE(got.probability == want.probability);
      }
    }
  }
}

TEST_CASE("bad generation requests get specific errors") {
  const Model gpt2 = load("gpt2-l1-h1-k64-f32");
  GenerationOptions options;
  CHECK_THROWS_WITH_AS(generate(load("bert-l2-h2-k32-f32"), {2, 3}, options),
                       doctest::Contains("generation needs a causal model"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(generate(gpt2, {}, options), doctest::Contains("at least one token"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(generate(gpt2, std::vector<std::int32_t>(16, 1), options),
                       doctest::Contains("leave no room in the model's 16 positions"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(generate(gpt2, {1, 999}, options), doctest::Contains("token id 999"), std::invalid_argument);
  options.sampling.greedy = false;
  options.sampling.top_p = 0.0f;
  CHECK_THROWS_WITH_AS(generate(gpt2, {1}, options), "top_p must be in (0, 1]", std::invalid_argument);
  options.sampling.top_p = 1.0f;
  options.sampling.temperature = 0.0f;
  CHECK_THROWS_WITH_AS(generate(gpt2, {1}, options), "temperature must be a positive number", std::invalid_argument);
  KvCache cache;
  ForwardRequest request;
  request.ids = {1};
  request.type_ids = {0};
  CHECK_THROWS_WITH_AS(gpt2.forward(request, cache), doctest::Contains("cannot be used with a KV cache"),
                       std::invalid_argument);
}
