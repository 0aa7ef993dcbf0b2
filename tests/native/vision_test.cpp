// Vision transformers (ViT, DeiT, DINOv2 with and without registers) against
// tests/golden/make_vision_goldens.py's PyTorch forward passes and Pillow's
// preprocessing: the picture as the model sees it, every layer's and head's
// attention from the same pixels, hidden states, logits and top-5 labels;
// Pillow's six resampling filters; the malformed pictures and requests that
// must give a clear message.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "golden_models.h"
#include "image/decode.h"
#include "image/image_processor.h"
#include "image/resample.h"
#include "model/directory.h"
#include "pipeline/image_model.h"

using namespace attnplay;

namespace {

const char* const kVisionModels[] = {"vit-classifier-nonsquare-f32", "vit-bare-pooler-f16", "deit-distilled-teacher-bf16",
                                     "dinov2-518-to-224-f32", "dinov2-registers-swiglu-bf16"};

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Picture picture_file(const std::string& path) { return decode_picture(file_bytes(path)); }

std::string pictures_dir() { return std::string(ATTNPLAY_GOLDEN_DIR) + "/pictures/"; }

// The largest difference of two pictures' channel values (they must be the same size).
int largest_difference(const Picture& a, const Picture& b) {
  REQUIRE(a.width == b.width);
  REQUIRE(a.height == b.height);
  int largest = 0;
  for (std::size_t i = 0; i < a.rgb.size(); ++i) largest = std::max(largest, std::abs(a.rgb[i] - b.rgb[i]));
  return largest;
}

// A float32 .npy file (version 1, little-endian, C order): its shape and values.
std::vector<float> npy_float32(const std::string& path, std::vector<std::int64_t>& shape) {
  const std::string bytes = file_bytes(path);
  REQUIRE(bytes.compare(0, 6, "\x93NUMPY") == 0);
  const std::size_t header_length = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  const std::string header = bytes.substr(10, header_length);
  REQUIRE(header.find("'descr': '<f4'") != std::string::npos);
  REQUIRE(header.find("'fortran_order': False") != std::string::npos);
  shape.clear();
  const std::size_t open = header.find('(', header.find("'shape'")), close = header.find(')', open);
  std::size_t at = open + 1;
  while (at < close) {
    std::size_t end = header.find_first_of(",)", at);
    const std::string number = header.substr(at, end - at);
    if (number.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(number));
    at = end + 1;
  }
  std::size_t count = 1;
  for (const std::int64_t n : shape) count *= static_cast<std::size_t>(n);
  std::vector<float> values(count);
  REQUIRE(bytes.size() == 10 + header_length + count * 4);
  std::memcpy(values.data(), bytes.data() + 10 + header_length, count * 4);
  return values;
}

// The pixel values of the reference's seen.png under the model's processor (rescale and normalise only).
PixelValues pixels_of_seen(const ImageProcessorConfig& processor, const Picture& seen) {
  ImageProcessorConfig no_resize = processor;
  no_resize.do_resize = false;
  no_resize.do_center_crop = false;
  return preprocess_picture(seen, no_resize).pixels;
}

}  // namespace

TEST_CASE("vision goldens: the picture as Pillow and transformers make it, attention and labels as PyTorch computes") {
  for (const char* name : kVisionModels) {
    CAPTURE(name);
    const std::string dir = golden_models::model_dir(name);
    const nlohmann::json golden = golden_models::golden(name);
    const ModelFiles files = read_model_directory(dir);
    REQUIRE(files.preprocessor_config.has_value());
    const ImageModel model = ImageModel::from_checkpoint(files.config_json, files.checkpoint, *files.preprocessor_config);

    // Preprocessing: resize and crop within 1/255 of Pillow's (in fact equal), the pixel values as numpy's.
    const Picture picture = picture_file(dir + "/picture.png");
    const Picture reference_seen = picture_file(dir + "/seen.png");
    const PreprocessedPicture ours = preprocess_picture(picture, model.processor());
    CHECK(largest_difference(ours.seen, reference_seen) <= 1);
    const std::vector<double> first_row = golden_models::flat(golden["pixels_first_row"]);  // [3, W]
    REQUIRE(first_row.size() == static_cast<std::size_t>(3 * ours.pixels.width));
    for (int ch = 0; ch < 3; ++ch) {
      for (int x = 0; x < ours.pixels.width; ++x) {
        const float value = ours.pixels.values[static_cast<std::size_t>(ch) * ours.pixels.width * ours.pixels.height + x];
        CHECK(std::abs(value - first_row[static_cast<std::size_t>(ch * ours.pixels.width + x)]) < 1e-6);
      }
    }

    // The forward pass over the reference's own pixels.
    ForwardRequest request;
    request.pixels = pixels_of_seen(model.processor(), reference_seen);
    request.hidden_states = true;
    request.logits = true;
    const bool classifier = golden.contains("logits");
    request.top_k = classifier ? 5 : 0;
    const ForwardResult result = model.model().forward(request);
    std::vector<std::int64_t> shape;
    const std::vector<float> attentions = npy_float32(dir + "/attentions.npy", shape);
    REQUIRE(shape == std::vector<std::int64_t>{result.layers, result.heads, result.tokens, result.tokens});
    CHECK(result.tokens == golden["tokens"].get<int>());
    double worst = 0;
    for (std::size_t i = 0; i < attentions.size(); ++i) worst = std::max(worst, std::abs(double(result.attentions[i]) - attentions[i]));
    CHECK(worst < 1e-5);
    const std::vector<double> first_rows = golden_models::flat(golden["hidden_first_rows"]);
    const std::vector<double> last_rows = golden_models::flat(golden["hidden_last_rows"]);
    REQUIRE(result.hidden_states.size() == static_cast<std::size_t>(result.layers + 1));
    const Eigen::Index d = result.hidden_states[0].cols();
    for (std::size_t l = 0; l < result.hidden_states.size(); ++l) {
      const Matrix& h = result.hidden_states[l];
      for (Eigen::Index j = 0; j < d; ++j) {
        CHECK(std::abs(h(0, j) - first_rows[l * d + j]) < 1e-4);
        CHECK(std::abs(h(h.rows() - 1, j) - last_rows[l * d + j]) < 1e-4);
      }
    }
    if (classifier) {
      const std::vector<double> logits = golden_models::flat(golden["logits"]);
      REQUIRE(result.logits.cols() == static_cast<Eigen::Index>(logits.size()));
      for (std::size_t i = 0; i < logits.size(); ++i) CHECK(std::abs(result.logits(0, i) - logits[i]) < 1e-4);
      const std::vector<int> top5 = golden["top5"].get<std::vector<int>>();
      REQUIRE(result.top_k.size() == 1);
      CHECK(std::vector<int>(result.top_k[0].ids.begin(), result.top_k[0].ids.end()) == top5);
    } else {
      CHECK(result.logits.size() == 0);
    }

    // The run from the file itself gives the same attention (the same pixels).
    ForwardRequest plain;
    const ImageRunResult run = model.run(picture, plain);
    CHECK(run.grid_rows == golden["grid"][0].get<int>());
    CHECK(run.grid_columns == golden["grid"][1].get<int>());
    CHECK(model.token_labels(run.grid_rows, run.grid_columns).size() == static_cast<std::size_t>(run.forward.tokens));
  }
}

TEST_CASE("tokens are named CLS, DIST, the registers, then each patch by its row and column") {
  const std::string dir = golden_models::model_dir("dinov2-registers-swiglu-bf16");
  const ModelFiles files = read_model_directory(dir);
  const ImageModel model = ImageModel::from_checkpoint(files.config_json, files.checkpoint, *files.preprocessor_config);
  const std::vector<std::string> labels = model.token_labels(2, 3);
  CHECK(labels == std::vector<std::string>{"[CLS]", "[REG1]", "[REG2]", "[REG3]", "[REG4]", "(0, 0)", "(0, 1)", "(0, 2)",
                                           "(1, 0)", "(1, 1)", "(1, 2)"});
  const std::string deit = golden_models::model_dir("deit-distilled-teacher-bf16");
  const ModelFiles deit_files = read_model_directory(deit);
  const ImageModel deit_model = ImageModel::from_checkpoint(deit_files.config_json, deit_files.checkpoint, "");
  CHECK(deit_model.token_labels(1, 1) == std::vector<std::string>{"[CLS]", "[DIST]", "(0, 0)"});
  CHECK(deit_model.label(0) == "circle");
  // Without preprocessor_config.json: DeiTImageProcessor's defaults (256, bicubic, a 224 crop).
  CHECK(deit_model.processor().resize_height == 256);
  CHECK(deit_model.processor().crop_height == 224);
  CHECK(deit_model.processor().resample == Resampling::bicubic);
}

TEST_CASE("resize_picture equals Pillow's Image.resize for each of its filters, down and up") {
  const Picture good = picture_file(pictures_dir() + "good.png");
  const std::pair<const char*, Resampling> filters[] = {
      {"nearest", Resampling::nearest}, {"lanczos", Resampling::lanczos}, {"bilinear", Resampling::bilinear},
      {"bicubic", Resampling::bicubic}, {"box", Resampling::box},         {"hamming", Resampling::hamming}};
  const std::pair<int, int> sizes[] = {{17, 11}, {40, 61}, {40, 13}, {25, 30}, {90, 70}};
  for (const auto& [name, resampling] : filters) {
    for (const auto& [width, height] : sizes) {
      const std::string file = std::string("resized-") + name + "-" + std::to_string(width) + "x" + std::to_string(height) + ".png";
      CAPTURE(file);
      const Picture pillow = picture_file(pictures_dir() + file);
      CHECK(largest_difference(resize_picture(good, width, height, resampling), pillow) == 0);
    }
  }
}

TEST_CASE("malformed pictures get a clear message, never a crash") {
  const auto message = [](const std::string& file) {
    try {
      decode_picture(file_bytes(pictures_dir() + file));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("decoded");
  };
  CHECK(message("truncated.png").find("could not be decoded (truncated or corrupt?)") != std::string::npos);
  CHECK(message("zero-by-zero.png") == "the picture is 0×0 pixels: there is nothing to look at");
  CHECK(message("20000-by-20000.png").find("20000×20000 pixels; at most 64 megapixels") != std::string::npos);
  CHECK(message("not-a-picture.png").find("not a picture that can be read here (PNG, JPEG, BMP or GIF)") != std::string::npos);
  CHECK_THROWS_WITH_AS(decode_picture(""), "the picture file is empty", std::invalid_argument);
  // A CMYK JPEG decodes to RGB; an animated GIF gives its first frame, as Pillow opens it.
  const Picture cmyk = picture_file(pictures_dir() + "cmyk.jpg");
  CHECK(cmyk.width == 40);
  CHECK(cmyk.height == 30);
  // A smaller budget (the fuzz target's) refuses from the header, JPEG and PNG alike; the budget itself is taken.
  CHECK_THROWS_WITH_AS(decode_picture(file_bytes(pictures_dir() + "cmyk.jpg"), 40 * 30 - 1),
                       "the picture is 40×30 pixels; at most 1199 pixels are taken: scale it down first", std::invalid_argument);
  CHECK(decode_picture(file_bytes(pictures_dir() + "cmyk.jpg"), 40 * 30).rgb == cmyk.rgb);
  CHECK_THROWS_WITH_AS(decode_picture(file_bytes(pictures_dir() + "20000-by-20000.png"), std::int64_t{1} << 20),
                       "the picture is 20000×20000 pixels; at most 1048576 pixels are taken: scale it down first", std::invalid_argument);
  const Picture gif = picture_file(pictures_dir() + "animated.gif");
  REQUIRE(gif.width == 16);
  const std::uint8_t* p = gif.pixel(3, 4);
  CHECK((int(p[0]) == 200 && int(p[1]) == 30 && int(p[2]) == 40));
  CHECK_THROWS_WITH_AS(picture_from_rgba(nullptr, 7, 2, 1), "RGBA pixels: 7 bytes for a 2×1 picture (8 expected)",
                       std::invalid_argument);
}

TEST_CASE("requests a vision model cannot run are refused by name") {
  const std::string dir = golden_models::model_dir("vit-classifier-nonsquare-f32");
  const ModelFiles files = read_model_directory(dir);
  const Model model = Model::from_checkpoint(files.config_json, files.checkpoint);
  ForwardRequest request;
  CHECK_THROWS_WITH_AS(model.forward(request), "ViT reads a picture: give its pixels", std::invalid_argument);
  request.pixels = {3, 32, 32, std::vector<float>(3 * 32 * 32, 0.f)};
  CHECK_THROWS_WITH_AS(model.forward(request),
                       "the picture is 32×32 pixels, but ViT reads 48×32 (config.json's image_size): preprocess it as "
                       "preprocessor_config.json says",
                       std::invalid_argument);
  request.pixels = {3, 32, 48, std::vector<float>(3 * 32 * 47, 0.f)};
  CHECK_THROWS_WITH_AS(model.forward(request), "pixels: 4512 values for 3 channels of 48×32; ViT reads 3 channels",
                       std::invalid_argument);
  request.pixels = {3, 32, 48, std::vector<float>(3 * 32 * 48, 0.f)};
  request.ids = {1, 2};
  CHECK_THROWS_WITH_AS(model.forward(request),
                       "ViT reads a picture: token ids, type ids, masks, prediction positions and the token loss are for text models",
                       std::invalid_argument);
  request.ids.clear();
  request.trace = ForwardRequest::Head{0, 1};
  request.ablate = {{1, 2}};
  const ForwardResult traced = model.forward(request);
  REQUIRE(traced.trace.has_value());
  CHECK(traced.tokens == 25);
  CHECK_THROWS_WITH_AS(model.read_out(Matrix::Zero(1, 24), false, 3), "ViT has no vocabulary to read a residual stream with",
                       std::invalid_argument);
  // A bare model has no labels to rank.
  const ModelFiles bare = read_model_directory(golden_models::model_dir("vit-bare-pooler-f16"));
  const Model bare_model = Model::from_checkpoint(bare.config_json, bare.checkpoint);
  ForwardRequest ranked;
  ranked.pixels = {3, 16, 32, std::vector<float>(3 * 16 * 32, 0.f)};
  ranked.top_k = 5;
  CHECK_THROWS_WITH_AS(bare_model.forward(ranked), "this ViT checkpoint has no classifier: there are no labels to rank",
                       std::invalid_argument);
  // A text model refuses pixels.
  const ModelFiles gpt2 = read_model_directory(golden_models::model_dir("gpt2-l1-h1-k64-f32"));
  const Model text = Model::from_checkpoint(gpt2.config_json, gpt2.checkpoint);
  ForwardRequest pixels_for_text;
  pixels_for_text.ids = {1};
  pixels_for_text.pixels = {3, 2, 2, std::vector<float>(12, 0.f)};
  CHECK_THROWS_WITH_AS(text.forward(pixels_for_text), "pixels are for vision transformers; GPT-2 reads token ids",
                       std::invalid_argument);
}

TEST_CASE("preprocessor_config.json: the class's defaults, and a clear message for what is not read") {
  const ImageProcessorConfig bit = parse_image_processor_config("{\"image_processor_type\": \"BitImageProcessor\", \"size\": 256}", "");
  CHECK(bit.shortest_edge == 256);  // an integer size is a shortest edge for BiT, a square for ViT
  const ImageProcessorConfig vit = parse_image_processor_config("{\"size\": 384}", "ViTImageProcessor");
  CHECK(vit.shortest_edge == 0);
  CHECK(vit.resize_height == 384);
  CHECK(vit.resize_width == 384);
  const ImageProcessorConfig fast = parse_image_processor_config("{\"image_processor_type\": \"ViTImageProcessorFast\"}", "");
  CHECK(fast.resample == Resampling::bilinear);
  const ImageProcessorConfig convnext =
      parse_image_processor_config("{\"image_processor_type\": \"ConvNextImageProcessor\", \"size\": {\"shortest_edge\": 224}, \"crop_pct\": 0.875}", "");
  CHECK(convnext.shortest_edge == 256);  // 224 / 0.875, then a 224 crop
  CHECK(convnext.do_center_crop);
  CHECK(convnext.crop_width == 224);
  CHECK_THROWS_WITH_AS(parse_image_processor_config("{\"image_processor_type\": \"SiglipImageProcessor\"}", ""),
                       "preprocessor_config.json: the image processor 'SiglipImageProcessor' is not one attnplay reads (ViTImageProcessor, "
                       "DeiTImageProcessor, BitImageProcessor, CLIPImageProcessor, ConvNextImageProcessor)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_image_processor_config("{\"resample\": 9}", "ViTImageProcessor"),
                       "preprocessor_config.json: resample must be one of Pillow's filters, 0 to 5 (nearest, lanczos, "
                       "bilinear, bicubic, box, hamming)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_image_processor_config("{\"image_std\": [0.5, 0, 0.5]}", "ViTImageProcessor"),
                       "preprocessor_config.json: image_std must be a positive number or three of them (one per RGB channel)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_image_processor_config("[1]", "ViTImageProcessor"),
                       "preprocessor_config.json: must be a JSON object", std::invalid_argument);
}
