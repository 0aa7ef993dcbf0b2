// The encoder-decoder runtime (model/seq2seq.h, model/translate.h) against the
// goldens of tests/golden/models/ made by tests/golden/make_seq2seq_goldens.py,
// an independent float64 PyTorch implementation of Marian and BART: encoder
// self-, decoder self- and cross-attention of every layer and head within
// 1e-5 absolute, logits within 1e-4 relative, greedy and 3-beam translations
// equal (decoded step by step with the self-attention cache); a traced head's
// q and k giving those weights again; the cached decoder, a token at a time,
// giving every row of the whole pass; plus the config and checkpoint errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "golden_models.h"
#include "model/directory.h"
#include "model/translate.h"

using namespace attnplay;
using nlohmann::json;
using namespace golden_models;

namespace {

TranslateOptions search(int beams, int max_new_tokens) {
  TranslateOptions options;
  options.beams = beams;
  options.max_new_tokens = max_new_tokens;
  return options;
}

const char* const kSeq2SeqModels[] = {"marian-l2-h4-f32", "marian-stored-positions-unshared-f16", "bart-l2-h4-bf16",
                                      "bart-scaled-l1-l3-f32", "t5-l2-h4-relu-tied-f32",
                                      "t5-gated-gelu-dkv12-untied-bf16", "mt5-gated-silu-l1-f16",
                                      "bart-untied-legacy-keys-f32"};

Seq2SeqModel load(const std::string& name) {
  const ModelFiles files = read_model_directory(model_dir(name));
  return Seq2SeqModel::from_checkpoint(files.config_json, files.checkpoint);
}

double max_abs_diff(const std::vector<float>& ours, const json& ref_json) {
  const std::vector<double> ref = flat(ref_json);
  REQUIRE(ours.size() == ref.size());
  double m = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) m = std::max(m, std::abs(ours[i] - ref[i]));
  return m;
}

std::string with(const std::string& config, const std::string& key, const std::string& value) {
  json j = json::parse(config);
  if (value.empty()) {
    j.erase(key);
  } else {
    j[key] = json::parse(value);
  }
  return j.dump();
}

}  // namespace

TEST_CASE("encoder-decoder forward passes match the PyTorch goldens") {
  for (const char* name : kSeq2SeqModels) {
    CAPTURE(name);
    const Seq2SeqModel model = load(name);
    for (const json& c : golden(name)["cases"]) {
      CAPTURE(c["source"].get<std::string>());
      ForwardRequest request;  // every model's request (model/model.h)
      request.source_ids = c["ids"].get<std::vector<std::int32_t>>();
      request.ids = c["decoder_ids"].get<std::vector<std::int32_t>>();
      const Seq2SeqResult result = model.forward(request);
      const EncoderOutput& encoded = result.encoder;
      const DecoderOutput& decoded = result.decoder;
      CHECK(max_abs_diff(encoded.attentions, c["encoder_attentions"]) < 1e-5);
      CHECK(max_abs_diff(decoded.self_attentions, c["decoder_attentions"]) < 1e-5);
      CHECK(max_abs_diff(decoded.cross_attentions, c["cross_attentions"]) < 1e-5);
      const std::vector<float> logits(decoded.logits.data(), decoded.logits.data() + decoded.logits.size());
      double scale = 0;
      for (const double v : flat(c["logits"])) scale = std::max(scale, std::abs(v));
      CHECK(max_abs_diff(logits, c["logits"]) / scale < 1e-4);
      // The last row alone, as a decoding step computes it, and the first and last.
      ForwardRequest last_only;
      last_only.prediction_positions = {-1};
      const DecoderOutput step = model.decode(encoded, c["decoder_ids"].get<std::vector<std::int32_t>>(), last_only);
      REQUIRE(step.logits.rows() == 1);
      CHECK((step.logits.row(0) - decoded.logits.bottomRows(1)).cwiseAbs().maxCoeff() < 1e-4 * scale);
      last_only.prediction_positions = {0, -1};
      const DecoderOutput ends = model.decode(encoded, c["decoder_ids"].get<std::vector<std::int32_t>>(), last_only);
      REQUIRE(ends.logits.rows() == 2);
      CHECK(ends.prediction_positions == std::vector<int>{0, static_cast<int>(decoded.logits.rows()) - 1});
      CHECK((ends.logits.row(0) - decoded.logits.row(0)).cwiseAbs().maxCoeff() < 1e-4 * scale);
    }
  }
}

// The neuron view's numbers: a traced head's q and k give, through
// softmax(q·kᵀ/√d_k) (causal for the decoder's self-attention; T5:
// softmax(q·kᵀ + bias), the bias traced), the weights PyTorch computed for
// that head.
TEST_CASE("a traced head's q and k reproduce the PyTorch weights of every part, layer and head") {
  for (const char* name : kSeq2SeqModels) {
    CAPTURE(name);
    const Seq2SeqModel model = load(name);
    const Seq2SeqConfig& config = model.config();
    const json goldens = golden(name);
    const json& c = goldens["cases"][0];
    const std::vector<std::int32_t> source = c["ids"].get<std::vector<std::int32_t>>();
    const std::vector<std::int32_t> decoder = c["decoder_ids"].get<std::vector<std::int32_t>>();
    const struct Part { AttentionPart part; const char* key; int layers, heads; } parts[] = {
        {AttentionPart::encoder, "encoder_attentions", config.encoder_layers, config.encoder_heads},
        {AttentionPart::decoder, "decoder_attentions", config.decoder_layers, config.decoder_heads},
        {AttentionPart::cross, "cross_attentions", config.decoder_layers, config.decoder_heads}};
    for (const Part& p : parts) {
      const AttentionPart part = p.part;
      const std::string key = p.key;
      for (int layer = 0; layer < p.layers; ++layer) {
        for (int head = 0; head < p.heads; ++head) {
          CAPTURE(key);
          CAPTURE(layer);
          CAPTURE(head);
          ForwardRequest request;
          request.trace = ForwardRequest::Head{layer, head, part};
          const EncoderOutput encoded = model.encode(source, request);
          const DecoderOutput decoded = model.decode(encoded, decoder, request);
          const HeadTrace& t = part == AttentionPart::encoder ? *encoded.trace : *decoded.trace;
          CHECK(!(part == AttentionPart::encoder ? decoded.trace : encoded.trace).has_value());
          const json& want = c[key][layer][head];  // [Tq][Tk]
          REQUIRE(t.q.rows() == static_cast<Eigen::Index>(want.size()));
          // Marian and BART divide by √d_k; T5 leaves q·k unscaled and adds its bias in self-attention only.
          CHECK(t.divisor == doctest::Approx(config.t5() ? 1.0 : std::sqrt(static_cast<double>(t.q.cols()))));
          CHECK(t.bias.size() == (config.t5() && part != AttentionPart::cross ? t.q.rows() * t.k.rows() : 0));
          REQUIRE(t.k.rows() == static_cast<Eigen::Index>(want[0].size()));
          for (Eigen::Index q = 0; q < t.q.rows(); ++q) {
            const Eigen::Index keys = part == AttentionPart::decoder ? q + 1 : t.k.rows();  // causal: keys up to q
            std::vector<double> scores(static_cast<std::size_t>(keys));
            double top = -INFINITY, sum = 0;
            for (Eigen::Index k = 0; k < keys; ++k) {
              double dot = 0;
              for (Eigen::Index d = 0; d < t.q.cols(); ++d) dot += static_cast<double>(t.q(q, d)) * t.k(k, d);
              const double bias = t.bias.size() ? t.bias(q, k) : 0.0;  // T5's position bias, from the trace
              scores[static_cast<std::size_t>(k)] = dot / t.divisor + bias;
              top = std::max(top, scores[static_cast<std::size_t>(k)]);
            }
            for (const double x : scores) sum += std::exp(x - top);
            for (Eigen::Index k = 0; k < keys; ++k) {
              CHECK(std::abs(std::exp(scores[static_cast<std::size_t>(k)] - top) / sum - want[q][k].get<double>()) < 1e-5);
            }
          }
        }
      }
    }
    ForwardRequest outside;
    outside.trace = ForwardRequest::Head{config.decoder_layers, 0, AttentionPart::cross};
    CHECK_THROWS_WITH_AS(model.decode(model.encode(source), decoder, outside),
                         doctest::Contains("(layer:head, from 0) does not exist: that part has"), std::invalid_argument);
  }
}

TEST_CASE("greedy and beam-search translations match the reference search") {
  for (const char* name : kSeq2SeqModels) {
    CAPTURE(name);
    const Seq2SeqModel model = load(name);
    for (const json& c : golden(name)["cases"]) {
      CAPTURE(c["source"].get<std::string>());
      const std::vector<std::int32_t> source = c["ids"].get<std::vector<std::int32_t>>();
      int steps = 0;
      const Translation greedy = translate(model, source, search(1, 6), [&](const TranslationStep& s) {
        CHECK(s.index == steps++);
        CHECK(s.cross_attention.size() ==
              static_cast<std::size_t>(model.config().decoder_layers * model.config().decoder_heads) * source.size());
        return true;
      });
      CHECK(greedy.decoder_ids == c["greedy"].get<std::vector<std::int32_t>>());
      CHECK(steps == static_cast<int>(greedy.decoder_ids.size()) - 1);
      CHECK(translate(model, source, search(3, 6)).decoder_ids == c["beam3"].get<std::vector<std::int32_t>>());
    }
  }
}

TEST_CASE("a greedy step's cross-attention row is the decoder's last row") {
  const Seq2SeqModel model = load("marian-l2-h4-f32");
  const std::vector<std::int32_t> source = golden("marian-l2-h4-f32")["cases"][0]["ids"].get<std::vector<std::int32_t>>();
  std::vector<TranslationStep> steps;
  const Translation t = translate(model, source, search(1, 4), [&](const TranslationStep& s) {
    steps.push_back(s);
    return true;
  });
  const std::vector<std::int32_t> inputs(t.decoder_ids.begin(), t.decoder_ids.end() - 1);
  const DecoderOutput whole = model.decode(model.encode(source), inputs);
  const int T = whole.tokens, S = static_cast<int>(source.size()), LH = 2 * 4;
  for (int i = 0; i < T; ++i) {
    for (int lh = 0; lh < LH; ++lh) {
      for (int s = 0; s < S; ++s) {
        CHECK(steps[static_cast<std::size_t>(i)].cross_attention[static_cast<std::size_t>(lh * S + s)] ==
              doctest::Approx(whole.cross_attentions[(static_cast<std::size_t>(lh) * T + i) * S + s]).epsilon(1e-5));
      }
    }
  }
  int calls = 0;  // returning false stops after that token
  const Translation stopped = translate(model, source, search(1, 4), [&](const TranslationStep&) { return ++calls < 2; });
  CHECK(stopped.decoder_ids.size() == 3);
}

TEST_CASE("bad requests and broken configs get clear errors") {
  const ModelFiles files = read_model_directory(model_dir("marian-l2-h4-f32"));
  const Seq2SeqModel model = Seq2SeqModel::from_checkpoint(files.config_json, files.checkpoint);
  CHECK_THROWS_WITH_AS(model.encode({}), "no source tokens to run", std::invalid_argument);
  CHECK_THROWS_WITH_AS(model.encode({1, 999}), doctest::Contains("source token id 999 at position 1 is outside"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(model.encode(std::vector<std::int32_t>(41, 3)), doctest::Contains("more than the model's 40 positions"),
                       std::invalid_argument);
  const EncoderOutput encoded = model.encode({3, 4, 0});
  CHECK_THROWS_WITH_AS(model.decode(encoded, {-1}), doctest::Contains("decoder token id -1"), std::invalid_argument);
  // The one request of every model (model/model.h): BERT's fields and heads of no part are refused.
  ForwardRequest request;
  request.source_ids = {3, 4, 0};
  request.type_ids = {0};
  CHECK_THROWS_WITH_AS(model.forward(request), doctest::Contains("are for BERT"), std::invalid_argument);
  request.type_ids.clear();
  request.trace = ForwardRequest::Head{0, 0};
  CHECK_THROWS_WITH_AS(model.forward(request),
                       "traced head 0:0 names no part: an encoder-decoder's heads are encoder, decoder or cross heads",
                       std::invalid_argument);
  request.trace.reset();
  CHECK_THROWS_WITH_AS(model.encode({3, 4, 0}, request), doctest::Contains("take their ids as arguments"), std::invalid_argument);
  // No decoder ids: the start token alone, as decode() over it.
  const Seq2SeqResult start_only = model.forward(request);
  CHECK(start_only.decoder.tokens == 1);
  CHECK(start_only.decoder.cross_attentions == model.decode(encoded, {model.config().decoder_start_token_id}).cross_attentions);
  CHECK_THROWS_WITH_AS(translate(model, {3, 0}, search(0, 4)), doctest::Contains("beams must be from 1 to 64"),
                       std::invalid_argument);
  const std::string& config = files.config_json;
  auto load_with = [&](const std::string& key, const std::string& value) {
    return Seq2SeqModel::from_checkpoint(with(config, key, value), files.checkpoint);
  };
  // Left out, the start token is MarianConfig's default (58100, outside this vocabulary); null, generate()'s
  // fallback, the bos token, which Marian has not.
  CHECK_THROWS_WITH_AS(load_with("decoder_start_token_id", ""), doctest::Contains("\"decoder_start_token_id\" 58100 is outside"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(load_with("decoder_start_token_id", "null"), doctest::Contains("is null and there is no \"bos_token_id\""),
                       std::invalid_argument);
  // Token ids outside the vocabulary (257 entries): a pad or stop token loads, as in transformers, and is
  // never masked or met; the start token, which every pass reads, is refused; a forced first token by the search.
  CHECK(load_with("pad_token_id", "58100").config().pad_token_id == -1);
  CHECK(load_with("eos_token_id", "[0, 58100]").config().eos_token_ids == std::vector<int>{0});
  CHECK_THROWS_WITH_AS(load_with("decoder_start_token_id", "58100"),
                       doctest::Contains("\"decoder_start_token_id\" 58100 is outside the vocabulary"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(translate(load_with("forced_bos_token_id", "58100"), {3, 0}, search(1, 4)),
                       doctest::Contains("forced_bos_token_id 58100 is outside the vocabulary"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(load_with("decoder_attention_heads", "5"), doctest::Contains("not divisible by the decoder's 5"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(load_with("model_type", "\"t5\""), doctest::Contains("tensor 'shared.weight' (or 'encoder.embed_tokens.weight') is missing: not a t5 checkpoint"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(load_with("model_type", "\"umt5\""), doctest::Contains("\"umt5\" is not supported: its layers each learn"),
                       std::invalid_argument);
  // fairseq's keys, which MarianModel and BartModel do not read, change nothing.
  const Seq2SeqModel legacy = Seq2SeqModel::from_checkpoint(
      with(with(with(config, "normalize_before", "true"), "add_final_layer_norm", "true"), "static_position_embeddings", "false"),
      files.checkpoint);
  CHECK(legacy.encode({3, 4, 0}).attentions == encoded.attentions);
  CHECK_THROWS_WITH_AS(load_with("tie_word_embeddings", "false"), doctest::Contains("tensor 'lm_head.weight' is missing from model.safetensors (config.json has \"tie_word_embeddings\": false)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(load_with("decoder_layers", "3"),
                       doctest::Contains("tensor 'model.decoder.layers.2.self_attn.q_proj.weight' is missing"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(load_with("encoder_layers", "1"), doctest::Contains("unexpected tensor(s)"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_config(config), doctest::Contains("is an encoder-decoder"), std::invalid_argument);
  CHECK(is_encoder_decoder_config(config));
  CHECK_FALSE(is_encoder_decoder_config(read_model_directory(model_dir("gpt2-l1-h1-k64-f32")).config_json));
}

TEST_CASE("decoding token by token with the cache equals the whole decoder pass") {
  for (const char* name : kSeq2SeqModels) {
    CAPTURE(name);
    const Seq2SeqModel model = load(name);
    const json c = golden(name)["cases"][0];
    const std::vector<std::int32_t> decoder = c["decoder_ids"].get<std::vector<std::int32_t>>();
    const EncoderOutput encoded = model.encode(c["ids"].get<std::vector<std::int32_t>>());
    const DecoderOutput whole = model.decode(encoded, decoder);
    const int T = whole.tokens, S = encoded.tokens, LH = model.config().decoder_layers * model.config().decoder_heads;
    DecoderCache cache;
    for (int t = 0; t < T; ++t) {  // one token at a time: row t of every whole result
      const DecoderOutput step = model.decode(encoded, {decoder[static_cast<std::size_t>(t)]}, {}, cache);
      REQUIRE(step.tokens == 1);
      REQUIRE(step.keys == t + 1);
      CHECK(cache.length() == t + 1);
      const double scale = std::max(1.0f, whole.logits.row(t).cwiseAbs().maxCoeff());
      CHECK((step.logits.row(0) - whole.logits.row(t)).cwiseAbs().maxCoeff() / scale < 1e-5);
      for (int lh = 0; lh < LH; ++lh) {
        for (int k = 0; k <= t; ++k) {
          CHECK(step.self_attentions[static_cast<std::size_t>(lh * (t + 1) + k)] ==
                doctest::Approx(whole.self_attentions[(static_cast<std::size_t>(lh) * T + t) * T + k]).epsilon(1e-5));
        }
        for (int s = 0; s < S; ++s) {
          CHECK(step.cross_attentions[static_cast<std::size_t>(lh * S + s)] ==
                doctest::Approx(whole.cross_attentions[(static_cast<std::size_t>(lh) * T + t) * S + s]).epsilon(1e-5));
        }
      }
    }
    ForwardRequest loss;
    loss.token_loss = true;
    CHECK_THROWS_WITH_AS(model.decode(encoded, {decoder[0]}, loss, cache), doctest::Contains("without a cache"), std::invalid_argument);
    ForwardRequest mean;
    mean.ablate = {{0, 0, AttentionPart::cross}};
    mean.ablation = AblationMode::mean;
    DecoderCache fresh;
    CHECK_THROWS_WITH_AS(model.decode(encoded, {decoder[0]}, mean, fresh), doctest::Contains("use zero ablation"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(model.decode(encoded, std::vector<std::int32_t>(static_cast<std::size_t>(model.config().positions), 3), {}, cache),
                         doctest::Contains("more than the model's"), std::invalid_argument);
  }
}
