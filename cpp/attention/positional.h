// Positional information for attention inputs: the sinusoidal encoding of
// Vaswani et al. (2017), learned position embeddings added to token
// embeddings, and rotary position embeddings (RoPE, Su et al. 2021) applied to
// queries and keys, with Llama 3's and linear frequency scaling, and T5's
// bucketed relative positions (Raffel et al. 2020).
// Not here: the attention itself (attention.h).
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

// RoPE's inverse frequencies θ^(-2i/r) for i in [0, r/2), r = rotary_dims
// (even), optionally rescaled: linear divides them all by `factor`; llama3
// divides low frequencies (wavelength > original / low_freq_factor) by
// `factor`, keeps high ones (wavelength < original / high_freq_factor) and
// interpolates smoothly in between (as Hugging Face's llama3 rope init).
struct RopeFrequencyScaling {
  enum class Type { none, linear, llama3 } type = Type::none;
  double factor = 1.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_positions = 8192.0;
};
std::vector<double> rope_inverse_frequencies(int rotary_dims, double theta, const RopeFrequencyScaling& scaling);

// Rotates the first r = 2·inv_freq.size() dimensions of each head of x
// [T, n·head_dim] in place, in the half-split convention (Hugging Face's
// rotate_half): for i < r/2 the pair (x_i, x_{i + r/2}) of the row at
// position p = first_position + t turns by the angle p·inv_freq[i]. The other
// head_dim - r dimensions pass unchanged (partial rotary).
void apply_rope(MatrixRef x, int head_dim, const std::vector<double>& inv_freq, int first_position);

// T5's bucket of a key at `relative_position` = key - query (transformers'
// T5Attention._relative_position_bucket): bidirectional (the encoder) gives
// half the buckets to keys after the query; causal (the decoder) counts only
// keys before it. Of each half, the first half of the buckets hold one
// distance each, the rest distances growing logarithmically up to
// `max_distance`, beyond which all share the last bucket. Computed in float32
// as PyTorch computes it, so the buckets match at the boundaries.
int relative_position_bucket(int relative_position, bool bidirectional, int num_buckets, int max_distance);

// The bias every head adds to its scores: table [buckets, H] (a
// relative_attention_bias weight), queries at positions first_query.. and keys
// at 0..keys-1 -> H matrices [queries, keys], head h's (i, j) being
// table(bucket(j - (first_query + i)), h).
std::vector<Matrix> relative_position_bias(const Matrix& table, int queries, int keys, int first_query,
                                           bool bidirectional, int max_distance);

}  // namespace attnplay
