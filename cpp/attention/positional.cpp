// Implementation of attention/positional.h.
#include "attention/positional.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace attnplay {

Matrix sinusoidal_positional_encoding(int n_positions, int d) {
  if (n_positions < 0 || d <= 0) {
    throw std::invalid_argument("positional encoding: need n_positions >= 0 and d > 0");
  }
  Matrix pe(n_positions, d);  // [T, d]
  for (int pos = 0; pos < n_positions; ++pos) {
    for (int i = 0; i < d; i += 2) {
      // Computed in double so that large positions keep their precision.
      const double angle = pos / std::pow(10000.0, static_cast<double>(i) / d);
      pe(pos, i) = static_cast<float>(std::sin(angle));
      if (i + 1 < d) pe(pos, i + 1) = static_cast<float>(std::cos(angle));
    }
  }
  return pe;
}

Matrix embed_tokens(const std::vector<std::int32_t>& ids, const ConstMatrixRef& token_table,
                    const ConstMatrixRef& position_table) {
  if (token_table.cols() != position_table.cols()) {
    throw std::invalid_argument("embed_tokens: token and position tables differ in width");
  }
  const auto n = static_cast<Eigen::Index>(ids.size());
  if (n > position_table.rows()) {
    throw std::invalid_argument("embed_tokens: " + std::to_string(n) + " tokens but only " +
                                std::to_string(position_table.rows()) + " positions");
  }
  Matrix out(n, token_table.cols());  // [T, d]
  for (Eigen::Index t = 0; t < n; ++t) {
    const std::int32_t id = ids[static_cast<std::size_t>(t)];
    if (id < 0 || id >= token_table.rows()) {
      throw std::invalid_argument("embed_tokens: token id " + std::to_string(id) + " outside the vocabulary of " +
                                  std::to_string(token_table.rows()));
    }
    out.row(t) = token_table.row(id) + position_table.row(t);
  }
  return out;
}

}  // namespace attnplay
