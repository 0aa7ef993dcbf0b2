// Implementation of model/weights.h.
#include "model/weights.h"

#include <stdexcept>
#include <string>

#include "model/weight_reader.h"

namespace attnplay {
namespace {

// The prefix under which the base model's tensors sit: `prefix` + `embedding`
// or `embedding` alone (a bare base-model export).
std::string base_prefix(const Checkpoint& st, const std::string& prefix, const std::string& embedding,
                        const std::string& family) {
  if (st.contains(prefix + embedding)) return prefix;
  if (st.contains(embedding)) return "";
  throw std::invalid_argument("tensor '" + embedding + "' (or '" + prefix + embedding + "') is missing: not a " +
                              family + " checkpoint");
}

ModelWeights load_gpt2(const ModelConfig& c, const Checkpoint& st) {
  const std::string prefix = base_prefix(st, "transformer.", "wte.weight", "GPT-2");
  Reader r(st, prefix);
  require_vocabulary_size(c.vocab_size, st, prefix + "wte.weight");
  const std::int64_t d = c.width, V = c.vocab_size;
  ModelWeights w;
  w.qkv_layout = QkvLayout::fused_blocks;
  w.token_embedding = r.out_by_in("wte.weight", V, d);
  w.position_embedding = r.out_by_in("wpe.weight", c.positions, d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    BlockWeights b;
    b.attention_norm = r.layer_norm(p + "ln_1", d);
    b.qkv = {r.in_by_out(p + "attn.c_attn.weight", d, 3 * d), r.vector(p + "attn.c_attn.bias", 3 * d)};
    b.attention_out = {r.in_by_out(p + "attn.c_proj.weight", d, d), r.vector(p + "attn.c_proj.bias", d)};
    b.mlp_norm = r.layer_norm(p + "ln_2", d);
    b.mlp_in = {r.in_by_out(p + "mlp.c_fc.weight", d, c.inner), r.vector(p + "mlp.c_fc.bias", c.inner)};
    b.mlp_out = {r.in_by_out(p + "mlp.c_proj.weight", c.inner, d), r.vector(p + "mlp.c_proj.bias", d)};
    w.blocks.push_back(std::move(b));
  }
  w.final_norm = r.layer_norm("ln_f", d);
  if (st.contains("lm_head.weight")) w.output_embedding = r.out_by_in("lm_head.weight", V, d);
  // The causal-mask buffers some exports include.
  r.reject_unused(R"((transformer\.)?h\.\d+\.attn\.(bias|masked_bias))");
  return w;
}

ModelWeights load_bert(const ModelConfig& c, const Checkpoint& st) {
  const std::string prefix = base_prefix(st, "bert.", "embeddings.word_embeddings.weight", "BERT");
  Reader r(st, prefix);
  require_vocabulary_size(c.vocab_size, st, prefix + "embeddings.word_embeddings.weight");
  const std::int64_t d = c.width, V = c.vocab_size;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  w.token_embedding = r.out_by_in("embeddings.word_embeddings.weight", V, d);
  w.position_embedding = r.out_by_in("embeddings.position_embeddings.weight", c.positions, d);
  w.type_embedding = r.out_by_in("embeddings.token_type_embeddings.weight", c.type_vocab_size, d);
  w.embedding_norm = r.layer_norm("embeddings.LayerNorm", d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    BlockWeights b;
    b.q = r.linear(p + "attention.self.query", d, d, true);
    b.k = r.linear(p + "attention.self.key", d, d, true);
    b.v = r.linear(p + "attention.self.value", d, d, true);
    b.attention_out = r.linear(p + "attention.output.dense", d, d, true);
    b.attention_norm = r.layer_norm(p + "attention.output.LayerNorm", d);
    b.mlp_in = r.linear(p + "intermediate.dense", d, c.inner, true);
    b.mlp_out = r.linear(p + "output.dense", c.inner, d, true);
    b.mlp_norm = r.layer_norm(p + "output.LayerNorm", d);
    w.blocks.push_back(std::move(b));
  }
  if (st.contains("cls.predictions.transform.dense.weight")) {
    w.has_mlm_head = true;
    w.mlm.transform = r.linear("cls.predictions.transform.dense", d, d, true);
    w.mlm.norm = r.layer_norm("cls.predictions.transform.LayerNorm", d);
    w.mlm.bias = r.vector(st.contains("cls.predictions.bias") ? "cls.predictions.bias" : "cls.predictions.decoder.bias", V);
    if (st.contains("cls.predictions.decoder.weight")) {
      w.output_embedding = r.out_by_in("cls.predictions.decoder.weight", V, d);
    }
  }
  // Parts of BERT checkpoints this runtime does not use: the pooler, the
  // next-sentence head, the position-id buffer, the decoder's copy of the bias.
  r.reject_unused(R"((bert\.)?(pooler\..*|embeddings\.position_ids)|cls\.seq_relationship\..*|)"
                  R"(cls\.predictions\.(decoder\.)?bias)");
  return w;
}

// The untied output embedding `name` [V, d], required unless the embeddings
// are tied (then a stored copy is ignored, as Hugging Face ties it).
void output_embedding(const ModelConfig& c, const Checkpoint& st, Reader& r, ModelWeights& w, const std::string& name) {
  if (c.tied_embeddings) return;
  if (!st.contains(name)) {
    throw std::invalid_argument("tensor '" + name + "' is missing from model.safetensors (config.json has "
                                "\"tie_word_embeddings\": false)");
  }
  require_vocabulary_size(c.vocab_size, st, name);
  w.output_embedding = r.out_by_in(name, c.vocab_size, c.width);
}

// Llama, Mistral, Qwen2, Qwen3: model.layers.N.{self_attn,mlp}.*, RMSNorm.
ModelWeights load_llama(const ModelConfig& c, const Checkpoint& st) {
  const std::string prefix = base_prefix(st, "model.", "embed_tokens.weight", c.model_type);
  Reader r(st, prefix);
  require_vocabulary_size(c.vocab_size, st, prefix + "embed_tokens.weight");
  const std::int64_t d = c.width, dk = c.head_dim, q_width = c.heads * dk, kv_width = c.kv_heads * dk;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  w.token_embedding = r.out_by_in("embed_tokens.weight", c.vocab_size, d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    BlockWeights b;
    b.attention_norm = r.rms_norm(p + "input_layernorm", d);
    b.q = r.linear(p + "self_attn.q_proj", d, q_width, c.qkv_bias);
    b.k = r.linear(p + "self_attn.k_proj", d, kv_width, c.qkv_bias);
    b.v = r.linear(p + "self_attn.v_proj", d, kv_width, c.qkv_bias);
    if (c.qk_norm) {
      b.q_norm = r.rms_norm(p + "self_attn.q_norm", dk);
      b.k_norm = r.rms_norm(p + "self_attn.k_norm", dk);
    }
    b.attention_out = r.linear(p + "self_attn.o_proj", q_width, d, c.attention_out_bias);
    b.mlp_norm = r.rms_norm(p + "post_attention_layernorm", d);
    b.mlp_gate = r.linear(p + "mlp.gate_proj", d, c.inner, c.mlp_bias);
    b.mlp_in = r.linear(p + "mlp.up_proj", d, c.inner, c.mlp_bias);
    b.mlp_out = r.linear(p + "mlp.down_proj", c.inner, d, c.mlp_bias);
    w.blocks.push_back(std::move(b));
  }
  w.final_norm = r.rms_norm("norm", d);
  output_embedding(c, st, r, w, "lm_head.weight");
  // The rotary frequency buffers older exports include; a tied copy of the embedding.
  r.reject_unused(R"((model\.)?layers\.\d+\.self_attn\.rotary_emb\.inv_freq)" +
                  std::string(c.tied_embeddings ? "|lm_head\\.weight" : ""));
  return w;
}

// GPT-NeoX (Pythia): gpt_neox.layers.N.{attention,mlp}.*, LayerNorm, embed_out.
ModelWeights load_gpt_neox(const ModelConfig& c, const Checkpoint& st) {
  const std::string prefix = base_prefix(st, "gpt_neox.", "embed_in.weight", "GPT-NeoX");
  Reader r(st, prefix);
  require_vocabulary_size(c.vocab_size, st, prefix + "embed_in.weight");
  const std::int64_t d = c.width;
  ModelWeights w;
  w.qkv_layout = QkvLayout::fused_per_head;
  w.token_embedding = r.out_by_in("embed_in.weight", c.vocab_size, d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    BlockWeights b;
    b.attention_norm = r.layer_norm(p + "input_layernorm", d);
    b.qkv = r.linear(p + "attention.query_key_value", d, 3 * d, c.qkv_bias);
    b.attention_out = r.linear(p + "attention.dense", d, d, c.attention_out_bias);
    b.mlp_norm = r.layer_norm(p + "post_attention_layernorm", d);
    b.mlp_in = r.linear(p + "mlp.dense_h_to_4h", d, c.inner, true);
    b.mlp_out = r.linear(p + "mlp.dense_4h_to_h", c.inner, d, true);
    w.blocks.push_back(std::move(b));
  }
  w.final_norm = r.layer_norm("final_layer_norm", d);
  output_embedding(c, st, r, w, "embed_out.weight");
  // Buffers of older exports: the causal mask and the rotary frequencies.
  r.reject_unused(R"((gpt_neox\.)?layers\.\d+\.attention\.(bias|masked_bias|rotary_emb\.inv_freq))" +
                  std::string(c.tied_embeddings ? "|embed_out\\.weight" : ""));
  return w;
}

}  // namespace

std::int64_t ModelWeights::parameter_count() const {
  std::int64_t n = 0;
  auto linear = [&n](const LinearWeights& l) { n += l.w.elements() + l.b.size(); };
  auto norm = [&n](const NormWeights& x) { n += x.gamma.size() + x.beta.size(); };
  n += token_embedding.elements() + position_embedding.elements() + type_embedding.elements() +
       output_embedding.elements();
  norm(embedding_norm);
  norm(final_norm);
  for (const BlockWeights& b : blocks) {
    for (const LinearWeights* l : {&b.qkv, &b.q, &b.k, &b.v, &b.attention_out, &b.mlp_gate, &b.mlp_in, &b.mlp_out}) linear(*l);
    for (const NormWeights* x : {&b.attention_norm, &b.q_norm, &b.k_norm, &b.mlp_norm}) norm(*x);
  }
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
    for (LinearWeights* l : {&b.qkv, &b.q, &b.k, &b.v, &b.attention_out, &b.mlp_gate, &b.mlp_in, &b.mlp_out}) {
      multiplied.push_back(&l->w);
    }
  }
  multiplied.push_back(weights.output_embedding.empty() ? &weights.token_embedding : &weights.output_embedding);
  if (weights.has_mlm_head) multiplied.push_back(&weights.mlm.transform.w);
  std::size_t bytes = 0;
  for (const WeightMatrix* w : multiplied) bytes += w->packing_bytes();
  if (bytes > budget_bytes) return 0;
  for (WeightMatrix* w : multiplied) w->pack_for_products();
  return bytes;
}

ModelWeights load_weights(const ModelConfig& config, const Checkpoint& checkpoint) {
  switch (config.architecture) {
    case Architecture::gpt2: return load_gpt2(config, checkpoint);
    case Architecture::bert: return load_bert(config, checkpoint);
    case Architecture::llama: return load_llama(config, checkpoint);
    case Architecture::gpt_neox: return load_gpt_neox(config, checkpoint);
  }
  throw std::logic_error("load_weights: unknown architecture");
}

}  // namespace attnplay
