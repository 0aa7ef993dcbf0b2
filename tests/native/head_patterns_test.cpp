// Head-pattern scores on attention maps whose pattern is known by
// construction (exact previous-token, induction, sink, self and local heads,
// and uniform attention), plus the labels derived from the scores.
#include <doctest/doctest.h>

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
}
