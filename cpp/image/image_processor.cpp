// Implementation of image/image_processor.h. The defaults of each processor
// class are its __init__'s in transformers; an integer "size" means a square
// for ViT and DeiT and a shortest edge for BiT, CLIP and ConvNeXt, as each
// class's get_size_dict call reads it.
#include "image/image_processor.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>

#include "json/json_text.h"

namespace attnplay {
namespace {

using nlohmann::json;

[[noreturn]] void bad_processor(const std::string& message) {
  throw std::invalid_argument("preprocessor_config.json: " + message);
}

constexpr std::array<float, 3> kImagenetMean{0.485f, 0.456f, 0.406f}, kImagenetStd{0.229f, 0.224f, 0.225f};
constexpr std::array<float, 3> kClipMean{0.48145466f, 0.4578275f, 0.40821073f};
constexpr std::array<float, 3> kClipStd{0.26862954f, 0.26130258f, 0.27577711f};

// The processor classes read, by their names without "Fast" or the older "FeatureExtractor" spelling.
enum class ProcessorClass { vit, deit, bit, clip, convnext };

ProcessorClass processor_class(const std::string& type) {
  std::string name = type;
  for (const char* suffix : {"Fast", "ImageProcessor", "FeatureExtractor"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) name.resize(name.size() - s.size());
  }
  if (name == "ViT") return ProcessorClass::vit;
  if (name == "DeiT") return ProcessorClass::deit;
  if (name == "Bit") return ProcessorClass::bit;
  if (name == "CLIP") return ProcessorClass::clip;
  if (name == "ConvNext") return ProcessorClass::convnext;
  bad_processor("the image processor '" + type +
                "' is not one attnplay reads (ViTImageProcessor, DeiTImageProcessor, BitImageProcessor, "
                "CLIPImageProcessor, ConvNextImageProcessor)");
}

bool read_flag(const json& j, const char* key, bool fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean()) bad_processor(std::string(key) + " must be true or false");
  return j[key].get<bool>();
}

int read_side(const json& value, const std::string& key) {
  if (!value.is_number_integer() || value.get<std::int64_t>() < 1 || value.get<std::int64_t>() > 16384) {
    bad_processor(key + " must be a whole number of pixels from 1 to 16384");
  }
  return value.get<int>();
}

// "size" or "crop_size": an integer (a square, or a shortest edge when
// !int_is_square), [height, width], or {"height", "width"} / {"shortest_edge"}.
void read_size(const json& j, const char* key, bool int_is_square, int& height, int& width, int* shortest_edge) {
  if (!j.contains(key) || j[key].is_null()) return;
  const json& v = j[key];
  const std::string name(key);
  if (v.is_number()) {
    const int side = read_side(v, name);
    if (int_is_square || !shortest_edge) {
      height = width = side;
      if (shortest_edge) *shortest_edge = 0;
    } else {
      *shortest_edge = side;
    }
  } else if (v.is_array() && v.size() == 2) {
    height = read_side(v[0], name + "[0]");
    width = read_side(v[1], name + "[1]");
    if (shortest_edge) *shortest_edge = 0;
  } else if (v.is_object() && v.contains("height") && v.contains("width") && v.size() == 2) {
    height = read_side(v["height"], name + ".height");
    width = read_side(v["width"], name + ".width");
    if (shortest_edge) *shortest_edge = 0;
  } else if (v.is_object() && v.contains("shortest_edge") && v.size() == 1 && shortest_edge) {
    *shortest_edge = read_side(v["shortest_edge"], name + ".shortest_edge");
  } else {
    bad_processor(name + " must be a number of pixels, [height, width], {\"height\", \"width\"}" +
                  (shortest_edge ? " or {\"shortest_edge\"}" : "") + "; got " + v.dump());
  }
}

std::array<float, 3> read_channels(const json& j, const char* key, std::array<float, 3> fallback, bool positive) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  const json& v = j[key];
  std::array<float, 3> out{};
  for (int c = 0; c < 3; ++c) {
    const json& x = v.is_array() ? (v.size() == 3 ? v[c] : json()) : v;
    if (!x.is_number() || !std::isfinite(x.get<double>()) || (positive && x.get<double>() <= 0)) {
      bad_processor(std::string(key) + " must be " + (positive ? "a positive number" : "a number") +
                    " or three of them (one per RGB channel)");
    }
    out[c] = x.get<float>();
  }
  return out;
}

}  // namespace

ImageProcessorConfig parse_image_processor_config(std::string_view text, const std::string& fallback_type) {
  json j;
  try {
    j = json_text::parse(text);
  } catch (const std::exception& e) {
    bad_processor(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) bad_processor("must be a JSON object");
  ImageProcessorConfig c;
  for (const char* key : {"image_processor_type", "feature_extractor_type"}) {
    if (c.processor_type.empty() && j.contains(key) && j[key].is_string()) c.processor_type = j[key].get<std::string>();
  }
  if (c.processor_type.empty()) c.processor_type = fallback_type;
  const ProcessorClass kind = processor_class(c.processor_type);

  // The class's defaults.
  switch (kind) {
    case ProcessorClass::vit: break;
    case ProcessorClass::deit:
      c.resize_height = c.resize_width = 256;
      c.resample = Resampling::bicubic;
      c.do_center_crop = true;
      c.mean = kImagenetMean, c.std = kImagenetStd;
      break;
    case ProcessorClass::bit:
    case ProcessorClass::clip:
      c.shortest_edge = 224;
      c.resample = Resampling::bicubic;
      c.do_center_crop = true;
      c.mean = kClipMean, c.std = kClipStd;
      break;
    case ProcessorClass::convnext:
      c.shortest_edge = 384;
      c.mean = kImagenetMean, c.std = kImagenetStd;
      break;
  }

  c.do_resize = read_flag(j, "do_resize", c.do_resize);
  const bool int_is_square = kind == ProcessorClass::vit || kind == ProcessorClass::deit;
  read_size(j, "size", int_is_square, c.resize_height, c.resize_width, &c.shortest_edge);
  if (j.contains("resample") && !j["resample"].is_null()) {
    const json& r = j["resample"];
    if (!r.is_number_integer() || r.get<int>() < 0 || r.get<int>() > 5) {
      bad_processor("resample must be one of Pillow's filters, 0 to 5 (nearest, lanczos, bilinear, bicubic, box, hamming)");
    }
    c.resample = static_cast<Resampling>(r.get<int>());
  }
  if (kind != ProcessorClass::vit && kind != ProcessorClass::convnext) {
    c.do_center_crop = read_flag(j, "do_center_crop", c.do_center_crop);
    read_size(j, "crop_size", true, c.crop_height, c.crop_width, nullptr);
  }
  c.do_rescale = read_flag(j, "do_rescale", c.do_rescale);
  if (j.contains("rescale_factor") && !j["rescale_factor"].is_null()) {
    const json& f = j["rescale_factor"];
    if (!f.is_number() || !std::isfinite(f.get<double>()) || f.get<double>() <= 0) {
      bad_processor("rescale_factor must be a positive number");
    }
    c.rescale_factor = f.get<double>();
  }
  c.do_normalize = read_flag(j, "do_normalize", c.do_normalize);
  c.mean = read_channels(j, "image_mean", c.mean, false);
  c.std = read_channels(j, "image_std", c.std, true);
  if (read_flag(j, "do_pad", false)) bad_processor("do_pad: padding pictures is not done here");

  if (kind == ProcessorClass::convnext && c.do_resize) {
    // ConvNextImageProcessor.resize: below 384 pixels, the shortest edge to
    // shortest_edge / crop_pct, then a square crop of shortest_edge; from 384
    // on, a square of shortest_edge without cropping.
    double crop_pct = 224.0 / 256.0;
    if (j.contains("crop_pct") && !j["crop_pct"].is_null()) {
      if (!j["crop_pct"].is_number() || j["crop_pct"].get<double>() <= 0 || j["crop_pct"].get<double>() > 1) {
        bad_processor("crop_pct must be a number in (0, 1]");
      }
      crop_pct = j["crop_pct"].get<double>();
    }
    if (c.shortest_edge == 0) bad_processor("ConvNeXt's size must be {\"shortest_edge\": N}");
    const int edge = c.shortest_edge;
    if (edge < 384) {
      c.shortest_edge = static_cast<int>(edge / crop_pct);
      c.do_center_crop = true;
      c.crop_height = c.crop_width = edge;
    } else {
      c.shortest_edge = 0;
      c.resize_height = c.resize_width = edge;
    }
  }
  return c;
}

PreprocessedPicture preprocess_picture(const Picture& picture, const ImageProcessorConfig& c) {
  check_picture_size(picture.width, picture.height);
  PreprocessedPicture out;
  Picture resized;
  const Picture* current = &picture;
  if (c.do_resize) {
    int height = c.resize_height, width = c.resize_width;
    if (c.shortest_edge > 0) {  // get_resize_output_image_size(default_to_square=False)
      const bool portrait = picture.width <= picture.height;
      const int short_side = portrait ? picture.width : picture.height;
      const int long_side = portrait ? picture.height : picture.width;
      const int new_long = static_cast<int>(static_cast<std::int64_t>(c.shortest_edge) * long_side / short_side);
      height = portrait ? new_long : c.shortest_edge;
      width = portrait ? c.shortest_edge : new_long;
      if (new_long < 1) {
        throw std::invalid_argument("the picture is " + std::to_string(picture.width) + "×" +
                                    std::to_string(picture.height) + " pixels: too narrow to resize");
      }
    }
    resized = resize_picture(picture, width, height, c.resample);
    current = &resized;
  }
  if (c.do_center_crop) {
    // transformers' center_crop: the crop's top-left at floor((size - crop) / 2), zeros outside the picture.
    const Picture& in = *current;
    Picture cropped;
    cropped.width = c.crop_width;
    cropped.height = c.crop_height;
    cropped.rgb.assign(static_cast<std::size_t>(c.crop_width) * c.crop_height * 3, 0);
    const auto floor_half = [](int v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); };
    const int top = floor_half(in.height - c.crop_height), left = floor_half(in.width - c.crop_width);
    for (int y = 0; y < c.crop_height; ++y) {
      const int sy = top + y;
      if (sy < 0 || sy >= in.height) continue;
      for (int x = 0; x < c.crop_width; ++x) {
        const int sx = left + x;
        if (sx < 0 || sx >= in.width) continue;
        const std::uint8_t* p = in.pixel(sx, sy);
        std::uint8_t* o = cropped.rgb.data() + (static_cast<std::size_t>(y) * c.crop_width + x) * 3;
        o[0] = p[0], o[1] = p[1], o[2] = p[2];
      }
    }
    out.seen = std::move(cropped);
  } else {
    out.seen = current == &picture ? picture : std::move(resized);
  }
  // Rescale (in double, then float32, as numpy's rescale) and normalise (in float32), channels first.
  const Picture& seen = out.seen;
  PixelValues& px = out.pixels;
  px.height = seen.height;
  px.width = seen.width;
  const std::size_t plane = static_cast<std::size_t>(seen.width) * seen.height;
  px.values.resize(3 * plane);
  for (int ch = 0; ch < 3; ++ch) {
    float* dst = px.values.data() + ch * plane;
    for (std::size_t i = 0; i < plane; ++i) {
      float v = seen.rgb[i * 3 + ch];
      if (c.do_rescale) v = static_cast<float>(static_cast<double>(seen.rgb[i * 3 + ch]) * c.rescale_factor);
      if (c.do_normalize) v = (v - c.mean[ch]) / c.std[ch];
      dst[i] = v;
    }
  }
  return out;
}

}  // namespace attnplay
