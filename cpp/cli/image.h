// The vision form of `attnplay attention`: a picture file through a vision
// transformer's folder (pipeline/image_model.h), written as JSON or .npy.
#pragma once

#include <ostream>
#include <string>

#include "model/directory.h"
#include "model/model.h"

namespace attnplay::cli {

struct ImageAttentionRequest {
  ForwardRequest forward;  // its options (--ablate, --ablation, --top-k); its pixels come from the picture
  std::string image_path;  // --image
  std::string format;      // json or npy
  std::string out_path;    // --out ("" for stdout; needed for npy)
  bool top_k_given = false;  // --top-k given; else 5 labels when the model has a classifier
};

// Writes {"model_type", "image", "tokens", "attentions", "top_k"} (JSON) to
// `out`, or the [L, H, T, T] attentions to out_path (npy); returns the exit code.
int image_attention(const ModelFiles& files, ImageAttentionRequest request, std::ostream& out);

}  // namespace attnplay::cli
