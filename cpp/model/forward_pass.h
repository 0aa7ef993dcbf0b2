// One forward pass in progress, and the ops the families' recipes
// (model/families/) are written in: embedding rows, learned positions and
// token types, the family's norm (LayerNorm, RMSNorm), self-attention
// (MHA/GQA/MQA, causal or not, sliding window, q/k norm, RoPE on a rotated
// fraction of each head, a KV cache, ablated heads, the traced head), the MLP
// (GELU, SwiGLU), and the heads (next-token logits, top-k and loss; BERT's
// masked-LM head; a vision transformer's patch embeddings, layer scale and
// image classifier). Activations are [T, d] matrices, one row per token.
// Not here: checking the request (model.cpp, before any pass starts), which
// ops a family runs in which order (its recipe).
#pragma once

#include <vector>

#include "attention/attention.h"
#include "model/config.h"
#include "model/model.h"
#include "model/weights.h"
#include "tensor/tensor.h"

namespace attnplay {

// BERT's masked-LM head: x [M, d] -> logits [M, V] (dense, activation, LayerNorm, tied or stored decoder, bias).
Matrix masked_lm_logits(const ModelConfig& c, const ModelWeights& w, const ConstMatrixRef& x);

// With a KV cache, the tokens run are positions past..past + T - 1 and
// attention covers the Tk = past + T keys.
class ForwardPass {
 public:
  // Fills `result` (attentions sized [L, H, T, Tk]); `cache` may be null.
  ForwardPass(const ModelConfig& c, const ModelWeights& w, const ForwardRequest& request, ForwardResult& result,
              KvCache* cache);

  const ModelConfig& config() const { return c_; }

  // Token embedding rows: [T, d] ([T, E] for ELECTRA, whose embeddings are narrower).
  Matrix embed() const;
  // A vision transformer's tokens: [T, d] = CLS (+ distillation) + their
  // positions, the registers, then each patch's pixels·W_patch + b + its
  // position (the table's grid resized to the picture's where the family
  // does that); T = prefix + grid rows · grid columns.
  Matrix embed_patches() const;
  // ELECTRA's embeddings_project, OPT's project_in: h [T, E] -> [T, d].
  Matrix project_embeddings(const ConstMatrixRef& h) const;
  // OPT's project_out: h [T, d] -> [T, E], before the unembedding.
  Matrix project_output(const ConstMatrixRef& h) const;
  // h [T, d] += the learned position rows past..past + T - 1 (RoBERTa, OPT:
  // from position_offset, over the tokens counted: ModelConfig::position_count).
  void add_learned_positions(Matrix& h) const;
  // h [T, d] += the token type rows (type 0 without type ids); none without a table (DistilBERT).
  void add_token_types(Matrix& h) const;

  // LayerNorm or RMSNorm, as the family uses: [T, n] -> [T, n].
  Matrix norm(const ConstMatrixRef& x, const NormWeights& n) const;

  // Self-attention sub-layer of layer `layer`: x [T, d] -> [T, d]. Records
  // every head's weights (the very arrays the output was computed from) and
  // the traced head's full trace; knocks out the request's ablated heads.
  Matrix attention(const ConstMatrixRef& x, const BlockWeights& b, int layer);

  // MLP sub-layer: x [T, d] -> [T, d]; act(x·W_in) or SwiGLU act(x·W_gate) ⊙ x·W_up, then W_out.
  Matrix mlp(const ConstMatrixRef& x, const BlockWeights& b) const;

  // DINOv2's layer scale: x [T, d] ⊙ gamma [d] (each column scaled); x
  // itself when gamma is empty (a block without layer scale).
  static Matrix layer_scale(Matrix x, const RowVector& gamma);

  // Records h [T, d] as the next hidden state when the request asks for them.
  void record_hidden(const Matrix& h);
  // Hugging Face reports the last hidden state after the final norm.
  void replace_last_hidden(const Matrix& h);

  // Next-token logits [T, V] = h·Eᵀ and/or top-k at every position (or the
  // last only) and/or the loss of each next token, in chunks of rows to bound
  // memory when only top-k or the loss is wanted.
  void next_token_head(const Matrix& h);
  // BERT's masked-LM head at the mask positions: logits [M, V], top-k, loss.
  void masked_lm_head(const Matrix& h);
  // A vision classifier's labels from the final states h [T, d] (VisionConfig::Pooling): logits [1, labels], top-k.
  void image_classifier_head(const Matrix& h);

 private:
  // Queries [T, H·d_k], keys and values [T, KV·d_k] from x [T, d].
  void project_qkv(const ConstMatrixRef& x, const BlockWeights& b, Matrix& q, Matrix& k, Matrix& v) const;
  // The request's ablated heads of this layer knocked out of concat [T, H·d_k].
  void ablate(Matrix& concat, int layer) const;

  const ModelConfig& c_;
  const ModelWeights& w_;
  const ForwardRequest& request_;
  ForwardResult& result_;
  KvCache* cache_;  // null without a cache
  const int T_;     // tokens run
  const int past_;  // tokens in the cache before this pass
  AttentionOptions options_;  // the pass's; attention() sets each layer's window
  std::vector<double> rope_inv_freq_;        // [r/2] with RoPE
  std::vector<double> rope_local_inv_freq_;  // [r/2] Gemma 3's sliding layers; empty otherwise
  double rope_attention_factor_ = 1.0;       // yarn's and longrope's scale of cos and sin
};

}  // namespace attnplay
