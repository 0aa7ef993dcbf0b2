// A picture as the vision models' preprocessing reads it: 8-bit RGB, row by
// row ([H, W, 3]), the form Pillow's convert("RGB") gives transformers'
// image processors and a canvas's RGBA gives once its alpha is dropped.
// Not here: decoding files (image/decode.h, native only: the browser decodes
// pictures itself), resizing (image/resample.h), the model's pixel values
// (image/image_processor.h), which makes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnplay {

// The largest picture taken in: 64 megapixels (an 8000×8000 photograph) is
// 192 MB as RGB; a larger one is refused before anything is allocated.
constexpr std::int64_t kMaxPicturePixels = std::int64_t{64} << 20;

struct Picture {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // [H, W, 3]

  const std::uint8_t* pixel(int x, int y) const { return rgb.data() + (static_cast<std::size_t>(y) * width + x) * 3; }
};

// A vision model's input: [C, H, W] floats, channels first (transformers'
// pixel_values without the batch), made by image/image_processor.h.
struct PixelValues {
  int channels = 3, height = 0, width = 0;
  std::vector<float> values;  // [C, H, W]
};

// Throws std::invalid_argument unless width × height is a picture the
// preprocessing takes: both at least 1, at most max_pixels in all.
void check_picture_size(std::int64_t width, std::int64_t height, std::int64_t max_pixels = kMaxPicturePixels);

// A picture from RGBA bytes [H, W, 4] (a canvas's ImageData): alpha dropped,
// as Pillow's convert("RGB") drops it. Throws std::invalid_argument when the
// byte count is not width × height × 4.
Picture picture_from_rgba(const std::uint8_t* rgba, std::size_t bytes, int width, int height);

}  // namespace attnplay
