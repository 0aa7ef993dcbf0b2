// GPT-NeoX (Pythia), model_type "gpt_neox": its config.json (rotary_pct of
// each head rotating, parallel or serial residual), its tensors ("gpt_neox."
// + embed_in, layers.N.{input_layernorm, attention.query_key_value (fused per
// head), attention.dense, post_attention_layernorm, mlp.dense_h_to_4h,
// mlp.dense_4h_to_h}, final_layer_norm; embed_out unless tied), and its
// forward recipe: partial RoPE inside attention, LayerNorm, parallel
// (h + attn(ln1(h)) + mlp(ln2(h))) or serial residual.
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/forward_pass.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

ModelConfig read_gpt_neox_config(const nlohmann::json& j, const std::string& /*model_type*/) {
  using namespace config_fields;
  ModelConfig c = standard_sizes(j, 16 * kMaxWidth, {44, 64, 6144, 24576, 2048, 50432});  // GPTNeoXConfig's
  c.family_name = "GPT-NeoX";
  c.norm_eps = epsilon(j, "layer_norm_eps", 1e-5f);
  c.activation = activation(text(j, "hidden_act", "gelu"), "hidden_act");
  c.parallel_residual = flag(j, "use_parallel_residual", true);
  c.rope = true;
  c.rope_theta = number(j, "rope_theta", number(j, "rotary_emb_base", 10000.0));
  c.rope_scaling = rope_scaling(j);
  const double pct = number(j, "partial_rotary_factor", number(j, "rotary_pct", 0.25));
  if (pct > 1) bad_config("\"rotary_pct\" must be in (0, 1], got " + std::to_string(pct));
  derive_head_shapes(c);
  c.rotary_dims = static_cast<int>(c.head_dim * pct) / 2 * 2;  // whole pairs of dimensions
  c.qkv_bias = c.attention_out_bias = flag(j, "attention_bias", true);
  c.tied_embeddings = flag(j, "tie_word_embeddings", false);
  return c;
}

ModelWeights load_gpt_neox_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "gpt_neox.", "embed_in.weight", c);
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
  std::vector<std::string> harmless{"layers.#.attention.bias", "layers.#.attention.masked_bias",
                                    "layers.#.attention.rotary_emb.inv_freq"};
  if (c.tied_embeddings) harmless.push_back("embed_out.weight");
  r.reject_unused(harmless);
  return w;
}

void gpt_neox_forward(ForwardPass& p, const ModelWeights& w) {
  const bool parallel_residual = p.config().parallel_residual;
  Matrix h = p.embed();  // [T, d] embed_in[ids]
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    const Matrix a = p.attention(p.norm(h, b.attention_norm), b, l);  // [T, d] attn(input_layernorm(h))
    if (parallel_residual) {
      h += a + p.mlp(p.norm(h, b.mlp_norm), b);  // [T, d] + mlp(post_attention_layernorm(h))
    } else {
      h += a;
      h += p.mlp(p.norm(h, b.mlp_norm), b);      // [T, d]
    }
    p.record_hidden(h);
  }
  h = p.norm(h, w.final_norm);  // [T, d] final_layer_norm
  p.replace_last_hidden(h);
  p.next_token_head(h);         // [T, V] embed_out
}

}  // namespace

extern const ModelFamily gpt_neox_family{{"gpt_neox"}, read_gpt_neox_config, load_gpt_neox_weights, gpt_neox_forward};

}  // namespace attnplay
