// Implementation of model/config.h.
#include "model/config.h"

#include <cmath>
#include <stdexcept>

#include "json/json_text.h"

namespace attnplay {
namespace {

[[noreturn]] void bad_config(const std::string& message) { throw std::invalid_argument("config.json: " + message); }

// Generous upper bounds: far above any model a browser can hold, low enough
// that products of them cannot overflow 64-bit sizes.
constexpr int kMaxLayers = 256;
constexpr int kMaxHeads = 1024;
constexpr int kMaxWidth = 1 << 16;
constexpr int kMaxPositions = 1 << 20;
constexpr int kMaxVocab = 1 << 22;

int integer(const nlohmann::json& j, const char* key, int max_value) {
  if (!j.contains(key)) bad_config(std::string("\"") + key + "\" is missing");
  const nlohmann::json& v = j[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() <= 0 || v.get<std::int64_t>() > max_value) {
    bad_config(std::string("\"") + key + "\" must be an integer from 1 to " + std::to_string(max_value) + ", got " +
         json_text::write(v));
  }
  return v.get<int>();
}

float epsilon(const nlohmann::json& j, const char* key, float default_value) {
  if (!j.contains(key)) return default_value;
  const nlohmann::json& v = j[key];
  if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 1) {
    bad_config(std::string("\"") + key + "\" must be a number in (0, 1], got " + json_text::write(v));
  }
  return v.get<float>();
}

std::string text(const nlohmann::json& j, const char* key, const std::string& default_value) {
  if (!j.contains(key) || j[key].is_null()) return default_value;
  if (!j[key].is_string()) bad_config(std::string("\"") + key + "\" must be a string");
  return j[key].get<std::string>();
}

Activation activation(const std::string& name, const char* key) {
  if (name == "gelu") return Activation::gelu_erf;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::gelu_tanh;
  if (name == "silu" || name == "swish") return Activation::silu;
  bad_config(std::string("\"") + key + "\" is \"" + name + "\"; supported: gelu, gelu_new, gelu_pytorch_tanh, silu");
}

void require_flag(const nlohmann::json& j, const char* key, bool supported) {
  if (j.contains(key) && !j[key].is_null() && j[key] != supported) {
    bad_config(std::string("\"") + key + "\": " + json_text::write(j[key]) + " is not supported");
  }
}

bool flag(const nlohmann::json& j, const char* key, bool default_value) {
  if (!j.contains(key) || j[key].is_null()) return default_value;
  if (!j[key].is_boolean()) bad_config(std::string("\"") + key + "\" must be true or false, got " + json_text::write(j[key]));
  return j[key].get<bool>();
}

double number(const nlohmann::json& j, const char* key, double default_value) {
  if (!j.contains(key) || j[key].is_null()) return default_value;
  const nlohmann::json& v = j[key];
  if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) {
    bad_config(std::string("\"") + key + "\" must be a positive number, got " + json_text::write(v));
  }
  return v.get<double>();
}

// An id or a list of ids, each in [0, vocab); absent or null: none.
std::vector<int> token_ids(const nlohmann::json& j, const char* key, int vocab) {
  std::vector<int> ids;
  if (!j.contains(key) || j[key].is_null()) return ids;
  const nlohmann::json list = j[key].is_array() ? j[key] : nlohmann::json::array({j[key]});
  for (const nlohmann::json& id : list) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() >= vocab) {
      bad_config(std::string("\"") + key + "\" must be a token id or a list of them in 0.." + std::to_string(vocab - 1) +
           ", got " + json_text::write(j[key]));
    }
    ids.push_back(id.get<int>());
  }
  return ids;
}

ModelConfig parse_gpt2(const nlohmann::json& j) {
  ModelConfig c;
  c.architecture = Architecture::gpt2;
  c.layers = integer(j, "n_layer", kMaxLayers);
  c.heads = integer(j, "n_head", kMaxHeads);
  c.width = integer(j, "n_embd", kMaxWidth);
  c.inner = j.contains("n_inner") && !j["n_inner"].is_null() ? integer(j, "n_inner", 4 * kMaxWidth) : 4 * c.width;
  c.positions = integer(j, "n_positions", kMaxPositions);
  c.vocab_size = integer(j, "vocab_size", kMaxVocab);
  c.norm_eps = epsilon(j, "layer_norm_epsilon", 1e-5f);
  c.activation = activation(text(j, "activation_function", "gelu_new"), "activation_function");
  require_flag(j, "scale_attn_weights", true);
  require_flag(j, "scale_attn_by_inverse_layer_idx", false);
  require_flag(j, "add_cross_attention", false);
  return c;
}

// The sizes under the names BERT and the later families share.
ModelConfig sizes(const nlohmann::json& j, Architecture architecture, int max_inner) {
  ModelConfig c;
  c.architecture = architecture;
  c.layers = integer(j, "num_hidden_layers", kMaxLayers);
  c.heads = integer(j, "num_attention_heads", kMaxHeads);
  c.width = integer(j, "hidden_size", kMaxWidth);
  c.inner = integer(j, "intermediate_size", max_inner);
  c.positions = integer(j, "max_position_embeddings", kMaxPositions);
  c.vocab_size = integer(j, "vocab_size", kMaxVocab);
  return c;
}

ModelConfig parse_bert(const nlohmann::json& j) {
  ModelConfig c = sizes(j, Architecture::bert, 4 * kMaxWidth);
  c.type_vocab_size = j.contains("type_vocab_size") ? integer(j, "type_vocab_size", kMaxVocab) : 2;
  c.norm_eps = epsilon(j, "layer_norm_eps", 1e-12f);
  c.activation = activation(text(j, "hidden_act", "gelu"), "hidden_act");
  const std::string position_type = text(j, "position_embedding_type", "absolute");
  if (position_type != "absolute") {
    bad_config("\"position_embedding_type\" is \"" + position_type + "\"; only \"absolute\" is supported");
  }
  require_flag(j, "is_decoder", false);
  require_flag(j, "add_cross_attention", false);
  return c;
}

// rope_scaling: null, {"rope_type" (or "type"): "linear" | "llama3", ...}.
RopeFrequencyScaling rope_scaling(const nlohmann::json& j) {
  RopeFrequencyScaling s;
  if (!j.contains("rope_scaling") || j["rope_scaling"].is_null()) return s;
  const nlohmann::json& r = j["rope_scaling"];
  if (!r.is_object()) bad_config("\"rope_scaling\" must be an object or null");
  const std::string type = text(r, "rope_type", text(r, "type", ""));
  if (type == "default") return s;
  if (type == "linear") {
    s.type = RopeFrequencyScaling::Type::linear;
    s.factor = number(r, "factor", 0);
  } else if (type == "llama3") {
    s.type = RopeFrequencyScaling::Type::llama3;
    s.factor = number(r, "factor", 0);
    s.low_freq_factor = number(r, "low_freq_factor", 0);
    s.high_freq_factor = number(r, "high_freq_factor", 0);
    s.original_max_positions = number(r, "original_max_position_embeddings", 0);
    if (!(s.high_freq_factor > s.low_freq_factor)) bad_config("rope_scaling: \"high_freq_factor\" must exceed \"low_freq_factor\"");
  } else {
    bad_config("rope_scaling type \"" + type + "\" is not supported (supported: linear, llama3)");
  }
  for (const char* key : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}) {
    if (r.contains(key) && !(number(r, key, 1) > 0)) bad_config(std::string("rope_scaling: \"") + key + "\" must be positive");
  }
  if (!(s.factor > 0) || (s.type == RopeFrequencyScaling::Type::llama3 && !(s.low_freq_factor > 0 && s.original_max_positions > 0))) {
    bad_config("rope_scaling of type \"" + type + "\" needs a positive \"factor\"" +
         (s.type == RopeFrequencyScaling::Type::llama3
              ? ", \"low_freq_factor\", \"high_freq_factor\" and \"original_max_position_embeddings\""
              : ""));
  }
  return s;
}

// Llama and its descendants: RMSNorm, RoPE, GQA, SwiGLU.
ModelConfig parse_llama(const nlohmann::json& j, const std::string& type) {
  ModelConfig c = sizes(j, Architecture::llama, 16 * kMaxWidth);
  c.kv_heads = j.contains("num_key_value_heads") && !j["num_key_value_heads"].is_null()
                   ? integer(j, "num_key_value_heads", kMaxHeads)
                   : c.heads;
  c.head_dim = j.contains("head_dim") && !j["head_dim"].is_null() ? integer(j, "head_dim", kMaxWidth) : 0;
  c.norm = NormKind::rms_norm;
  c.norm_eps = epsilon(j, "rms_norm_eps", 1e-6f);
  c.activation = activation(text(j, "hidden_act", "silu"), "hidden_act");
  c.gated_mlp = true;
  c.rope = true;
  c.rope_theta = number(j, "rope_theta", 10000.0);
  c.rope_scaling = rope_scaling(j);
  const bool attention_bias = flag(j, "attention_bias", false);
  c.qkv_bias = type == "qwen2" || attention_bias;  // Qwen2 always biases q, k, v (not o)
  c.attention_out_bias = type != "qwen2" && attention_bias;
  c.mlp_bias = flag(j, "mlp_bias", false);
  c.qk_norm = type == "qwen3";
  c.tied_embeddings = flag(j, "tie_word_embeddings", false);
  if (type == "mistral" && j.contains("sliding_window") && !j["sliding_window"].is_null()) {
    c.sliding_window = integer(j, "sliding_window", kMaxPositions);
  }
  if ((type == "qwen2" || type == "qwen3") && flag(j, "use_sliding_window", false)) {
    bad_config("\"use_sliding_window\": true is not supported for " + type);
  }
  if (j.contains("partial_rotary_factor") && !j["partial_rotary_factor"].is_null() && j["partial_rotary_factor"] != 1.0) {
    bad_config("\"partial_rotary_factor\" " + json_text::write(j["partial_rotary_factor"]) + " is not supported for " + type);
  }
  return c;
}

// GPT-NeoX (Pythia): LayerNorm, partial RoPE, fused per-head q/k/v, parallel residual.
ModelConfig parse_gpt_neox(const nlohmann::json& j) {
  ModelConfig c = sizes(j, Architecture::gpt_neox, 16 * kMaxWidth);
  c.norm_eps = epsilon(j, "layer_norm_eps", 1e-5f);
  c.activation = activation(text(j, "hidden_act", "gelu"), "hidden_act");
  c.parallel_residual = flag(j, "use_parallel_residual", true);
  c.rope = true;
  c.rope_theta = number(j, "rope_theta", number(j, "rotary_emb_base", 10000.0));
  c.rope_scaling = rope_scaling(j);
  const double pct = number(j, "partial_rotary_factor", number(j, "rotary_pct", 0.25));
  if (pct > 1) bad_config("\"rotary_pct\" must be in (0, 1], got " + std::to_string(pct));
  if (c.width % c.heads != 0) {
    bad_config("the width (" + std::to_string(c.width) + ") is not divisible by the number of heads (" +
         std::to_string(c.heads) + ")");
  }
  c.head_dim = c.width / c.heads;
  c.rotary_dims = static_cast<int>(c.head_dim * pct) / 2 * 2;  // whole pairs of dimensions
  c.qkv_bias = c.attention_out_bias = flag(j, "attention_bias", true);
  c.tied_embeddings = flag(j, "tie_word_embeddings", false);
  require_flag(j, "add_cross_attention", false);
  return c;
}

nlohmann::json parse_object(std::string_view config_json) {
  nlohmann::json j;
  try {
    j = json_text::parse(config_json);
  } catch (const nlohmann::json::exception& e) {  // syntax errors, numbers out of range, bad UTF-8
    bad_config(std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) bad_config("not a JSON object");
  return j;
}

bool encoder_decoder_type(const std::string& type) { return type == "marian" || type == "bart" || type == "t5"; }

// One token id (not a list) in [0, vocab), or `missing` when absent or null.
int single_token_id(const nlohmann::json& j, const char* key, int vocab, int missing) {
  const std::vector<int> ids = token_ids(j, key, vocab);
  if (ids.size() > 1) bad_config(std::string("\"") + key + "\" must be one token id, got " + json_text::write(j[key]));
  return ids.empty() ? missing : ids.front();
}

}  // namespace

ModelConfig parse_config(std::string_view config_json) {
  const nlohmann::json j = parse_object(config_json);
  const std::string type = text(j, "model_type", "");
  if (encoder_decoder_type(type)) {
    bad_config("model_type \"" + type + "\" is an encoder-decoder; it loads as a sequence-to-sequence model, not here");
  }
  ModelConfig c;
  if (type == "gpt2") {
    c = parse_gpt2(j);
  } else if (type == "bert") {
    c = parse_bert(j);
  } else if (type == "llama" || type == "mistral" || type == "qwen2" || type == "qwen3") {
    c = parse_llama(j, type);
  } else if (type == "gpt_neox") {
    c = parse_gpt_neox(j);
  } else {
    bad_config(type.empty() ? "\"model_type\" is missing"
                      : "model_type \"" + type +
                            "\" is not supported (supported: gpt2, bert, llama, mistral, qwen2, qwen3, gpt_neox; "
                            "encoder-decoders: marian, bart)");
  }
  c.model_type = type;
  c.eos_token_ids = token_ids(j, "eos_token_id", c.vocab_size);
  if (c.kv_heads == 0) c.kv_heads = c.heads;
  if (c.head_dim == 0) {
    if (c.width % c.heads != 0) {
      bad_config("the width (" + std::to_string(c.width) + ") is not divisible by the number of heads (" +
           std::to_string(c.heads) + ")");
    }
    c.head_dim = c.width / c.heads;
  }
  if (c.heads % c.kv_heads != 0) {
    bad_config("the number of heads (" + std::to_string(c.heads) + ") is not divisible by num_key_value_heads (" +
         std::to_string(c.kv_heads) + ")");
  }
  if (c.rope) {
    if (c.rotary_dims == 0 && c.architecture == Architecture::llama) c.rotary_dims = c.head_dim / 2 * 2;
    if (c.rotary_dims == 0) bad_config("no dimension of a head rotates (head width " + std::to_string(c.head_dim) + ")");
  }
  return c;
}

bool is_encoder_decoder_config(std::string_view config_json) {
  return encoder_decoder_type(text(parse_object(config_json), "model_type", ""));
}

Seq2SeqConfig parse_seq2seq_config(std::string_view config_json) {
  const nlohmann::json j = parse_object(config_json);
  const std::string type = text(j, "model_type", "");
  Seq2SeqConfig c;
  if (type == "marian") {
    c.family = Seq2SeqFamily::marian;
  } else if (type == "bart") {
    c.family = Seq2SeqFamily::bart;
  } else if (type == "t5") {
    bad_config("model_type \"t5\" is not supported: T5's relative position buckets, RMS-style norm and gated GELU "
         "are not implemented (supported encoder-decoders: marian, bart)");
  } else {
    bad_config("model_type \"" + type + "\" is not an encoder-decoder this runtime supports (marian, bart)");
  }
  c.model_type = type;
  c.encoder_layers = integer(j, "encoder_layers", kMaxLayers);
  c.decoder_layers = integer(j, "decoder_layers", kMaxLayers);
  c.encoder_heads = integer(j, "encoder_attention_heads", kMaxHeads);
  c.decoder_heads = integer(j, "decoder_attention_heads", kMaxHeads);
  c.width = integer(j, "d_model", kMaxWidth);
  c.encoder_inner = integer(j, "encoder_ffn_dim", 16 * kMaxWidth);
  c.decoder_inner = integer(j, "decoder_ffn_dim", 16 * kMaxWidth);
  c.positions = integer(j, "max_position_embeddings", kMaxPositions);
  c.vocab_size = integer(j, "vocab_size", kMaxVocab);
  for (const auto& [heads, side] : {std::pair{c.encoder_heads, "encoder"}, std::pair{c.decoder_heads, "decoder"}}) {
    if (c.width % heads != 0) {
      bad_config("d_model (" + std::to_string(c.width) + ") is not divisible by the " + side + "'s " + std::to_string(heads) +
           " attention heads");
    }
  }
  c.activation = activation(text(j, "activation_function", c.family == Seq2SeqFamily::marian ? "swish" : "gelu"),
                            "activation_function");
  c.scale_embedding = flag(j, "scale_embedding", false);
  c.shared_embeddings = flag(j, "share_encoder_decoder_embeddings", true);
  // Variants that compute something else (mBART-style pre-LN, extra final norms) are refused by name.
  require_flag(j, "normalize_before", false);
  require_flag(j, "add_final_layer_norm", false);
  require_flag(j, "add_bias_logits", false);
  require_flag(j, "normalize_embedding", c.family == Seq2SeqFamily::bart);
  require_flag(j, "static_position_embeddings", c.family == Seq2SeqFamily::marian);
  const bool tied = flag(j, "tie_word_embeddings", true);
  if (!tied) bad_config("\"tie_word_embeddings\": false is not supported (the output layer is the token embedding)");
  c.pad_token_id = single_token_id(j, "pad_token_id", c.vocab_size, -1);
  c.decoder_start_token_id = single_token_id(j, "decoder_start_token_id", c.vocab_size, -1);
  if (c.decoder_start_token_id < 0) {
    bad_config("\"decoder_start_token_id\" is missing: the decoder's first input token must be given");
  }
  c.eos_token_ids = token_ids(j, "eos_token_id", c.vocab_size);
  c.forced_bos_token_id = single_token_id(j, "forced_bos_token_id", c.vocab_size, -1);
  if (j.contains("num_beams") && !j["num_beams"].is_null()) c.num_beams = integer(j, "num_beams", 64);
  c.length_penalty = j.contains("length_penalty") && !j["length_penalty"].is_null() && j["length_penalty"].is_number()
                         ? j["length_penalty"].get<double>()
                         : 1.0;
  if (!std::isfinite(c.length_penalty)) bad_config("\"length_penalty\" must be a finite number");
  if (j.contains("max_length") && !j["max_length"].is_null()) c.max_length = integer(j, "max_length", kMaxPositions);
  return c;
}

}  // namespace attnplay
