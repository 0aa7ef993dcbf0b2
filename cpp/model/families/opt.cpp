// OPT, model_type "opt" (facebook/opt-125m ... opt-66b, the classic of
// interpretability papers): its config.json (ffn_dim, do_layer_norm_before,
// word_embed_proj_dim, enable_bias, activation_function ReLU), its tensors
// ("model.decoder." or the original checkpoints' "decoder." + embed_tokens
// [V, E], embed_positions [2 + positions, d], project_in/project_out when
// E ≠ d, layers.N.{self_attn.{q,k,v,out}_proj, self_attn_layer_norm, fc1,
// fc2, final_layer_norm}, final_layer_norm; lm_head unless tied), and its
// forward recipe: learned positions offset by 2 (counting the tokens the
// attention mask keeps, as OPTLearnedPositionalEmbedding), pre-LN blocks, or
// post-LN ones where do_layer_norm_before is false (OPT-350m, which has no
// final LayerNorm; nor has a model with _remove_final_layer_norm), LayerNorms
// without gain and bias where layer_norm_elementwise_affine is false, and the
// projection back to E before the unembedding.
// The last hidden state is reported before project_out (d wide like the
// others; transformers reports it after).
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/forward_pass.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

// OPTLearnedPositionalEmbedding's offset: token t reads row t + 2.
constexpr int kPositionOffset = 2;

ModelConfig read_opt_config(const nlohmann::json& j, const std::string& /*model_type*/) {
  using namespace config_fields;
  ModelConfig c;
  c.family_name = "OPT";
  // OPTConfig's defaults where a key is absent.
  c.layers = optional_integer(j, "num_hidden_layers", kMaxLayers, 12);
  c.heads = optional_integer(j, "num_attention_heads", kMaxHeads, 12);
  c.width = optional_integer(j, "hidden_size", kMaxWidth, 768);
  c.inner = optional_integer(j, "ffn_dim", 16 * kMaxWidth, 3072);
  c.positions = optional_integer(j, "max_position_embeddings", kMaxPositions, 2048);
  c.vocab_size = optional_integer(j, "vocab_size", kMaxVocab, 50272);
  c.position_offset = kPositionOffset;
  c.position_count = ModelConfig::PositionCount::unmasked_tokens;
  const int E = optional_integer(j, "word_embed_proj_dim", kMaxWidth, c.width);
  c.embedding_size = E == c.width ? 0 : E;
  c.norm_eps = 1e-5f;  // nn.LayerNorm's default: OPT's config has no epsilon
  c.activation = activation(text(j, "activation_function", "relu"), "activation_function");
  c.post_layer_norm = !flag(j, "do_layer_norm_before", true);
  c.qkv_bias = c.attention_out_bias = c.mlp_bias = flag(j, "enable_bias", true);
  c.tied_embeddings = flag(j, "tie_word_embeddings", true);
  c.norm_affine = flag(j, "layer_norm_elementwise_affine", true);
  // The decoder's final LayerNorm: pre-LN models only, unless removed (OPTDecoder).
  c.final_norm = !c.post_layer_norm && !flag(j, "_remove_final_layer_norm", false);
  derive_head_shapes(c);
  return c;
}

ModelWeights load_opt_weights(const ModelConfig& c, const Checkpoint& st) {
  // OPTForCausalLM saves "model.decoder."; the checkpoints Meta released (OPTModel) "decoder.".
  const std::string prefix = st.contains("decoder.embed_tokens.weight") ? "decoder." : "model.decoder.";
  Reader r = base_model_reader(st, prefix, "embed_tokens.weight", c);
  const std::int64_t d = c.width, E = c.embedding_width();
  // A LayerNorm with elementwise_affine false is x̂ itself: gain 1, bias 0.
  auto layer_norm = [&](const std::string& name) {
    return c.norm_affine ? r.layer_norm(name, d) : NormWeights{RowVector::Ones(d), RowVector::Zero(d)};
  };
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  w.token_embedding = r.out_by_in("embed_tokens.weight", c.vocab_size, E);
  w.position_embedding = r.out_by_in("embed_positions.weight", c.position_table_rows(), d);
  if (E != d) {
    w.embedding_projection = r.linear("project_in", E, d, false);
    w.output_projection = r.linear("project_out", d, E, false);
  }
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    BlockWeights b;
    b.attention_norm = layer_norm(p + "self_attn_layer_norm");
    b.q = r.linear(p + "self_attn.q_proj", d, d, c.qkv_bias);
    b.k = r.linear(p + "self_attn.k_proj", d, d, c.qkv_bias);
    b.v = r.linear(p + "self_attn.v_proj", d, d, c.qkv_bias);
    b.attention_out = r.linear(p + "self_attn.out_proj", d, d, c.attention_out_bias);
    b.mlp_norm = layer_norm(p + "final_layer_norm");
    b.mlp_in = r.linear(p + "fc1", d, c.inner, c.mlp_bias);
    b.mlp_out = r.linear(p + "fc2", c.inner, d, c.mlp_bias);
    w.blocks.push_back(std::move(b));
  }
  if (c.final_norm) w.final_norm = layer_norm("final_layer_norm");
  output_embedding(c, st, r, w, "lm_head.weight");
  // A tied copy of the embedding.
  r.reject_unused(c.tied_embeddings ? std::vector<std::string>{"lm_head.weight"} : std::vector<std::string>{});
  return w;
}

void opt_forward(ForwardPass& p, const ModelWeights& w) {
  Matrix h = p.embed();                                              // [T, E] embed_tokens[ids]
  if (!w.embedding_projection.empty()) h = p.project_embeddings(h);  // [T, d] project_in
  p.add_learned_positions(h);                                        // [T, d] + embed_positions[2 + t]
  p.record_hidden(h);
  const bool post_ln = p.config().post_layer_norm;
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    if (post_ln) {                                             // OPT-350m
      h = p.norm(h + p.attention(h, b, l), b.attention_norm);  // [T, d] self_attn_layer_norm(h + attn(h))
      h = p.norm(h + p.mlp(h, b), b.mlp_norm);                 // [T, d] final_layer_norm(h + fc2(relu(fc1(h))))
    } else {
      h += p.attention(p.norm(h, b.attention_norm), b, l);  // [T, d] h += attn(self_attn_layer_norm(h))
      h += p.mlp(p.norm(h, b.mlp_norm), b);                 // [T, d] h += fc2(relu(fc1(final_layer_norm(h))))
    }
    p.record_hidden(h);
  }
  if (p.config().final_norm) {
    h = p.norm(h, w.final_norm);  // [T, d] decoder.final_layer_norm
    p.replace_last_hidden(h);
  }
  if (!w.output_projection.empty()) h = p.project_output(h);  // [T, E] project_out
  p.next_token_head(h);                                       // [T, V] lm_head or tied embed_tokens
}

}  // namespace

extern const ModelFamily opt_family{{"opt"}, read_opt_config, load_opt_weights, opt_forward};

}  // namespace attnplay
