// Gemma 1, 2 and 3, model_type "gemma", "gemma2" and "gemma3_text": their
// config.json (head_dim independent of the width, default 256; MQA/GQA;
// hidden_activation; Gemma 2/3's query_pre_attn_scalar, sliding_window on
// the layers layer_types names "sliding_attention" (else Gemma 2's even
// layers, Gemma 3's all but every sliding_window_pattern-th); Gemma 2's
// attn_logit_softcapping and final_logit_softcapping; Gemma 3's q/k norm
// and rope_local_base_freq for the sliding layers), their tensors ("model." +
// embed_tokens, layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj,
// self_attn.{q,k}_norm, post_attention_layernorm, pre_feedforward_layernorm,
// post_feedforward_layernorm, mlp.{gate,up,down}_proj}, norm; lm_head unless
// tied), and their forward recipe: the embeddings times √d, RMSNorm with
// (1 + weight) (the 1 added as the weights are read), GeGLU, Gemma 1's
// pre-norm blocks like Llama's, Gemma 2/3's with a norm before and after
// each sub-layer.
// Not here: Gemma 3's vision tower (model_type "gemma3").
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/forward_pass.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

// GemmaConfig's, Gemma2Config's and Gemma3TextConfig's defaults (transformers).
constexpr int kDefaultHeadDim = 256;
constexpr int kDefaultQueryPreAttnScalar = 256;
constexpr int kDefaultSlidingWindow = 4096;
constexpr int kDefaultSlidingWindowPattern = 6;  // Gemma 3: five sliding layers, then a global one
constexpr double kDefaultAttentionSoftcap = 50.0;
constexpr double kDefaultFinalLogitSoftcap = 30.0;
constexpr double kDefaultLocalRopeBase = 10000.0;

config_fields::RotaryDefaults gemma_defaults(const std::string& type) {
  if (type == "gemma") return {{28, 16, 3072, 24576, 8192, 256000}, 16};
  if (type == "gemma2") return {{26, 8, 2304, 9216, 8192, 256000}, 4};
  return {{26, 8, 2304, 9216, 131072, 262208}, 4, 1e-6f, 1000000.0};  // gemma3_text
}

// A softcap key: its number, `absent` without the key, 0 (none) when null.
float softcap(const nlohmann::json& j, const char* key, double absent) {
  if (!j.contains(key)) return static_cast<float>(absent);
  return j[key].is_null() ? 0.0f : static_cast<float>(config_fields::number(j, key, absent));
}

// Which layers slide: layer_types where the config lists them, else the family's pattern.
std::vector<bool> sliding_layers(const nlohmann::json& j, const std::string& type, int layers) {
  using namespace config_fields;
  if (j.contains("layer_types") && !j["layer_types"].is_null()) {
    return per_layer_flags(j, "layer_types", layers, "sliding_attention", "full_attention");
  }
  const int pattern = type == "gemma2" ? 2 : optional_integer(j, "sliding_window_pattern", kMaxLayers, kDefaultSlidingWindowPattern);
  std::vector<bool> sliding(static_cast<std::size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    sliding[static_cast<std::size_t>(l)] = type == "gemma2" ? l % 2 == 0 : (l + 1) % pattern != 0;
  }
  return sliding;
}

ModelConfig read_gemma_config(const nlohmann::json& j, const std::string& type) {
  using namespace config_fields;
  const bool gemma1 = type == "gemma", gemma3 = type == "gemma3_text";
  ModelConfig c = rotary_decoder_config(j, gemma1 ? "Gemma" : gemma3 ? "Gemma 3" : "Gemma 2", gemma_defaults(type));
  c.head_dim = optional_integer(j, "head_dim", kMaxWidth, kDefaultHeadDim);
  c.activation = activation(text(j, "hidden_activation", text(j, "hidden_act", "gelu_pytorch_tanh")),
                            j.contains("hidden_activation") ? "hidden_activation" : "hidden_act");
  c.qkv_bias = c.attention_out_bias = flag(j, "attention_bias", false);
  c.mlp_bias = false;
  c.tied_embeddings = flag(j, "tie_word_embeddings", true);
  c.embedding_scale = std::sqrt(static_cast<float>(c.width));
  if (!gemma1) {
    c.attention_scale_width = optional_integer(j, "query_pre_attn_scalar", kMaxWidth, kDefaultQueryPreAttnScalar);
    c.attention_softcap = softcap(j, "attn_logit_softcapping", gemma3 ? 0.0 : kDefaultAttentionSoftcap);
    c.final_logit_softcap = softcap(j, "final_logit_softcapping", gemma3 ? 0.0 : kDefaultFinalLogitSoftcap);
    c.sliding_window = optional_integer(j, "sliding_window", kMaxPositions, kDefaultSlidingWindow);
    c.sliding_layers = sliding_layers(j, type, c.layers);
  }
  if (gemma3) {
    c.qk_norm = true;
    c.rope_local_theta = number(j, "rope_local_base_freq", kDefaultLocalRopeBase);
  }
  derive_head_shapes(c);
  c.rotary_dims = c.head_dim / 2 * 2;  // the whole head rotates (in whole pairs)
  return c;
}

ModelWeights load_gemma_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "model.", "embed_tokens.weight", c);
  const std::int64_t d = c.width, dk = c.head_dim;
  const bool sandwich = c.model_type != "gemma";  // Gemma 2/3: a norm before and after each sub-layer
  // Gemma's RMSNorm scales by (1 + weight): the 1 is added here, once.
  const auto norm = [&r](const std::string& name, std::int64_t n) {
    NormWeights x = r.rms_norm(name, n);
    x.gamma.array() += 1.0f;
    return x;
  };
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  w.token_embedding = r.out_by_in("embed_tokens.weight", c.vocab_size, d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    BlockWeights b;
    b.attention_norm = norm(p + "input_layernorm", d);
    read_rotary_attention(r, p, c, b);
    if (c.qk_norm) {
      b.q_norm = norm(p + "self_attn.q_norm", dk);
      b.k_norm = norm(p + "self_attn.k_norm", dk);
    }
    if (sandwich) {
      b.attention_post_norm = norm(p + "post_attention_layernorm", d);
      b.mlp_norm = norm(p + "pre_feedforward_layernorm", d);
      b.mlp_post_norm = norm(p + "post_feedforward_layernorm", d);
    } else {
      b.mlp_norm = norm(p + "post_attention_layernorm", d);
    }
    read_gated_mlp(r, p, c, b);  // no biases (mlp_bias is false)
    w.blocks.push_back(std::move(b));
  }
  w.final_norm = norm("norm", d);
  read_rotary_lm_head(c, st, r, w);
  return w;
}

void gemma_forward(ForwardPass& p, const ModelWeights& w) {
  Matrix h = p.embed();  // [T, d] embed_tokens[ids]·√d
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    if (b.attention_post_norm.gamma.size() > 0) {  // Gemma 2, 3
      h += p.norm(p.attention(p.norm(h, b.attention_norm), b, l), b.attention_post_norm);  // [T, d] h += post(attn(pre(h)))
      h += p.norm(p.mlp(p.norm(h, b.mlp_norm), b), b.mlp_post_norm);                       // [T, d] h += post(geglu(pre(h)))
    } else {                                                 // Gemma 1
      h += p.attention(p.norm(h, b.attention_norm), b, l);  // [T, d] h += attn(input_layernorm(h))
      h += p.mlp(p.norm(h, b.mlp_norm), b);                 // [T, d] h += geglu(post_attention_layernorm(h))
    }
    p.record_hidden(h);
  }
  h = p.norm(h, w.final_norm);  // [T, d] model.norm
  p.replace_last_hidden(h);
  p.next_token_head(h);         // [T, V] tied embed_tokens (or lm_head), softcapped in Gemma 2
}

}  // namespace

extern const ModelFamily gemma_family{{"gemma", "gemma2", "gemma3_text"}, read_gemma_config, load_gemma_weights,
                                      gemma_forward};

}  // namespace attnplay
