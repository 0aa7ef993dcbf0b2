// Positional information for attention inputs: the sinusoidal encoding of
// Vaswani et al. (2017) and learned position embeddings added to token
// embeddings. Not here: the attention itself (attention.h).
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace attnplay {

// PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)).
// Returns [T, d]; an odd d ends with a sine column.
Matrix sinusoidal_positional_encoding(int n_positions, int d);

// Token embeddings plus learned position embeddings:
// out[t] = token_table[ids[t]] + position_table[t].
// token_table [V, d], position_table [P, d] -> [T, d]. Throws when an id is
// outside [0, V) or T > P.
Matrix embed_tokens(const std::vector<std::int32_t>& ids, const ConstMatrixRef& token_table,
                    const ConstMatrixRef& position_table);

}  // namespace attnplay
