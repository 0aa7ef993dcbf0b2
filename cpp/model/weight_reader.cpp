// Implementation of model/weight_reader.h's functions.
#include "model/weight_reader.h"

#include <algorithm>

namespace attnplay {

bool name_matches(std::string_view pattern, std::string_view name) {
  if (pattern.empty()) return name.empty();
  if (pattern.front() == '*') {
    for (std::size_t skip = 0; skip <= name.size(); ++skip) {
      if (name_matches(pattern.substr(1), name.substr(skip))) return true;
    }
    return false;
  }
  if (pattern.front() == '#') {
    for (std::size_t digits = 0; digits < name.size() && name[digits] >= '0' && name[digits] <= '9';) {
      if (name_matches(pattern.substr(1), name.substr(++digits))) return true;
    }
    return false;
  }
  return !name.empty() && name.front() == pattern.front() && name_matches(pattern.substr(1), name.substr(1));
}

void Reader::reject_unused(const std::vector<std::string>& ignorable) const {
  std::vector<std::string> unexpected;
  for (const auto& entry : st_.tensors()) {
    const bool harmless = std::any_of(ignorable.begin(), ignorable.end(),
                                      [&](const std::string& pattern) { return name_matches(full_name(pattern), entry.first); });
    if (used_.count(entry.first) == 0 && !harmless) unexpected.push_back(entry.first);
  }
  if (unexpected.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < unexpected.size() && i < 5; ++i) list += (i ? "', '" : "'") + unexpected[i];
  throw std::invalid_argument(std::to_string(unexpected.size()) + " unexpected tensor(s) for this " +
                              "architecture: " + list + "'" + (unexpected.size() > 5 ? ", ..." : "") +
                              " (does config.json describe this checkpoint?)");
}

void read_bert_embeddings(Reader& r, const ModelConfig& c, std::int64_t E, ModelWeights& w) {
  w.token_embedding = r.out_by_in("embeddings.word_embeddings.weight", c.vocab_size, E);
  w.position_embedding = r.out_by_in("embeddings.position_embeddings.weight", c.position_table_rows(), E);
  w.type_embedding = r.out_by_in("embeddings.token_type_embeddings.weight", c.type_vocab_size, E);
  w.embedding_norm = r.layer_norm("embeddings.LayerNorm", E);
}

void read_masked_lm_head(Reader& r, const MaskedLmHeadNames& names, const ModelConfig& c, std::int64_t E,
                         ModelWeights& w) {
  const std::string transform = names.transform;
  if (!r.has(transform + ".weight")) return;
  w.has_mlm_head = true;
  w.mlm.transform = r.linear(transform, c.width, E, true);
  w.mlm.norm = r.layer_norm(names.norm, E);
  w.mlm.bias = r.vector(r.has(names.bias) ? names.bias : names.decoder_bias, c.vocab_size);
  if (r.has(names.decoder)) w.output_embedding = r.out_by_in(names.decoder, c.vocab_size, E);
}

BlockWeights read_bert_encoder_layer(Reader& r, int layer, std::int64_t d, std::int64_t inner) {
  const std::string p = "encoder.layer." + std::to_string(layer) + ".";
  BlockWeights b;
  b.q = r.linear(p + "attention.self.query", d, d, true);
  b.k = r.linear(p + "attention.self.key", d, d, true);
  b.v = r.linear(p + "attention.self.value", d, d, true);
  b.attention_out = r.linear(p + "attention.output.dense", d, d, true);
  b.attention_norm = r.layer_norm(p + "attention.output.LayerNorm", d);
  b.mlp_in = r.linear(p + "intermediate.dense", d, inner, true);
  b.mlp_out = r.linear(p + "output.dense", inner, d, true);
  b.mlp_norm = r.layer_norm(p + "output.LayerNorm", d);
  return b;
}

Reader base_model_reader(const Checkpoint& st, const std::string& prefix, const std::string& embedding,
                         const ModelConfig& c) {
  if (!st.contains(prefix + embedding) && !st.contains(embedding)) {
    throw std::invalid_argument("tensor '" + embedding + "' (or '" + prefix + embedding + "') is missing: not a " +
                                c.family_name + " checkpoint");
  }
  const std::string base = st.contains(prefix + embedding) ? prefix : "";
  require_vocabulary_size(c.vocab_size, st, base + embedding);
  return Reader(st, base);
}

void read_vision_embeddings(Reader& r, const ModelConfig& c, ModelWeights& w) {
  const VisionConfig& v = c.vision;
  const std::int64_t d = c.width;
  VisionWeights& vw = w.vision;
  vw.class_token = r.reshaped("embeddings.cls_token", {1, 1, d}, 1, d, WeightLayout::out_by_in).to_matrix();
  if (v.distillation_token) {
    vw.distillation_token = r.reshaped("embeddings.distillation_token", {1, 1, d}, 1, d, WeightLayout::out_by_in).to_matrix();
  }
  if (v.registers > 0) {
    vw.register_tokens = r.reshaped("embeddings.register_tokens", {1, v.registers, d}, v.registers, d,
                                    WeightLayout::out_by_in).to_matrix();
  }
  const std::int64_t rows = (v.distillation_token ? 2 : 1) + std::int64_t{v.table_grid_rows()} * v.table_grid_columns();
  vw.positions = r.reshaped("embeddings.position_embeddings", {1, rows, d}, rows, d, WeightLayout::out_by_in).to_matrix();
  const std::int64_t patch = std::int64_t{v.channels} * v.patch_height * v.patch_width;
  vw.patch_embedding = {r.reshaped("embeddings.patch_embeddings.projection.weight",
                                   {d, v.channels, v.patch_height, v.patch_width}, d, patch, WeightLayout::out_by_in),
                        r.vector("embeddings.patch_embeddings.projection.bias", d)};
}

void read_vision_attention(Reader& r, const std::string& prefix, const ModelConfig& c, BlockWeights& b) {
  const std::int64_t d = c.width;
  b.q = r.linear(prefix + "attention.attention.query", d, d, c.qkv_bias);
  b.k = r.linear(prefix + "attention.attention.key", d, d, c.qkv_bias);
  b.v = r.linear(prefix + "attention.attention.value", d, d, c.qkv_bias);
  b.attention_out = r.linear(prefix + "attention.output.dense", d, d, true);
}

LinearWeights read_image_classifier(Reader& r, const ModelConfig& c, const std::string& name, std::int64_t in) {
  return r.linear(name, in, static_cast<std::int64_t>(c.vision.labels.size()), true);
}

void output_embedding(const ModelConfig& c, const Checkpoint& st, Reader& r, ModelWeights& w, const std::string& name) {
  if (!c.tied_embeddings) w.output_embedding = untied_output_layer(st, r, c.vocab_size, c.embedding_width(), name);
}

WeightMatrix untied_output_layer(const Checkpoint& st, Reader& r, int vocab_size, std::int64_t width, const std::string& name) {
  if (!st.contains(name)) {
    throw std::invalid_argument("tensor '" + name + "' is missing from model.safetensors (config.json has "
                                "\"tie_word_embeddings\": false)");
  }
  require_vocabulary_size(vocab_size, st, name);
  return r.out_by_in(name, vocab_size, width);
}

void read_rotary_attention(Reader& r, const std::string& prefix, const ModelConfig& c, BlockWeights& b) {
  const std::int64_t d = c.width, q_width = static_cast<std::int64_t>(c.heads) * c.head_dim,
                     kv_width = static_cast<std::int64_t>(c.kv_heads) * c.head_dim;
  b.q = r.linear(prefix + "self_attn.q_proj", d, q_width, c.qkv_bias);
  b.k = r.linear(prefix + "self_attn.k_proj", d, kv_width, c.qkv_bias);
  b.v = r.linear(prefix + "self_attn.v_proj", d, kv_width, c.qkv_bias);
  b.attention_out = r.linear(prefix + "self_attn.o_proj", q_width, d, c.attention_out_bias);
}

void read_gated_mlp(Reader& r, const std::string& prefix, const ModelConfig& c, BlockWeights& b) {
  b.mlp_gate = r.linear(prefix + "mlp.gate_proj", c.width, c.inner, c.mlp_bias);
  b.mlp_in = r.linear(prefix + "mlp.up_proj", c.width, c.inner, c.mlp_bias);
  b.mlp_out = r.linear(prefix + "mlp.down_proj", c.inner, c.width, c.mlp_bias);
}

void read_rotary_lm_head(const ModelConfig& c, const Checkpoint& st, Reader& r, ModelWeights& w) {
  output_embedding(c, st, r, w, "lm_head.weight");
  std::vector<std::string> harmless{"layers.#.self_attn.rotary_emb.inv_freq"};
  if (c.tied_embeddings) harmless.push_back("lm_head.weight");
  r.reject_unused(harmless);
}

}  // namespace attnplay
