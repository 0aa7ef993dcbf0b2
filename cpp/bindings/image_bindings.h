// The vision half of the model bindings (image_bindings.cpp):
// model_bindings.cpp's loadModel hands a vision transformer's checkpoint here.
#pragma once

#include <emscripten/val.h>

#include <string>

#include "safetensors/checkpoint.h"

namespace attnplay::bindings {

// -> { handle, hasTokenizer: false, config } of an ImageModel kept in this
// file's table; config is config_to_js's plus imageModel: true and vision:
// { imageHeight, imageWidth, patchHeight, patchWidth, channels,
// distillationToken, registers, prefixTokens, labels, hasClassifier,
// processor: { type, resample, ... } }. preprocessor_json:
// preprocessor_config.json's text, or "" (the family's defaults).
emscripten::val load_image_model(const std::string& config_json, const Checkpoint& checkpoint,
                                 const std::string& preprocessor_json);
// Vision models loaded and not disposed.
double loaded_image_models();

}  // namespace attnplay::bindings
