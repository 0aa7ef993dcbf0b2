// Implementation of model/config.h.
#include "model/config.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace attnplay {
namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument("config.json: " + message); }

// Generous upper bounds: far above any model a browser can hold, low enough
// that products of them cannot overflow 64-bit sizes.
constexpr int kMaxLayers = 256;
constexpr int kMaxHeads = 1024;
constexpr int kMaxWidth = 1 << 16;
constexpr int kMaxPositions = 1 << 20;
constexpr int kMaxVocab = 1 << 22;

int integer(const nlohmann::json& j, const char* key, int max_value) {
  if (!j.contains(key)) fail(std::string("\"") + key + "\" is missing");
  const nlohmann::json& v = j[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() <= 0 || v.get<std::int64_t>() > max_value) {
    fail(std::string("\"") + key + "\" must be an integer from 1 to " + std::to_string(max_value) + ", got " +
         v.dump());
  }
  return v.get<int>();
}

float epsilon(const nlohmann::json& j, const char* key, float default_value) {
  if (!j.contains(key)) return default_value;
  const nlohmann::json& v = j[key];
  if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 1) {
    fail(std::string("\"") + key + "\" must be a number in (0, 1], got " + v.dump());
  }
  return v.get<float>();
}

std::string text(const nlohmann::json& j, const char* key, const std::string& default_value) {
  if (!j.contains(key) || j[key].is_null()) return default_value;
  if (!j[key].is_string()) fail(std::string("\"") + key + "\" must be a string");
  return j[key].get<std::string>();
}

Activation activation(const std::string& name, const char* key) {
  if (name == "gelu") return Activation::gelu_erf;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::gelu_tanh;
  fail(std::string("\"") + key + "\" is \"" + name + "\"; supported: gelu, gelu_new, gelu_pytorch_tanh");
}

void require_flag(const nlohmann::json& j, const char* key, bool supported) {
  if (j.contains(key) && !j[key].is_null() && j[key] != supported) {
    fail(std::string("\"") + key + "\": " + j[key].dump() + " is not supported");
  }
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
  c.layer_norm_eps = epsilon(j, "layer_norm_epsilon", 1e-5f);
  c.activation = activation(text(j, "activation_function", "gelu_new"), "activation_function");
  require_flag(j, "scale_attn_weights", true);
  require_flag(j, "scale_attn_by_inverse_layer_idx", false);
  require_flag(j, "add_cross_attention", false);
  return c;
}

ModelConfig parse_bert(const nlohmann::json& j) {
  ModelConfig c;
  c.architecture = Architecture::bert;
  c.layers = integer(j, "num_hidden_layers", kMaxLayers);
  c.heads = integer(j, "num_attention_heads", kMaxHeads);
  c.width = integer(j, "hidden_size", kMaxWidth);
  c.inner = integer(j, "intermediate_size", 4 * kMaxWidth);
  c.positions = integer(j, "max_position_embeddings", kMaxPositions);
  c.vocab_size = integer(j, "vocab_size", kMaxVocab);
  c.type_vocab_size = j.contains("type_vocab_size") ? integer(j, "type_vocab_size", kMaxVocab) : 2;
  c.layer_norm_eps = epsilon(j, "layer_norm_eps", 1e-12f);
  c.activation = activation(text(j, "hidden_act", "gelu"), "hidden_act");
  const std::string position_type = text(j, "position_embedding_type", "absolute");
  if (position_type != "absolute") {
    fail("\"position_embedding_type\" is \"" + position_type + "\"; only \"absolute\" is supported");
  }
  require_flag(j, "is_decoder", false);
  require_flag(j, "add_cross_attention", false);
  return c;
}

}  // namespace

ModelConfig parse_config(std::string_view config_json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(config_json.begin(), config_json.end());
  } catch (const nlohmann::json::exception& e) {  // syntax errors, numbers out of range, bad UTF-8
    fail(std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) fail("not a JSON object");
  const std::string type = text(j, "model_type", "");
  ModelConfig c;
  if (type == "gpt2") {
    c = parse_gpt2(j);
  } else if (type == "bert") {
    c = parse_bert(j);
  } else {
    fail(type.empty() ? "\"model_type\" is missing"
                      : "model_type \"" + type + "\" is not supported (supported: gpt2, bert)");
  }
  c.model_type = type;
  if (c.width % c.heads != 0) {
    fail("the width (" + std::to_string(c.width) + ") is not divisible by the number of heads (" +
         std::to_string(c.heads) + ")");
  }
  return c;
}

}  // namespace attnplay
