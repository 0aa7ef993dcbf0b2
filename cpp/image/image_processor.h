// What a vision model's preprocessor_config.json asks for, and the model's
// input made from a picture by it, as transformers' image processors make it
// (ViTImageProcessor, DeiTImageProcessor, BitImageProcessor (DINOv2),
// CLIPImageProcessor, ConvNextImageProcessor's crop_pct, and their older
// *FeatureExtractor names): convert to RGB, resize (to a height × width, or
// the shortest edge to a length keeping the aspect ratio), center crop (zero
// padding where the crop is larger), rescale (1/255) and normalise with the
// given mean and std, channels first. Keys left out take the processor
// class's defaults, as transformers reads them; keys that would change the
// pixels in a way not done here are refused by name.
// Not here: decoding files (image/decode.h), the resampling itself (image/resample.h).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "image/picture.h"
#include "image/resample.h"

namespace attnplay {

struct ImageProcessorConfig {
  std::string processor_type;  // "ViTImageProcessor", ... (image_processor_type or feature_extractor_type)
  bool do_resize = true;
  // Resize to height × width, or (shortest_edge > 0) the shorter side to
  // shortest_edge and the longer in proportion, rounded down.
  int resize_height = 224, resize_width = 224;
  int shortest_edge = 0;
  Resampling resample = Resampling::bilinear;
  bool do_center_crop = false;
  int crop_height = 224, crop_width = 224;
  bool do_rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool do_normalize = true;
  std::array<float, 3> mean{0.5f, 0.5f, 0.5f}, std{0.5f, 0.5f, 0.5f};
};

// Parses preprocessor_config.json; `fallback_type` is the processor class
// when the file names none (AutoImageProcessor's choice for the model_type).
// Throws std::invalid_argument ("preprocessor_config.json: ...") naming the
// key at fault.
ImageProcessorConfig parse_image_processor_config(std::string_view text, const std::string& fallback_type);

struct PreprocessedPicture {
  Picture seen;        // the picture after resizing and cropping, before rescaling: what the model's patches cover
  PixelValues pixels;  // its pixel values, rescaled and normalised
};

PreprocessedPicture preprocess_picture(const Picture& picture, const ImageProcessorConfig& config);

}  // namespace attnplay
