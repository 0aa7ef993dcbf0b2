// Llama and its descendants, model_type "llama" (SmolLM, TinyLlama, Llama
// 3.x), "mistral", "qwen2", "qwen3" and "smollm3": their config.json (GQA,
// head_dim, RoPE with linear or llama3 frequency scaling, Mistral's sliding
// window, Qwen2/3's and SmolLM3's sliding layers (use_sliding_window), Qwen2's
// q/k/v biases, Qwen3's q/k norm, SmolLM3's layers without RoPE:
// no_rope_layers, else every no_rope_layer_interval-th; keys left out take
// each config class's defaults), their tensors ("model." +
// embed_tokens, layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj,
// post_attention_layernorm, mlp.{gate,up,down}_proj}, norm; lm_head unless
// tied), and their forward recipe (llama_decoder_forward, Phi-3's too): RoPE
// inside attention, pre-RMSNorm blocks, SwiGLU.
#include <algorithm>
#include <string>

#include "json/json_text.h"
#include "model/config_fields.h"
#include "model/family.h"
#include "model/forward_pass.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

// LlamaConfig's, MistralConfig's, Qwen2Config's, Qwen3Config's and
// SmolLM3Config's defaults for what config.json leaves out.
constexpr int kDefaultNoRopeLayerInterval = 4;
constexpr int kDefaultLlamaSlidingWindow = 4096;   // Mistral's (absent; null: none), Qwen2/3's when used (SmolLM3: none)
constexpr int kDefaultMaxWindowLayers = 28;   // Qwen2/3: the layers from here on slide
constexpr int kDefaultQwen3HeadDim = 128;

config_fields::RotaryDefaults llama_defaults(const std::string& type) {
  if (type == "mistral") return {{32, 32, 4096, 14336, 4096 * 32, 32000}, 8};
  if (type == "qwen2" || type == "qwen3") return {{32, 32, 4096, 22016, 32768, 151936}, 32};
  if (type == "smollm3") return {{36, 16, 2048, 11008, 32768, 128256}, 4, 1e-6f, 2000000.0};
  return {{32, 32, 4096, 11008, 2048, 32000}};
}

std::string llama_family_name(const std::string& type) {
  return type == "mistral" ? "Mistral" : type == "qwen2" ? "Qwen2" : type == "qwen3" ? "Qwen3"
       : type == "smollm3" ? "SmolLM3" : "Llama";
}

// SmolLM3: which layers turn q and k (no_rope_layers: 1 for RoPE, 0 for none; else all but every
// no_rope_layer_interval-th).
std::vector<bool> rope_layers(const nlohmann::json& j, int layers) {
  using namespace config_fields;
  if (j.contains("no_rope_layers") && !j["no_rope_layers"].is_null()) return per_layer_flags(j, "no_rope_layers", layers, 1, 0);
  const int interval = optional_integer(j, "no_rope_layer_interval", kMaxLayers, kDefaultNoRopeLayerInterval);
  std::vector<bool> rope(static_cast<std::size_t>(layers));
  for (int l = 0; l < layers; ++l) rope[static_cast<std::size_t>(l)] = (l + 1) % interval != 0;
  return rope;
}

// Qwen2, Qwen3, SmolLM3: with use_sliding_window and a sliding_window, the
// layers that attend within it: layer_types when given, else Qwen2/3's layers
// from max_window_layers on, SmolLM3's layers without RoPE (as their configs
// compute layer_types; SmolLM3 has no default window).
void read_sliding_layers(const nlohmann::json& j, const std::string& type, ModelConfig& c) {
  using namespace config_fields;
  if (!flag(j, "use_sliding_window", false)) return;
  if (j.contains("sliding_window") && j["sliding_window"].is_null()) return;
  if (type == "smollm3" && !j.contains("sliding_window")) return;
  c.sliding_window = optional_integer(j, "sliding_window", kMaxPositions, kDefaultLlamaSlidingWindow);
  if (j.contains("layer_types") && !j["layer_types"].is_null()) {
    c.sliding_layers = per_layer_flags(j, "layer_types", c.layers, "sliding_attention", "full_attention");
  } else if (type == "smollm3") {
    c.sliding_layers.assign(c.rope_layers.begin(), c.rope_layers.end());
    c.sliding_layers.flip();  // the NoPE layers
  } else {
    // 0 (every layer slides) is a valid max_window_layers.
    const int first = j.contains("max_window_layers") && j["max_window_layers"] == 0
                          ? 0 : optional_integer(j, "max_window_layers", kMaxLayers, kDefaultMaxWindowLayers);
    c.sliding_layers.resize(static_cast<std::size_t>(c.layers));
    for (int l = 0; l < c.layers; ++l) c.sliding_layers[static_cast<std::size_t>(l)] = l >= first;
  }
  if (std::none_of(c.sliding_layers.begin(), c.sliding_layers.end(), [](bool s) { return s; })) {
    c.sliding_window = 0;  // no layer slides
    c.sliding_layers.clear();
  }
}

ModelConfig read_llama_config(const nlohmann::json& j, const std::string& type) {
  using namespace config_fields;
  ModelConfig c = rotary_decoder_config(j, llama_family_name(type), llama_defaults(type));
  c.head_dim = optional_integer(j, "head_dim", kMaxWidth, type == "qwen3" ? kDefaultQwen3HeadDim : 0);
  c.activation = activation(text(j, "hidden_act", "silu"), "hidden_act");
  const bool attention_bias = flag(j, "attention_bias", false);
  c.qkv_bias = type == "qwen2" || attention_bias;  // Qwen2 always biases q, k, v (not o)
  c.attention_out_bias = type != "qwen2" && attention_bias;
  c.mlp_bias = flag(j, "mlp_bias", false);
  c.qk_norm = type == "qwen3";
  c.tied_embeddings = flag(j, "tie_word_embeddings", type == "smollm3");
  if (type == "smollm3") c.rope_layers = rope_layers(j, c.layers);
  if (type == "mistral") {
    c.sliding_window = j.contains("sliding_window") && j["sliding_window"].is_null()
                           ? 0 : optional_integer(j, "sliding_window", kMaxPositions, kDefaultLlamaSlidingWindow);
  } else if (type != "llama") {
    read_sliding_layers(j, type, c);
  }
  if (j.contains("partial_rotary_factor") && !j["partial_rotary_factor"].is_null() && j["partial_rotary_factor"] != 1.0) {
    bad_config("\"partial_rotary_factor\" " + json_text::write(j["partial_rotary_factor"]) + " is not supported for " + type);
  }
  derive_head_shapes(c);
  c.rotary_dims = c.head_dim / 2 * 2;  // the whole head rotates (in whole pairs)
  return c;
}

ModelWeights load_llama_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "model.", "embed_tokens.weight", c);
  const std::int64_t d = c.width, dk = c.head_dim;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  w.token_embedding = r.out_by_in("embed_tokens.weight", c.vocab_size, d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    BlockWeights b;
    b.attention_norm = r.rms_norm(p + "input_layernorm", d);
    read_rotary_attention(r, p, c, b);
    if (c.qk_norm) {
      b.q_norm = r.rms_norm(p + "self_attn.q_norm", dk);
      b.k_norm = r.rms_norm(p + "self_attn.k_norm", dk);
    }
    b.mlp_norm = r.rms_norm(p + "post_attention_layernorm", d);
    read_gated_mlp(r, p, c, b);
    w.blocks.push_back(std::move(b));
  }
  w.final_norm = r.rms_norm("norm", d);
  read_rotary_lm_head(c, st, r, w);
  return w;
}

}  // namespace

void llama_decoder_forward(ForwardPass& p, const ModelWeights& w) {
  Matrix h = p.embed();  // [T, d] embed_tokens[ids]
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    h += p.attention(p.norm(h, b.attention_norm), b, l);  // [T, d] h += attn(input_layernorm(h))
    h += p.mlp(p.norm(h, b.mlp_norm), b);                 // [T, d] h += swiglu(post_attention_layernorm(h))
    p.record_hidden(h);
  }
  h = p.norm(h, w.final_norm);  // [T, d] model.norm
  p.replace_last_hidden(h);
  p.next_token_head(h);         // [T, V] lm_head or tied embed_tokens
}

extern const ModelFamily llama_family{{"llama", "mistral", "qwen2", "qwen3", "smollm3"}, read_llama_config, load_llama_weights,
                                      llama_decoder_forward};

}  // namespace attnplay
