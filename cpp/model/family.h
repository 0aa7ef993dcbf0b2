// The decoder-only and encoder-only families, each in one file of
// model/families/ (gpt2, bert, distilbert, electra, roberta for RoBERTa /
// XLM-R / CamemBERT, opt, llama for Llama / Mistral / Qwen2 / Qwen3 /
// SmolLM3, gemma for Gemma 1 / 2 / 3, olmo2, phi3, gpt_neox; the vision
// transformers vit for ViT / DeiT, dinov2 for DINOv2 with and without registers):
// how its config.json reads, what its tensors are named, and its forward
// recipe; and the registry that finds a family by config.json's "model_type"
// (model/family.cpp).
// Adding a family: its file (a ModelFamily), its two lines in model/family.cpp,
// its tests and its docs.
// Not here: the pieces the recipes share (model/forward_pass.h, nn/,
// attention/), config.json's field readers (model/config_fields.h), the
// encoder-decoders (model/seq2seq.h).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "model/config.h"
#include "model/weights.h"
#include "safetensors/checkpoint.h"

namespace attnplay {

class ForwardPass;

struct ModelFamily {
  std::vector<std::string_view> model_types;  // config.json's "model_type" values it reads
  // config.json -> the hyper-parameters (model_type and eos_token_id are read
  // for every family by parse_config). Throws std::invalid_argument.
  ModelConfig (*read_config)(const nlohmann::json& config, const std::string& model_type);
  // The tensors by name (model/weights.h's load_weights).
  ModelWeights (*load_weights)(const ModelConfig& config, const Checkpoint& checkpoint);
  // The forward recipe, in ForwardPass's ops.
  void (*forward)(ForwardPass& pass, const ModelWeights& weights);
};

// BERT's forward recipe (families/bert.cpp), which DistilBERT, ELECTRA and
// RoBERTa run too: embeddings (positions, token types where the weights have
// them, LayerNorm, ELECTRA's projection), post-LN blocks, the masked-LM head.
void bert_encoder_forward(ForwardPass& pass, const ModelWeights& weights);

// The Llama family's forward recipe (families/llama.cpp), which Phi-3 runs
// too: pre-RMSNorm blocks (attention, gated MLP; fused or separate
// projections alike), the final norm, the next-token head.
void llama_decoder_forward(ForwardPass& pass, const ModelWeights& weights);

// The vision transformers' recipe (families/vit.cpp), which DINOv2 runs too:
// patch embeddings with positions, pre-LN blocks (with layer scale where the
// weights have it), the final LayerNorm, the image classifier.
void vision_encoder_forward(ForwardPass& pass, const ModelWeights& weights);

// The family that reads this "model_type", or null.
const ModelFamily* find_family(std::string_view model_type);

// The family of a parsed config (its model_type). Throws std::invalid_argument
// for a model_type no family reads.
const ModelFamily& family_of(const ModelConfig& config);

// Every model_type the families read, in the registry's order: "gpt2, bert, ...".
std::string supported_model_types();

}  // namespace attnplay
