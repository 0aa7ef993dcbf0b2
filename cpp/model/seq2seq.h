// An encoder-decoder transformer loaded from a Hugging Face checkpoint
// (Marian / opus-mt, BART, T5 and mT5, model/config.h's Seq2SeqConfig) and its traced
// forward pass: the encoder reads the source ids once, the decoder reads the
// target ids so far, attending to itself (causal) and, in every layer, to the
// encoder's output (cross-attention). Kept: encoder self-attention
// [L_enc, H, S, S], decoder self-attention [L_dec, H, T, T] and
// cross-attention [L_dec, H, T, S], the very arrays the computation used, and
// the logits. encode() and decode() are separate so that decoding step by step
// encodes the source once (the cross-attention keys and values of every layer
// are computed there, once). A pass is asked for with model/model.h's
// ForwardRequest, every model's request: one head of any part may be traced
// in full (its q and k for the neuron view), heads of any part knocked out
// (ablation), and the decoder's top-k and teacher-forced per-token loss kept.
// Not here: tokenization, search (model/translate.h), reading files.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "attention/attention.h"
#include "model/config.h"
#include "model/model.h"
#include "model/weights.h"
#include "safetensors/checkpoint.h"

namespace attnplay {

// q, k, v and output projections of one attention sub-layer (nn.Linear;
// Marian's and BART's with biases, T5's without).
struct AttentionWeights {
  LinearWeights q, k, v, out;
};

// One encoder or decoder layer: self-attention, for the decoder
// cross-attention, then the feed-forward fc1 → activation → fc2, each with its
// norm (after it in Marian and BART, before it in T5).
struct Seq2SeqLayerWeights {
  AttentionWeights self_attn;
  NormWeights self_attn_norm;
  AttentionWeights cross_attn;  // encoder_attn / EncDecAttention (decoder layers only)
  NormWeights cross_attn_norm;
  LinearWeights fc1, fc2;       // T5: wi (wi_0 when gated), wo
  LinearWeights fc1_up;         // T5's gated feed-forward: wi_1, multiplied by act(wi_0·x); else empty
  NormWeights final_norm;       // the feed-forward's norm
};

struct Seq2SeqWeights {
  WeightMatrix encoder_embedding;   // [V, d] (the shared table when shared)
  WeightMatrix decoder_embedding;   // [V, d]; the output layer is tied to it
  WeightMatrix encoder_positions;   // [P, d] Marian: stored or computed sinusoids; BART: [P + 2, d] learned
  WeightMatrix decoder_positions;
  NormWeights encoder_embedding_norm, decoder_embedding_norm;  // BART layernorm_embedding; empty for Marian
  std::vector<Seq2SeqLayerWeights> encoder, decoder;
  RowVector final_logits_bias;      // [V]
  // T5: each side's relative position bias [buckets, H] (its block 0's, which
  // every layer of the side adds) and its final_layer_norm.
  Matrix encoder_position_bias, decoder_position_bias;
  NormWeights encoder_final_norm, decoder_final_norm;
  WeightMatrix output_embedding;    // [V, d] an untied lm_head (any family); empty: the decoder's embeddings
  std::int64_t parameter_count() const;
};

// Reads every weight of a checkpoint by its Hugging Face name, with the
// reader of its family: Marian and BART (model/families/marian_bart.cpp), T5
// (model/families/t5.cpp). Throws std::invalid_argument with the tensor's name
// for missing, unexpected or misshapen tensors.
Seq2SeqWeights load_seq2seq_weights(const Seq2SeqConfig& config, const Checkpoint& checkpoint);
Seq2SeqWeights load_marian_bart_weights(const Seq2SeqConfig& config, const Checkpoint& checkpoint);
Seq2SeqWeights load_t5_weights(const Seq2SeqConfig& config, const Checkpoint& checkpoint);

// The widest span of distances position_bias_by_distance draws.
constexpr int kMaxRelativeSpan = 4096;

// A part's layers and heads (model/model.h's AttentionPart): the encoder's,
// or the decoder's for decoder self-attention and cross-attention.
struct PartShape {
  int layers = 0, heads = 0;
};
PartShape part_shape(const Seq2SeqConfig& config, AttentionPart part);

// The encoder's output and what the decoder needs from it.
struct EncoderOutput {
  int tokens = 0;                   // S
  std::vector<float> attentions;    // [L_enc, H, S, S]
  Matrix memory;                    // [S, d] the last layer's output
  std::vector<Matrix> cross_keys, cross_values;  // per decoder layer: [S, d] k_proj(memory), v_proj(memory)
  std::optional<HeadTrace> trace;  // the encoder head asked for: q, k [S, d_k], scores, weights, ...
};

struct DecoderOutput {
  int tokens = 0;                        // T (the tokens run)
  int keys = 0;                          // the self-attention keys of each row: T, or cached + T
  std::vector<float> self_attentions;    // [L_dec, H, T, keys]
  std::vector<float> cross_attentions;   // [L_dec, H, T, S]
  Matrix logits;                         // [P, V] at prediction_positions (every position unless asked otherwise)
  std::optional<HeadTrace> trace;        // the decoder head asked for: self q, k [T, d_k]; cross q [T, d_k], k [S, d_k]
  std::vector<Matrix> hidden_states;     // asked for: L_dec + 1 of [T, d] (the last one gives the logits; T5: after the final norm)
  std::vector<TopK> top_k;               // asked for: one per prediction position
  std::vector<int> prediction_positions; // [P] the positions of the logits' and top-k's rows, resolved
  std::vector<float> token_loss;         // asked for: [T - 1]
};

// The decoder's self-attention keys and values of every layer for the target
// tokens run so far: the cache of step-by-step decoding, the causal families'
// KvCache (model/model.h), layer l's [T_past, d] read in place (the
// cross-attention keys and values are the encoding's).
using DecoderCache = KvCache;

// Whether the request mean-ablates a decoder or cross head: that mean spans the
// whole target, which a step decoded against a DecoderCache never sees at once.
bool mean_ablates_decoder_heads(const ForwardRequest& request);

// Both sides of one pass (Seq2SeqModel::forward).
struct Seq2SeqResult {
  EncoderOutput encoder;  // encoder attentions [L_enc, H, S, S]
  DecoderOutput decoder;  // decoder [L_dec, H, T, T] and cross [L_dec, H, T, S] attentions, logits, ...
};

class Seq2SeqModel {
 public:
  // From the bytes of config.json and model.safetensors (copied in their stored dtype).
  static Seq2SeqModel from_buffers(std::string_view config_json, std::string_view safetensors);
  // From config.json and a checkpoint; weights it owns may be viewed in place;
  // the matrices the passes multiply by are packed for products when they fit
  // model/weights.h's budget (as for the other families).
  // Throws std::invalid_argument naming the tensor or config key at fault.
  static Seq2SeqModel from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint);

  const Seq2SeqConfig& config() const { return config_; }
  std::int64_t parameter_count() const { return weights_.parameter_count(); }
  // Throws unless a tokenizer of this many entries fits the embedding matrix.
  void check_vocabulary(std::int32_t tokenizer_vocab_size) const;

  // The encoder over request.source_ids [S] (usually ending in </s>), then
  // the decoder over request.ids [T] (the start token, then the target so
  // far; empty: the start token alone). The request is model/model.h's
  // ForwardRequest, as for every model: its heads name their part (encoder,
  // decoder or cross); it may trace one head, knock heads out, keep the
  // decoder's hidden states, top-k and teacher-forced per-token loss [T - 1],
  // or the last position's logits only. Type ids, padding masks and mask
  // positions are BERT's and are refused. Throws std::invalid_argument for no
  // source ids, ids outside the vocabulary, more than the model's positions, a
  // traced or ablated head of any part out of range or of no part.
  Seq2SeqResult forward(const ForwardRequest& request) const;

  // The two halves of forward(), for decoding step by step: the source is
  // encoded once, then each step decodes against that encoding. `request` is
  // a ForwardRequest without ids (they are the arguments here); encode() reads
  // its encoder heads, decode() its decoder and cross heads and the rest.
  EncoderOutput encode(const std::vector<std::int32_t>& source_ids, const ForwardRequest& request = {}) const;
  DecoderOutput decode(const EncoderOutput& encoded, const std::vector<std::int32_t>& decoder_ids,
                       const ForwardRequest& request = {}) const;
  // The same for decoder_ids continuing the tokens in `cache` (at positions
  // cache.length()...): they attend to the cached self-attention keys and
  // values without recomputing them, and theirs are appended, so a decoding
  // step costs one token's work. Self-attentions are [L_dec, H, T,
  // cache.length() + T]. No token loss (it reads a whole target) and no mean
  // ablation of a decoder or cross head (its mean spans the whole target);
  // throws std::invalid_argument for those and for a cache of another model.
  DecoderOutput decode(const EncoderOutput& encoded, const std::vector<std::int32_t>& decoder_ids,
                       const ForwardRequest& request, DecoderCache& cache) const;
  // The output layer on any decoder residual stream x [N, d] (the logit
  // lens): x·Eᵀ + final_logits_bias, E the decoder's (tied) embeddings -> [N, V].
  // T5: the decoder's final norm first unless `final_norm_applied` (the last
  // layer's hidden state has it), then x·d_model^-0.5·Eᵀ, or x·lm_headᵀ untied.
  Matrix output_logits(const ConstMatrixRef& x, bool final_norm_applied = true) const;
  // T5's learned position bias of a side (AttentionPart encoder or decoder;
  // cross-attention has none): [H, 2·span + 1], the bias each head adds to
  // the score of a key at distance key - query = -span..span, and
  // `buckets` [2·span + 1] the bucket each distance reads. Throws for a model
  // without relative positions.
  Matrix position_bias_by_distance(AttentionPart part, int span, std::vector<int>& buckets) const;

 private:
  Seq2SeqModel(Seq2SeqConfig config, Seq2SeqWeights weights) : config_(std::move(config)), weights_(std::move(weights)) {}
  DecoderOutput run_decoder(const EncoderOutput& encoded, const std::vector<std::int32_t>& decoder_ids,
                            const ForwardRequest& request, DecoderCache* cache) const;  // cache may be null
  Seq2SeqConfig config_;
  Seq2SeqWeights weights_;
};

}  // namespace attnplay
