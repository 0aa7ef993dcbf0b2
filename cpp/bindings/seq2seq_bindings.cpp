// Embind bindings of the encoder-decoder runtime (Marian, BART, T5). Thin: convert
// JS <-> C++ and keep loaded models in a table of integer handles; no math
// here. Every entry point returns its result or { error: message }
// (marshal.h); web/engine/engine.js (TranslationModel) is the only caller.
#include "bindings/seq2seq_bindings.h"

#include <emscripten/bind.h>

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "analysis/head_ablation.h"
#include "bindings/encoding_js.h"
#include "bindings/marshal.h"
#include "bindings/request_js.h"
#include "bindings/top_k_js.h"
#include "pipeline/translation_model.h"

namespace attnplay::bindings {
namespace {

HandleTable<TranslationModel>& seq2seq_models() {
  static HandleTable<TranslationModel> table;
  return table;
}

const TranslationModel& seq2seq_model_of(int handle) { return seq2seq_models().get(handle); }

val seq2seq_config_to_js(const TranslationModel& m) {
  const Seq2SeqConfig& c = m.model().config();
  val out = val::object();
  out.set("modelType", c.model_type);
  out.set("encoderDecoder", true);
  out.set("encoderLayers", c.encoder_layers);
  out.set("decoderLayers", c.decoder_layers);
  out.set("encoderHeads", c.encoder_heads);
  out.set("decoderHeads", c.decoder_heads);
  out.set("width", c.width);
  out.set("positions", c.positions);
  out.set("vocabSize", c.vocab_size);
  out.set("decoderStartTokenId", c.decoder_start_token_id);
  out.set("eosTokenIds", typed_array("Int32Array", std::vector<std::int32_t>(c.eos_token_ids.begin(), c.eos_token_ids.end())));
  out.set("numBeams", c.num_beams);
  out.set("parameters", static_cast<double>(m.model().parameter_count()));
  if (c.relative_buckets > 0) {  // T5: positions only through the learned bias on bucketed distances
    val relative = val::object();
    relative.set("buckets", c.relative_buckets);
    relative.set("maxDistance", c.relative_max_distance);
    out.set("relativePositions", relative);
  }
  return out;
}

// part ("encoder" | "decoder"), span -> { span, bias: [H, 2·span + 1] (key - query = -span..span), buckets: Int32Array }
val seq2seq_position_bias(int handle, const std::string& part_name, int span) {
  return guarded([&] {
    const std::optional<AttentionPart> part = part_from_name(part_name);
    if (!part) throw std::invalid_argument("unknown part \"" + part_name + "\": encoder or decoder");
    std::vector<int> buckets;
    const Matrix bias = seq2seq_model_of(handle).model().position_bias_by_distance(*part, span, buckets);
    val out = val::object();
    out.set("span", span);
    out.set("bias", matrix_to_js(bias));
    out.set("buckets", typed_array("Int32Array", std::vector<std::int32_t>(buckets.begin(), buckets.end())));
    return out;
  });
}

// { encoderAttentions [Le, H, S, S], decoderAttentions [Ld, H, T, T], crossAttentions [Ld, H, T, S], logits? [T, V] }
val attentions_to_js(const Seq2SeqConfig& c, const EncoderOutput& e, const DecoderOutput& d, bool logits) {
  const int S = e.tokens, T = d.tokens;
  val out = val::object();
  out.set("encoderAttentions", tensor_to_js(e.attentions.data(), e.attentions.size(), {c.encoder_layers, c.encoder_heads, S, S}));
  out.set("decoderAttentions",
          tensor_to_js(d.self_attentions.data(), d.self_attentions.size(), {c.decoder_layers, c.decoder_heads, T, T}));
  out.set("crossAttentions",
          tensor_to_js(d.cross_attentions.data(), d.cross_attentions.size(), {c.decoder_layers, c.decoder_heads, T, S}));
  if (logits) out.set("logits", matrix_to_js(d.logits));
  return out;
}

// spec: request_from_js's fields (request_js.h): sourceIds, ids (the decoder's: start token + target; empty: the
// start token), logits?, trace?, hiddenStates?, topK?, predictionPositions?, ablate?, ablation?, tokenLoss?
// (teacher-forced); and lens?: k, attentions? (false: leave the attention tensors out) -> attentions_to_js + trace?
// (trace_to_js) + hiddenStates? [L_dec + 1, T, d] + lens?: the decoder's logit lens (lens_to_js) + topK?: [P, k]
// (top_k_to_js) + predictionPositions (with topK or logits): Int32Array [P] + tokenLoss?: Float32Array [T - 1]
val seq2seq_forward(int handle, const val& spec) {
  return guarded([&] {
    const TranslationModel& m = seq2seq_model_of(handle);
    const ForwardRequest asked = request_from_js(spec);
    const int lens_k = lens_k_from_js(spec);
    const Seq2SeqResult r = m.model().forward(with_lens_inputs(asked, lens_k));
    const DecoderOutput& d = r.decoder;
    const bool with_attentions = !has(spec, "attentions") || spec["attentions"].as<bool>();
    val out = with_attentions ? attentions_to_js(m.model().config(), r.encoder, d, asked.logits) : val::object();
    if (const std::optional<HeadTrace>& t = r.encoder.trace ? r.encoder.trace : d.trace; t) out.set("trace", trace_to_js(*asked.trace, *t));
    if (asked.hidden_states) out.set("hiddenStates", hidden_states_to_js(d.hidden_states, d.tokens, m.model().config().width));
    const auto display = [&m](std::int32_t id) { return m.target_display(id); };
    if (lens_k > 0) out.set("lens", lens_to_js(logit_lens(m.model(), d.hidden_states, lens_k), display));
    if (asked.top_k > 0) out.set("topK", top_k_to_js(d.top_k, display));
    if (asked.top_k > 0 || asked.logits) out.set("predictionPositions", typed_array("Int32Array", d.prediction_positions));
    if (asked.token_loss) out.set("tokenLoss", typed_array("Float32Array", d.token_loss));
    return out;
  });
}

// spec: request_from_js's { sourceIds, ids (start token + target), ablation? } -> { baseLoss, heads:
// [{ part, layer, head, loss, delta }] largest delta first } (analysis/head_ablation.h)
val seq2seq_rank_heads(int handle, const val& spec) {
  return guarded([&] {
    const ForwardRequest pair = request_from_js(spec);
    const Seq2SeqHeadAblationRanking ranking = rank_heads_by_ablation(seq2seq_model_of(handle).model(), pair, pair.ablation);
    val heads = val::array();
    for (const Seq2SeqHeadAblationEffect& e : ranking.heads) heads.call<void>("push", ranked_head_to_js(e.head, e.loss, e.delta));
    val out = val::object();
    out.set("baseLoss", ranking.base_loss);
    out.set("heads", heads);
    return out;
  });
}

// spec: { text, target? } -> attentions_to_js + { sourceTokens: encoding_to_js, decoderTokens: encoding_to_js
// (the start token, then the target's tokens with their offsets into the target), truncated, inputTokens }
val seq2seq_run(int handle, const val& spec) {
  return guarded([&] {
    const TranslationModel& m = seq2seq_model_of(handle);
    const std::string text = has(spec, "text") ? spec["text"].as<std::string>() : std::string();
    std::optional<std::string> target;
    if (has(spec, "target")) target = spec["target"].as<std::string>();
    const Seq2SeqRun r = m.run(text, target ? std::optional<std::string_view>(*target) : std::nullopt);
    val out = attentions_to_js(m.model().config(), r.encoder, r.decoder, false);
    out.set("sourceTokens", encoding_to_js(r.source));
    out.set("decoderTokens", encoding_to_js(r.decoder_tokens));
    out.set("truncated", r.truncated);
    out.set("inputTokens", r.input_tokens);
    return out;
  });
}

// spec: { text | sourceIds: Int32Array, beams?, maxNewTokens?, ablate?, ablation?, attentions? (false: leave the
// attention tensors out) }; on_step({ index, token, display, special,
// crossAttention: { data, shape [Ld, H, S] } }) after each greedy token, a false return stops. -> { sourceTokens
// (encoding_to_js; for ids, their display strings without offsets), decoderTokens (encoding_to_js: the start
// token, then each token with its offsets into the text), textBytes (Uint8Array; null without a tokenizer),
// score, logProbability, truncated, inputTokens } + attentions_to_js of the final target (decoder input = decoder
// ids without the last, so that row i is the step that produced target token i)
val seq2seq_translate(int handle, const val& spec, const val& on_step) {
  return guarded([&] {
    const TranslationModel& m = seq2seq_model_of(handle);
    const Seq2SeqConfig& c = m.model().config();
    TranslateOptions options;
    if (has(spec, "beams")) options.beams = spec["beams"].as<int>();
    if (has(spec, "maxNewTokens")) options.max_new_tokens = spec["maxNewTokens"].as<int>();
    ablation_from_js(spec, options.ablate, options.ablation);
    auto step_to_js = [&](const TranslationStep& step) {
      val js = val::object();
      js.set("index", step.index);
      js.set("token", step.token);
      js.set("display", m.target_display(step.token));
      js.set("special", m.target_is_special(step.token));
      const int S = static_cast<int>(step.cross_attention.size()) / (c.decoder_layers * c.decoder_heads);
      js.set("crossAttention", tensor_to_js(step.cross_attention.data(), step.cross_attention.size(),
                                            {c.decoder_layers, c.decoder_heads, S}));
      return !on_step.call<val>("call", val::undefined(), js).strictlyEquals(val(false));
    };
    const TranslationRun r = has(spec, "sourceIds")
                                 ? m.translate_ids(numbers<std::int32_t>(spec, "sourceIds"), options, step_to_js)
                                 : m.translate(has(spec, "text") ? spec["text"].as<std::string>() : std::string(), options, step_to_js);
    const bool with_attentions = !has(spec, "attentions") || spec["attentions"].as<bool>();
    val out = with_attentions ? attentions_to_js(c, r.translation.encoded, decode_translation(m.model(), r.translation, options), false)
                              : val::object();
    out.set("sourceTokens", encoding_to_js(r.source));
    out.set("decoderTokens", encoding_to_js(r.target));
    // bytes: engine.js decodes them (invalid UTF-8 as U+FFFD, as the CLI prints it)
    out.set("textBytes", m.target_tokenizer() ? bytes_to_js(r.text) : val::null());
    out.set("score", r.translation.score);
    out.set("logProbability", r.translation.log_probability);
    out.set("truncated", r.truncated);
    out.set("inputTokens", r.input_tokens);
    return out;
  });
}

void dispose_seq2seq_model(int handle) { seq2seq_models().erase(handle); }

}  // namespace

val load_seq2seq_model(const std::string& config_json, const Checkpoint& checkpoint,
                       const std::optional<Tokenizer>& tokenizer, const std::optional<MarianTokenizerFiles>& marian) {
  auto model = std::make_unique<TranslationModel>(
      marian ? TranslationModel::from_checkpoint(config_json, checkpoint, read_marian_tokenizers(*marian))
             : TranslationModel(Seq2SeqModel::from_checkpoint(config_json, checkpoint), tokenizer, tokenizer));
  val out = val::object();
  out.set("hasTokenizer", model->has_tokenizer());
  out.set("config", seq2seq_config_to_js(*model));
  out.set("handle", seq2seq_models().add(std::move(model)));
  return out;
}

double loaded_seq2seq_models() { return static_cast<double>(seq2seq_models().size()); }

}  // namespace attnplay::bindings

EMSCRIPTEN_BINDINGS(attnplay_seq2seq) {
  using namespace attnplay::bindings;
  emscripten::function("seq2seqForward", &seq2seq_forward);
  emscripten::function("seq2seqRun", &seq2seq_run);
  emscripten::function("seq2seqTranslate", &seq2seq_translate);
  emscripten::function("seq2seqRankHeads", &seq2seq_rank_heads);
  emscripten::function("seq2seqPositionBias", &seq2seq_position_bias);
  emscripten::function("disposeSeq2SeqModel", &dispose_seq2seq_model);
}
