// Fidelity of the shipped models (every model models/catalog.json lists): on
// the fixed sentences of models/train/fidelity.py, our runtime must reproduce
// PyTorch's own attention weights (within 1e-5) and logits (within 1e-4
// relative to the largest) saved by the training scripts in
// tests/golden/models/<name>.json + .bin; the text is tokenized by our
// tokenizer from the model folder, as in the page. The translation model
// gettext-en-fr the same way: encoder, decoder and cross attention and logits
// on fixed pairs, the last one its own greedy translation. The vision model
// shapes-vit on its sample pictures (models/train/fidelity_shapes_vit.py),
// decoded and preprocessed by our code.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "image/decode.h"
#include "model/directory.h"
#include "pipeline/image_model.h"
#include "pipeline/text_model.h"
#include "pipeline/translation_model.h"

using namespace attnplay;
using nlohmann::json;

namespace {

std::vector<float> read_floats(const std::string& path, const json& entry) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::size_t count = 1;
  for (const json& n : entry["shape"]) count *= n.get<std::size_t>();
  std::vector<float> out(count);
  in.seekg(entry["offset"].get<std::streamoff>());
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(count * sizeof(float)));  // little-endian
  REQUIRE(in.good());
  return out;
}

double max_abs_diff(const std::vector<float>& reference, const std::vector<float>& ours) {
  REQUIRE(reference.size() == ours.size());
  double worst = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, std::abs(double(reference[i]) - ours[i]));
  return worst;
}

// A shipped model's golden file (tests/golden/models/NAME.json): its cases, and the data file their tensors are in.
struct Golden {
  json cases;
  std::string data;
};

Golden read_golden(const std::string& name) {
  const std::string golden_dir = std::string(ATTNPLAY_GOLDEN_DIR) + "/models/";
  std::ifstream in(golden_dir + name + ".json");
  REQUIRE(in.good());
  const json golden = json::parse(in);
  return {golden["cases"], golden_dir + golden["data"].get<std::string>()};
}

// The largest difference between a golden case's logits (`entry`) and ours, relative to the largest golden logit.
double relative_logit_error(const std::string& data, const json& entry, const Matrix& ours) {
  const std::vector<float> logits = read_floats(data, entry);
  double largest = 0;
  for (const float v : logits) largest = std::max(largest, std::abs(double(v)));
  return max_abs_diff(logits, std::vector<float>(ours.data(), ours.data() + ours.size())) / largest;
}

// A shipped vision model's golden cases: each sample picture's attention and logits.
void check_vision_model(const std::string& name, const ModelFiles& files) {
  REQUIRE(files.preprocessor_config.has_value());
  const ImageModel model = ImageModel::from_checkpoint(files.config_json, files.checkpoint, *files.preprocessor_config);
  const auto [cases, data] = read_golden(name);
  REQUIRE(!cases.empty());
  for (const json& c : cases) {
    const std::string picture = c["picture"].get<std::string>();
    CAPTURE(picture);
    std::ifstream file(std::string(ATTNPLAY_MODELS_DIR) + "/" + name + "/" + picture, std::ios::binary);
    REQUIRE(file.good());
    ForwardRequest request;
    request.logits = true;
    const ImageRunResult run = model.run(decode_picture(std::string(std::istreambuf_iterator<char>(file), {})), request);
    CHECK(max_abs_diff(read_floats(data, c["attentions"]), run.forward.attentions) < 1e-5);
    CHECK(relative_logit_error(data, c["logits"], run.forward.logits) < 1e-4);
  }
}

}  // namespace

TEST_CASE("shipped models reproduce PyTorch's attention and logits") {
  std::ifstream catalog_file(std::string(ATTNPLAY_MODELS_DIR) + "/catalog.json");
  REQUIRE(catalog_file.good());
  const json catalog = json::parse(catalog_file);
  REQUIRE(catalog.size() >= 1);
  for (const json& entry : catalog) {
    const std::string name = entry["name"].get<std::string>();
    CAPTURE(name);
    const ModelFiles files = read_model_directory(std::string(ATTNPLAY_MODELS_DIR) + "/" + name);
    if (!is_encoder_decoder_config(files.config_json) && parse_config(files.config_json).is_vision()) {
      check_vision_model(name, files);
      continue;
    }
    REQUIRE(files.tokenizer.has_value());
    if (is_encoder_decoder_config(files.config_json)) continue;  // the test case below
    const TextModel model = TextModel::from_checkpoint(files.config_json, files.checkpoint, *files.tokenizer);
    const auto [cases, data] = read_golden(name);
    for (const json& c : cases) {
      const std::string text = c["text"].get<std::string>();
      CAPTURE(text);
      std::optional<std::string> pair;
      if (c.contains("text_b")) pair = c["text_b"].get<std::string>();
      const RunResult run = model.run(text, pair ? std::optional<std::string_view>(*pair) : std::nullopt, ForwardRequest{});
      CHECK(run.encoding.ids() == c["ids"].get<std::vector<std::int32_t>>());

      ForwardRequest request;
      request.ids = c["ids"].get<std::vector<std::int32_t>>();
      if (!model.model().config().causal()) {
        request.type_ids = c["type_ids"].get<std::vector<std::int32_t>>();
        for (std::size_t i = 0; i < request.ids.size(); ++i) request.mask_positions.push_back(static_cast<int>(i));
      }
      request.logits = true;
      const ForwardResult r = model.model().forward(request);

      CHECK(max_abs_diff(read_floats(data, c["attentions"]), r.attentions) < 1e-5);
      CHECK(relative_logit_error(data, c["logits"], r.logits) < 1e-4);
    }
  }
}

TEST_CASE("gettext-en-fr reproduces PyTorch's encoder, decoder and cross attention") {
  const ModelFiles files = read_model_directory(std::string(ATTNPLAY_MODELS_DIR) + "/gettext-en-fr");
  const TranslationModel model = TranslationModel::from_checkpoint(files.config_json, files.checkpoint, *files.tokenizer);
  const auto [cases, data] = read_golden("gettext-en-fr");
  REQUIRE(cases.size() == 3);
  for (std::size_t n = 0; n < cases.size(); ++n) {
    const json& c = cases[n];
    CAPTURE(c["source"].get<std::string>());
    const std::vector<std::int32_t> ids = c["ids"].get<std::vector<std::int32_t>>();
    const std::vector<std::int32_t> decoder_ids = c["decoder_ids"].get<std::vector<std::int32_t>>();
    CHECK(model.encode_source(c["source"].get<std::string>()).ids() == ids);
    if (n < 2) {  // a reference translation, tokenized by us
      CHECK(model.decoder_ids(c["target"].get<std::string>()) == decoder_ids);
    } else {      // PyTorch's greedy translation: ours is the same, then </s>
      std::vector<std::int32_t> ours = translate(model.model(), ids, TranslateOptions{}).decoder_ids;
      REQUIRE(!ours.empty());
      ours.pop_back();
      CHECK(ours == decoder_ids);
    }
    const EncoderOutput encoded = model.model().encode(ids);
    const DecoderOutput decoded = model.model().decode(encoded, decoder_ids);
    CHECK(max_abs_diff(read_floats(data, c["encoder_attentions"]), encoded.attentions) < 1e-5);
    CHECK(max_abs_diff(read_floats(data, c["decoder_attentions"]), decoded.self_attentions) < 1e-5);
    CHECK(max_abs_diff(read_floats(data, c["cross_attentions"]), decoded.cross_attentions) < 1e-5);
    CHECK(relative_logit_error(data, c["logits"], decoded.logits) < 1e-4);
  }
}
