// libFuzzer target: arbitrary bytes as a picture file (PNG, JPEG, BMP, GIF)
// for the command line's decoder (stb_image), then the vision preprocessing
// (a bicubic resize of the shortest edge to 20, a 16 × 16 center crop,
// rescaling and normalising), and the picture as the model saw it written as
// PNG (the CLI's JSON) and read back: the same pixels. Decoding must either
// give a picture or throw std::invalid_argument; nothing may read or write
// outside its buffers (ASan) or overflow (UBSan). Pictures over a megapixel
// are refused from their header (the same check as the 64-megapixel limit):
// a 65320×255 CMYK JPEG that the fuzzer made took 15 s to decode under the
// sanitizers, a third of the run's time on one input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "image/decode.h"
#include "image/image_processor.h"

namespace {
constexpr std::int64_t kFuzzMaxPixels = std::int64_t{1} << 20;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const attnplay::ImageProcessorConfig processor = attnplay::parse_image_processor_config(
      R"({"size": {"shortest_edge": 20}, "crop_size": 16})", "BitImageProcessor");
  try {
    const attnplay::Picture picture = attnplay::decode_picture(std::string_view(reinterpret_cast<const char*>(data), size), kFuzzMaxPixels);
    const attnplay::Picture seen = attnplay::preprocess_picture(picture, processor).seen;
    const attnplay::Picture back = attnplay::decode_picture(attnplay::encode_png(seen));
    if (back.width != seen.width || back.height != seen.height || back.rgb != seen.rgb) std::abort();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
