// The registry of model/family.h: two lines per family (its declaration and
// its place in kFamilies), in the order messages list them.
#include "model/family.h"

#include <stdexcept>

namespace attnplay {

extern const ModelFamily gpt2_family;      // families/gpt2.cpp
extern const ModelFamily bert_family;      // families/bert.cpp
extern const ModelFamily distilbert_family;  // families/distilbert.cpp
extern const ModelFamily electra_family;   // families/electra.cpp
extern const ModelFamily roberta_family;   // families/roberta.cpp
extern const ModelFamily opt_family;       // families/opt.cpp
extern const ModelFamily llama_family;     // families/llama.cpp
extern const ModelFamily gemma_family;     // families/gemma.cpp
extern const ModelFamily olmo2_family;     // families/olmo2.cpp
extern const ModelFamily phi3_family;      // families/phi3.cpp
extern const ModelFamily gpt_neox_family;  // families/gpt_neox.cpp
extern const ModelFamily vit_family;       // families/vit.cpp
extern const ModelFamily dinov2_family;    // families/dinov2.cpp

namespace {

const ModelFamily* const kFamilies[] = {&gpt2_family,    &bert_family, &distilbert_family, &electra_family,
                                        &roberta_family, &opt_family,  &llama_family,      &gemma_family,
                                        &olmo2_family,   &phi3_family, &gpt_neox_family,   &vit_family,
                                        &dinov2_family};

}  // namespace

const ModelFamily* find_family(std::string_view model_type) {
  for (const ModelFamily* family : kFamilies) {
    for (std::string_view type : family->model_types) {
      if (type == model_type) return family;
    }
  }
  return nullptr;
}

const ModelFamily& family_of(const ModelConfig& config) {
  const ModelFamily* family = find_family(config.model_type);
  if (!family) throw std::invalid_argument("model_type \"" + config.model_type + "\" is not supported");
  return *family;
}

std::string supported_model_types() {
  std::string list;
  for (const ModelFamily* family : kFamilies) {
    for (std::string_view type : family->model_types) list += (list.empty() ? "" : ", ") + std::string(type);
  }
  return list;
}

}  // namespace attnplay
