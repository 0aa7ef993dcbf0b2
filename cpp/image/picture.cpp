// Implementation of image/picture.h.
#include "image/picture.h"

#include <stdexcept>

namespace attnplay {

void check_picture_size(std::int64_t width, std::int64_t height, std::int64_t max_pixels) {
  if (width < 1 || height < 1) {
    throw std::invalid_argument("the picture is " + std::to_string(width) + "×" + std::to_string(height) +
                                " pixels: there is nothing to look at");
  }
  if (width > max_pixels / height) {
    const std::int64_t megapixel = std::int64_t{1} << 20;
    const std::string most = max_pixels > megapixel && max_pixels % megapixel == 0
                                 ? std::to_string(max_pixels / megapixel) + " megapixels"
                                 : std::to_string(max_pixels) + " pixels";
    throw std::invalid_argument("the picture is " + std::to_string(width) + "×" + std::to_string(height) +
                                " pixels; at most " + most + " are taken: scale it down first");
  }
}

Picture picture_from_rgba(const std::uint8_t* rgba, std::size_t bytes, int width, int height) {
  check_picture_size(width, height);
  const std::size_t pixels = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  if (bytes != pixels * 4) {
    throw std::invalid_argument("RGBA pixels: " + std::to_string(bytes) + " bytes for a " + std::to_string(width) +
                                "×" + std::to_string(height) + " picture (" + std::to_string(pixels * 4) + " expected)");
  }
  Picture picture;
  picture.width = width;
  picture.height = height;
  picture.rgb.resize(pixels * 3);
  for (std::size_t i = 0; i < pixels; ++i) {
    picture.rgb[i * 3 + 0] = rgba[i * 4 + 0];
    picture.rgb[i * 3 + 1] = rgba[i * 4 + 1];
    picture.rgb[i * 3 + 2] = rgba[i * 4 + 2];
  }
  return picture;
}

}  // namespace attnplay
