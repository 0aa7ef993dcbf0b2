// Implementation of model/seq2seq.h: the encoder and decoder recipes (flat
// lists of named ops in the spirit of llm.c's gpt2_forward, shapes in
// comments) over Marian's, BART's and T5's weights, which
// model/families/marian_bart.cpp and t5.cpp read by their Hugging Face tensor
// names. Attention of every kind goes through attend_heads
// (attention/attention.h): self-attention with queries and keys from the same
// tokens, cross-attention with queries [T] from the decoder and keys/values
// [S] from the encoder; T5 adds its relative position bias to the
// self-attention scores.
#include "model/seq2seq.h"

#include <cmath>
#include <string>

#include "attention/attention.h"
#include "attention/positional.h"
#include "model/logits.h"
#include "nn/layers.h"
#include "tensor/gemv.h"
#include "tensor/ops.h"

namespace attnplay {
namespace {

// Packs every matrix the passes multiply by (the attention projections, the
// feed-forward layers, the output layer) as model/weights.h's
// pack_for_products does for the other families: all of them when they fit
// its budget, else none.
void pack_for_products(Seq2SeqWeights& w) {
  std::vector<WeightMatrix*> multiplied = {w.output_embedding.empty() ? &w.decoder_embedding : &w.output_embedding};
  for (std::vector<Seq2SeqLayerWeights>* side : {&w.encoder, &w.decoder}) {
    for (Seq2SeqLayerWeights& l : *side) {
      for (AttentionWeights* a : {&l.self_attn, &l.cross_attn}) {
        for (LinearWeights* p : {&a->q, &a->k, &a->v, &a->out}) multiplied.push_back(&p->w);
      }
      for (LinearWeights* p : {&l.fc1, &l.fc1_up, &l.fc2}) {
        if (!p->w.empty()) multiplied.push_back(&p->w);
      }
    }
  }
  pack_within_budget(multiplied, kPackingBudgetBytes);
}

// `first_position`: the tokens already in a decoder cache.
void check_ids(const Seq2SeqConfig& c, const std::vector<std::int32_t>& ids, const char* side, int first_position = 0) {
  if (ids.empty()) bad_request(std::string("no ") + side + " tokens to run");
  if (first_position + static_cast<int>(ids.size()) > c.positions) {
    bad_request(std::to_string(first_position + ids.size()) + " " + side + " tokens are more than the model's " +
                std::to_string(c.positions) + " positions");
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= c.vocab_size) {
      bad_request(std::string(side) + " token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                  " is outside the vocabulary (0.." + std::to_string(c.vocab_size - 1) + ")");
    }
  }
}

// Throws for what an encoder-decoder's pass cannot do (BERT's type ids,
// padding masks and mask positions) and for a traced or ablated head of no
// part or outside its part (the encoder's layers and heads, or the decoder's
// for decoder self-attention and cross-attention).
void check_request(const Seq2SeqConfig& c, const ForwardRequest& request) {
  if (!request.type_ids.empty() || !request.attention_mask.empty() || !request.mask_positions.empty() ||
      !request.mask_labels.empty()) {
    bad_request("type ids, padding masks, mask positions and mask labels are for BERT; an encoder-decoder reads a "
                "source and a target");
  }
  if (request.top_k < 0) bad_request("top_k must not be negative");
  auto check = [&c](const ForwardRequest::Head& h, const char* what) {
    if (h.part == AttentionPart::self) {
      bad_request(std::string(what) + " head " + std::to_string(h.layer) + ":" + std::to_string(h.head) +
                  " names no part: an encoder-decoder's heads are encoder, decoder or cross heads");
    }
    const auto [layers, heads] = part_shape(c, h.part);
    if (h.layer < 0 || h.layer >= layers || h.head < 0 || h.head >= heads) {
      bad_request(std::string(what) + " " + part_name(h.part) + " head " + std::to_string(h.layer) + ":" +
                  std::to_string(h.head) + " (layer:head, from 0) does not exist: that part has " +
                  std::to_string(layers) + " layers of " + std::to_string(heads) + " heads");
    }
  };
  if (request.trace) check(*request.trace, "traced");
  for (const ForwardRequest::Head& h : request.ablate) check(h, "ablated");
}

// encode() and decode() take their ids as arguments; a request's ids are forward()'s.
void check_no_ids(const ForwardRequest& request) {
  if (!request.ids.empty() || !request.source_ids.empty()) {
    bad_request("encode() and decode() take their ids as arguments; a request with ids is forward()'s");
  }
}

// What one attention sub-layer (a part's layer) is asked: a head to trace
// (-1: none) and heads to knock out.
struct LayerHeads {
  int traced = -1;
  std::vector<int> ablated;
  AblationMode ablation = AblationMode::zero;
};

LayerHeads layer_heads(const ForwardRequest& request, AttentionPart part, int layer) {
  LayerHeads out;
  out.ablation = request.ablation;
  if (request.trace && request.trace->part == part && request.trace->layer == layer) out.traced = request.trace->head;
  for (const ForwardRequest::Head& h : request.ablate) {
    if (h.part == part && h.layer == layer) out.ablated.push_back(h.head);
  }
  return out;
}

// One side's ops (encoder or decoder): embedding, norms, attention, feed-forward.
class Side {
 public:
  Side(const Seq2SeqConfig& c, int heads) : c_(c), heads_(heads) {}

  // Token embeddings · scale + positions (from `first_position`; T5 has
  // none), then BART's layernorm_embedding: [T, d].
  Matrix embed(const std::vector<std::int32_t>& ids, const WeightMatrix& tokens, const WeightMatrix& positions,
               const NormWeights& embedding_norm, int first_position = 0) const {
    const int T = static_cast<int>(ids.size());
    const float scale = c_.scale_embedding ? std::sqrt(static_cast<float>(c_.width)) : 1.0f;
    Matrix h(T, c_.width);       // [T, d]
    RowVector position = RowVector::Zero(c_.width);  // [d]
    for (int i = 0; i < T; ++i) {
      tokens.row_to_float(ids[static_cast<std::size_t>(i)], h.row(i).data());
      if (!positions.empty()) positions.row_to_float(first_position + i + c_.position_offset(), position.data());
      h.row(i) = h.row(i) * scale + position;
    }
    return embedding_norm.gamma.size() ? norm(h, embedding_norm) : h;
  }

  // LayerNorm (Marian, BART) or T5's RMS norm (weight only): [T, d].
  Matrix norm(const ConstMatrixRef& x, const NormWeights& n) const {
    return c_.t5() ? rms_norm(x, n.gamma, c_.norm_eps) : layer_norm(x, n.gamma, n.beta, c_.norm_eps);
  }

  // Attention of queries from x [T, d] over keys k and values v (H heads of
  // [Tk, d_k], already projected), T5's scores unscaled and plus `position_bias` (H of
  // [T, Tk], or none); the heads' weights [H, T, Tk] go to `weights` at layer
  // `layer`; the traced head (if any) is traced in full into `trace`, the
  // ablated heads knocked out before the output projection. -> out_proj(concat) [T, d].
  Matrix attend(const ConstMatrixRef& x, const HeadRows& k, const HeadRows& v, const AttentionWeights& a,
                bool causal, int layer,
                std::vector<float>& weights, const LayerHeads& asked, std::optional<HeadTrace>& trace,
                const std::vector<Matrix>& position_bias = {}) const {
    AttentionOptions options;
    options.causal = causal;
    options.scale = !c_.t5();  // T5 folds 1/√d_k into its initialisation
    const Matrix q = linear(x, a.q.w, a.q.b);  // [T, H·d_k]
    Matrix concat;                             // [T, H·d_v]
    if (q.rows() <= gemm::kVectorRows && asked.traced < 0 && position_bias.empty()) {  // a decoding step
      concat.resize(q.rows(), heads_ * v.width);
      attend_heads_into(q, k, v, heads_, options, weights.data() + static_cast<std::size_t>(layer) * heads_ * q.rows() * k.rows,
                        concat);  // the weights straight into [L, H, T, Tk]
    } else {
      MultiHeadTrace t = attend_heads(q, k, v, heads_, options, TraceLevel::weights_only, asked.traced, position_bias);
      store_head_weights(t, layer, weights);  // [T, Tk] of each head into [L, H, T, Tk]
      if (asked.traced >= 0) trace = std::move(t.heads[static_cast<std::size_t>(asked.traced)]);
      concat = std::move(t.concat);
    }
    for (const int h : asked.ablated) ablate_head_output(concat, h, heads_, asked.ablation);
    return linear(concat, a.out.w, a.out.b);  // [T, d]
  }

  // Self-attention of x [T, d]; with a cache (layer `layer`'s keys and values of the tokens before x,
  // appended to here) the queries attend to the cached tokens and to themselves, read in place.
  Matrix self_attention(const ConstMatrixRef& x, const AttentionWeights& a, bool causal, int layer,
                        std::vector<float>& weights, const LayerHeads& asked, std::optional<HeadTrace>& trace,
                        const std::vector<Matrix>& position_bias, DecoderCache* cache = nullptr) const {
    const Matrix k = linear(x, a.k.w, a.k.b), v = linear(x, a.v.w, a.v.b);  // [T, H·d_k]
    const HeadRows keys = HeadRows::side_by_side(k, heads_), values = HeadRows::side_by_side(v, heads_);
    if (!cache) return attend(x, keys, values, a, causal, layer, weights, asked, trace, position_bias);
    cache->append(layer, keys, values);  // H heads of [T_past + T, d_k]
    return attend(x, cache->layer_keys(layer), cache->layer_values(layer), a, causal, layer, weights, asked, trace,
                  position_bias);
  }

  // fc2(act(fc1(x))), or T5's gated fc2(act(fc1(x)) ⊙ fc1_up(x)): [T, d] -> [T, d].
  Matrix feed_forward(const ConstMatrixRef& x, const Seq2SeqLayerWeights& l) const {
    Matrix inner = linear(x, l.fc1.w, l.fc1.b);  // [T, inner]
    activate(inner, c_.activation);
    if (!l.fc1_up.w.empty()) inner.array() *= linear(x, l.fc1_up.w, l.fc1_up.b).array();  // [T, inner]
    return linear(inner, l.fc2.w, l.fc2.b);      // [T, d]
  }

  // One sub-layer around x [T, d]: post-norm x = norm(x + f(x)) (Marian,
  // BART) or pre-norm x = x + f(norm(x)) (T5).
  template <typename SubLayer>
  Matrix residual(const Matrix& x, const NormWeights& n, SubLayer f) const {
    if (c_.t5()) return x + f(norm(x, n));
    return norm(x + f(x), n);
  }

 private:
  const Seq2SeqConfig& c_;
  const int heads_;
};

}  // namespace

bool mean_ablates_decoder_heads(const ForwardRequest& request) {
  if (request.ablation != AblationMode::mean) return false;
  for (const ForwardRequest::Head& h : request.ablate) {
    if (h.part != AttentionPart::encoder) return true;
  }
  return false;
}

PartShape part_shape(const Seq2SeqConfig& c, AttentionPart part) {
  return part == AttentionPart::encoder ? PartShape{c.encoder_layers, c.encoder_heads} : PartShape{c.decoder_layers, c.decoder_heads};
}

// ---------------------------------------------------------------- recipes

Seq2SeqResult Seq2SeqModel::forward(const ForwardRequest& request) const {
  ForwardRequest options = request;
  options.ids.clear();
  options.source_ids.clear();
  Seq2SeqResult out;
  out.encoder = encode(request.source_ids, options);
  out.decoder = decode(out.encoder,
                       request.ids.empty() ? std::vector<std::int32_t>{config_.decoder_start_token_id} : request.ids, options);
  return out;
}

// Encoders: embed (Marian, BART: ·√d, positions, BART's norm; T5: the tokens
// alone), then layers of self-attention and feed-forward, each a residual
// sub-layer (post-LN, or T5's pre-RMS norm with its position bias in every
// layer's scores and a final norm).
EncoderOutput Seq2SeqModel::encode(const std::vector<std::int32_t>& source_ids, const ForwardRequest& request) const {
  check_no_ids(request);
  check_ids(config_, source_ids, "source");
  check_request(config_, request);
  const Seq2SeqConfig& c = config_;
  const Seq2SeqWeights& w = weights_;
  const int S = static_cast<int>(source_ids.size()), H = c.encoder_heads;
  const Side side(c, H);
  EncoderOutput out;
  out.tokens = S;
  out.attentions.resize(static_cast<std::size_t>(c.encoder_layers) * H * S * S);
  Matrix h = side.embed(source_ids, w.encoder_embedding, w.encoder_positions, w.encoder_embedding_norm);  // [S, d]
  const std::vector<Matrix> position_bias =
      c.t5() ? relative_position_bias(w.encoder_position_bias, S, S, 0, true, c.relative_max_distance)
             : std::vector<Matrix>();  // H of [S, S]
  for (int l = 0; l < c.encoder_layers; ++l) {
    const Seq2SeqLayerWeights& b = w.encoder[static_cast<std::size_t>(l)];
    const LayerHeads asked = layer_heads(request, AttentionPart::encoder, l);
    h = side.residual(h, b.self_attn_norm, [&](const Matrix& x) {
      return side.self_attention(x, b.self_attn, false, l, out.attentions, asked, out.trace, position_bias);
    });                                                                                           // [S, d]
    h = side.residual(h, b.final_norm, [&](const Matrix& x) { return side.feed_forward(x, b); });  // [S, d]
  }
  if (c.t5()) h = side.norm(h, w.encoder_final_norm);  // [S, d]
  for (const Seq2SeqLayerWeights& b : w.decoder) {  // every decoder layer's cross keys and values, once
    out.cross_keys.push_back(linear(h, b.cross_attn.k.w, b.cross_attn.k.b));    // [S, d]
    out.cross_values.push_back(linear(h, b.cross_attn.v.w, b.cross_attn.v.b));  // [S, d]
  }
  out.memory = std::move(h);
  return out;
}

DecoderOutput Seq2SeqModel::decode(const EncoderOutput& encoded, const std::vector<std::int32_t>& decoder_ids,
                                   const ForwardRequest& request) const {
  return run_decoder(encoded, decoder_ids, request, nullptr);
}

DecoderOutput Seq2SeqModel::decode(const EncoderOutput& encoded, const std::vector<std::int32_t>& decoder_ids,
                                   const ForwardRequest& request, DecoderCache& cache) const {
  if (request.token_loss) bad_request("the per-token loss reads a whole target: decode it without a cache");
  if (mean_ablates_decoder_heads(request)) {
    bad_request("mean ablation averages a decoder head over the whole target, which a cached step never sees at "
                "once; decode without a cache, or use zero ablation");
  }
  if (!cache.ready_for(config_.decoder_layers)) bad_request("the decoder cache belongs to another model");
  return run_decoder(encoded, decoder_ids, request, &cache);
}

// Decoders: embed, then layers of causal self-attention, cross-attention to
// the encoder's output and feed-forward, each a residual sub-layer (post-LN,
// or T5's pre-RMS norm with the causal position bias in the self-attention
// scores and a final norm); logits = output_logits(h).
DecoderOutput Seq2SeqModel::run_decoder(const EncoderOutput& encoded, const std::vector<std::int32_t>& decoder_ids,
                                        const ForwardRequest& request, DecoderCache* cache) const {
  const int past = cache ? cache->length() : 0;
  check_no_ids(request);
  check_ids(config_, decoder_ids, "decoder", past);
  check_request(config_, request);
  const Seq2SeqConfig& c = config_;
  const Seq2SeqWeights& w = weights_;
  if (static_cast<int>(encoded.cross_keys.size()) != c.decoder_layers) {
    bad_request("the encoder output belongs to another model");
  }
  const int T = static_cast<int>(decoder_ids.size()), S = encoded.tokens, H = c.decoder_heads;
  const Side side(c, H);
  DecoderOutput out;
  out.tokens = T;
  out.keys = past + T;
  out.self_attentions.resize(static_cast<std::size_t>(c.decoder_layers) * H * T * out.keys);
  out.cross_attentions.resize(static_cast<std::size_t>(c.decoder_layers) * H * T * S);
  Matrix h = side.embed(decoder_ids, w.decoder_embedding, w.decoder_positions, w.decoder_embedding_norm, past);  // [T, d]
  if (request.hidden_states) out.hidden_states.push_back(h);
  const std::vector<Matrix> position_bias =
      c.t5() ? relative_position_bias(w.decoder_position_bias, T, past + T, past, false, c.relative_max_distance)
             : std::vector<Matrix>();  // H of [T, past + T]
  for (int l = 0; l < c.decoder_layers; ++l) {
    const Seq2SeqLayerWeights& b = w.decoder[static_cast<std::size_t>(l)];
    const std::size_t i = static_cast<std::size_t>(l);
    h = side.residual(h, b.self_attn_norm, [&](const Matrix& x) {
      return side.self_attention(x, b.self_attn, true, l, out.self_attentions, layer_heads(request, AttentionPart::decoder, l),
                                 out.trace, position_bias, cache);
    });  // [T, d]
    h = side.residual(h, b.cross_attn_norm, [&](const Matrix& x) {
      return side.attend(x, HeadRows::side_by_side(encoded.cross_keys[i], H), HeadRows::side_by_side(encoded.cross_values[i], H),
                         b.cross_attn, false, l, out.cross_attentions, layer_heads(request, AttentionPart::cross, l), out.trace);
    });  // [T, d]
    h = side.residual(h, b.final_norm, [&](const Matrix& x) { return side.feed_forward(x, b); });  // [T, d]
    if (request.hidden_states) out.hidden_states.push_back(h);
  }
  if (c.t5()) {
    h = side.norm(h, w.decoder_final_norm);  // [T, d]
    if (request.hidden_states) out.hidden_states.back() = h;
  }
  out.prediction_positions = resolve_prediction_positions(request, T);
  const std::vector<int>& positions = out.prediction_positions;  // [P]
  Matrix rows(static_cast<Eigen::Index>(positions.size()), h.cols());  // [P, d] the positions' hidden states
  for (std::size_t i = 0; i < positions.size(); ++i) rows.row(static_cast<Eigen::Index>(i)) = h.row(positions[i]);
  out.logits = output_logits(rows);  // [P, V]
  for (Eigen::Index r = 0; (request.top_k > 0 || request.token_loss) && r < out.logits.rows(); ++r) {
    const float* row = out.logits.row(r).data();
    const SoftmaxNorm norm = softmax_norm(row, c.vocab_size);
    const int p = positions[static_cast<std::size_t>(r)];
    if (request.top_k > 0) out.top_k.push_back(top_k_of(row, c.vocab_size, request.top_k, norm));
    if (request.token_loss && p + 1 < T) out.token_loss.push_back(token_loss_of(row, norm, decoder_ids[static_cast<std::size_t>(p + 1)]));
  }
  return out;
}

Matrix Seq2SeqModel::output_logits(const ConstMatrixRef& x, bool final_norm_applied) const {
  if (x.cols() != config_.width) {
    bad_request("a residual stream of width " + std::to_string(x.cols()) + " for a model of width " +
                std::to_string(config_.width));
  }
  if (!config_.t5()) {  // [N, V] x·Eᵀ (or x·lm_headᵀ untied) + final_logits_bias
    return linear(x, weights_.output_embedding.empty() ? weights_.decoder_embedding : weights_.output_embedding,
                  weights_.final_logits_bias);
  }
  Matrix h = final_norm_applied ? Matrix(x) : rms_norm(x, weights_.decoder_final_norm.gamma, config_.norm_eps);  // [N, d]
  if (!weights_.output_embedding.empty()) return linear(h, weights_.output_embedding, RowVector());  // [N, V]
  h *= 1.0f / std::sqrt(static_cast<float>(config_.width));  // the tied table read at d_model^-0.5
  return linear(h, weights_.decoder_embedding, RowVector());  // [N, V]
}

Matrix Seq2SeqModel::position_bias_by_distance(AttentionPart part, int span, std::vector<int>& buckets) const {
  if (!config_.t5()) bad_request("model_type \"" + config_.model_type + "\" has no relative position bias");
  if (part != AttentionPart::encoder && part != AttentionPart::decoder) {
    bad_request("only the encoder's and the decoder's self-attention have a position bias");
  }
  if (span < 0 || span > kMaxRelativeSpan) bad_request("the span of distances must be within 0.." + std::to_string(kMaxRelativeSpan));
  const bool encoder = part == AttentionPart::encoder;
  const Matrix& table = encoder ? weights_.encoder_position_bias : weights_.decoder_position_bias;  // [buckets, H]
  Matrix bias(table.cols(), 2 * span + 1);  // [H, 2·span + 1]
  buckets.assign(static_cast<std::size_t>(2 * span + 1), 0);
  for (int r = -span; r <= span; ++r) {
    const int b = relative_position_bucket(r, encoder, config_.relative_buckets, config_.relative_max_distance);
    buckets[static_cast<std::size_t>(r + span)] = b;
    bias.col(r + span) = table.row(b).transpose();
  }
  return bias;
}

std::int64_t Seq2SeqWeights::parameter_count() const {
  std::int64_t n = encoder_embedding.elements() + final_logits_bias.size() + output_embedding.elements();
  n += encoder_position_bias.size() + decoder_position_bias.size();
  if (decoder_embedding.data() != encoder_embedding.data()) n += decoder_embedding.elements();
  n += encoder_positions.elements() + decoder_positions.elements();  // as Hugging Face counts them (Marian's are fixed)
  auto linear = [&n](const LinearWeights& l) { n += l.w.elements() + l.b.size(); };
  auto norm = [&n](const NormWeights& x) { n += x.gamma.size() + x.beta.size(); };
  for (const NormWeights* x : {&encoder_embedding_norm, &decoder_embedding_norm, &encoder_final_norm, &decoder_final_norm}) norm(*x);
  for (const auto* side : {&encoder, &decoder}) {
    for (const Seq2SeqLayerWeights& l : *side) {
      for (const AttentionWeights* a : {&l.self_attn, &l.cross_attn}) {
        for (const LinearWeights* p : {&a->q, &a->k, &a->v, &a->out}) linear(*p);
      }
      for (const LinearWeights* p : {&l.fc1, &l.fc1_up, &l.fc2}) linear(*p);
      for (const NormWeights* x : {&l.self_attn_norm, &l.cross_attn_norm, &l.final_norm}) norm(*x);
    }
  }
  return n;
}

Seq2SeqWeights load_seq2seq_weights(const Seq2SeqConfig& c, const Checkpoint& checkpoint) {
  return c.t5() ? load_t5_weights(c, checkpoint) : load_marian_bart_weights(c, checkpoint);
}

Seq2SeqModel Seq2SeqModel::from_buffers(std::string_view config_json, std::string_view safetensors) {
  return from_checkpoint(config_json, Checkpoint::single({kSafetensorsFile, safetensors, nullptr}));
}

Seq2SeqModel Seq2SeqModel::from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint) {
  Seq2SeqConfig config = parse_seq2seq_config(config_json);
  Seq2SeqWeights weights = load_seq2seq_weights(config, checkpoint);
  pack_for_products(weights);
  return Seq2SeqModel(std::move(config), std::move(weights));
}

void Seq2SeqModel::check_vocabulary(std::int32_t tokenizer_vocab_size) const {
  check_vocabulary_fits(tokenizer_vocab_size, config_.vocab_size);
}

}  // namespace attnplay
