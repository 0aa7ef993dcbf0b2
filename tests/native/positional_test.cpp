// Sinusoidal positional encoding against its formula (Vaswani et al. 2017)
// evaluated in double, and learned position embeddings.
#include <doctest/doctest.h>

#include <cmath>

#include "attention/positional.h"
#include "reference.h"

using attnplay::Matrix;

TEST_CASE("sinusoidal encoding: PE[pos,2i] = sin(pos/10000^(2i/d)), PE[pos,2i+1] = cos(...)") {
  for (int d : {1, 2, 3, 4, 7, 16, 17, 64}) {
    const Matrix pe = attnplay::sinusoidal_positional_encoding(50, d);
    REQUIRE(pe.rows() == 50);
    REQUIRE(pe.cols() == d);
    for (int pos = 0; pos < 50; ++pos)
      for (int c = 0; c < d; ++c) {
        const double angle = pos / std::pow(10000.0, (c - c % 2) / static_cast<double>(d));
        CHECK(pe(pos, c) == doctest::Approx(c % 2 == 0 ? std::sin(angle) : std::cos(angle)).epsilon(1e-6));
      }
  }
  const Matrix pe = attnplay::sinusoidal_positional_encoding(3, 4);
  CHECK(pe(0, 0) == 0.0f);  // position 0: sin 0, cos 0, ...
  CHECK(pe(0, 1) == 1.0f);
  CHECK(pe(1, 2) == doctest::Approx(std::sin(0.01)));  // 1 / 10000^(2/4)
  CHECK_THROWS_AS(attnplay::sinusoidal_positional_encoding(3, 0), std::invalid_argument);
}

TEST_CASE("learned positional embeddings are added to token embeddings") {
  std::mt19937 rng(2);
  const Matrix wte = ref::random_matrix(10, 6, rng), wpe = ref::random_matrix(4, 6, rng);
  const Matrix out = attnplay::embed_tokens({3, 3, 9}, wte, wpe);
  REQUIRE(out.rows() == 3);
  CHECK((out.row(0) - (wte.row(3) + wpe.row(0))).cwiseAbs().maxCoeff() == 0.0f);
  CHECK((out.row(1) - (wte.row(3) + wpe.row(1))).cwiseAbs().maxCoeff() == 0.0f);
  CHECK((out.row(2) - (wte.row(9) + wpe.row(2))).cwiseAbs().maxCoeff() == 0.0f);
  CHECK_THROWS_WITH_AS(attnplay::embed_tokens({10}, wte, wpe), "embed_tokens: token id 10 outside the vocabulary of 10",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(attnplay::embed_tokens({1, 1, 1, 1, 1}, wte, wpe),
                       "embed_tokens: 5 tokens but only 4 positions", std::invalid_argument);
}
