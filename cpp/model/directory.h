// Reads a Hugging Face model folder from disk (native builds only; the WASM
// build receives the same bytes from JavaScript): config.json,
// model.safetensors and, when present, tokenizer.json. A folder with only a
// PyTorch pickle (pytorch_model.bin) is refused with how to convert it.
// Not here: parsing (model/model.h, safetensors/).
#pragma once

#include <optional>
#include <string>

namespace attnplay {

struct ModelFiles {
  std::string config_json;
  std::string safetensors;
  std::optional<std::string> tokenizer_json;
};

// Throws std::runtime_error naming the missing or unreadable file.
ModelFiles read_model_directory(const std::string& directory);

}  // namespace attnplay
