// Reading config.json's fields: readers that check each value's type and
// range and name the key in their messages ("config.json: ..."), shared by
// the families' config readers (model/families/) and the encoder-decoders'
// (model/config.cpp).
// Not here: which keys a family reads and what they mean (its own file).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/config.h"

namespace attnplay::config_fields {

// Generous upper bounds: far above any model a browser can hold, low enough
// that products of them cannot overflow 64-bit sizes.
constexpr int kMaxLayers = 256;
constexpr int kMaxHeads = 1024;
constexpr int kMaxWidth = 1 << 16;
constexpr int kMaxPositions = 1 << 20;
constexpr int kMaxVocab = 1 << 22;

// Throws std::invalid_argument("config.json: " + message).
[[noreturn]] void bad_config(const std::string& message);

// The text as a JSON object.
nlohmann::json parse_object(std::string_view config_json);

// An integer in 1..max_value; required.
int integer(const nlohmann::json& j, const char* key, int max_value);
// An integer in 1..max_value, or default_value when absent or null.
int optional_integer(const nlohmann::json& j, const char* key, int max_value, int default_value);
// A finite number >= 0 (a norm's epsilon), or default_value when absent or null.
float epsilon(const nlohmann::json& j, const char* key, float default_value);
// A positive finite number, or default_value when absent or null.
double number(const nlohmann::json& j, const char* key, double default_value);
// A string, or default_value when absent or null.
std::string text(const nlohmann::json& j, const char* key, const std::string& default_value);
// true or false, or default_value when absent or null.
bool flag(const nlohmann::json& j, const char* key, bool default_value);
// Refuses the key when present with another value than `supported`.
void require_flag(const nlohmann::json& j, const char* key, bool supported);
// The activation that Hugging Face's name stands for (the value of `key`).
Activation activation(const std::string& name, const char* key);
// An id or a list of ids (integers); absent or null: none. Whether an id
// fits the vocabulary is its user's question: transformers loads a config
// whose stop or pad token lies outside it (GPT-2's default eos_token_id 50256
// with a small vocab_size), so a field the computation only consults keeps
// the ids that fit (ids_in_vocabulary) and a field it needs is refused where
// it is needed, naming the field.
std::vector<std::int64_t> token_ids(const nlohmann::json& j, const char* key);
// One token id (not a list), or `missing` when absent or null.
std::int64_t single_token_id(const nlohmann::json& j, const char* key, std::int64_t missing);
// The ids in [0, vocab), in order.
std::vector<int> ids_in_vocabulary(const std::vector<std::int64_t>& ids, int vocab);
// A list `key` of one entry per layer, each `when_true` or `when_false`, as
// booleans (Gemma's layer_types, SmolLM3's no_rope_layers).
std::vector<bool> per_layer_flags(const nlohmann::json& j, const char* key, int layers, const nlohmann::json& when_true,
                                  const nlohmann::json& when_false);
// rope_scaling: null, {"rope_type" (or "type"): "default" | "linear" | "llama3", ...}.
RopeFrequencyScaling rope_scaling(const nlohmann::json& j);

// A config class's sizes when config.json leaves them out: the defaults of
// its __init__ in transformers (each family's file names the class; read at
// v4.56.0), as transformers loads such a config.
struct SizeDefaults {
  int layers, heads, width, inner, positions, vocab;
};

// The sizes under the names BERT and the later families share
// (num_hidden_layers, num_attention_heads, hidden_size, intermediate_size,
// max_position_embeddings, vocab_size), each `defaults`' when absent.
ModelConfig standard_sizes(const nlohmann::json& j, int max_inner, const SizeDefaults& defaults);

// A rotary decoder's config class defaults (see SizeDefaults).
struct RotaryDefaults {
  SizeDefaults sizes;
  int kv_heads = 0;  // num_key_value_heads; 0: the heads
  float rms_norm_eps = 1e-6f;
  double rope_theta = 10000.0;
};

// The keys the rotary decoders (the Llama family, Gemma, OLMo 2, Phi-3) read
// alike: standard_sizes, num_key_value_heads (absent or null: the default,
// else the heads), RMSNorm's rms_norm_eps, a gated MLP, RoPE with rope_theta
// and rope_scaling.
ModelConfig rotary_decoder_config(const nlohmann::json& j, const std::string& family_name, const RotaryDefaults& defaults);

// BertConfig's keys, which BERT, ELECTRA and RoBERTa read alike: standard_sizes,
// type_vocab_size (default 2), layer_norm_eps (1e-12), hidden_act (gelu), a
// bidirectional encoder reading segment ids; refused: relative position
// embeddings, and is_decoder (the self-attention would be causal).
ModelConfig bert_encoder_config(const nlohmann::json& j, const std::string& family_name, const SizeDefaults& defaults);

// The encoder-decoder families' readers (model/families/marian_bart.cpp,
// model/families/t5.cpp), which parse_seq2seq_config picks by model_type;
// it reads the generation keys (token ids, beams, lengths) after them.
Seq2SeqConfig marian_bart_config(const nlohmann::json& j, const std::string& model_type);
Seq2SeqConfig t5_config(const nlohmann::json& j, const std::string& model_type);

// A vision transformer's keys that ViT, DeiT and DINOv2 read alike (their
// config classes' names and defaults): hidden_size, num_hidden_layers,
// num_attention_heads, hidden_act (gelu), layer_norm_eps, qkv_bias,
// image_size and patch_size (a number, or [height, width]), num_channels (3),
// and the classifier's labels (id2label, else num_labels, else 2: "LABEL_i"
// where id2label names none). A bidirectional encoder with LayerNorm and no
// vocabulary; the MLP width is the family's to set.
struct VisionDefaults {
  float layer_norm_eps;
  int image_size, patch_size;
};
ModelConfig vision_encoder_config(const nlohmann::json& j, const std::string& family_name, const VisionDefaults& defaults);

// The head shapes a family did not set: key/value heads = heads (no GQA), a
// head's width = width / heads; checks that the widths and heads divide.
void derive_head_shapes(ModelConfig& c);

}  // namespace attnplay::config_fields
