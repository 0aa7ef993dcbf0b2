// analysis/logit_lens.* against the float64 goldens of tests/golden/models/*/lens.json
// (made by tests/golden/make_lens_goldens.py: every hidden state of PyTorch's
// float64 forward pass read through the final norm and the unembedding, or
// BERT's masked-LM head, by a direct implementation): top-5 probabilities of
// every layer × position within 1e-5, the same ids except where the reference
// itself has a near tie; the last row equals the model's own predictions.
// Encoder-decoders: the decoder's lens against the same script's reference.
// Plus the errors: BERT without its MLM head, wrong hidden-state count, k < 1.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "analysis/logit_lens.h"
#include "golden_models.h"
#include "model/directory.h"

using namespace attnplay;
using nlohmann::json;
using namespace golden_models;

namespace {

constexpr int kTop = 5;
constexpr double kTolerance = 1e-5;

Model load(const std::string& name) {
  const ModelFiles files = read_model_directory(model_dir(name));
  return Model::from_checkpoint(files.config_json, files.checkpoint);
}

json lens_golden(const std::string& name) {
  std::ifstream in(model_dir(name) + "/lens.json");
  return json::parse(in);
}

ForwardResult run(const Model& model, const json& c, bool top_k) {
  ForwardRequest request;
  request.ids = c["ids"].get<std::vector<std::int32_t>>();
  request.type_ids = c["type_ids"].get<std::vector<std::int32_t>>();
  request.hidden_states = true;
  if (top_k) {
    if (model.config().causal()) {
      request.top_k = kTop;
    } else {
      for (int p = 0; p < static_cast<int>(request.ids.size()); ++p) request.mask_positions.push_back(p);
      request.top_k = kTop;
    }
  }
  return model.forward(request);
}

// One cell against its reference { ids, probabilities }: probabilities within kTolerance, the same ids except
// where the reference itself has a near tie.
void check_cell(const TopK& cell, const json& ref) {
  const std::vector<double> p = ref["probabilities"].get<std::vector<double>>();
  const std::vector<int> ids = ref["ids"].get<std::vector<int>>();
  REQUIRE(cell.ids.size() == static_cast<std::size_t>(kTop));
  for (int i = 0; i < kTop; ++i) {
    CHECK(std::abs(cell.probabilities[i] - p[i]) <= kTolerance);
    const bool tied = (i > 0 && p[i - 1] - p[i] < kTolerance) || p[i] - p[i + 1] < kTolerance;
    if (!tied) CHECK(cell.ids[i] == ids[i]);
  }
}

}  // namespace

TEST_CASE("the logit lens equals the float64 reference on every family") {
  for (const char* name : kModels) {
    CAPTURE(name);
    const Model model = load(name);
    if (!model.config().causal() && !model.has_mlm_head()) continue;  // no masked-LM head: see the error case below
    const json golden_lens = lens_golden(name);
    for (const json& c : golden_lens["cases"]) {
      CAPTURE(c["text"].get<std::string>());
      const ForwardResult forward = run(model, c, true);
      const LogitLens lens = logit_lens(model, forward.hidden_states, kTop);
      REQUIRE(lens.rows == model.config().layers + 1);
      REQUIRE(lens.tokens == static_cast<int>(c["ids"].size()));
      for (int r = 0; r < lens.rows; ++r) {
        for (int t = 0; t < lens.tokens; ++t) {
          CAPTURE(r);
          CAPTURE(t);
          const TopK& cell = lens.at(r, t);
          check_cell(cell, c["layers"][r][t]);
          if (r == lens.rows - 1) {  // the model's own prediction at this position, exactly
            const TopK& own = forward.top_k[static_cast<std::size_t>(t)];
            CHECK(own.ids == cell.ids);
            CHECK(own.probabilities == cell.probabilities);
          }
        }
      }
    }
  }
}

TEST_CASE("an encoder-decoder's decoder lens equals the float64 reference; its last row is the model's logits") {
  for (const char* name : {"marian-l2-h4-f32", "marian-stored-positions-unshared-f16", "bart-l2-h4-bf16", "bart-scaled-l1-l3-f32",
                           "t5-l2-h4-relu-tied-f32", "t5-gated-gelu-dkv12-untied-bf16", "mt5-gated-silu-l1-f16"}) {
    CAPTURE(name);
    const ModelFiles files = read_model_directory(model_dir(name));
    const Seq2SeqModel model = Seq2SeqModel::from_checkpoint(files.config_json, files.checkpoint);
    const json golden_lens = lens_golden(name);
    for (const json& c : golden_lens["cases"]) {
      CAPTURE(c["source"].get<std::string>());
      ForwardRequest request;
      request.hidden_states = true;
      const DecoderOutput decoded = model.decode(model.encode(c["ids"].get<std::vector<std::int32_t>>()),
                                                 c["decoder_ids"].get<std::vector<std::int32_t>>(), request);
      const LogitLens lens = logit_lens(model, decoded.hidden_states, kTop);
      REQUIRE(lens.rows == model.config().decoder_layers + 1);
      REQUIRE(lens.tokens == static_cast<int>(c["decoder_ids"].size()));
      for (int r = 0; r < lens.rows; ++r) {
        for (int t = 0; t < lens.tokens; ++t) {
          CAPTURE(r);
          CAPTURE(t);
          check_cell(lens.at(r, t), c["layers"][r][t]);
        }
      }
      // The last hidden state is what the logits are computed from: the same numbers.
      CHECK((model.output_logits(decoded.hidden_states.back()) - decoded.logits).cwiseAbs().maxCoeff() == 0.0f);
    }
    CHECK_THROWS_WITH_AS(logit_lens(model, {}, 3), doctest::Contains("decoder hidden states"), std::invalid_argument);
  }
}

TEST_CASE("the logit lens refuses what it cannot read") {
  const Model no_head = load("bert-l3-h6-k16-f16");
  const json no_head_golden = golden("bert-l3-h6-k16-f16");
  const json& c = no_head_golden["cases"][0];
  const ForwardResult forward = run(no_head, c, false);
  CHECK_THROWS_WITH_AS(logit_lens(no_head, forward.hidden_states, 3), doctest::Contains("no masked-LM head"),
                       std::invalid_argument);
  const Model gpt = load("gpt2-l4-h4-k8-bf16");
  const json gpt_golden = golden("gpt2-l4-h4-k8-bf16");
  const ForwardResult gpt_forward = run(gpt, gpt_golden["cases"][0], false);
  CHECK_THROWS_WITH_AS(logit_lens(gpt, gpt_forward.hidden_states, 0), doctest::Contains("at least 1"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(logit_lens(gpt, {}, 3), doctest::Contains("5 hidden states"), std::invalid_argument);
  const std::vector<Matrix> narrow(5, Matrix::Zero(2, 3));
  CHECK_THROWS_WITH_AS(logit_lens(gpt, narrow, 3), doctest::Contains("width 3"), std::invalid_argument);
}
