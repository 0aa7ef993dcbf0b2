// Implementation of image/decode.h: stb_image compiled into this one file,
// from memory only, for the formats named there.
#include "image/decode.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_ONLY_GIF
#define STBI_FAILURE_USERMSG
#include <stb/stb_image.h>

namespace attnplay {
namespace {

// The width and height a PNG's IHDR declares, read before stb_image (whose
// own checks refuse huge and empty PNGs without saying why).
bool png_declared_size(std::string_view bytes, std::int64_t& width, std::int64_t& height) {
  static constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";
  if (bytes.size() < 24 || bytes.substr(0, 8) != std::string_view(kSignature, 8) || bytes.substr(12, 4) != "IHDR") {
    return false;
  }
  const auto big_endian = [&bytes](std::size_t at) {
    std::int64_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  width = big_endian(16);
  height = big_endian(20);
  return true;
}

}  // namespace

Picture decode_picture(std::string_view bytes) {
  if (bytes.empty()) throw std::invalid_argument("the picture file is empty");
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX)) throw std::invalid_argument("the picture file is over 2 GB");
  std::int64_t declared_width = 0, declared_height = 0;
  if (png_declared_size(bytes, declared_width, declared_height)) check_picture_size(declared_width, declared_height);
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int length = static_cast<int>(bytes.size());
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(data, length, &width, &height, &channels)) {
    throw std::invalid_argument(std::string("not a picture that can be read here (PNG, JPEG, BMP or GIF): ") +
                                stbi_failure_reason());
  }
  check_picture_size(width, height);
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(stbi_load_from_memory(data, length, &width, &height, &channels, 3),
                                                   stbi_image_free);
  if (!pixels) {
    throw std::invalid_argument(std::string("the picture could not be decoded (truncated or corrupt?): ") +
                                stbi_failure_reason());
  }
  Picture picture;
  picture.width = width;
  picture.height = height;
  picture.rgb.assign(pixels.get(), pixels.get() + static_cast<std::size_t>(width) * height * 3);
  return picture;
}

}  // namespace attnplay
