// Implementation of model/weights.h.
#include "model/weights.h"

#include <stdexcept>
#include <string>

#include "model/family.h"

namespace attnplay {

std::int64_t ModelWeights::parameter_count() const {
  std::int64_t n = 0;
  auto linear = [&n](const LinearWeights& l) { n += l.w.elements() + l.b.size(); };
  auto norm = [&n](const NormWeights& x) { n += x.gamma.size() + x.beta.size(); };
  n += token_embedding.elements() + position_embedding.elements() + type_embedding.elements() +
       output_embedding.elements();
  linear(embedding_projection);
  linear(output_projection);
  norm(embedding_norm);
  norm(final_norm);
  for (const BlockWeights& b : blocks) {
    for (const LinearWeights* l : {&b.qkv, &b.q, &b.k, &b.v, &b.attention_out, &b.mlp_gate, &b.mlp_in, &b.mlp_out,
                                   &b.mlp_gate_up}) {
      linear(*l);
    }
    n += b.attention_scale.size() + b.mlp_scale.size();
    for (const NormWeights* x : {&b.attention_norm, &b.q_norm, &b.k_norm, &b.mlp_norm, &b.attention_post_norm,
                                 &b.mlp_post_norm}) {
      norm(*x);
    }
  }
  linear(vision.patch_embedding);
  linear(vision.classifier);
  linear(vision.distillation_classifier);
  n += vision.class_token.size() + vision.distillation_token.size() + vision.register_tokens.size() +
       vision.positions.size();
  if (has_mlm_head) {
    linear(mlm.transform);
    norm(mlm.norm);
    n += mlm.bias.size();
  }
  return n;
}

std::size_t pack_for_products(ModelWeights& weights, std::size_t budget_bytes) {
  std::vector<WeightMatrix*> multiplied;
  for (BlockWeights& b : weights.blocks) {
    for (LinearWeights* l : {&b.qkv, &b.q, &b.k, &b.v, &b.attention_out, &b.mlp_gate, &b.mlp_in, &b.mlp_out,
                             &b.mlp_gate_up}) {
      multiplied.push_back(&l->w);
    }
  }
  for (LinearWeights* l : {&weights.embedding_projection, &weights.output_projection, &weights.vision.patch_embedding}) {
    if (!l->empty()) multiplied.push_back(&l->w);
  }
  // The unembedding (a vision model has none: its classifier runs one row).
  WeightMatrix& unembedding = weights.output_embedding.empty() ? weights.token_embedding : weights.output_embedding;
  if (!unembedding.empty()) multiplied.push_back(&unembedding);
  if (weights.has_mlm_head) multiplied.push_back(&weights.mlm.transform.w);
  return pack_within_budget(multiplied, budget_bytes);
}

std::size_t pack_within_budget(const std::vector<WeightMatrix*>& multiplied, std::size_t budget_bytes) {
  std::size_t bytes = 0;
  for (const WeightMatrix* w : multiplied) bytes += w->packing_bytes();
  if (bytes > budget_bytes) return 0;
  for (WeightMatrix* w : multiplied) w->pack_for_products();
  return bytes;
}

ModelWeights load_weights(const ModelConfig& config, const Checkpoint& checkpoint) {
  return family_of(config).load_weights(config, checkpoint);
}

void check_vocabulary_fits(std::int32_t tokenizer_vocab_size, std::int64_t embedding_rows) {
  if (tokenizer_vocab_size > embedding_rows) {
    throw std::invalid_argument("the tokenizer's vocabulary (" + std::to_string(tokenizer_vocab_size) +
                                " tokens) is larger than the embedding matrix (" + std::to_string(embedding_rows) + " rows)");
  }
}

}  // namespace attnplay
