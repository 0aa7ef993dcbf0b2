// Head-pattern scores on attention maps whose pattern is known by
// construction (exact previous-token, next-token, induction, sink, self and
// local heads, and uniform attention), plus the labels derived from the scores.
#include <doctest/doctest.h>

#include <cmath>

#include "analysis/head_patterns.h"

using attnplay::Matrix;

namespace {

// Causal uniform attention: row i spreads 1/(i+1) over keys 0..i.
Matrix uniform_causal(int t) {
  Matrix a = Matrix::Zero(t, t);
  for (int i = 0; i < t; ++i) a.row(i).head(i + 1).setConstant(1.0f / static_cast<float>(i + 1));
  return a;
}

}  // namespace

TEST_CASE("an exact previous-token head scores 1; uniform attention scores its average weight") {
  const int t = 10;
  Matrix prev = Matrix::Zero(t, t);
  prev(0, 0) = 1;
  for (int i = 1; i < t; ++i) prev(i, i - 1) = 1;
  CHECK(attnplay::previous_token_score(prev) == doctest::Approx(1.0));
  CHECK(attnplay::self_score(prev) == doctest::Approx(0.1));  // only row 0 on the diagonal

  double expected = 0;
  for (int i = 1; i < t; ++i) expected += 1.0 / (i + 1);
  CHECK(attnplay::previous_token_score(uniform_causal(t)) == doctest::Approx(expected / (t - 1)));
}

TEST_CASE("an exact next-token head scores 1; a causal map scores 0") {
  const int t = 6;
  Matrix next = Matrix::Zero(t, t);
  for (int i = 0; i + 1 < t; ++i) next(i, i + 1) = 1;
  next(t - 1, t - 1) = 1;
  CHECK(attnplay::next_token_score(next) == doctest::Approx(1.0));
  CHECK(attnplay::next_token_score(uniform_causal(t)) == doctest::Approx(0.0));
  CHECK(attnplay::next_token_score(Matrix::Constant(t, t, 1.0f / t)) == doctest::Approx(1.0 / t));
  CHECK_THROWS_AS(attnplay::next_token_score(Matrix::Zero(2, 3)), std::invalid_argument);
}

TEST_CASE("broad: entropy over the keys a query may see, relative to uniform") {
  const int t = 5;
  CHECK(attnplay::broad_score(uniform_causal(t), true) == doctest::Approx(1.0));
  CHECK(attnplay::broad_score(Matrix::Constant(t, t, 1.0f / t), false) == doctest::Approx(1.0));
  CHECK(attnplay::broad_score(Matrix::Identity(t, t), false) == doctest::Approx(0.0));
  // Every row half on two keys: entropy log 2 of log T (bidirectional), of log(i+1) (causal, rows 1..T-1).
  Matrix pair = Matrix::Zero(t, t);
  for (int i = 0; i < t; ++i) {
    pair(i, 0) = 0.5f;
    pair(i, i == 0 ? 1 : i) = 0.5f;
  }
  CHECK(attnplay::broad_score(pair, false) == doctest::Approx(std::log(2.0) / std::log(5.0)));
  double causal = 0;
  for (int i = 1; i < t; ++i) causal += std::log(2.0) / std::log(i + 1.0);
  pair(0, 0) = 1;  // row 0 sees one key and is left out
  pair(0, 1) = 0;
  CHECK(attnplay::broad_score(pair, true) == doctest::Approx(causal / (t - 1)));
}

TEST_CASE("induction: the token after the earlier occurrence") {
  const int period = 6;
  Matrix a = uniform_causal(2 * period);
  for (int q = period; q < 2 * period - 1; ++q) {  // a perfect induction head
    a.row(q).setZero();
    a(q, q - period + 1) = 1;
  }
  CHECK(attnplay::induction_score(a, period) == doctest::Approx(1.0));
  CHECK(attnplay::induction_score(uniform_causal(2 * period), period) < 0.2f);
  CHECK_THROWS_AS(attnplay::induction_score(a, 7), std::invalid_argument);
}

TEST_CASE("sink, self and local scores") {
  const int t = 8;
  Matrix sink = Matrix::Zero(t, t);
  sink.col(0).setOnes();
  CHECK(attnplay::sink_score(sink, {0}) == doctest::Approx(1.0));
  CHECK(attnplay::sink_score(sink, {0, 0, 7}) == doctest::Approx(1.0));
  CHECK(attnplay::sink_score(sink, {7}) == doctest::Approx(0.0));
  CHECK_THROWS_AS(attnplay::sink_score(sink, {8}), std::invalid_argument);

  CHECK(attnplay::self_score(Matrix::Identity(t, t)) == doctest::Approx(1.0));
  CHECK(attnplay::local_score(Matrix::Identity(t, t)) == doctest::Approx(0.0));

  Matrix band = Matrix::Zero(t, t);  // half the weight 2 tokens back, half 5 back
  for (int i = 5; i < t; ++i) {
    band(i, i - 2) = 0.5f;
    band(i, i - 5) = 0.5f;
  }
  CHECK(attnplay::local_score(band, 3) == doctest::Approx(0.5 * 3 / t));
  CHECK_THROWS_AS(attnplay::previous_token_score(Matrix::Zero(2, 3)), std::invalid_argument);
}

TEST_CASE("labels name the patterns above threshold, strongest first") {
  attnplay::HeadScores s;
  s.previous_token = 0.9f;
  s.induction = 0.6f;  // 2x its threshold: listed before previous-token (1.8x)
  s.sink = 0.1f;
  CHECK(attnplay::head_labels(s) == std::vector<std::string>{"induction", "previous-token"});
  CHECK(attnplay::head_labels(attnplay::HeadScores{}).empty());
  attnplay::HeadScores bert;
  bert.next_token = 0.6f;
  bert.broad = 0.95f;
  bert.sink = 0.9f;  // 1.5x, next-token 1.2x, broad 1.06x
  CHECK(attnplay::head_labels(bert) == std::vector<std::string>{"sink", "next-token", "broad"});
}
