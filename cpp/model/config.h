// A transformer's hyper-parameters, read from a Hugging Face config.json, and
// what they mean for the forward pass (norm, positions, attention, MLP,
// residual). Families by "model_type": "gpt2" (GPT-2, DistilGPT-2), "bert",
// "llama" (SmolLM, TinyLlama, Llama 3.x), "mistral", "qwen2", "qwen3" and
// "gpt_neox" (Pythia). Every value is validated (positive, within limits,
// widths divisible by the number of heads, supported activation and options)
// with a specific message naming the key; unknown families and options that
// would change the computation are refused by name.
// Not here: the weights (model/weights.h) or the forward pass (model/model.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attention/positional.h"

namespace attnplay {

enum class Architecture { gpt2, bert, llama, gpt_neox };  // llama: also mistral, qwen2, qwen3

enum class Activation { gelu_erf, gelu_tanh, silu };

enum class NormKind { layer_norm, rms_norm };

struct ModelConfig {
  Architecture architecture = Architecture::gpt2;
  std::string model_type;        // as written in config.json
  int layers = 0;                // L: n_layer / num_hidden_layers
  int heads = 0;                 // H: query heads (n_head / num_attention_heads)
  int kv_heads = 0;              // KV: key/value heads (num_key_value_heads; = H without GQA)
  int width = 0;                 // d: n_embd / hidden_size
  int head_dim = 0;              // d_k: head_dim, or d / H
  int inner = 0;                 // MLP width: n_inner (default 4d) / intermediate_size
  int positions = 0;             // n_positions / max_position_embeddings
  int vocab_size = 0;            // rows of the token embedding
  int type_vocab_size = 0;       // BERT token types (segments); 0 otherwise
  float norm_eps = 1e-5f;        // layer_norm_epsilon / layer_norm_eps / rms_norm_eps
  NormKind norm = NormKind::layer_norm;
  Activation activation = Activation::gelu_tanh;
  bool gated_mlp = false;        // SwiGLU: down(act(gate(x)) * up(x)) instead of out(act(in(x)))
  bool parallel_residual = false;  // GPT-NeoX: h + attn(ln1(h)) + mlp(ln2(h))
  // Positions: learned tables (GPT-2, BERT) or rotary embeddings on q and k.
  bool rope = false;
  double rope_theta = 10000.0;   // rope_theta / rotary_emb_base
  int rotary_dims = 0;           // leading dims of each head that rotate (rotary_pct · d_k); even
  RopeFrequencyScaling rope_scaling;  // rope_scaling: none, linear or llama3
  bool qk_norm = false;          // Qwen3: RMSNorm on each head's q and k before RoPE
  int sliding_window = 0;        // query i sees keys j with i - j < window; 0 = no window
  bool qkv_bias = true;          // biases on the q, k, v projections
  bool attention_out_bias = true;  // bias on the attention output projection
  bool mlp_bias = true;          // biases on the MLP projections
  bool tied_embeddings = true;   // logits use the token embedding (no separate lm_head)
  std::vector<int> eos_token_ids;  // eos_token_id (one id or a list): generation stops after one

  int head_width() const { return head_dim; }  // d_k
  bool causal() const { return architecture != Architecture::bert; }
};

// Parses config.json. Throws std::invalid_argument ("config.json: ...").
ModelConfig parse_config(std::string_view config_json);

}  // namespace attnplay
