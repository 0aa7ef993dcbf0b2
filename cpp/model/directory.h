// Reads a Hugging Face model folder from disk (native builds only; the WASM
// build receives the same bytes from JavaScript): config.json, the weights
// (model.safetensors, or when it is absent model.safetensors.index.json and
// every shard its weight_map names) and, when present, tokenizer.json or else
// a SentencePiece model (kTokenizerFiles: Llama 2 / Mistral's tokenizer.model,
// T5's spiece.model, XLM-R's sentencepiece.bpe.model), or else
// Marian's source.spm, target.spm and vocab.json (opus-mt folders: with a
// .spm file all three are needed; a folder with target_vocab.json, separate
// vocabularies, is refused), or else GPT-2's vocab.json and merges.txt. A
// folder with only a PyTorch pickle (pytorch_model.bin) is refused with how to
// convert it. A vision model's preprocessor_config.json when present.
// Not here: parsing (model/model.h, safetensors/).
#pragma once

#include <optional>
#include <string>

#include "safetensors/checkpoint.h"
#include "tokenizer/marian_tokenizer.h"

namespace attnplay {

// The tokenizer files a folder is searched for, in this order: the first found is read.
inline constexpr const char* kTokenizerFiles[] = {"tokenizer.json", "tokenizer.model", "spiece.model",
                                                  "sentencepiece.bpe.model"};

// GPT-2's original tokenizer files, which older repositories (facebook/opt-*,
// GPT-2 fine-tunes) have instead of tokenizer.json.
struct Gpt2TokenizerFiles {
  std::string vocab_json;  // vocab.json
  std::string merges_txt;  // merges.txt
};

struct ModelFiles {
  std::string config_json;
  Checkpoint checkpoint;  // owns the bytes it was read from
  std::optional<std::string> tokenizer;  // bytes for model_tokenizer (pipeline/tokens.h)
  std::string tokenizer_file;            // one of kTokenizerFiles, or "" (none)
  std::optional<MarianTokenizerFiles> marian_tokenizer;  // only when there is no tokenizer
  std::optional<Gpt2TokenizerFiles> gpt2_tokenizer;      // only when there is none of the above
  std::optional<std::string> preprocessor_config;        // preprocessor_config.json (vision models)
};

// Throws std::runtime_error naming the missing or unreadable file, and
// std::invalid_argument for a malformed checkpoint or index.
ModelFiles read_model_directory(const std::string& directory);

}  // namespace attnplay
