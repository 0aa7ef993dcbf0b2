// Positional information for attention inputs: the sinusoidal encoding of
// Vaswani et al. (2017), learned position embeddings added to token
// embeddings, and rotary position embeddings (RoPE, Su et al. 2021) applied to
// queries and keys, with the frequency scalings of transformers'
// rope_scaling (linear, dynamic, yarn, longrope, llama3), and T5's bucketed
// relative positions (Raffel et al. 2020); a vision transformer's grid of
// learned patch positions resized to another grid, as torch's bicubic
// interpolation resizes it.
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
// (even), optionally rescaled as transformers' rope init functions do:
// linear divides them all by `factor`; dynamic (NTK) changes the base only
// for texts longer than the original positions, which the runtime does not
// run, so it is the default here; llama3 divides low frequencies (wavelength
// > original / low_freq_factor) by `factor`, keeps high ones (wavelength <
// original / high_freq_factor) and interpolates smoothly in between; yarn
// blends interpolated (÷ factor) and original frequencies over a linear ramp
// between the dimensions that turn beta_fast and beta_slow times within the
// original positions; longrope divides each by its own factor, the short
// ones, or the long ones once a pass reaches past the original positions.
// yarn and longrope also scale cos and sin by an attention factor
// (rope_attention_factor).
struct RopeFrequencyScaling {
  enum class Type { none, linear, dynamic, llama3, yarn, longrope } type = Type::none;
  double factor = 1.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_positions = 8192.0;
  double beta_fast = 32.0, beta_slow = 1.0;                   // yarn
  bool truncate = true;                                       // yarn: the ramp's ends rounded outwards
  double attention_factor = 0.0;                              // yarn, longrope: given; 0 = derived from factor
  double mscale = 0.0, mscale_all_dim = 0.0;                  // yarn (DeepSeek): the derived factor's ratio
  std::vector<double> short_factors, long_factors;            // longrope: [r/2] each
};
// `positions`: the positions a pass reaches (longrope's choice of factors).
std::vector<double> rope_inverse_frequencies(int rotary_dims, double theta, const RopeFrequencyScaling& scaling,
                                             int positions = 0);
// The factor yarn and longrope multiply cos and sin by (so the scores of the
// rotated dimensions by its square): given, or yarn's 0.1·ln(factor) + 1 (the
// mscale ratio when both are given), longrope's √(1 + ln(factor) /
// ln(original positions)); 1 for the other types and factors <= 1.
double rope_attention_factor(const RopeFrequencyScaling& scaling);

// Rotates the first r = 2·inv_freq.size() dimensions of each head of x
// [T, n·head_dim] in place, in the half-split convention (Hugging Face's
// rotate_half): for i < r/2 the pair (x_i, x_{i + r/2}) of the row at
// position p = first_position + t turns by the angle p·inv_freq[i], scaled by
// `attention_factor` (yarn, longrope). The other head_dim - r dimensions pass
// unchanged (partial rotary).
void apply_rope(MatrixRef x, int head_dim, const std::vector<double>& inv_freq, int first_position,
                double attention_factor = 1.0);

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

// A grid of learned position embeddings resized as
// torch.nn.functional.interpolate(mode="bicubic", align_corners=False,
// size=(to_height, to_width)) resizes it (DINOv2's interpolate_pos_encoding):
// grid [from_height·from_width, d], row-major over the grid -> [to_height·to_width, d].
// Without antialias: Keys' cubic convolution (a = -0.75) over 4×4 neighbours,
// indices clamped at the borders (upsample_bicubic2d). With antialias: a
// separable cubic filter (a = -0.5) whose support widens by the scale when
// shrinking, weights normalised per output (_upsample_bicubic2d_aa).
Matrix resize_position_grid(const ConstMatrixRef& grid, int from_height, int from_width, int to_height, int to_width,
                            bool antialias);

}  // namespace attnplay
