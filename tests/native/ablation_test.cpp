// Head ablation against the PyTorch goldens of tests/golden/models/*/ablation.json
// (made by tests/golden/make_ablation_goldens.py, an independent float64
// implementation): zero and mean ablation of GPT-2, BERT, Llama with GQA,
// Qwen3 and GPT-NeoX heads give the reference's top-k probabilities, the last
// row's whole distribution and the last layer's attention within 1e-5, the
// per-token loss within 1e-5 relative (random checkpoints reach losses of 60,
// where a float32 ulp is 4e-6); the head ranking equals per-head golden losses; zero ablation
// with the KV cache equals the uncached pass; bad requests get clear errors.
// Encoder-decoders (Marian, BART): heads of the encoder, decoder
// self-attention and cross-attention against the same goldens (top-k, the
// teacher-forced loss of each target token, greedy translation without the
// heads, the ranking of every head of the three parts).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>
#include <string>

#include "analysis/head_ablation.h"
#include "golden_models.h"
#include "model/directory.h"
#include "model/model.h"
#include "model/seq2seq.h"
#include "model/translate.h"

using namespace attnplay;
using nlohmann::json;
using namespace golden_models;

namespace {

const char* const kAblationModels[] = {"gpt2-l2-h12-k8-f16", "bert-l2-h2-k32-f32", "llama-gqa-llama3-bf16",
                                       "qwen3-qknorm-bf16", "pythia-parallel-f16"};

Model load(const std::string& name) {
  const ModelFiles files = read_model_directory(model_dir(name));
  return Model::from_checkpoint(files.config_json, files.checkpoint);
}

json ablation_golden(const std::string& name) {
  std::ifstream in(model_dir(name) + "/ablation.json");
  return json::parse(in);
}

// The golden's text as a request (ids; BERT: type ids, mask positions and labels).
ForwardRequest text_request(const json& g) {
  ForwardRequest r;
  r.ids = g["ids"].get<std::vector<std::int32_t>>();
  if (g.contains("mask_positions")) {
    r.type_ids = g["type_ids"].get<std::vector<std::int32_t>>();
    r.mask_positions = g["mask_positions"].get<std::vector<int>>();
    r.mask_labels = g["mask_labels"].get<std::vector<std::int32_t>>();
  }
  return r;
}

std::vector<ForwardRequest::Head> heads_of(const json& c) {
  std::vector<ForwardRequest::Head> heads;
  for (const json& h : c["ablate"]) heads.push_back({h[0].get<int>(), h[1].get<int>()});
  return heads;
}

double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

double max_abs_diff(const std::vector<float>& ours, const std::vector<double>& ref) {
  REQUIRE(ours.size() == ref.size());
  double m = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) m = std::max(m, std::abs(ours[i] - ref[i]));
  return m;
}

// max |ours - ref| / max(1, |ref|), entry by entry
double loss_error(const std::vector<float>& ours, const std::vector<double>& ref) {
  REQUIRE(ours.size() == ref.size());
  double m = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) m = std::max(m, std::abs(ours[i] - ref[i]) / std::max(1.0, std::abs(ref[i])));
  return m;
}

std::vector<float> softmax_row(const Matrix& logits, Eigen::Index row) {
  std::vector<double> e(static_cast<std::size_t>(logits.cols()));
  const double max = logits.row(row).maxCoeff();
  double sum = 0;
  for (Eigen::Index j = 0; j < logits.cols(); ++j) sum += e[j] = std::exp(logits(row, j) - max);
  std::vector<float> p(e.size());
  for (std::size_t j = 0; j < e.size(); ++j) p[j] = static_cast<float>(e[j] / sum);
  return p;
}

}  // namespace

TEST_CASE("zero and mean ablation match the PyTorch goldens in every family") {
  for (const char* name : kAblationModels) {
    CAPTURE(name);
    const Model model = load(name);
    const json g = ablation_golden(name);
    const int H = model.config().heads;
    std::vector<double> intact_loss;
    for (const json& c : g["cases"]) {
      CAPTURE(c["ablate"].dump());
      CAPTURE(c["mode"].get<std::string>());
      ForwardRequest r = text_request(g);
      r.ablate = heads_of(c);
      r.ablation = c["mode"] == "mean" ? AblationMode::mean : AblationMode::zero;
      r.token_loss = true;
      r.logits = true;
      r.top_k = 5;
      const ForwardResult result = model.forward(r);
      const json& top = c["top_k"];
      REQUIRE(result.top_k.size() == top.size());
      for (std::size_t row = 0; row < top.size(); ++row) {
        CHECK(result.top_k[row].ids == top[row]["ids"].get<std::vector<std::int32_t>>());
        CHECK(max_abs_diff(result.top_k[row].probabilities, top[row]["probabilities"].get<std::vector<double>>()) < 1e-5);
      }
      CHECK(max_abs_diff(softmax_row(result.logits, result.logits.rows() - 1),
                         c["last_row_probabilities"].get<std::vector<double>>()) < 1e-5);
      const std::vector<double> loss = c["token_loss"].get<std::vector<double>>();
      CHECK(loss_error(result.token_loss, loss) < 1e-5);
      std::vector<float> last_rows;  // the last layer's attention of the last position [H, T]
      const int L = result.layers, T = result.tokens;
      for (int h = 0; h < H; ++h)
        for (int k = 0; k < T; ++k) last_rows.push_back(result.attention(L - 1, h, T - 1, k));
      CHECK(max_abs_diff(last_rows, flat(c["last_layer_last_row_attention"])) < 1e-5);
      // The golden cases ablate something that matters: the loss moves well beyond the tolerance.
      if (r.ablate.empty()) intact_loss = loss;
      else CHECK(std::abs(mean(loss) - mean(intact_loss)) > 1e-3);
    }
  }
}

TEST_CASE("ranking heads by ablation equals one ablated pass per head") {
  for (const char* name : {"gpt2-l2-h12-k8-f16", "bert-l2-h2-k32-f32", "llama-gqa-llama3-bf16"}) {
    CAPTURE(name);
    const Model model = load(name);
    const json g = ablation_golden(name);
    const ForwardRequest text = text_request(g);
    for (const AblationMode mode : {AblationMode::zero, AblationMode::mean}) {
      const HeadAblationRanking ranking = rank_heads_by_ablation(model, text, mode);
      REQUIRE(ranking.heads.size() == static_cast<std::size_t>(model.config().layers * model.config().heads));
      CHECK(std::is_sorted(ranking.heads.begin(), ranking.heads.end(),
                           [](const HeadAblationEffect& a, const HeadAblationEffect& b) { return a.delta > b.delta; }));
      const double intact = mean(g["cases"][0]["token_loss"].get<std::vector<double>>());
      const double tolerance = 1e-5 * std::max(1.0, intact);
      CHECK(std::abs(ranking.base_loss - intact) < tolerance);
      for (const json& c : g["cases"]) {  // the golden's single-head cases in this mode
        if (c["ablate"].size() != 1 || (c["mode"] == "mean") != (mode == AblationMode::mean)) continue;
        const int layer = c["ablate"][0][0], head = c["ablate"][0][1];
        const auto it = std::find_if(ranking.heads.begin(), ranking.heads.end(), [&](const HeadAblationEffect& e) {
          return e.layer == layer && e.head == head;
        });
        REQUIRE(it != ranking.heads.end());
        CHECK(std::abs(it->delta - (mean(c["token_loss"].get<std::vector<double>>()) - intact)) < tolerance);
      }
    }
  }
}

TEST_CASE("BERT's ranking without labels scores the intact model's own predictions") {
  const Model model = load("bert-l2-h2-k32-f32");
  ForwardRequest text = text_request(ablation_golden("bert-l2-h2-k32-f32"));
  text.mask_labels.clear();
  const HeadAblationRanking ranking = rank_heads_by_ablation(model, text, AblationMode::zero);
  ForwardRequest top = text;
  top.top_k = 1;
  const ForwardResult intact = model.forward(top);
  REQUIRE(ranking.mask_labels.size() == intact.top_k.size());
  for (std::size_t m = 0; m < intact.top_k.size(); ++m) CHECK(ranking.mask_labels[m] == intact.top_k[m].ids[0]);
}

TEST_CASE("zero ablation with the KV cache equals the uncached pass") {
  const Model model = load("llama-gqa-llama3-bf16");
  const ForwardRequest text = text_request(ablation_golden("llama-gqa-llama3-bf16"));
  ForwardRequest whole = text;
  whole.ablate = {{0, 1}, {1, 3}};
  whole.top_k = 3;
  const ForwardResult uncached = model.forward(whole);
  KvCache cache;
  const std::size_t split = text.ids.size() / 2;
  ForwardRequest part = whole;
  part.ids.assign(text.ids.begin(), text.ids.begin() + static_cast<std::ptrdiff_t>(split));
  ForwardResult first = model.forward(part, cache);
  part.ids.assign(text.ids.begin() + static_cast<std::ptrdiff_t>(split), text.ids.end());
  ForwardResult second = model.forward(part, cache);
  first.top_k.insert(first.top_k.end(), second.top_k.begin(), second.top_k.end());
  REQUIRE(first.top_k.size() == uncached.top_k.size());
  for (std::size_t i = 0; i < uncached.top_k.size(); ++i) {
    CHECK(first.top_k[i].ids == uncached.top_k[i].ids);
    for (int k = 0; k < 3; ++k) CHECK(std::abs(first.top_k[i].probabilities[k] - uncached.top_k[i].probabilities[k]) < 1e-5);
  }
  part.ablation = AblationMode::mean;
  KvCache fresh;
  CHECK_THROWS_WITH_AS(model.forward(part, fresh), doctest::Contains("use zero ablation"), std::invalid_argument);
}

TEST_CASE("bad ablation and loss requests get clear errors") {
  const Model gpt = load("gpt2-l2-h12-k8-f16");
  ForwardRequest r;
  r.ids = {1, 2, 3};
  r.ablate = {{2, 0}};
  CHECK_THROWS_WITH_AS(gpt.forward(r), "ablated head 2:0 (layer:head, from 0) does not exist: the model has 2 layers of 12 heads",
                       std::invalid_argument);
  r.ablate = {{0, -1}};
  CHECK_THROWS_AS(gpt.forward(r), std::invalid_argument);
  r.ablate = {};
  r.token_loss = true;
  r.prediction_positions = {-1};
  CHECK_THROWS_WITH_AS(gpt.forward(r), doctest::Contains("every position"), std::invalid_argument);
  r.token_loss = false;
  r.prediction_positions = {3};
  CHECK_THROWS_WITH_AS(gpt.forward(r), doctest::Contains("prediction position 3 is outside the 3 positions run"),
                       std::invalid_argument);
  r.prediction_positions = {-1, 0};
  CHECK_THROWS_WITH_AS(gpt.forward(r), doctest::Contains("increasing order"), std::invalid_argument);
  r.prediction_positions = {};
  r.token_loss = true;
  r.mask_labels = {1};
  CHECK_THROWS_WITH_AS(gpt.forward(r), doctest::Contains("mask labels are for BERT"), std::invalid_argument);
  ForwardRequest one;
  one.ids = {5};
  CHECK_THROWS_WITH_AS(rank_heads_by_ablation(gpt, one, AblationMode::zero), doctest::Contains("at least two tokens"),
                       std::invalid_argument);

  const Model bert = load("bert-l2-h2-k32-f32");
  ForwardRequest b = text_request(ablation_golden("bert-l2-h2-k32-f32"));
  b.token_loss = true;
  b.mask_labels.pop_back();
  CHECK_THROWS_WITH_AS(bert.forward(b), doctest::Contains("1 labels for 2 mask positions"), std::invalid_argument);
  b.mask_labels = {0, 100000};
  CHECK_THROWS_WITH_AS(bert.forward(b), doctest::Contains("mask label 100000 is outside"), std::invalid_argument);
  b.mask_positions.clear();
  b.mask_labels.clear();
  CHECK_THROWS_WITH_AS(rank_heads_by_ablation(bert, b, AblationMode::zero), doctest::Contains("[MASK]"),
                       std::invalid_argument);
}

// ---- encoder-decoders (Marian, BART): heads of the encoder, decoder self-attention and cross-attention

namespace {

const char* const kSeq2SeqModels[] = {"marian-l2-h4-f32", "marian-stored-positions-unshared-f16", "bart-l2-h4-bf16",
                                      "bart-scaled-l1-l3-f32", "t5-l2-h4-relu-tied-f32",
                                      "t5-gated-gelu-dkv12-untied-bf16", "mt5-gated-silu-l1-f16"};

Seq2SeqModel load_seq2seq(const std::string& name) {
  const ModelFiles files = read_model_directory(model_dir(name));
  return Seq2SeqModel::from_checkpoint(files.config_json, files.checkpoint);
}

AttentionPart part_of(const std::string& name) {
  return name == "encoder" ? AttentionPart::encoder : name == "decoder" ? AttentionPart::decoder : AttentionPart::cross;
}

std::vector<ForwardRequest::Head> seq2seq_heads_of(const json& c) {
  std::vector<ForwardRequest::Head> heads;
  for (const json& h : c["ablate"]) heads.push_back({h[1].get<int>(), h[2].get<int>(), part_of(h[0].get<std::string>())});
  return heads;
}

}  // namespace

TEST_CASE("encoder-decoder ablation of every part matches the PyTorch goldens, in a pass and in translation") {
  for (const char* name : kSeq2SeqModels) {
    CAPTURE(name);
    const Seq2SeqModel model = load_seq2seq(name);
    const json g = ablation_golden(name);
    const std::vector<std::int32_t> source = g["ids"].get<std::vector<std::int32_t>>();
    const std::vector<std::int32_t> decoder = g["decoder_ids"].get<std::vector<std::int32_t>>();
    std::vector<double> intact_loss;
    for (const json& c : g["cases"]) {
      CAPTURE(c["ablate"].dump());
      CAPTURE(c["mode"].get<std::string>());
      ForwardRequest r;
      r.source_ids = source;
      r.ids = decoder;
      r.ablate = seq2seq_heads_of(c);
      r.ablation = c["mode"] == "mean" ? AblationMode::mean : AblationMode::zero;
      r.token_loss = true;
      r.top_k = 5;
      const DecoderOutput out = model.forward(r).decoder;
      const json& top = c["top_k"];
      REQUIRE(out.top_k.size() == top.size());
      for (std::size_t row = 0; row < top.size(); ++row) {
        CHECK(out.top_k[row].ids == top[row]["ids"].get<std::vector<std::int32_t>>());
        CHECK(max_abs_diff(out.top_k[row].probabilities, top[row]["probabilities"].get<std::vector<double>>()) < 1e-5);
      }
      CHECK(max_abs_diff(softmax_row(out.logits, out.logits.rows() - 1), c["last_row_probabilities"].get<std::vector<double>>()) < 1e-5);
      const std::vector<double> loss = c["token_loss"].get<std::vector<double>>();
      CHECK(loss_error(out.token_loss, loss) < 1e-5);
      TranslateOptions options;
      options.max_new_tokens = 6;
      options.ablate = r.ablate;
      options.ablation = r.ablation;
      CHECK(translate(model, source, options).decoder_ids == c["greedy"].get<std::vector<std::int32_t>>());
      if (r.ablate.empty()) intact_loss = loss;
      else CHECK(max_abs_diff(std::vector<float>(loss.begin(), loss.end()), intact_loss) > 1e-3);  // it moves some token's loss
    }
  }
}

TEST_CASE("an encoder-decoder's ranking covers every head of the three parts with the golden losses") {
  for (const char* name : kSeq2SeqModels) {
    CAPTURE(name);
    const Seq2SeqModel model = load_seq2seq(name);
    const json g = ablation_golden(name);
    ForwardRequest pair;
    pair.source_ids = g["ids"].get<std::vector<std::int32_t>>();
    pair.ids = g["decoder_ids"].get<std::vector<std::int32_t>>();
    const Seq2SeqHeadAblationRanking ranking = rank_heads_by_ablation(model, pair, AblationMode::zero);
    const double base = g["base_loss"].get<double>(), tolerance = 1e-5 * std::max(1.0, base);
    CHECK(std::abs(ranking.base_loss - base) < tolerance);
    REQUIRE(ranking.heads.size() == g["ranking"].size());
    CHECK(std::is_sorted(ranking.heads.begin(), ranking.heads.end(),
                         [](const Seq2SeqHeadAblationEffect& a, const Seq2SeqHeadAblationEffect& b) { return a.delta > b.delta; }));
    for (const json& e : g["ranking"]) {
      const AttentionPart part = part_of(e["part"].get<std::string>());
      const int layer = e["layer"], head = e["head"];
      const auto it = std::find_if(ranking.heads.begin(), ranking.heads.end(), [&](const Seq2SeqHeadAblationEffect& x) {
        return x.head.part == part && x.head.layer == layer && x.head.head == head;
      });
      REQUIRE(it != ranking.heads.end());
      CHECK(std::abs(it->loss - e["loss"].get<double>()) < tolerance);
      CHECK(std::abs(it->delta - (e["loss"].get<double>() - base)) < tolerance);
    }
  }
}

TEST_CASE("bad encoder-decoder ablation requests get clear errors") {
  const Seq2SeqModel model = load_seq2seq("bart-scaled-l1-l3-f32");  // encoder 1 x 2, decoder 3 x 2
  const std::vector<std::int32_t> source = {3, 4, 2}, decoder = {2, 5, 6};
  ForwardRequest r;
  r.ablate = {{1, 0, AttentionPart::encoder}};  // the decoder has a layer 1, the encoder has not
  CHECK_THROWS_WITH_AS(model.encode(source, r),
                       "ablated encoder head 1:0 (layer:head, from 0) does not exist: that part has 1 layers of 2 heads",
                       std::invalid_argument);
  r.ablate = {{0, 2, AttentionPart::cross}};
  CHECK_THROWS_WITH_AS(model.decode(model.encode(source), decoder, r), doctest::Contains("ablated cross head 0:2"),
                       std::invalid_argument);
  r.ablate = {};
  r.token_loss = true;
  r.prediction_positions = {-1};
  CHECK_THROWS_WITH_AS(model.decode(model.encode(source), decoder, r), doctest::Contains("every position"), std::invalid_argument);
  ForwardRequest start_only;
  start_only.source_ids = source;
  start_only.ids = {2};
  CHECK_THROWS_WITH_AS(rank_heads_by_ablation(model, start_only, AblationMode::zero), doctest::Contains("needs a target"),
                       std::invalid_argument);
}
