// The weights of a GPT-2 or BERT model as float32 matrices, and their loading
// from a Hugging Face safetensors checkpoint: tensor names with or without the
// "transformer." / "bert." prefix, Conv1D (GPT-2, [in, out]) and nn.Linear
// (BERT, [out, in], transposed here) layouts, LayerNorm as weight/bias or the
// older gamma/beta, tied or separate output embeddings. Every tensor the
// architecture needs must be present with the shape config.json implies;
// tensors no part of the architecture are refused, except known buffers and
// heads this runtime does not use (listed in weights.cpp).
// Not here: the forward pass (model/model.h).
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "safetensors/checkpoint.h"
#include "tensor/tensor.h"

namespace attnplay {

struct LinearWeights {
  Matrix w;     // [in, out]: y = x·w + b
  RowVector b;  // [out]
};

struct NormWeights {
  RowVector gamma;  // [d]
  RowVector beta;   // [d]
};

// One transformer block. GPT-2 normalises before each sub-layer (pre-LN),
// BERT after the residual addition (post-LN); the fields are the same.
struct BlockWeights {
  NormWeights attention_norm;  // GPT-2 ln_1 / BERT attention.output.LayerNorm
  LinearWeights qkv;           // [d, 3d]: queries | keys | values, head h at columns h·d_k
  LinearWeights attention_out; // [d, d]
  NormWeights mlp_norm;        // GPT-2 ln_2 / BERT output.LayerNorm
  LinearWeights mlp_in;        // [d, inner]
  LinearWeights mlp_out;       // [inner, d]
};

struct MaskedLmHead {  // BERT cls.predictions
  LinearWeights transform;  // [d, d], then activation and norm
  NormWeights norm;
  RowVector bias;           // [V]
};

struct ModelWeights {
  Matrix token_embedding;     // [V, d]
  Matrix position_embedding;  // [P, d]
  Matrix type_embedding;      // [types, d] (BERT; empty for GPT-2)
  NormWeights embedding_norm; // BERT embeddings.LayerNorm
  std::vector<BlockWeights> blocks;
  NormWeights final_norm;     // GPT-2 ln_f
  Matrix output_embedding;    // [V, d] when the checkpoint has its own (lm_head / decoder); empty when tied
  bool has_mlm_head = false;
  MaskedLmHead mlm;

  // The matrix logits are computed with: [V, d].
  const Matrix& unembedding() const { return output_embedding.size() != 0 ? output_embedding : token_embedding; }
  std::int64_t parameter_count() const;
};

// Reads every weight of `config`'s architecture from the checkpoint.
// Throws std::invalid_argument with the tensor's name for missing tensors,
// unexpected ones, and shapes that disagree with config.json.
ModelWeights load_weights(const ModelConfig& config, const Checkpoint& checkpoint);

}  // namespace attnplay
