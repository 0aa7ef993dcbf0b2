// Attention core against the seeds' worked examples, a naive double-precision
// reference, and the invariants the tutorials teach (saturation, causal mask,
// permutation equivariance).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "attention/attention.h"
#include "attention/positional.h"
#include "reference.h"

using attnplay::AttentionOptions;
using attnplay::Matrix;

namespace {

Matrix matrix_from_json(const nlohmann::json& j) {
  Matrix m(static_cast<Eigen::Index>(j.size()), static_cast<Eigen::Index>(j[0].size()));
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) m(r, c) = j[r][c].get<float>();
  return m;
}

nlohmann::json load_golden(const char* name) {
  std::ifstream in(std::string(ATTNPLAY_GOLDEN_DIR) + "/" + name);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// Relative error scaled by the reference's magnitude.
double relative_error(const Matrix& got, const ref::Mat& want) {
  double mag = 0;
  for (const auto& row : want)
    for (double v : row) mag = std::max(mag, std::abs(v));
  return ref::max_abs_diff(got, want) / (1.0 + mag);
}

double max_row_weight_mean(const Matrix& w) { return w.rowwise().maxCoeff().mean(); }

// Share of weights that are within 0.01 of 0 or of 1 (a saturated softmax).
double saturated_fraction(const Matrix& w) {
  return ((w.array() < 0.01f) || (w.array() > 0.99f)).cast<double>().mean();
}

}  // namespace

TEST_CASE("seed 004: the NumPy worked example reproduces the printed attention to 1e-6") {
  const nlohmann::json seed = load_golden("seed_numpy_example.json");
  const Matrix x = matrix_from_json(seed["x"]);
  const auto t = attnplay::self_attention(x, matrix_from_json(seed["wq"]), matrix_from_json(seed["wk"]),
                                          matrix_from_json(seed["wv"]), AttentionOptions{});
  const Matrix expected = matrix_from_json(seed["expected_output"]);
  REQUIRE(t.output.rows() == 4);
  REQUIRE(t.output.cols() == 3);
  for (Eigen::Index r = 0; r < 4; ++r)
    for (Eigen::Index c = 0; c < 3; ++c) CHECK(t.output(r, c) == doctest::Approx(expected(r, c)).epsilon(1e-6));
  // The intermediates are the NumPy ones: Q = X·W_Q, scores = Q·Kᵀ, /√3.
  CHECK(t.q(2, 0) == 4.0f);  // word_3 = word_1 + word_2 -> row 0 + row 1 of W_Q
  CHECK(t.scores(0, 0) == 8.0f);  // q_1·k_1 = [2,0,2]·[2,2,2]
  CHECK(t.divisor == doctest::Approx(std::sqrt(3.0)));
  CHECK(t.scaled(0, 0) == doctest::Approx(8.0 / std::sqrt(3.0)));
}

TEST_CASE("seed 000: scores x100 saturate the softmax; scaling by sqrt(d_k) prevents it") {
  // The seed's experiment: softmax of a random 8-vector, and of the same
  // vector x100 (here temperature 0.01), which comes out nearly 0 or 1 everywhere.
  std::mt19937 rng(7);
  const Matrix scores = ref::random_matrix(2000, 8, rng);  // 2000 rows of randn(8)
  AttentionOptions plain;
  plain.scale = false;
  AttentionOptions times100 = plain;
  times100.temperature = 0.01f;
  const Matrix identity = Matrix::Identity(8, 8);  // keys = values = e_j: weights are the softmax of q
  const Matrix soft = attnplay::attend(scores, identity, identity, plain).weights;
  const Matrix hard = attnplay::attend(scores, identity, identity, times100).weights;
  CHECK(saturated_fraction(soft) < 0.2);
  CHECK(saturated_fraction(hard) > 0.95);
  CHECK(max_row_weight_mean(soft) < 0.5);
  CHECK(max_row_weight_mean(hard) > 0.97);

  // Why √d_k: q·k of random d_k-dim vectors has variance d_k, so with
  // d_k = 10000 raw scores are randn x100 - the same saturation - and dividing
  // by √d_k = 100 undoes it.
  const Matrix q = ref::random_matrix(16, 10000, rng), k = ref::random_matrix(16, 10000, rng);
  const Matrix v = ref::random_matrix(16, 4, rng);
  CHECK(saturated_fraction(attnplay::attend(q, k, v, plain).weights) > 0.95);
  CHECK(saturated_fraction(attnplay::attend(q, k, v, AttentionOptions{}).weights) < 0.2);
}

TEST_CASE("causal mask: weights above the diagonal are exactly 0, masked scores are -inf, rows sum to 1") {
  std::mt19937 rng(3);
  for (int t : {1, 2, 5, 17, 33}) {
    const Matrix x = ref::random_matrix(t, 8, rng);
    AttentionOptions options;
    options.causal = true;
    const auto h = attnplay::self_attention(x, ref::random_matrix(8, 4, rng), ref::random_matrix(8, 4, rng),
                                            ref::random_matrix(8, 4, rng), options);
    for (int i = 0; i < t; ++i) {
      CHECK(h.weights.row(i).sum() == doctest::Approx(1.0).epsilon(1e-6));
      for (int j = i + 1; j < t; ++j) {
        CHECK(h.weights(i, j) == 0.0f);
        CHECK(std::isinf(h.masked(i, j)));
        CHECK(h.masked(i, j) < 0);
      }
      for (int j = 0; j <= i; ++j) CHECK(std::isfinite(h.masked(i, j)));
    }
    CHECK(h.weights(0, 0) == 1.0f);  // the first token can only see itself
  }
}

// Gemma 2/3: scores over √scale_width (query_pre_attn_scalar), then cap·tanh(s / cap) before the mask
// (Gemma 2's attn_logit_softcapping); checked against the formula computed here in double.
TEST_CASE("scale width and softcap: weights are the softmax of cap·tanh(q·k / √w / cap), masked after the cap") {
  std::mt19937 rng(11);
  const int t = 6, dk = 8, w = 12;
  const float cap = 1.5f;
  const Matrix q = ref::random_matrix(t, dk, rng) * 3.0f, k = ref::random_matrix(t, dk, rng) * 3.0f;
  AttentionOptions options;
  options.causal = true;
  options.window = 3;
  options.scale_width = w;
  options.softcap = cap;
  const attnplay::HeadTrace h = attnplay::attend(q, k, ref::random_matrix(t, dk, rng), options);
  CHECK(h.divisor == doctest::Approx(std::sqrt(12.0)));
  CHECK(h.softcap == cap);
  for (int i = 0; i < t; ++i) {
    std::vector<double> capped(t, 0.0);
    double max = -1e300, sum = 0;
    for (int j = 0; j < t; ++j) {
      double dot = 0;
      for (int d = 0; d < dk; ++d) dot += static_cast<double>(q(i, d)) * k(j, d);
      capped[j] = cap * std::tanh(dot / std::sqrt(12.0) / cap);
      CHECK(h.capped(i, j) == doctest::Approx(capped[j]).epsilon(1e-5));
      CHECK(std::abs(h.capped(i, j)) <= cap);
      if (j <= i && i - j < 3) max = std::max(max, capped[j]);
    }
    for (int j = 0; j < t; ++j) sum += j <= i && i - j < 3 ? std::exp(capped[j] - max) : 0.0;
    for (int j = 0; j < t; ++j) {
      const double want = j <= i && i - j < 3 ? std::exp(capped[j] - max) / sum : 0.0;
      CHECK(h.weights(i, j) == doctest::Approx(want).epsilon(1e-5));
    }
  }
  options.softcap = 0;  // no cap: no capped step
  CHECK(attnplay::attend(q, k, ref::random_matrix(t, dk, rng), options).capped.size() == 0);
}

TEST_CASE("padding mask: padded keys get weight 0 for every query") {
  std::mt19937 rng(5);
  const Matrix x = ref::random_matrix(6, 8, rng);
  AttentionOptions options;
  options.key_mask = {1, 1, 1, 1, 0, 0};
  const auto h = attnplay::parameter_free_self_attention(x, options);
  for (int i = 0; i < 6; ++i) {
    CHECK(h.weights(i, 4) == 0.0f);
    CHECK(h.weights(i, 5) == 0.0f);
    CHECK(h.weights.row(i).sum() == doctest::Approx(1.0).epsilon(1e-6));
  }
  options.key_mask = {1, 0};
  CHECK_THROWS_WITH_AS(attnplay::parameter_free_self_attention(x, options),
                       "attention: padding mask has 2 entries for 6 keys", std::invalid_argument);
}

TEST_CASE("seed 002: without positions self-attention is permutation-equivariant; with them it is not") {
  std::mt19937 rng(11);
  const int t = 7, d = 16;
  const Matrix x = ref::random_matrix(t, d, rng);
  const Matrix wq = ref::random_matrix(d, d, rng, 0.3f), wk = ref::random_matrix(d, d, rng, 0.3f);
  const Matrix wv = ref::random_matrix(d, d, rng, 0.3f), wo = ref::random_matrix(d, d, rng, 0.3f);
  std::vector<int> perm(t);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  Matrix px(t, d);
  for (int i = 0; i < t; ++i) px.row(i) = x.row(perm[i]);

  const auto out = attnplay::multi_head_attention(x, wq, wk, wv, wo, 4, AttentionOptions{}).output;
  const auto pout = attnplay::multi_head_attention(px, wq, wk, wv, wo, 4, AttentionOptions{}).output;
  for (int i = 0; i < t; ++i) CHECK((pout.row(i) - out.row(perm[i])).cwiseAbs().maxCoeff() < 1e-5f);

  const Matrix pe = attnplay::sinusoidal_positional_encoding(t, d);
  const auto out_pe = attnplay::multi_head_attention(x + pe, wq, wk, wv, wo, 4, AttentionOptions{}).output;
  const auto pout_pe = attnplay::multi_head_attention(px + pe, wq, wk, wv, wo, 4, AttentionOptions{}).output;
  float largest = 0;
  for (int i = 0; i < t; ++i) largest = std::max(largest, (pout_pe.row(i) - out_pe.row(perm[i])).cwiseAbs().maxCoeff());
  CHECK(largest > 1e-2f);
}

TEST_CASE("single head against the double-precision reference, sizes around the SIMD width") {
  std::mt19937 rng(42);
  const std::vector<int> sizes = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 64, 65};
  for (int t : sizes) {
    for (int d : sizes) {
      CAPTURE(t);
      CAPTURE(d);
      const Matrix x = ref::random_matrix(t, d, rng);
      const Matrix wq = ref::random_matrix(d, d, rng, 0.2f), wk = ref::random_matrix(d, d, rng, 0.2f);
      const Matrix wv = ref::random_matrix(d, d, rng, 0.2f);
      AttentionOptions options;
      options.causal = (t + d) % 2 == 0;
      options.temperature = 0.5f + static_cast<float>(t % 3);
      const auto got = attnplay::self_attention(x, wq, wk, wv, options);
      const ref::Mat rx = ref::from(x);
      const auto want = ref::attention(ref::matmul(rx, ref::from(wq)), ref::matmul(rx, ref::from(wk)),
                                       ref::matmul(rx, ref::from(wv)), true, options.temperature, options.causal);
      CHECK(relative_error(got.scores, want.scores) < 1e-5);
      CHECK(ref::max_abs_diff(got.weights, want.weights) < 1e-5);
      CHECK(relative_error(got.output, want.output) < 1e-5);
    }
  }
}

TEST_CASE("multi-head: split into heads of d/H, per-head attention, concat, output projection") {
  std::mt19937 rng(9);
  for (int heads : {1, 2, 3, 4, 6, 12}) {
    const int t = 9, d = 12 * 4, dk = d / heads;
    CAPTURE(heads);
    const Matrix x = ref::random_matrix(t, d, rng);
    const Matrix wq = ref::random_matrix(d, d, rng, 0.15f), wk = ref::random_matrix(d, d, rng, 0.15f);
    const Matrix wv = ref::random_matrix(d, d, rng, 0.15f), wo = ref::random_matrix(d, 10, rng, 0.15f);
    AttentionOptions options;
    options.causal = true;
    const auto got = attnplay::multi_head_attention(x, wq, wk, wv, wo, heads, options);
    REQUIRE(got.heads.size() == static_cast<std::size_t>(heads));
    const ref::Mat rx = ref::from(x);
    const ref::Mat q = ref::matmul(rx, ref::from(wq)), k = ref::matmul(rx, ref::from(wk)),
                   v = ref::matmul(rx, ref::from(wv));
    ref::Mat concat(t, std::vector<double>(d));
    for (int h = 0; h < heads; ++h) {
      auto cols = [&](const ref::Mat& m) {
        ref::Mat out(t, std::vector<double>(dk));
        for (int i = 0; i < t; ++i)
          for (int c = 0; c < dk; ++c) out[i][c] = m[i][h * dk + c];
        return out;
      };
      const auto want = ref::attention(cols(q), cols(k), cols(v), true, 1.0, true);
      CHECK(got.heads[h].q.cols() == dk);
      CHECK(ref::max_abs_diff(got.heads[h].weights, want.weights) < 1e-5);
      for (int i = 0; i < t; ++i)
        for (int c = 0; c < dk; ++c) concat[i][h * dk + c] = want.output[i][c];
    }
    CHECK(relative_error(got.concat, concat) < 1e-5);
    CHECK(relative_error(got.output, ref::matmul(concat, ref::from(wo))) < 1e-5);
  }
}

// A decoding step's attention (one or two query rows against keys and values kept head by head, as a KV cache keeps
// them) gives attend_heads' weights and outputs: grouped-query heads, every mask, the scale width, the softcap and a
// temperature; the heads shared out among the threads once the work is big enough.
TEST_CASE("attend_heads_into: one or two query rows against per-head blocks give attend_heads' weights and outputs") {
  std::mt19937 rng(77);
  struct Heads {
    int query, key_value;
  };
  for (const Heads heads : {Heads{4, 4}, Heads{6, 2}, Heads{8, 1}}) {
    for (int Tk : {1, 2, 7, 300}) {
      for (int Tq = 1; Tq <= std::min(2, Tk); ++Tq) {
        CAPTURE(heads.query);
        CAPTURE(heads.key_value);
        CAPTURE(Tk);
        CAPTURE(Tq);
        constexpr int d_k = 32, d_v = 24, capacity = 320;  // each head's block holds `capacity` rows, Tk in use
        const Matrix q = ref::random_matrix(Tq, heads.query * d_k, rng);
        const Matrix key_blocks = ref::random_matrix(heads.key_value * capacity, d_k, rng);  // [KV·capacity, d_k]
        const Matrix value_blocks = ref::random_matrix(heads.key_value * capacity, d_v, rng);
        const attnplay::HeadRows k{key_blocks.data(), heads.key_value, Tk, d_k, d_k, capacity * d_k};
        const attnplay::HeadRows v{value_blocks.data(), heads.key_value, Tk, d_v, d_v, capacity * d_v};
        AttentionOptions options;
        options.causal = Tk % 2 == 1;
        options.window = Tk == 7 ? 3 : 0;
        options.scale_width = Tk == 300 ? 16 : 0;
        options.softcap = Tk == 2 ? 1.5f : 0.0f;
        options.temperature = Tk == 7 ? 2.0f : 1.0f;
        if (Tk == 300) {
          options.key_mask.assign(Tk, 1);
          options.key_mask[17] = 0;
        }
        std::vector<float> weights(static_cast<std::size_t>(heads.query) * Tq * Tk, -1.0f);  // [H, Tq, Tk]
        Matrix concat(Tq, heads.query * d_v);
        attnplay::attend_heads_into(q, k, v, heads.query, options, weights.data(), concat);
        const attnplay::MultiHeadTrace want =
            attnplay::attend_heads(q, k, v, heads.query, options, attnplay::TraceLevel::weights_only);
        for (int h = 0; h < heads.query; ++h) {
          CAPTURE(h);
          const Eigen::Map<const Matrix> got(weights.data() + static_cast<std::size_t>(h) * Tq * Tk, Tq, Tk);
          CHECK((got - want.heads[h].weights).cwiseAbs().maxCoeff() < 1e-6f);
          if (Tk == 300) CHECK(got.col(17).cwiseAbs().maxCoeff() == 0.0f);  // a padded key weighs exactly 0
        }
        CHECK((concat - want.concat).cwiseAbs().maxCoeff() < 1e-5f);
      }
    }
  }
  const Matrix q = Matrix::Ones(3, 8), blocks = Matrix::Ones(4, 8);
  const attnplay::HeadRows kv{blocks.data(), 1, 4, 8, 8, 32};
  std::vector<float> weights(12);
  Matrix concat(3, 8);
  CHECK_THROWS_WITH_AS(attnplay::attend_heads_into(q, kv, kv, 1, AttentionOptions{}, weights.data(), concat),
                       "attend_heads_into: at most 2 query rows and no score bias", std::invalid_argument);
}

TEST_CASE("parameter-free self-attention is softmax(X·Xᵀ)·X (seed 003's first step)") {
  // Three static embeddings ("money", "bank", "grows"); no learned weights.
  Matrix x(3, 4);
  x << 0.9f, 0.1f, 0.0f, 0.3f,  //
      0.6f, 0.2f, 0.1f, 0.7f,   //
      0.8f, 0.0f, 0.4f, 0.2f;
  AttentionOptions options;
  options.scale = false;
  const auto got = attnplay::parameter_free_self_attention(x, options);
  const ref::Mat rx = ref::from(x);
  const auto want = ref::attention(rx, rx, rx, false, 1.0, false);
  CHECK(ref::max_abs_diff(got.weights, want.weights) < 1e-6);
  CHECK(ref::max_abs_diff(got.output, want.output) < 1e-6);
  CHECK(got.scores(1, 1) == doctest::Approx(0.36 + 0.04 + 0.01 + 0.49));
}

TEST_CASE("invalid shapes and options give readable errors") {
  const Matrix x = Matrix::Ones(3, 4);
  CHECK_THROWS_WITH_AS(attnplay::self_attention(x, Matrix::Ones(5, 2), Matrix::Ones(4, 2), Matrix::Ones(4, 2),
                                                AttentionOptions{}),
                       "self_attention: Wq, Wk and Wv need 4 rows (the width of X)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(attnplay::multi_head_attention(x, Matrix::Ones(4, 6), Matrix::Ones(4, 6),
                                                      Matrix::Ones(4, 6), Matrix(), 4, AttentionOptions{}),
                       "multi_head_attention: projection widths (6, 6) are not divisible by 4 heads",
                       std::invalid_argument);
  AttentionOptions bad;
  bad.temperature = 0.0f;
  CHECK_THROWS_WITH_AS(attnplay::parameter_free_self_attention(x, bad),
                       "attention: temperature must be a positive finite number", std::invalid_argument);
  CHECK_THROWS_AS(attnplay::attend(Matrix::Ones(2, 3), Matrix::Ones(2, 4), Matrix::Ones(2, 4), AttentionOptions{}),
                  std::invalid_argument);
}
