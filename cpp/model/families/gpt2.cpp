// GPT-2 (and DistilGPT-2), model_type "gpt2": its config.json, its tensors
// ("transformer." + wte, wpe, h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2,
// mlp.c_fc, mlp.c_proj}, ln_f; Conv1D weights stored [in, out]), and its
// forward recipe: learned positions, pre-LN blocks, GELU MLP, tied (or
// lm_head) unembedding.
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/forward_pass.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

ModelConfig read_gpt2_config(const nlohmann::json& j, const std::string& /*model_type*/) {
  using namespace config_fields;
  ModelConfig c;
  c.family_name = "GPT-2";
  // GPT2Config's defaults where a key is absent.
  c.layers = optional_integer(j, "n_layer", kMaxLayers, 12);
  c.heads = optional_integer(j, "n_head", kMaxHeads, 12);
  c.width = optional_integer(j, "n_embd", kMaxWidth, 768);
  c.inner = optional_integer(j, "n_inner", 4 * kMaxWidth, 4 * c.width);
  c.positions = optional_integer(j, "n_positions", kMaxPositions, 1024);
  c.vocab_size = optional_integer(j, "vocab_size", kMaxVocab, 50257);
  c.norm_eps = epsilon(j, "layer_norm_epsilon", 1e-5f);
  c.activation = activation(text(j, "activation_function", "gelu_new"), "activation_function");
  // As GPT2Attention's eager path computes the weights it returns (the SDPA
  // path, which returns none, ignores both flags). reorder_and_upcast_attn
  // only computes them in float32, as everything is here.
  c.scale_attention = flag(j, "scale_attn_weights", true);
  c.scale_by_inverse_layer = flag(j, "scale_attn_by_inverse_layer_idx", false);
  derive_head_shapes(c);
  return c;
}

ModelWeights load_gpt2_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "transformer.", "wte.weight", c);
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
  // The causal-mask buffers some exports include; add_cross_attention's
  // layers, which run only with an encoder's states (never here).
  r.reject_unused({"h.#.attn.bias", "h.#.attn.masked_bias", "h.#.crossattention.*", "h.#.ln_cross_attn.*"});
  return w;
}

void gpt2_forward(ForwardPass& p, const ModelWeights& w) {
  Matrix h = p.embed();          // [T, d] wte[ids]
  p.add_learned_positions(h);    // [T, d] + wpe[0..T)
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    h += p.attention(p.norm(h, b.attention_norm), b, l);  // [T, d] h += attn(ln_1(h))
    h += p.mlp(p.norm(h, b.mlp_norm), b);                 // [T, d] h += mlp(ln_2(h)), GELU
    p.record_hidden(h);
  }
  h = p.norm(h, w.final_norm);  // [T, d] ln_f
  p.replace_last_hidden(h);
  p.next_token_head(h);         // [T, V]
}

}  // namespace

extern const ModelFamily gpt2_family{{"gpt2"}, read_gpt2_config, load_gpt2_weights, gpt2_forward};

}  // namespace attnplay
