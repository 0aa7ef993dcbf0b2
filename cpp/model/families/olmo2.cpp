// OLMo 2, model_type "olmo2" (allenai/OLMo-2-0425-1B, OLMo-2-1124-7B, ...): its
// config.json (GQA, RoPE with rope_theta and rope_scaling, attention_bias,
// tie_word_embeddings), its tensors ("model." + embed_tokens,
// layers.N.{self_attn.{q,k,v,o}_proj, self_attn.q_norm [H·d_k],
// self_attn.k_norm [KV·d_k], post_attention_layernorm, mlp.{gate,up,down}_proj,
// post_feedforward_layernorm}, norm; lm_head unless tied), and its forward
// recipe: no norm before a sub-layer but one on its output before the
// residual add, q and k each RMS-normed across all heads at once before RoPE,
// SwiGLU.
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/forward_pass.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

ModelConfig read_olmo2_config(const nlohmann::json& j, const std::string& /*model_type*/) {
  using namespace config_fields;
  ModelConfig c = rotary_decoder_config(j, "OLMo 2", {{32, 32, 4096, 11008, 2048, 50304}, 0, 1e-5f});  // Olmo2Config's
  c.activation = activation(text(j, "hidden_act", "silu"), "hidden_act");
  c.qkv_bias = c.attention_out_bias = flag(j, "attention_bias", false);
  c.mlp_bias = false;
  c.qk_norm_across_heads = true;
  c.tied_embeddings = flag(j, "tie_word_embeddings", false);
  derive_head_shapes(c);
  c.rotary_dims = c.head_dim / 2 * 2;  // the whole head rotates (in whole pairs)
  return c;
}

ModelWeights load_olmo2_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "model.", "embed_tokens.weight", c);
  const std::int64_t d = c.width, q_width = c.heads * c.head_dim, kv_width = c.kv_heads * c.head_dim;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  w.token_embedding = r.out_by_in("embed_tokens.weight", c.vocab_size, d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    BlockWeights b;
    read_rotary_attention(r, p, c, b);
    b.q_norm = r.rms_norm(p + "self_attn.q_norm", q_width);
    b.k_norm = r.rms_norm(p + "self_attn.k_norm", kv_width);
    b.attention_post_norm = r.rms_norm(p + "post_attention_layernorm", d);
    read_gated_mlp(r, p, c, b);  // no biases (mlp_bias is false)
    b.mlp_post_norm = r.rms_norm(p + "post_feedforward_layernorm", d);
    w.blocks.push_back(std::move(b));
  }
  w.final_norm = r.rms_norm("norm", d);
  read_rotary_lm_head(c, st, r, w);
  return w;
}

void olmo2_forward(ForwardPass& p, const ModelWeights& w) {
  Matrix h = p.embed();  // [T, d] embed_tokens[ids]
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    h += p.norm(p.attention(h, b, l), b.attention_post_norm);  // [T, d] h += post_attention_layernorm(attn(h))
    h += p.norm(p.mlp(h, b), b.mlp_post_norm);                 // [T, d] h += post_feedforward_layernorm(swiglu(h))
    p.record_hidden(h);
  }
  h = p.norm(h, w.final_norm);  // [T, d] model.norm
  p.replace_last_hidden(h);
  p.next_token_head(h);         // [T, V] lm_head or tied embed_tokens
}

}  // namespace

extern const ModelFamily olmo2_family{{"olmo2"}, read_olmo2_config, load_olmo2_weights, olmo2_forward};

}  // namespace attnplay
