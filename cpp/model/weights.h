// The weights of a transformer, resident in the precision the checkpoint
// stored them in (WeightMatrix: F32, F16 or BF16, read straight from the
// checkpoint's bytes, never transposed: GPT-2's Conv1D stays [in, out],
// nn.Linear and embedding tables stay [out, in]), and their loading from Hugging
// Face safetensors by tensor name for each family: GPT-2 (with or without
// "transformer."), BERT (with or without "bert.", LayerNorm as weight/bias or
// gamma/beta), Llama / Mistral / Qwen2 / Qwen3 ("model."), GPT-NeoX
// ("gpt_neox."). Norm gains and biases are small float32 vectors. Every tensor
// the architecture needs must be present with the shape config.json implies;
// tensors no part of the architecture are refused, except known buffers and
// heads this runtime does not use (listed in each family's file, model/families/).
// Not here: the forward pass (model/model.h), parsing the file format
// (safetensors/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/config.h"
#include "safetensors/checkpoint.h"
#include "tensor/tensor.h"
#include "tensor/weight.h"

namespace attnplay {

struct LinearWeights {
  WeightMatrix w;  // in → out, in the checkpoint's layout and dtype
  RowVector b;     // [out], or empty when the layer has no bias
  bool empty() const { return w.empty(); }
};

struct NormWeights {
  RowVector gamma;  // [n]
  RowVector beta;   // [n] (LayerNorm); empty for RMSNorm
};

// How a block's queries, keys and values come out of its projections.
enum class QkvLayout {
  separate,        // q, k, v: three projections (BERT, Llama family)
  fused_blocks,    // qkv (GPT-2 c_attn [d, 3d], Phi-3 qkv_proj): outputs q | k | v, [H·d_k | KV·d_k | KV·d_k]
  fused_per_head,  // qkv [3d] outputs (GPT-NeoX query_key_value): head h at h·3d_k, as q_h | k_h | v_h
};

// One transformer block. Pre-norm families normalise before each sub-layer,
// BERT after the residual addition (post-LN); the fields are the same.
struct BlockWeights {
  NormWeights attention_norm;   // GPT-2 ln_1, BERT attention.output.LayerNorm, Llama/NeoX input_layernorm
  LinearWeights qkv;            // fused layouts: [d → (H + 2·KV)·d_k]
  LinearWeights q, k, v;        // separate layout: [d → H·d_k], [d → KV·d_k], [d → KV·d_k]
  NormWeights q_norm, k_norm;   // Qwen3: RMSNorm over each head's d_k; empty otherwise
  LinearWeights attention_out;  // [H·d_k → d]
  NormWeights attention_post_norm;  // Gemma 2/3 post_attention_layernorm: on attn(x) before the residual add
  NormWeights mlp_post_norm;        // Gemma 2/3 post_feedforward_layernorm: on mlp(x) before the residual add
  NormWeights mlp_norm;         // GPT-2 ln_2, BERT output.LayerNorm, Llama/NeoX post_attention_layernorm
  LinearWeights mlp_gate;       // SwiGLU gate_proj [d → inner]; empty otherwise
  LinearWeights mlp_in;         // [d → inner] (c_fc, intermediate, dense_h_to_4h, up_proj)
  LinearWeights mlp_out;        // [inner → d] (c_proj, output.dense, dense_4h_to_h, down_proj)
  LinearWeights mlp_gate_up;    // Phi-3 gate_up_proj [d → 2·inner]: gate | up in one; empty otherwise
  RowVector attention_scale;    // DINOv2 layer_scale1.lambda1 [d]: attn(x) ⊙ it; empty otherwise
  RowVector mlp_scale;          // DINOv2 layer_scale2.lambda1 [d]: mlp(x) ⊙ it; empty otherwise
};

// A vision transformer's embeddings and classifier (model/families/vit.cpp, dinov2.cpp).
struct VisionWeights {
  LinearWeights patch_embedding;         // [C·p_h·p_w → d]: the patch Conv2d's kernel, flattened (channel, row, column)
  RowVector class_token;                 // [d] cls_token
  RowVector distillation_token;          // [d] DeiT; empty otherwise
  Matrix register_tokens;                // [R, d] DINOv2 with registers; empty otherwise
  Matrix positions;                      // [prefix + grid rows · grid columns, d]: the CLS (and distillation) rows, then the grid's
  LinearWeights classifier;              // [d, or 2d for DINOv2 → labels]; empty: a bare model
  LinearWeights distillation_classifier; // DeiT with teacher [d → labels]; empty otherwise
  VisionConfig::Pooling pooling = VisionConfig::Pooling::cls;  // the classifier's input
};

struct MaskedLmHead {  // BERT cls.predictions (DistilBERT vocab_*, ELECTRA generator_*)
  LinearWeights transform;  // [d → d] (ELECTRA's generator: [d → E]), then activation and norm
  NormWeights norm;
  RowVector bias;           // [V]
};

struct ModelWeights {
  QkvLayout qkv_layout = QkvLayout::separate;
  WeightMatrix token_embedding;     // [V, d] (rows looked up; logits when tied)
  WeightMatrix position_embedding;  // [P, d] learned positions (GPT-2, BERT); empty with RoPE
  WeightMatrix type_embedding;      // [types, d] (BERT; empty otherwise)
  NormWeights embedding_norm;       // BERT embeddings.LayerNorm
  LinearWeights embedding_projection;  // [E → d] ELECTRA embeddings_project, OPT project_in; empty when E = d
  LinearWeights output_projection;     // [d → E] OPT project_out, before the unembedding; empty when E = d
  std::vector<BlockWeights> blocks;
  NormWeights final_norm;           // GPT-2 ln_f, Llama model.norm, NeoX final_layer_norm
  WeightMatrix output_embedding;    // [V, E] when the checkpoint has its own (lm_head, embed_out, decoder); empty when tied
  bool has_mlm_head = false;
  MaskedLmHead mlm;
  VisionWeights vision;             // vision transformers only

  // The matrix logits are computed with: [V, E], logits = h·Eᵀ (h projected to E where the model projects).
  const WeightMatrix& unembedding() const { return output_embedding.empty() ? token_embedding : output_embedding; }
  std::int64_t parameter_count() const;
};

// The most bytes pack_for_products spends: models up to about 16 million
// multiplied parameters (the shipped ones need 10 MB).
constexpr std::size_t kPackingBudgetBytes = std::size_t{64} << 20;

// Packs every matrix the forward pass multiplies by (WeightMatrix::pack_for_products:
// block projections, the unembedding, the masked-LM transform) when together
// they take at most budget_bytes packed, and none otherwise: a large model
// keeps its memory, which packing would more than double. Returns the bytes
// packed.
std::size_t pack_for_products(ModelWeights& weights, std::size_t budget_bytes = kPackingBudgetBytes);

// Packs all of `multiplied` when together they take at most budget_bytes
// packed, and none otherwise; returns the bytes packed. What each model packs
// with it: pack_for_products above, the encoder-decoder's in seq2seq.cpp.
std::size_t pack_within_budget(const std::vector<WeightMatrix*>& multiplied, std::size_t budget_bytes);

// Reads every weight of `config`'s architecture from the checkpoint, through
// its lookup methods only (contains, info, bytes, tensors).
// Throws std::invalid_argument with the tensor's name for missing tensors,
// unexpected ones, dtypes other than F32/F16/BF16, and shapes that disagree
// with config.json.
ModelWeights load_weights(const ModelConfig& config, const Checkpoint& checkpoint);

// Throws std::invalid_argument unless a tokenizer of tokenizer_vocab_size
// entries fits an embedding matrix of embedding_rows rows (more rows than
// entries are fine: Qwen2.5 pads its vocabulary).
void check_vocabulary_fits(std::int32_t tokenizer_vocab_size, std::int64_t embedding_rows);

}  // namespace attnplay
