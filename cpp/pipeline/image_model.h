// A vision transformer with its image processor: a picture in, the attention
// among its patches out. run(picture) preprocesses it as the folder's
// preprocessor_config.json says (image/image_processor.h), runs every layer,
// and names the tokens (the learned ones and each patch by its place in the
// grid) and the top-k labels of a classifier. The options of a run are a
// ForwardRequest's (model/model.h), its pixels filled here.
// Not here: decoding picture files (image/decode.h), the forward pass (model/), bindings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "image/image_processor.h"
#include "model/model.h"

namespace attnplay {

struct ImageRunResult {
  PreprocessedPicture input;  // the picture as the model saw it, and its pixel values
  ForwardResult forward;      // attentions [L, H, T, T] over T = prefix + grid_rows · grid_columns tokens
  int grid_rows = 0, grid_columns = 0;
  std::vector<std::string> top_k_labels;  // the label of each top-k id, row by row
};

class ImageModel {
 public:
  // preprocessor_json: preprocessor_config.json's bytes; empty: the model
  // family's processor with its class defaults (image_processor.h).
  static ImageModel from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint,
                                    std::string_view preprocessor_json);
  ImageModel(Model model, ImageProcessorConfig processor);

  const Model& model() const { return model_; }
  const ImageProcessorConfig& processor() const { return processor_; }

  // The token names of a grid_rows × grid_columns picture, in token order:
  // "[CLS]", "[DIST]" (DeiT), "[REG1]".. (registers), then "(row, column)"
  // of each patch, counted from 0 at the top left.
  std::vector<std::string> token_labels(int grid_rows, int grid_columns) const;

  // The label of classifier output `id` (config.json's id2label).
  const std::string& label(int id) const;

  // request.pixels from the picture, then the forward pass. Throws
  // std::invalid_argument for a picture out of range or a request the model
  // cannot run.
  ImageRunResult run(const Picture& picture, ForwardRequest request) const;

 private:
  Model model_;
  ImageProcessorConfig processor_;
};

// The image processor of a vision model: preprocessor_config.json's bytes
// (empty: the family's class with its defaults). Throws std::invalid_argument.
ImageProcessorConfig image_processor_of(const ModelConfig& config, std::string_view preprocessor_json);

}  // namespace attnplay
