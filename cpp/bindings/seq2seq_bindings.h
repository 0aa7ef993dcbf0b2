// The encoder-decoder half of the model bindings (seq2seq_bindings.cpp):
// model_bindings.cpp's loadModel hands an encoder-decoder checkpoint here.
#pragma once

#include <emscripten/val.h>

#include <optional>
#include <string>

#include "safetensors/checkpoint.h"
#include "tokenizer/marian_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace attnplay::bindings {

// -> { handle, hasTokenizer, config } of a TranslationModel kept in this file's table.
// tokenizer: tokenizer.json's or a .model's (none: ids only); marian: Marian's
// source.spm, target.spm and vocab.json instead.
emscripten::val load_seq2seq_model(const std::string& config_json, const Checkpoint& checkpoint,
                                   const std::optional<Tokenizer>& tokenizer,
                                   const std::optional<MarianTokenizerFiles>& marian);
// Encoder-decoders loaded and not disposed.
double loaded_seq2seq_models();

}  // namespace attnplay::bindings
