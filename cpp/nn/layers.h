// The non-attention pieces of a transformer block: layer and RMS
// normalisation, GELU, SiLU (and the choice among them) and residual addition. Row-wise over [T, d] inputs.
// Not here: linear layers (linear() on stored weights, tensor/weight.h),
// attention (attention/), whole models (model/).
#pragma once

#include "tensor/tensor.h"

namespace attnplay {

// Per-row (x - mean) / sqrt(var + eps) * gamma + beta, with the biased
// variance (as PyTorch's LayerNorm). x [T, d], gamma and beta [d].
Matrix layer_norm(const ConstMatrixRef& x, const RowVector& gamma, const RowVector& beta, float eps);

// Per-row x / sqrt(mean(x²) + eps) * gamma (RMSNorm, Zhang & Sennrich 2019,
// as Llama's). x [T, d], gamma [d].
Matrix rms_norm(const ConstMatrixRef& x, const RowVector& gamma, float eps);

// SiLU (swish) x·σ(x), in place (Llama's "silu").
void silu(MatrixRef x);

// GELU, exact form x·Φ(x) = 0.5·x·(1 + erf(x/√2)) (BERT's "gelu"), in place; erf is Eigen's float one (within 1e-6 of the double-precision GELU).
void gelu_erf(MatrixRef x);

// GELU, tanh approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
// (GPT-2's "gelu_new"), in place.
void gelu_tanh(MatrixRef x);

// The feed-forward activations of the families (config.json's hidden_act /
// activation_function, read by model/config_fields.cpp).
// ReLU max(x, 0), in place (OPT's "relu").
void relu(MatrixRef x);

// x·σ(1.702·x), in place (transformers' "quick_gelu", CLIP's).
void quick_gelu(MatrixRef x);

enum class Activation { gelu_erf, gelu_tanh, silu, relu, quick_gelu };

// The named activation, in place.
void activate(MatrixRef x, Activation activation);

// x += residual. Both [T, d].
void add_residual(MatrixRef x, const ConstMatrixRef& residual);

}  // namespace attnplay
