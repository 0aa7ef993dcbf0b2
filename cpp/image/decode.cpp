// Implementation of image/decode.h: JPEG with libjpeg-turbo (the library
// Pillow decodes JPEG with, at its defaults: so the pixels are Pillow's), PNG,
// BMP and GIF with stb_image compiled into this one file, from memory only;
// PNG out with stb_image_write, to memory.
// (stb_image's JPEG decoder read past a Huffman table on inputs
// tests/fuzz/fuzz_picture.cpp found; it is not compiled in.)
#include "image/decode.h"

#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include <jpeglib.h>

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_BMP
#define STBI_ONLY_GIF
#define STBI_FAILURE_USERMSG
#include <stb/stb_image.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>

#include <vector>

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

// libjpeg's error manager, returning to decode_jpeg instead of exiting.
struct JpegErrors {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpeg_failed(j_common_ptr info) {
  JpegErrors* errors = reinterpret_cast<JpegErrors*>(info->err);
  (*info->err->format_message)(info, errors->message);
  std::longjmp(errors->jump, 1);
}

void jpeg_warning(j_common_ptr, int) {}  // corrupt-data warnings: libjpeg goes on, as Pillow does

// A JPEG as RGB: grey and YCbCr through libjpeg's own conversion; CMYK and
// YCCK (Adobe's inverted CMYK) as R = (255 - C)(255 - K) / 255 and so on.
// Nothing here may own memory across a longjmp: the rows go into `picture`,
// allocated before the first row is read.
Picture decode_jpeg(std::string_view bytes, std::int64_t max_pixels) {
  jpeg_decompress_struct info{};
  JpegErrors errors{};
  info.err = jpeg_std_error(&errors.manager);
  errors.manager.error_exit = jpeg_failed;
  errors.manager.emit_message = jpeg_warning;
  Picture picture;
  std::vector<unsigned char> row;
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&info);
    throw std::invalid_argument(std::string("the JPEG could not be decoded (truncated or corrupt?): ") + errors.message);
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  const bool cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
  info.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  try {
    check_picture_size(info.image_width, info.image_height, max_pixels);
  } catch (...) {
    jpeg_destroy_decompress(&info);
    throw;
  }
  jpeg_start_decompress(&info);
  picture.width = static_cast<int>(info.output_width);
  picture.height = static_cast<int>(info.output_height);
  picture.rgb.resize(static_cast<std::size_t>(picture.width) * picture.height * 3);
  row.resize(static_cast<std::size_t>(picture.width) * info.output_components);
  const bool inverted = cmyk && info.saw_Adobe_marker;  // Adobe writes CMYK inverted
  while (info.output_scanline < info.output_height) {
    unsigned char* line = row.data();
    const std::size_t y = info.output_scanline;
    jpeg_read_scanlines(&info, &line, 1);
    std::uint8_t* out = picture.rgb.data() + y * picture.width * 3;
    for (int x = 0; x < picture.width; ++x) {
      if (!cmyk) {
        for (int ch = 0; ch < 3; ++ch) out[x * 3 + ch] = row[x * 3 + ch];
        continue;
      }
      const unsigned char* p = row.data() + x * 4;
      const int k = inverted ? p[3] : 255 - p[3];
      for (int ch = 0; ch < 3; ++ch) out[x * 3 + ch] = static_cast<std::uint8_t>((inverted ? p[ch] : 255 - p[ch]) * k / 255);
    }
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return picture;
}

}  // namespace

Picture decode_picture(std::string_view bytes, std::int64_t max_pixels) {
  if (bytes.empty()) throw std::invalid_argument("the picture file is empty");
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX)) throw std::invalid_argument("the picture file is over 2 GB");
  if (bytes.size() >= 3 && bytes.substr(0, 3) == std::string_view("\xff\xd8\xff", 3)) return decode_jpeg(bytes, max_pixels);
  std::int64_t declared_width = 0, declared_height = 0;
  if (png_declared_size(bytes, declared_width, declared_height)) check_picture_size(declared_width, declared_height, max_pixels);
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int length = static_cast<int>(bytes.size());
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(data, length, &width, &height, &channels)) {
    throw std::invalid_argument(std::string("not a picture that can be read here (PNG, JPEG, BMP or GIF): ") +
                                stbi_failure_reason());
  }
  check_picture_size(width, height, max_pixels);
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

std::string encode_png(const Picture& picture) {
  std::string png;
  const auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, picture.width, picture.height, 3, picture.rgb.data(), picture.width * 3)) {
    throw std::runtime_error("the picture could not be written as PNG");
  }
  return png;
}

}  // namespace attnplay
