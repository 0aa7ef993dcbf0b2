// Text in, attention out: the text pipeline (tokenizer + model) on the PyTorch
// goldens of tests/golden/models/ (their texts were tokenized by the golden
// script in Python, independently of our tokenizer), explicit truncation,
// [MASK] detection, errors; and the head analysis driver on those models.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analysis/head_analysis.h"
#include "golden_models.h"
#include "model/directory.h"
#include "pipeline/text_model.h"

using namespace attnplay;
using nlohmann::json;
using namespace golden_models;

namespace {

TextModel load(const std::string& name) {
  const ModelFiles files = read_model_directory(model_dir(name));
  REQUIRE(files.tokenizer.has_value());
  return TextModel::from_checkpoint(files.config_json, files.checkpoint, *files.tokenizer);
}

}  // namespace

TEST_CASE("run(text [, pair]) gives the golden ids and the golden attention") {
  for (const char* name : kModels) {
    CAPTURE(name);
    const TextModel model = load(name);
    for (const json& c : golden(name)["cases"]) {
      const std::string text = c["text"].get<std::string>();
      std::optional<std::string> pair;
      if (c.contains("text_pair")) pair = c["text_pair"].get<std::string>();
      CAPTURE(text);
      const RunResult r = model.run(text, pair ? std::optional<std::string_view>(*pair) : std::nullopt, ForwardRequest{});
      CHECK(r.encoding.ids() == c["ids"].get<std::vector<std::int32_t>>());
      // The segment ids the model reads (BERT's, ELECTRA's); DistilBERT and RoBERTa read none, whatever their tokenizers write.
      if (model.model().config().segment_input) CHECK(r.encoding.type_ids() == c["type_ids"].get<std::vector<std::int32_t>>());
      CHECK_FALSE(r.truncated);
      std::vector<double> want;
      flatten(c["attentions"], want);
      REQUIRE(r.forward.attentions.size() == want.size());
      double worst = 0;
      for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(r.forward.attentions[i] - want[i]));
      CHECK(worst < 1e-5);
    }
  }
}

TEST_CASE("[MASK] positions are found and filled; top-k for GPT-2 at every position") {
  const TextModel bert = load("bert-l2-h2-k32-f32");
  ForwardRequest options;
  options.top_k = 3;
  const RunResult r = bert.run("The cat [MASK] on the mat.", std::nullopt, options);
  REQUIRE(r.mask_positions == std::vector<int>{3});
  REQUIRE(r.forward.top_k.size() == 1);
  CHECK(r.forward.top_k[0].ids.size() == 3);
  REQUIRE(r.top_k_displays.size() == 3);  // the fills are named as the tokenizer names its entries
  for (std::size_t j = 0; j < 3; ++j) CHECK(r.top_k_displays[j] == bert.tokenizer()->display(r.forward.top_k[0].ids[j]));

  const TextModel gpt = load("gpt2-l4-h4-k8-bf16");
  const RunResult g = gpt.run("The cat sat.", std::nullopt, options);
  CHECK(g.forward.top_k.size() == g.encoding.tokens.size());
  CHECK(g.top_k_displays.size() == 3 * g.encoding.tokens.size());
  CHECK(g.top_k_displays.back() == gpt.tokenizer()->display(g.forward.top_k.back().ids.back()));
  CHECK(g.mask_positions.empty());
}

TEST_CASE("RoBERTa: <mask> positions are filled, a pair reads segment 0, text is cut at its 38 positions") {
  const TextModel roberta = load("roberta-l2-h2-k16-f32");  // 40 position rows, pad_token_id 1
  CHECK(roberta.mask_token() == std::optional<std::string>("<mask>"));
  CHECK(load("bert-l2-h2-k32-f32").mask_token() == std::optional<std::string>("[MASK]"));
  CHECK_FALSE(load("gpt2-l4-h4-k8-bf16").mask_token());
  ForwardRequest options;
  options.top_k = 3;
  const RunResult r = roberta.run("The cat <mask> on the mat.", std::nullopt, options);
  REQUIRE(r.mask_positions == std::vector<int>{8});  // <s> T h e ␣ c a t <mask>: the space went into <mask> (lstrip)
  CHECK(r.forward.top_k.size() == 1);

  ForwardRequest pair_request;
  pair_request.top_k = 3;
  ForwardRequest inputs = pair_request;
  const Encoding pair = roberta.tokenizer()->encode("What?", std::string_view("<mask>!"));
  roberta.set_text_inputs(pair, inputs);
  CHECK(inputs.ids == pair.ids());
  CHECK(inputs.type_ids.empty());  // transformers' RoBERTa tokenizers give no token_type_ids
  CHECK(inputs.mask_positions == std::vector<int>{8});  // <s> W h a t ? </s> </s> <mask>
  CHECK_NOTHROW(roberta.run("What?", std::string_view("<mask>!"), pair_request));

  const RunResult long_text = roberta.run(std::string(50, 'a'), std::nullopt, ForwardRequest{});
  CHECK(long_text.truncated);
  CHECK(long_text.encoding.tokens.size() == 38);
  CHECK(long_text.encoding.tokens.back().piece == "</s>");
}

TEST_CASE("a predicted id past the tokenizer's vocabulary (a padded embedding row) is named, not an error") {
  const ModelFiles gpt = read_model_directory(model_dir("gpt2-l4-h4-k8-bf16"));  // 257 embedding rows
  const ModelFiles bert = read_model_directory(model_dir("bert-l1-h3-k8-bf16"));  // 28 tokens
  const TextModel padded(Model::from_checkpoint(gpt.config_json, gpt.checkpoint), Tokenizer::from_file_bytes(*bert.tokenizer));
  ForwardRequest options;
  options.top_k = 257;  // every row, so ids 28..256 are among them
  const RunResult r = padded.run("the dog", std::nullopt, options);
  REQUIRE(r.top_k_displays.size() == 257 * r.encoding.tokens.size());
  for (std::size_t i = 0; i < r.top_k_displays.size(); ++i) {
    const std::int32_t id = r.forward.top_k[i / 257].ids[i % 257];
    CHECK(r.top_k_displays[i] == (id < 28 ? padded.tokenizer()->display(id) : "<no token: id " + std::to_string(id) + ">"));
  }
}

TEST_CASE("text longer than the model's positions is truncated, and the result says so") {
  const TextModel gpt = load("gpt2-l1-h1-k64-f32");  // 16 positions, one token per byte
  const RunResult g = gpt.run("abcdefghijklmnopqrstuvwxyz", std::nullopt, ForwardRequest{});
  CHECK(g.truncated);
  CHECK(g.input_tokens == 26);
  CHECK(g.encoding.tokens.size() == 16);
  CHECK(g.forward.tokens == 16);

  const TextModel bert = load("bert-l1-h3-k8-bf16");  // 16 positions
  const RunResult b = bert.run("the dog sat in the park the dog sat in the park the dog sat", std::nullopt, ForwardRequest{});
  CHECK(b.truncated);
  CHECK(b.encoding.tokens.size() == 16);
  CHECK(b.encoding.tokens.back().piece == "[SEP]");  // the closing separator is kept
  CHECK(b.encoding.tokens.front().piece == "[CLS]");
}

TEST_CASE("run() errors are readable") {
  const TextModel gpt = load("gpt2-l4-h4-k8-bf16");
  CHECK_THROWS_WITH_AS(gpt.run("", std::nullopt, ForwardRequest{}), "the text is empty", std::invalid_argument);
  ForwardRequest with_ids;
  with_ids.ids = {1, 2};
  CHECK_THROWS_WITH_AS(gpt.run("a", std::nullopt, with_ids),
                       "a run on text takes its ids, type ids, attention mask and mask positions from the text", std::invalid_argument);
  CHECK_THROWS_WITH_AS(gpt.run("a", std::string_view("b"), ForwardRequest{}), "GPT-2 models take one text, not a pair",
                       std::invalid_argument);
  const ModelFiles files = read_model_directory(model_dir("gpt2-l4-h4-k8-bf16"));
  const TextModel no_tokenizer = TextModel::from_checkpoint(files.config_json, files.checkpoint, "");
  CHECK_THROWS_WITH_AS(no_tokenizer.run("a", std::nullopt, ForwardRequest{}),
                       "this model has no tokenizer (tokenizer.json or a SentencePiece model), so it cannot read text", std::invalid_argument);
}

TEST_CASE("head analysis reports every head with scores in [0, 1], reproducibly") {
  for (const char* name : {"gpt2-l2-h12-k8-f16", "bert-l3-h6-k16-f16", "llama-gqa-llama3-bf16", "mistral-window3-f16",
                           "qwen3-qknorm-bf16", "pythia-parallel-f16"}) {
    CAPTURE(name);
    const TextModel model = load(name);
    const auto reports = analyze_heads(model);
    REQUIRE(reports.size() == static_cast<std::size_t>(model.model().config().layers * model.model().config().heads));
    for (const HeadReport& r : reports) {
      for (float s : {r.scores.previous_token, r.scores.next_token, r.scores.induction, r.scores.sink, r.scores.self, r.scores.local,
                       r.scores.broad}) {
        CHECK(s >= 0.0f);
        CHECK(s <= 1.0f + 1e-5f);
      }
      CHECK(r.labels == head_labels(r.scores));
    }
    const auto again = analyze_heads(model);
    CHECK(again[3].scores.induction == reports[3].scores.induction);
  }
}

TEST_CASE("BERT heads: next-token and broad scores equal a direct computation on the analysis sentences' maps") {
  const TextModel bert = load("bert-l3-h6-k16-f16");
  const auto reports = analyze_heads(bert);
  std::vector<double> next(reports.size()), broad(reports.size());
  const auto& sentences = head_analysis_sentences();
  for (const std::string& sentence : sentences) {
    const ForwardResult f = bert.run(sentence, std::nullopt, ForwardRequest{}).forward;
    const int t = f.tokens;
    for (std::size_t r = 0; r < reports.size(); ++r) {
      double to_next = 0, relative_entropy = 0;
      for (int q = 0; q < t; ++q) {
        if (q + 1 < t) to_next += f.attention(reports[r].layer, reports[r].head, q, q + 1);
        double entropy = 0;
        for (int k = 0; k < t; ++k) {
          const double w = f.attention(reports[r].layer, reports[r].head, q, k);
          if (w > 0) entropy -= w * std::log(w);
        }
        relative_entropy += entropy / std::log(static_cast<double>(t));
      }
      next[r] += to_next / (t - 1) / static_cast<double>(sentences.size());
      broad[r] += relative_entropy / t / static_cast<double>(sentences.size());
    }
  }
  for (std::size_t r = 0; r < reports.size(); ++r) {
    CAPTURE(r);
    CHECK(reports[r].scores.next_token == doctest::Approx(next[r]).epsilon(1e-5));
    CHECK(reports[r].scores.broad == doctest::Approx(broad[r]).epsilon(1e-5));
  }
}
