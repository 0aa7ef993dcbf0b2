// Implementation of model/config_fields.h.
#include "model/config_fields.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <utility>

#include "json/json_text.h"

namespace attnplay::config_fields {

void bad_config(const std::string& message) { throw std::invalid_argument("config.json: " + message); }

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
  if (!j.contains(key) || j[key].is_null()) return default_value;
  const nlohmann::json& v = j[key];
  if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<float>())) {
    bad_config(std::string("\"") + key + "\" must be a finite number >= 0, got " + json_text::write(v));
  }
  return v.get<float>();
}

std::string text(const nlohmann::json& j, const char* key, const std::string& default_value) {
  if (!j.contains(key) || j[key].is_null()) return default_value;
  if (!j[key].is_string()) bad_config(std::string("\"") + key + "\" must be a string");
  return j[key].get<std::string>();
}

Activation activation(const std::string& name, const char* key) {
  // transformers' ACT2FN names (activations.py) for the same functions: the
  // erf form, the tanh approximation written three ways, SiLU.
  if (name == "gelu" || name == "gelu_python") return Activation::gelu_erf;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast" || name == "gelu_accurate" ||
      name == "gelu_python_tanh") {
    return Activation::gelu_tanh;
  }
  if (name == "silu" || name == "swish") return Activation::silu;
  if (name == "relu") return Activation::relu;
  if (name == "quick_gelu") return Activation::quick_gelu;
  bad_config(std::string("\"") + key + "\" is \"" + name + "\"; supported: gelu (gelu_python), gelu_new (gelu_pytorch_tanh, "
             "gelu_fast, gelu_accurate, gelu_python_tanh), silu (swish), relu, quick_gelu");
}

void require_flag(const nlohmann::json& j, const char* key, bool supported) {
  if (j.contains(key) && !j[key].is_null() && j[key] != supported) {
    bad_config(std::string("\"") + key + "\": " + json_text::write(j[key]) + " is not supported");
  }
}

bool flag(const nlohmann::json& j, const char* key, bool default_value) {
  if (!j.contains(key) || j[key].is_null()) return default_value;
  if (!j[key].is_boolean()) {
    bad_config(std::string("\"") + key + "\" must be true or false, got " + json_text::write(j[key]));
  }
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

std::vector<std::int64_t> token_ids(const nlohmann::json& j, const char* key) {
  std::vector<std::int64_t> ids;
  if (!j.contains(key) || j[key].is_null()) return ids;
  const nlohmann::json list = j[key].is_array() ? j[key] : nlohmann::json::array({j[key]});
  for (const nlohmann::json& id : list) {
    if (!id.is_number_integer()) {
      bad_config(std::string("\"") + key + "\" must be a token id or a list of them, got " + json_text::write(j[key]));
    }
    ids.push_back(id.get<std::int64_t>());
  }
  return ids;
}

std::vector<int> ids_in_vocabulary(const std::vector<std::int64_t>& ids, int vocab) {
  std::vector<int> out;
  for (const std::int64_t id : ids) {
    if (id >= 0 && id < vocab) out.push_back(static_cast<int>(id));
  }
  return out;
}

ModelConfig bert_encoder_config(const nlohmann::json& j, const std::string& family_name, const SizeDefaults& defaults) {
  ModelConfig c = standard_sizes(j, 4 * kMaxWidth, defaults);
  c.family_name = family_name;
  c.bidirectional = true;
  c.type_vocab_size = optional_integer(j, "type_vocab_size", kMaxVocab, 2);
  c.segment_input = true;
  c.norm_eps = epsilon(j, "layer_norm_eps", 1e-12f);
  c.activation = activation(text(j, "hidden_act", "gelu"), "hidden_act");
  const std::string position_type = text(j, "position_embedding_type", "absolute");
  if (position_type != "absolute") {
    bad_config("\"position_embedding_type\" is \"" + position_type + "\"; only \"absolute\" is supported");
  }
  // BertModel as a decoder attends causally; cross-attention runs only with
  // an encoder's states (never here), so add_cross_attention alone changes nothing.
  require_flag(j, "is_decoder", false);
  return c;
}

ModelConfig rotary_decoder_config(const nlohmann::json& j, const std::string& family_name, const RotaryDefaults& defaults) {
  ModelConfig c = standard_sizes(j, 16 * kMaxWidth, defaults.sizes);
  c.family_name = family_name;
  const bool kv_given = j.contains("num_key_value_heads") && !j["num_key_value_heads"].is_null();
  c.kv_heads = kv_given ? integer(j, "num_key_value_heads", kMaxHeads)
             : defaults.kv_heads > 0 && !j.contains("num_key_value_heads") ? defaults.kv_heads : c.heads;
  c.norm = NormKind::rms_norm;
  c.norm_eps = epsilon(j, "rms_norm_eps", defaults.rms_norm_eps);
  c.gated_mlp = true;
  c.rope = true;
  c.rope_theta = number(j, "rope_theta", defaults.rope_theta);
  c.rope_scaling = rope_scaling(j);
  return c;
}

ModelConfig standard_sizes(const nlohmann::json& j, int max_inner, const SizeDefaults& defaults) {
  ModelConfig c;
  c.layers = optional_integer(j, "num_hidden_layers", kMaxLayers, defaults.layers);
  c.heads = optional_integer(j, "num_attention_heads", kMaxHeads, defaults.heads);
  c.width = optional_integer(j, "hidden_size", kMaxWidth, defaults.width);
  c.inner = optional_integer(j, "intermediate_size", max_inner, defaults.inner);
  c.positions = optional_integer(j, "max_position_embeddings", kMaxPositions, defaults.positions);
  c.vocab_size = optional_integer(j, "vocab_size", kMaxVocab, defaults.vocab);
  return c;
}

std::vector<bool> per_layer_flags(const nlohmann::json& j, const char* key, int layers, const nlohmann::json& when_true,
                                  const nlohmann::json& when_false) {
  const nlohmann::json& list = j[key];
  if (!list.is_array() || static_cast<int>(list.size()) != layers) {
    bad_config(std::string("\"") + key + "\" must list one entry per layer (" + std::to_string(layers) + ")");
  }
  std::vector<bool> flags(static_cast<std::size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    const nlohmann::json& entry = list[static_cast<std::size_t>(l)];
    if (entry != when_true && entry != when_false) {
      bad_config(std::string("\"") + key + "\"[" + std::to_string(l) + "] is " + json_text::write(entry) + "; expected " +
                 json_text::write(when_true) + " or " + json_text::write(when_false));
    }
    flags[static_cast<std::size_t>(l)] = entry == when_true;
  }
  return flags;
}

RopeFrequencyScaling rope_scaling(const nlohmann::json& j) {
  using Type = RopeFrequencyScaling::Type;
  RopeFrequencyScaling s;
  if (!j.contains("rope_scaling") || j["rope_scaling"].is_null()) return s;
  const nlohmann::json& r = j["rope_scaling"];
  if (!r.is_object()) bad_config("\"rope_scaling\" must be an object or null");
  const std::string type = text(r, "rope_type", text(r, "type", ""));
  if (type == "default") return s;
  for (const char* key : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings",
                          "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim"}) {
    if (r.contains(key) && !r[key].is_null() && !(number(r, key, 1) > 0)) {
      bad_config(std::string("rope_scaling: \"") + key + "\" must be positive");
    }
  }
  const double max_positions = number(j, "max_position_embeddings", 0);
  s.factor = number(r, "factor", 0);
  if (type == "linear" || type == "dynamic") {
    s.type = type == "linear" ? Type::linear : Type::dynamic;
  } else if (type == "llama3") {
    s.type = Type::llama3;
    s.low_freq_factor = number(r, "low_freq_factor", 0);
    s.high_freq_factor = number(r, "high_freq_factor", 0);
    s.original_max_positions = number(r, "original_max_position_embeddings", 0);
    if (!(s.low_freq_factor > 0 && s.original_max_positions > 0)) {
      bad_config("rope_scaling of type \"llama3\" needs a positive \"factor\", \"low_freq_factor\", "
                 "\"high_freq_factor\" and \"original_max_position_embeddings\"");
    }
    if (!(s.high_freq_factor > s.low_freq_factor)) bad_config("rope_scaling: \"high_freq_factor\" must exceed \"low_freq_factor\"");
  } else if (type == "yarn" || type == "longrope") {
    s.type = type == "yarn" ? Type::yarn : Type::longrope;
    // The pretrained context: rope_scaling's, else (longrope: Phi-3's top-level key) the config's.
    const double top_level = number(j, "original_max_position_embeddings", 0);
    s.original_max_positions = number(r, "original_max_position_embeddings", s.type == Type::longrope && top_level > 0 ? top_level : max_positions);
    if (!(s.original_max_positions > 0)) bad_config("rope_scaling of type \"" + type + "\" needs \"original_max_position_embeddings\"");
    if (s.factor == 0) s.factor = max_positions > 0 ? max_positions / s.original_max_positions : 1.0;
    s.attention_factor = number(r, "attention_factor", 0);
    s.beta_fast = number(r, "beta_fast", 32);
    s.beta_slow = number(r, "beta_slow", 1);
    s.mscale = number(r, "mscale", 0);
    s.mscale_all_dim = number(r, "mscale_all_dim", 0);
    s.truncate = flag(r, "truncate", true);
    if (s.type == Type::longrope) {
      for (const auto& [key, factors] : {std::pair{"short_factor", &s.short_factors}, std::pair{"long_factor", &s.long_factors}}) {
        if (!r.contains(key) || !r[key].is_array()) bad_config(std::string("rope_scaling: longrope needs a \"") + key + "\" list");
        for (const nlohmann::json& f : r[key]) {
          if (!f.is_number() || !(f.get<double>() > 0) || !std::isfinite(f.get<double>())) {
            bad_config(std::string("rope_scaling: \"") + key + "\" must hold positive numbers");
          }
          factors->push_back(f.get<double>());
        }
      }
    }
    return s;
  } else {
    bad_config("rope_scaling type \"" + type + "\" is not supported (supported: linear, dynamic, yarn, longrope, llama3)");
  }
  if (!(s.factor > 0)) bad_config("rope_scaling of type \"" + type + "\" needs a positive \"factor\"");
  return s;
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

std::int64_t single_token_id(const nlohmann::json& j, const char* key, std::int64_t missing) {
  const std::vector<std::int64_t> ids = token_ids(j, key);
  if (ids.size() > 1) bad_config(std::string("\"") + key + "\" must be one token id, got " + json_text::write(j[key]));
  return ids.empty() ? missing : ids.front();
}

int optional_integer(const nlohmann::json& j, const char* key, int max_value, int default_value) {
  return j.contains(key) && !j[key].is_null() ? integer(j, key, max_value) : default_value;
}

void derive_head_shapes(ModelConfig& c) {
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
}

namespace {

// image_size / patch_size: a number of pixels, or [height, width].
void pixel_pair(const nlohmann::json& j, const char* key, int default_value, int& height, int& width) {
  constexpr std::int64_t kMaxSide = 1 << 14;
  if (!j.contains(key) || j[key].is_null()) {
    height = width = default_value;
    return;
  }
  const nlohmann::json& v = j[key];
  const auto side = [](const nlohmann::json& x) { return x.is_number_integer() && x.get<std::int64_t>() >= 1 && x.get<std::int64_t>() <= kMaxSide; };
  if (v.is_array() && v.size() == 2 && side(v[0]) && side(v[1])) {
    height = v[0].get<int>();
    width = v[1].get<int>();
  } else if (side(v)) {
    height = width = v.get<int>();
  } else {
    bad_config(std::string("\"") + key + "\" must be a number of pixels (1 to 16384) or [height, width], got " +
               json_text::write(v));
  }
}

// id2label in id order (transformers reads its keys as integers), else num_labels' "LABEL_i".
std::vector<std::string> class_labels(const nlohmann::json& j) {
  constexpr int kMaxLabels = 1 << 20;
  std::vector<std::string> labels;
  if (j.contains("id2label") && j["id2label"].is_object() && !j["id2label"].empty()) {
    std::map<long long, std::string> by_id;
    for (const auto& [key, value] : j["id2label"].items()) {
      char* end = nullptr;
      const long long id = std::strtoll(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0' || id < 0 || id >= kMaxLabels || !value.is_string()) {
        bad_config("\"id2label\" must map label ids (\"0\", \"1\", ...) to names; got \"" + key + "\": " +
                   json_text::write(value));
      }
      by_id[id] = value.get<std::string>();
    }
    labels.resize(static_cast<std::size_t>(by_id.rbegin()->first + 1));
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = "LABEL_" + std::to_string(i);
    for (const auto& [id, name] : by_id) labels[static_cast<std::size_t>(id)] = name;
    return labels;
  }
  const int n = optional_integer(j, "num_labels", kMaxLabels, 2);
  for (int i = 0; i < n; ++i) labels.push_back("LABEL_" + std::to_string(i));
  return labels;
}

}  // namespace

ModelConfig vision_encoder_config(const nlohmann::json& j, const std::string& family_name, const VisionDefaults& defaults) {
  ModelConfig c;
  c.family_name = family_name;
  c.bidirectional = true;
  c.layers = optional_integer(j, "num_hidden_layers", kMaxLayers, 12);
  c.heads = optional_integer(j, "num_attention_heads", kMaxHeads, 12);
  c.width = optional_integer(j, "hidden_size", kMaxWidth, 768);
  c.norm_eps = epsilon(j, "layer_norm_eps", defaults.layer_norm_eps);
  c.activation = activation(text(j, "hidden_act", "gelu"), "hidden_act");
  c.qkv_bias = flag(j, "qkv_bias", true);
  VisionConfig& v = c.vision;
  pixel_pair(j, "image_size", defaults.image_size, v.image_height, v.image_width);
  pixel_pair(j, "patch_size", defaults.patch_size, v.patch_height, v.patch_width);
  v.channels = optional_integer(j, "num_channels", 16, 3);
  if (v.table_grid_rows() < 1 || v.table_grid_columns() < 1) {
    bad_config("\"image_size\" (" + std::to_string(v.image_width) + "×" + std::to_string(v.image_height) +
               ") is smaller than \"patch_size\" (" + std::to_string(v.patch_width) + "×" + std::to_string(v.patch_height) + ")");
  }
  v.labels = class_labels(j);
  derive_head_shapes(c);
  return c;
}

}  // namespace attnplay::config_fields
