// The encoder-decoder half of the model bindings (seq2seq_bindings.cpp):
// model_bindings.cpp's loadModel hands an encoder-decoder checkpoint here.
#pragma once

#include <emscripten/val.h>

#include <string>

#include "safetensors/checkpoint.h"

namespace attnplay::bindings {

// -> { handle, hasTokenizer, config } of a TranslationModel kept in this file's table.
emscripten::val load_seq2seq_model(const std::string& config_json, const Checkpoint& checkpoint,
                                   const std::string& tokenizer_file);
// Encoder-decoders loaded and not disposed.
double loaded_seq2seq_models();

}  // namespace attnplay::bindings
