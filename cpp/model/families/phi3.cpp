// Phi-3, model_type "phi3" (microsoft/Phi-3-mini-4k-instruct, Phi-3-medium,
// ...): its config.json (GQA, partial_rotary_factor, rope_theta,
// sliding_window on every layer as transformers' Phi3Attention applies it),
// its tensors ("model." + embed_tokens, layers.N.{input_layernorm,
// self_attn.qkv_proj (q | k | v fused), self_attn.o_proj,
// post_attention_layernorm, mlp.gate_up_proj (gate | up fused),
// mlp.down_proj}, norm; lm_head unless tied), and its forward recipe: the
// Llama family's (llama_decoder_forward; the fused projections are read by
// ForwardPass), with RoPE on the first partial_rotary_factor·head_dim
// dimensions of each head.
// rope_scaling "longrope" (the 128k Phi-3 models and Phi-4-mini) is read
// by config_fields' rope_scaling, with the top-level
// original_max_position_embeddings.
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

ModelConfig read_phi3_config(const nlohmann::json& j, const std::string& /*model_type*/) {
  using namespace config_fields;
  ModelConfig c = rotary_decoder_config(j, "Phi-3", {{32, 32, 3072, 8192, 4096, 32064}, 0, 1e-5f});  // Phi3Config's
  c.activation = activation(text(j, "hidden_act", "silu"), "hidden_act");
  c.qkv_bias = c.attention_out_bias = c.mlp_bias = false;
  c.tied_embeddings = flag(j, "tie_word_embeddings", false);
  if (j.contains("sliding_window") && !j["sliding_window"].is_null()) {
    c.sliding_window = integer(j, "sliding_window", kMaxPositions);
  }
  const double partial = number(j, "partial_rotary_factor", 1.0);
  if (partial > 1.0) bad_config("\"partial_rotary_factor\" must be in (0, 1]");
  derive_head_shapes(c);
  c.rotary_dims = static_cast<int>(c.head_dim * partial) / 2 * 2;  // int(head_dim · factor), in whole pairs
  if (c.rotary_dims == 0) bad_config("\"partial_rotary_factor\" leaves no dimension pair of a head to rotate");
  return c;
}

ModelWeights load_phi3_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "model.", "embed_tokens.weight", c);
  const std::int64_t d = c.width, q_width = c.heads * c.head_dim, kv_width = c.kv_heads * c.head_dim;
  ModelWeights w;
  w.qkv_layout = QkvLayout::fused_blocks;
  w.token_embedding = r.out_by_in("embed_tokens.weight", c.vocab_size, d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    BlockWeights b;
    b.attention_norm = r.rms_norm(p + "input_layernorm", d);
    b.qkv = r.linear(p + "self_attn.qkv_proj", d, q_width + 2 * kv_width, false);
    b.attention_out = r.linear(p + "self_attn.o_proj", q_width, d, false);
    b.mlp_norm = r.rms_norm(p + "post_attention_layernorm", d);
    b.mlp_gate_up = r.linear(p + "mlp.gate_up_proj", d, 2 * static_cast<std::int64_t>(c.inner), false);
    b.mlp_out = r.linear(p + "mlp.down_proj", c.inner, d, false);
    w.blocks.push_back(std::move(b));
  }
  w.final_norm = r.rms_norm("norm", d);
  read_rotary_lm_head(c, st, r, w);
  return w;
}

}  // namespace

extern const ModelFamily phi3_family{{"phi3"}, read_phi3_config, load_phi3_weights, llama_decoder_forward};

}  // namespace attnplay
