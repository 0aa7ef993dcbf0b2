// The transformer runtime against the PyTorch goldens of tests/golden/models/
// (made by tests/golden/make_model_goldens.py, an independent float64
// implementation): attention of every layer and head within 1e-5 absolute,
// logits, hidden states and one head's q, k, v, scores within 1e-4 relative
// (max |ours - torch| / max |torch|), that head's q and k before RoPE within
// 1e-5 relative; plus request validation and config errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "golden_models.h"
#include "model/directory.h"
#include "model/model.h"
#include "model/weight_reader.h"

using namespace attnplay;
using nlohmann::json;
using namespace golden_models;

namespace {

Model load(const std::string& name) {
  const ModelFiles files = read_model_directory(model_dir(name));
  return Model::from_checkpoint(files.config_json, files.checkpoint);
}

double max_abs_diff(const float* ours, const std::vector<double>& ref) {
  double m = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) m = std::max(m, std::abs(ours[i] - ref[i]));
  return m;
}

// max |ours - ref| / max |ref|
double relative_error(const Matrix& ours, const json& ref_json) {
  const std::vector<double> ref = flat(ref_json);
  REQUIRE(static_cast<std::size_t>(ours.size()) == ref.size());
  double scale = 0;
  for (double v : ref) scale = std::max(scale, std::abs(v));
  return max_abs_diff(ours.data(), ref) / scale;
}

}  // namespace

TEST_CASE("forward passes match the PyTorch goldens") {
  for (const char* name : kModels) {
    CAPTURE(name);
    const Model model = load(name);
    const json g = golden(name);
    for (const json& c : g["cases"]) {
      CAPTURE(c["text"].get<std::string>());
      ForwardRequest req;
      req.ids = c["ids"].get<std::vector<std::int32_t>>();
      req.type_ids = c["type_ids"].get<std::vector<std::int32_t>>();
      req.trace = ForwardRequest::Head{c["trace"]["layer"].get<int>(), c["trace"]["head"].get<int>()};
      req.hidden_states = true;
      req.logits = c.contains("logits");
      req.top_k = 3;
      const int T = static_cast<int>(req.ids.size());
      const bool bert = !model.config().causal();
      if (bert && c.contains("logits")) {
        for (int i = 0; i < T; ++i) req.mask_positions.push_back(i);
      }
      const ForwardResult r = model.forward(req);

      const std::vector<double> attn = flat(c["attentions"]);
      REQUIRE(r.attentions.size() == attn.size());
      CHECK(max_abs_diff(r.attentions.data(), attn) < 1e-5);
      for (int l = 0; l < r.layers; ++l) {
        for (int h = 0; h < r.heads; ++h) {
          for (int i = 0; i < T; ++i) {
            double sum = 0;
            for (int j = 0; j < T; ++j) sum += r.attention(l, h, i, j);
            CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
            if (!bert && i + 1 < T) CHECK(r.attention(l, h, i, i + 1) == 0.0f);  // causal: exactly 0
          }
        }
      }

      REQUIRE(r.trace.has_value());
      CHECK(relative_error(r.trace->q, c["trace"]["q"]) < 1e-4);
      CHECK(relative_error(r.trace->k, c["trace"]["k"]) < 1e-4);
      CHECK(relative_error(r.trace->v, c["trace"]["v"]) < 1e-4);
      CHECK(relative_error(r.trace->scores, c["trace"]["scores"]) < 1e-4);
      // RoPE families: the traced head's q and k before the rotation, and its frequencies.
      CHECK(r.rotary.has_value() == c["trace"].contains("rotary"));
      if (r.rotary && c["trace"].contains("rotary")) {
        const json& rotary = c["trace"]["rotary"];
        CHECK(relative_error(r.rotary->q, rotary["q"]) < 1e-5);
        CHECK(relative_error(r.rotary->k, rotary["k"]) < 1e-5);
        const std::vector<double> theta = flat(rotary["inverse_frequencies"]);
        REQUIRE(r.rotary->inverse_frequencies.size() == theta.size());
        for (std::size_t i = 0; i < theta.size(); ++i) CHECK(r.rotary->inverse_frequencies[i] == doctest::Approx(theta[i]).epsilon(1e-8));
        CHECK(r.rotary->first_position == 0);
      }
      // The traced head's weights are the very ones in the attention tensor.
      const int tl = req.trace->layer, th = req.trace->head;
      CHECK(std::equal(r.trace->weights.data(), r.trace->weights.data() + T * T,
                       r.attentions.begin() + (static_cast<std::ptrdiff_t>(tl) * r.heads + th) * T * T));

      REQUIRE(r.hidden_states.size() == c["hidden_states"].size());
      for (std::size_t l = 0; l < r.hidden_states.size(); ++l) {
        CAPTURE(l);
        CHECK(relative_error(r.hidden_states[l], c["hidden_states"][l]) < 1e-4);
      }
      if (c.contains("logits")) {
        CHECK(relative_error(r.logits, c["logits"]) < 1e-4);
        // Top-k: the best logits of the golden rows, probabilities of their softmax.
        REQUIRE(static_cast<int>(r.top_k.size()) == T);
        for (int i = 0; i < T; ++i) {
          const std::vector<double> row = c["logits"][i].get<std::vector<double>>();
          const auto best = std::max_element(row.begin(), row.end());
          double sum = 0;
          for (double v : row) sum += std::exp(v - *best);
          CHECK(r.top_k[i].ids[0] == best - row.begin());
          CHECK(r.top_k[i].probabilities[0] == doctest::Approx(1.0 / sum).epsilon(1e-4));
          CHECK(r.top_k[i].probabilities[1] <= r.top_k[i].probabilities[0]);
        }
      }
    }
  }
}

TEST_CASE("configuration and parameter count") {
  const Model gpt2 = load("gpt2-l2-h12-k8-f16");
  CHECK(gpt2.config().model_type == "gpt2");
  CHECK(gpt2.config().layers == 2);
  CHECK(gpt2.config().heads == 12);
  CHECK(gpt2.config().width == 96);
  CHECK(gpt2.config().causal());
  // wte + wpe + 2 × (ln_1, c_attn, c_proj, ln_2, c_fc, mlp.c_proj) + ln_f
  const std::int64_t d = 96, V = 257, P = 32, I = 128;
  CHECK(gpt2.parameter_count() == V * d + P * d + 2 * (2 * d + d * 3 * d + 3 * d + d * d + d + 2 * d + d * I + I + I * d + d) + 2 * d);
  const Model bert = load("bert-l2-h2-k32-f32");
  CHECK(bert.config().model_type == "bert");
  CHECK(!bert.config().causal());
  CHECK(bert.has_mlm_head());
  CHECK(!load("bert-l3-h6-k16-f16").has_mlm_head());
  CHECK_NOTHROW(gpt2.check_vocabulary(257));
  CHECK_THROWS_WITH_AS(gpt2.check_vocabulary(50257), doctest::Contains("larger than the embedding matrix"),
                       std::invalid_argument);
}

TEST_CASE("known-harmless tensor names: * any run of characters, # a run of digits, the rest literal") {
  CHECK(name_matches("h.#.attn.bias", "h.11.attn.bias"));
  CHECK_FALSE(name_matches("h.#.attn.bias", "h..attn.bias"));         // # needs a digit
  CHECK_FALSE(name_matches("h.#.attn.bias", "h.1a.attn.bias"));
  CHECK_FALSE(name_matches("h.#.attn.bias", "h.0.attn.c_attn.bias"));  // whole names only
  CHECK(name_matches("pooler.*", "pooler.dense.weight"));
  CHECK(name_matches("pooler.*", "pooler."));
  CHECK_FALSE(name_matches("pooler.*", "bert.pooler.dense.weight"));
  CHECK(name_matches("lm_head.weight", "lm_head.weight"));
  CHECK_FALSE(name_matches("lm_head.weight", "lm_head_weight"));       // "." is literal
  CHECK_FALSE(name_matches("lm_head.weight", "lm_head.weight2"));
  CHECK(name_matches("", ""));
}

// Every parameter a model reads is counted, the embedding projections (ELECTRA's embeddings_project, OPT's
// project_in and project_out) included: where every stored tensor is read, the count is the file's.
TEST_CASE("the parameter count is the checkpoint's where every stored tensor is read") {
  for (const char* name : {"electra-generator-l2-h2-k16-e24-f32", "opt-nobias-gelu-untied-bf16", "roberta-l1-h2-k8-f16"}) {
    CAPTURE(name);
    const ModelFiles files = read_model_directory(model_dir(name));
    std::int64_t stored = 0;
    for (const auto& [tensor, info] : files.checkpoint.tensors()) {
      std::int64_t n = 1;
      for (const std::int64_t extent : info.shape) n *= extent;
      stored += n;
    }
    CHECK(load(name).parameter_count() == stored);
  }
}

// ELECTRA reads BertConfig's keys as BERT does (config_fields' bert_encoder_config), refusals included.
TEST_CASE("ELECTRA refuses a decoder or relative-position config, as BERT does") {
  json config = json::parse(read_model_directory(model_dir("electra-discriminator-l1-h4-k8-bf16")).config_json);
  CHECK(parse_config(config.dump()).family_name == "ELECTRA");
  config["is_decoder"] = true;
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("\"is_decoder\""), std::invalid_argument);
  config.erase("is_decoder");
  config["position_embedding_type"] = "relative_key";
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("only \"absolute\" is supported"),
                       std::invalid_argument);
}

// RoBERTa's positions start after pad_token_id: the table's first pad + 1 rows are no token's.
TEST_CASE("RoBERTa: positions past pad_token_id, a pad_token_id that leaves none refused") {
  json config = json::parse(read_model_directory(model_dir("roberta-l2-h2-k16-f32")).config_json);  // 40 rows, pad 1
  ModelConfig c = parse_config(config.dump());
  CHECK(c.family_name == "RoBERTa");
  CHECK(c.position_count == ModelConfig::PositionCount::non_pad_ids);
  CHECK(c.position_offset == 2);
  CHECK(c.positions == 38);
  CHECK(c.position_table_rows() == 40);
  CHECK_FALSE(c.segment_input);
  config.erase("pad_token_id");  // RobertaConfig's default
  CHECK(parse_config(config.dump()).position_offset == 2);
  config["model_type"] = "xlm-roberta";
  config["pad_token_id"] = 3;
  c = parse_config(config.dump());
  CHECK(c.family_name == "XLM-RoBERTa");
  CHECK(c.positions == 36);
  config["pad_token_id"] = 39;  // no row left for a token
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("\"pad_token_id\" 39 must be a token id"),
                       std::invalid_argument);
  config["pad_token_id"] = 261;  // outside the 261-token vocabulary
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("\"pad_token_id\" 261"), std::invalid_argument);
  config["pad_token_id"] = 1;
  config["position_embedding_type"] = "relative_key";  // BertConfig's keys, read as BERT reads them
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("only \"absolute\" is supported"),
                       std::invalid_argument);
}

// OPT counts positions over the tokens the attention mask keeps (transformers'
// OPTLearnedPositionalEmbedding): a left-padded text, its pads masked, reads as the text alone.
TEST_CASE("OPT: a left-padded text with its padding masked reads exactly as the text alone") {
  const Model opt = load("opt-l2-h4-k8-f32");
  CHECK(opt.config().family_name == "OPT");
  CHECK(opt.config().position_offset == 2);
  CHECK(opt.config().position_table_rows() == 34);
  ForwardRequest alone;
  alone.ids = {2, 50, 60, 70};
  alone.hidden_states = true;
  ForwardRequest padded = alone;
  padded.ids.insert(padded.ids.begin(), {1, 1});
  padded.attention_mask = {0, 0, 1, 1, 1, 1};
  const ForwardResult a = opt.forward(alone), p = opt.forward(padded);
  REQUIRE(p.hidden_states.size() == a.hidden_states.size());
  for (std::size_t l = 0; l < a.hidden_states.size(); ++l) {
    CAPTURE(l);
    CHECK((p.hidden_states[l].bottomRows(4) - a.hidden_states[l]).cwiseAbs().maxCoeff() < 1e-5f);
  }
  for (int l = 0; l < a.layers; ++l) {
    for (int h = 0; h < a.heads; ++h) {
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) CHECK(p.attention(l, h, i + 2, j + 2) == doctest::Approx(a.attention(l, h, i, j)).epsilon(1e-5));
      }
    }
  }
  // Unmasked, the pads are tokens like any other and move the text's positions.
  padded.attention_mask.clear();
  CHECK((opt.forward(padded).hidden_states[0].bottomRows(4) - a.hidden_states[0]).cwiseAbs().maxCoeff() > 1e-2f);
}

// Gemma's configs: which layers slide (layer_types, else each version's pattern), its defaults, its refusals.
TEST_CASE("Gemma: sliding layers from layer_types or the version's pattern, defaults, softcaps null or absent") {
  json config = json::parse(read_model_directory(model_dir("gemma2-softcap-window-f32")).config_json);  // 3 layers
  ModelConfig c = parse_config(config.dump());
  CHECK(c.family_name == "Gemma 2");
  CHECK(c.sliding_layers == std::vector<bool>{true, false, true});  // Gemma 2: the even layers
  CHECK(c.attention_scale_width == 12);
  CHECK(c.attention_softcap == 2.0f);
  CHECK(c.final_logit_softcap == 3.0f);
  CHECK(c.embedding_scale == doctest::Approx(std::sqrt(32.0)));
  config.erase("attn_logit_softcapping");  // Gemma2Config's defaults
  config.erase("final_logit_softcapping");
  config.erase("query_pre_attn_scalar");
  c = parse_config(config.dump());
  CHECK(c.attention_softcap == 50.0f);
  CHECK(c.final_logit_softcap == 30.0f);
  CHECK(c.attention_scale_width == 256);
  config["attn_logit_softcapping"] = nullptr;  // null: no cap
  CHECK(parse_config(config.dump()).attention_softcap == 0.0f);
  config["model_type"] = "gemma3_text";  // Gemma 3: five sliding layers, then a global one
  config["num_hidden_layers"] = 7;
  c = parse_config(config.dump());
  CHECK(c.sliding_layers == std::vector<bool>{true, true, true, true, true, false, true});
  CHECK(c.qk_norm);
  CHECK(c.rope_local_theta == 10000.0);
  config["layer_types"] = json::array({"full_attention", "sliding_attention"});
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("\"layer_types\" must list one entry per layer (7)"),
                       std::invalid_argument);
  config["num_hidden_layers"] = 2;
  config["layer_types"] = json::array({"full_attention", "chunked_attention"});
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("\"layer_types\"[1] is \"chunked_attention\""),
                       std::invalid_argument);
  json gemma1 = json::parse(read_model_directory(model_dir("gemma-mqa-hd16-bf16")).config_json);
  c = parse_config(gemma1.dump());
  CHECK(c.head_dim == 16);  // independent of 24 / 4
  CHECK(c.sliding_window == 0);
  CHECK(c.attention_softcap == 0.0f);
  gemma1.erase("head_dim");
  CHECK(parse_config(gemma1.dump()).head_dim == 256);  // GemmaConfig's default, not width / heads
}

// SmolLM3's layers without RoPE: no_rope_layers, else all but every no_rope_layer_interval-th (default 4).
TEST_CASE("SmolLM3: the layers that turn q and k, from no_rope_layers or the interval") {
  json config = json::parse(read_model_directory(model_dir("smollm3-norope-f32")).config_json);  // 2 layers
  CHECK(parse_config(config.dump()).rope_layers == std::vector<bool>{true, false});
  config.erase("no_rope_layers");
  config["num_hidden_layers"] = 8;
  const ModelConfig c = parse_config(config.dump());
  CHECK(c.rope_layers == std::vector<bool>{true, true, true, false, true, true, true, false});
  CHECK(c.layer_has_rope(2));
  CHECK_FALSE(c.layer_has_rope(3));
  config["no_rope_layers"] = json::array({1, 2, 1, 1, 1, 1, 1, 1});
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("\"no_rope_layers\"[1] is 2"), std::invalid_argument);
  config["model_type"] = "llama";  // Llama has no such key: every layer turns
  CHECK(parse_config(config.dump()).rope_layers.empty());
}

// Phi-3: partial rotary from partial_rotary_factor, the window on every layer, longrope's factors checked.
TEST_CASE("Phi-3: rotated dims, sliding window, and longrope's factors") {
  json config = json::parse(read_model_directory(model_dir("phi3-partial-window-bf16")).config_json);  // head_dim 8
  ModelConfig c = parse_config(config.dump());
  CHECK(c.family_name == "Phi-3");
  CHECK(c.rotary_dims == 4);
  CHECK(c.sliding_window == 4);
  CHECK(c.sliding_layers.empty());  // every layer
  config["partial_rotary_factor"] = 0.75;  // int(8 · 0.75) = 6
  CHECK(parse_config(config.dump()).rotary_dims == 6);
  config["partial_rotary_factor"] = 1.5;
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("\"partial_rotary_factor\" must be in (0, 1]"),
                       std::invalid_argument);
  config.erase("partial_rotary_factor");
  config["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0}}, {"long_factor", {2.0}}};
  CHECK_THROWS_WITH_AS(parse_config(config.dump()),
                       doctest::Contains("longrope's \"short_factor\" and \"long_factor\" need one factor per rotated pair (4), not 1 and 1"),
                       std::invalid_argument);
  config["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0, 2.0, 3.0, 4.0}}, {"long_factor", {2.0, 0.0, 1.0, 1.0}}};
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("\"long_factor\" must hold positive numbers"),
                       std::invalid_argument);
  config["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0, 2.0, 3.0, 4.0}}};
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("longrope needs a \"long_factor\" list"),
                       std::invalid_argument);
  config["rope_scaling"] = {{"type", "su"}};
  CHECK_THROWS_WITH_AS(parse_config(config.dump()),
                       doctest::Contains("rope_scaling type \"su\" is not supported (supported: linear, dynamic, yarn, longrope, llama3)"),
                       std::invalid_argument);
}

// A config.json that leaves keys out loads with its config class's defaults,
// as transformers loads it (the __init__ defaults of v4.56.0's
// configuration_<family>.py, src/transformers/models/).
TEST_CASE("config keys left out take the config class's defaults, as in transformers") {
  struct Expected {
    const char* type;
    int layers, heads, kv_heads, head_dim, width, inner, positions, vocab;
  };
  const Expected expected[] = {
      {"gpt2", 12, 12, 12, 64, 768, 3072, 1024, 50257},
      {"bert", 12, 12, 12, 64, 768, 3072, 512, 30522},
      {"roberta", 12, 12, 12, 64, 768, 3072, 512 - 2, 50265},  // positions start after pad_token_id 1
      {"xlm-roberta", 12, 12, 12, 64, 768, 3072, 512 - 2, 30522},
      {"electra", 12, 4, 4, 64, 256, 1024, 512, 30522},
      {"distilbert", 6, 12, 12, 64, 768, 3072, 512, 30522},
      {"opt", 12, 12, 12, 64, 768, 3072, 2048, 50272},
      {"llama", 32, 32, 32, 128, 4096, 11008, 2048, 32000},
      {"mistral", 32, 32, 8, 128, 4096, 14336, 131072, 32000},
      {"qwen2", 32, 32, 32, 128, 4096, 22016, 32768, 151936},
      {"qwen3", 32, 32, 32, 128, 4096, 22016, 32768, 151936},
      {"smollm3", 36, 16, 4, 128, 2048, 11008, 32768, 128256},
      {"gemma", 28, 16, 16, 256, 3072, 24576, 8192, 256000},
      {"gemma2", 26, 8, 4, 256, 2304, 9216, 8192, 256000},
      {"gemma3_text", 26, 8, 4, 256, 2304, 9216, 131072, 262208},
      {"olmo2", 32, 32, 32, 128, 4096, 11008, 2048, 50304},
      {"phi3", 32, 32, 32, 96, 3072, 8192, 4096, 32064},
      {"gpt_neox", 44, 64, 64, 96, 6144, 24576, 2048, 50432},
  };
  for (const Expected& e : expected) {
    CAPTURE(e.type);
    const ModelConfig c = parse_config(json{{"model_type", e.type}}.dump());
    CHECK(c.layers == e.layers);
    CHECK(c.heads == e.heads);
    CHECK(c.kv_heads == e.kv_heads);
    CHECK(c.head_dim == e.head_dim);
    CHECK(c.width == e.width);
    CHECK(c.inner == e.inner);
    CHECK(c.positions == e.positions);
    CHECK(c.vocab_size == e.vocab);
  }
  CHECK(parse_config(R"({"model_type": "mistral"})").sliding_window == 4096);  // MistralConfig's window
  CHECK(parse_config(R"({"model_type": "mistral", "sliding_window": null})").sliding_window == 0);
  CHECK(parse_config(R"({"model_type": "mistral", "num_key_value_heads": null})").kv_heads == 32);  // null: the heads
  CHECK(parse_config(R"({"model_type": "gemma3_text"})").rope_theta == 1000000.0);
  CHECK(parse_config(R"({"model_type": "smollm3"})").rope_theta == 2000000.0);
  CHECK(parse_config(R"({"model_type": "electra"})").embedding_size == 128);
  // A norm's epsilon is any finite number >= 0.
  CHECK(parse_config(R"({"model_type": "llama", "rms_norm_eps": 2})").norm_eps == 2.0f);
  CHECK_THROWS_WITH_AS(parse_config(R"({"model_type": "llama", "rms_norm_eps": -1e-6})"),
                       doctest::Contains("\"rms_norm_eps\" must be a finite number >= 0"), std::invalid_argument);
}

// Qwen2/3's and SmolLM3's sliding layers, as their configs compute layer_types.
TEST_CASE("Qwen2, Qwen3, SmolLM3: use_sliding_window slides the layers layer_types names, else each family's") {
  json qwen = {{"model_type", "qwen2"}, {"num_hidden_layers", 4}, {"use_sliding_window", true}, {"max_window_layers", 2},
               {"sliding_window", 3}};
  ModelConfig c = parse_config(qwen.dump());
  CHECK(c.sliding_window == 3);
  CHECK(c.sliding_layers == std::vector<bool>{false, false, true, true});  // from max_window_layers on
  qwen["max_window_layers"] = 0;
  CHECK(parse_config(qwen.dump()).sliding_layers == std::vector<bool>{true, true, true, true});
  qwen["layer_types"] = json::array({"sliding_attention", "full_attention", "sliding_attention", "full_attention"});
  CHECK(parse_config(qwen.dump()).sliding_layers == std::vector<bool>{true, false, true, false});
  qwen["use_sliding_window"] = false;  // Qwen2Config drops the window then
  CHECK(parse_config(qwen.dump()).sliding_window == 0);
  qwen.erase("layer_types");
  qwen["use_sliding_window"] = true;
  qwen["max_window_layers"] = 4;  // no layer from 4 on: no window
  CHECK(parse_config(qwen.dump()).sliding_window == 0);
  json smollm3 = {{"model_type", "smollm3"}, {"num_hidden_layers", 4}, {"use_sliding_window", true}};
  CHECK(parse_config(smollm3.dump()).sliding_window == 0);  // SmolLM3Config has no default window
  smollm3["sliding_window"] = 2;
  c = parse_config(smollm3.dump());
  CHECK(c.sliding_window == 2);
  CHECK(c.sliding_layers == std::vector<bool>{false, false, false, true});  // the layer without RoPE
}

// Flags that change the computation are read, not refused: GPT-2's attention
// scaling, OPT's LayerNorms without gain and without a final one.
TEST_CASE("GPT-2's scale_attn_weights and scale_attn_by_inverse_layer_idx, OPT's affine and final LayerNorms") {
  json gpt2 = {{"model_type", "gpt2"}};
  ModelConfig c = parse_config(gpt2.dump());
  CHECK(c.scale_attention);
  CHECK_FALSE(c.scale_by_inverse_layer);
  gpt2["scale_attn_weights"] = false;
  gpt2["scale_attn_by_inverse_layer_idx"] = true;
  gpt2["reorder_and_upcast_attn"] = true;
  gpt2["add_cross_attention"] = true;
  c = parse_config(gpt2.dump());
  CHECK_FALSE(c.scale_attention);
  CHECK(c.scale_by_inverse_layer);
  // transformers' other names for the same activations, and quick_gelu.
  CHECK(parse_config(R"({"model_type": "gpt2", "activation_function": "gelu_fast"})").activation == Activation::gelu_tanh);
  CHECK(parse_config(R"({"model_type": "gpt2", "activation_function": "gelu_python"})").activation == Activation::gelu_erf);
  CHECK(parse_config(R"({"model_type": "gpt2", "activation_function": "quick_gelu"})").activation == Activation::quick_gelu);
  json opt = {{"model_type", "opt"}};
  CHECK(parse_config(opt.dump()).final_norm);
  opt["_remove_final_layer_norm"] = true;
  opt["layer_norm_elementwise_affine"] = false;
  c = parse_config(opt.dump());
  CHECK_FALSE(c.final_norm);
  CHECK_FALSE(c.norm_affine);
  opt["_remove_final_layer_norm"] = false;
  opt["do_layer_norm_before"] = false;  // post-LN: no final LayerNorm either
  CHECK_FALSE(parse_config(opt.dump()).final_norm);
}

// transformers loads a config whose stop token lies outside a small vocabulary
// (GPT-2's default eos_token_id 50256): so do we; such a token never stops generation.
TEST_CASE("a stop token outside the vocabulary loads, as transformers loads it") {
  json config = json::parse(read_model_directory(model_dir("gpt2-l2-h12-k8-f16")).config_json);  // vocabulary 257
  config["eos_token_id"] = 50256;
  CHECK(parse_config(config.dump()).eos_token_ids.empty());
  config["eos_token_id"] = json::array({256, 50256, -1});
  CHECK(parse_config(config.dump()).eos_token_ids == std::vector<int>{256});
  config["eos_token_id"] = "</s>";
  CHECK_THROWS_WITH_AS(parse_config(config.dump()), doctest::Contains("\"eos_token_id\" must be a token id or a list of them"),
                       std::invalid_argument);
}

TEST_CASE("a small model's multiplied weights are packed ahead; over the budget none are") {
  // Natively only half-precision weights are packed (Eigen multiplies float32 ones in place).
  const Model gpt2 = load("gpt2-l2-h12-k8-f16");
  for (const BlockWeights& b : gpt2.weights().blocks) {
    for (const LinearWeights* l : {&b.qkv, &b.attention_out, &b.mlp_in, &b.mlp_out}) CHECK(l->w.packed() != nullptr);
  }
  CHECK(gpt2.weights().unembedding().packed() != nullptr);  // tied: the token embedding
  CHECK(gpt2.weights().position_embedding.packed() == nullptr);  // only looked up
  const ModelFiles files = read_model_directory(model_dir("gpt2-l2-h12-k8-f16"));
  ModelWeights weights = load_weights(parse_config(files.config_json), files.checkpoint);
  CHECK(weights.blocks[0].qkv.w.packed() == nullptr);
  const std::size_t needed = weights.unembedding().packing_bytes() + 2 * (weights.blocks[0].qkv.w.packing_bytes() +
      weights.blocks[0].attention_out.w.packing_bytes() + weights.blocks[0].mlp_in.w.packing_bytes() +
      weights.blocks[0].mlp_out.w.packing_bytes());
  CHECK(pack_for_products(weights, needed - 1) == 0);
  CHECK(weights.blocks[1].mlp_out.w.packed() == nullptr);
  CHECK(pack_for_products(weights, needed) == needed);
  CHECK(weights.blocks[1].mlp_out.w.packed() != nullptr);
}

TEST_CASE("bad requests get specific errors") {
  const Model gpt2 = load("gpt2-l1-h1-k64-f32");  // 16 positions, vocabulary 257
  const Model bert = load("bert-l2-h2-k32-f32");
  const Model bert_no_head = load("bert-l3-h6-k16-f16");
  auto error = [](const Model& m, const ForwardRequest& req) {
    try {
      m.forward(req);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  ForwardRequest req;
  CHECK(error(gpt2, req) == "no tokens to run");
  req.ids.assign(17, 1);
  CHECK(error(gpt2, req).find("17 tokens are more than the model's 16 positions") != std::string::npos);
  req.ids = {1, 257};
  CHECK(error(gpt2, req).find("token id 257 at position 1 is outside the vocabulary (0..256)") != std::string::npos);
  req.ids = {1, -1};
  CHECK(error(gpt2, req).find("token id -1") != std::string::npos);
  req.ids = {1, 2};
  req.type_ids = {0, 1};
  CHECK(error(gpt2, req).find("GPT-2 has no token types") != std::string::npos);
  CHECK(error(bert, req) == "(no error)");
  req.type_ids = {0, 2};
  CHECK(error(bert, req).find("type id 2 at position 1 is outside 0..1") != std::string::npos);
  req.type_ids = {0};
  CHECK(error(bert, req).find("1 type ids for 2 tokens") != std::string::npos);
  req.type_ids.clear();
  req.trace = ForwardRequest::Head{2, 0};
  CHECK(error(bert, req).find("does not exist: the model has 2 layers of 2 heads") != std::string::npos);
  req.trace.reset();
  req.mask_positions = {5};
  CHECK(error(bert, req).find("mask position 5 is outside 0..1") != std::string::npos);
  CHECK(error(bert_no_head, req).find("no masked-LM head") != std::string::npos);
  CHECK(error(gpt2, req).find("mask positions are for encoders") != std::string::npos);
  req.mask_positions.clear();
  req.attention_mask = {1};
  CHECK(error(bert, req).find("attention mask has 1 entries for 2 tokens") != std::string::npos);
  req.attention_mask.clear();
  req.source_ids = {1, 2};
  CHECK(error(gpt2, req) == "source ids are for encoder-decoders; GPT-2 reads one text");
  req.source_ids.clear();
  req.trace = ForwardRequest::Head{0, 0, AttentionPart::cross};
  CHECK(error(gpt2, req) == "the traced head names the part 'cross', but GPT-2 has one attention: parts are for encoder-decoders");
  req.trace.reset();
  req.ablate = {{0, 0, AttentionPart::encoder}};
  CHECK(error(bert, req).find("an ablated head names the part 'encoder', but BERT") != std::string::npos);
}

TEST_CASE("a padding mask hides keys from every query") {
  const Model bert = load("bert-l2-h2-k32-f32");
  ForwardRequest req;
  req.ids = {2, 6, 7, 3, 0, 0};
  req.attention_mask = {1, 1, 1, 1, 0, 0};
  const ForwardResult padded = bert.forward(req);
  req.ids.resize(4);
  req.attention_mask.clear();
  const ForwardResult plain = bert.forward(req);
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < 2; ++h) {
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 6; ++j) {
          if (j >= 4) {
            CHECK(padded.attention(l, h, i, j) == 0.0f);
          } else {
            CHECK(padded.attention(l, h, i, j) == doctest::Approx(plain.attention(l, h, i, j)).epsilon(1e-5));
          }
        }
      }
    }
  }
}

TEST_CASE("a folder with only pytorch_model.bin is refused with how to convert it") {
  CHECK_THROWS_WITH_AS(read_model_directory(std::string(ATTNPLAY_GOLDEN_DIR) + "/no-such-model"),
                       doctest::Contains("config.json"), std::runtime_error);
}
