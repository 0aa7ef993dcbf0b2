// The golden checkpoints of tests/golden/models/ (random models of every family
// with PyTorch outputs, made by tests/golden/make_model_goldens.py), shared by
// the native runtime and pipeline tests: their names, folders, golden.json,
// and flattening of nested JSON arrays.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace golden_models {

inline const char* const kModels[] = {"gpt2-l2-h12-k8-f16", "gpt2-l1-h1-k64-f32", "gpt2-l4-h4-k8-bf16",
                                      "bert-l2-h2-k32-f32", "bert-l3-h6-k16-f16", "bert-l1-h3-k8-bf16",
                                      "distilbert-l2-h4-k8-f32", "distilbert-l1-h2-k16-bf16",
                                      "electra-generator-l2-h2-k16-e24-f32", "electra-discriminator-l1-h4-k8-bf16",
                                      "roberta-l2-h2-k16-f32", "xlm-roberta-l1-h4-k8-bf16", "roberta-l1-h2-k8-f16",
                                      "opt-l2-h4-k8-f32", "opt-post-ln-proj-f16", "opt-nobias-gelu-untied-bf16",
                                      "gemma-mqa-hd16-bf16", "gemma2-softcap-window-f32", "gemma3-layer-types-f16",
                                      "olmo2-gqa-f16", "smollm3-norope-f32", "phi3-partial-window-bf16",
                                      "llama-gqa-llama3-bf16", "llama-mqa-bias-linear-f32", "mistral-window3-f16",
                                      "qwen2-bias-f32", "qwen3-qknorm-bf16", "pythia-parallel-f16",
                                      "pythia-serial-f32", "qwen2-yarn-f32", "phi3-longrope-f16",
                                      "gpt2-unscaled-inverse-layer-f32", "opt-bare-norms-no-final-f32",
                                      "qwen2-sliding-layers-f16"};

inline std::string model_dir(const std::string& name) { return std::string(ATTNPLAY_GOLDEN_DIR) + "/models/" + name; }

inline nlohmann::json golden(const std::string& name) {
  std::ifstream in(model_dir(name) + "/golden.json");
  return nlohmann::json::parse(in);
}

inline void flatten(const nlohmann::json& j, std::vector<double>& out) {
  if (j.is_array()) {
    for (const nlohmann::json& e : j) flatten(e, out);
  } else {
    out.push_back(j.get<double>());
  }
}

inline std::vector<double> flat(const nlohmann::json& j) {
  std::vector<double> out;
  flatten(j, out);
  return out;
}

}  // namespace golden_models
