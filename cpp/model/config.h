// A transformer's hyper-parameters, read from a Hugging Face config.json.
// Two families by "model_type": "gpt2" (GPT-2, DistilGPT-2) and "bert".
// Every value is validated (positive, within limits, width divisible by the
// number of heads, supported activation and options) with a specific message.
// Not here: the weights (model/checkpoint.h) or the forward pass (model/model.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace attnplay {

enum class Architecture { gpt2, bert };

enum class Activation { gelu_erf, gelu_tanh };

struct ModelConfig {
  Architecture architecture = Architecture::gpt2;
  std::string model_type;        // as written in config.json: "gpt2" or "bert"
  int layers = 0;                // L: n_layer / num_hidden_layers
  int heads = 0;                 // H: n_head / num_attention_heads
  int width = 0;                 // d: n_embd / hidden_size
  int inner = 0;                 // MLP width: n_inner (default 4d) / intermediate_size
  int positions = 0;             // n_positions / max_position_embeddings
  int vocab_size = 0;            // rows of the token embedding
  int type_vocab_size = 0;       // BERT token types (segments); 0 for GPT-2
  float layer_norm_eps = 1e-5f;  // layer_norm_epsilon / layer_norm_eps
  Activation activation = Activation::gelu_tanh;

  int head_width() const { return width / heads; }  // d_k = d / H
  bool causal() const { return architecture == Architecture::gpt2; }
};

// Parses config.json. Throws std::invalid_argument ("config.json: ...").
ModelConfig parse_config(std::string_view config_json);

}  // namespace attnplay
