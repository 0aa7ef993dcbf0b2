// A transformer loaded from a Hugging Face checkpoint (GPT-2, BERT, Llama,
// Mistral, Qwen2, Qwen3, GPT-NeoX; see model/config.h), and its traced
// forward pass over token ids: attention weights of every layer and head,
// taken from the arrays the computation itself used; on request one head's
// full trace (q, k, v, pre-softmax scores; with RoPE also q and k before the
// rotation and the rotation's frequencies), the hidden states, the logits;
// the causal families' next-token distribution at every position, BERT's
// predictions at masked positions; heads knocked out (ablation) and the loss of
// each token of the text.
// Not here: tokenization (tokenizer/), reading files (model/directory.h, native
// only), bindings or output formats.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attention/attention.h"
#include "image/picture.h"
#include "model/config.h"
#include "model/weights.h"

namespace attnplay {

// Throws std::invalid_argument(message): a request that a model (this one or
// the encoder-decoder of model/seq2seq.h) cannot run.
[[noreturn]] void bad_request(const std::string& message);

// Which attention of a model a head belongs to. A decoder-only or encoder-only
// model has one (self); an encoder-decoder (model/seq2seq.h) has three, each
// with its own heads: the encoder's self-attention, the decoder's
// self-attention, and the decoder's attention over the encoder's output (cross).
enum class AttentionPart { self, encoder, decoder, cross };

// "encoder", "decoder", "cross" (as JSON, JS, links and the CLI name an
// encoder-decoder's parts; "self" for the one attention of the others); and
// back from the three names (nullopt for another: a head of the one
// attention names no part).
const char* part_name(AttentionPart part);
std::optional<AttentionPart> part_from_name(std::string_view name);

// What one forward pass runs and keeps: the one request of every model, the
// encoder-decoders' too (model/seq2seq.h). The bindings read it from JS in
// request_from_js (bindings/request_js.h), the CLI from its flags.
struct ForwardRequest {
  std::vector<std::int32_t> ids;          // [T] token ids (encoder-decoders: the decoder's, start token first)
  PixelValues pixels;                     // vision transformers: the picture, preprocessed (then ids stay empty)
  std::vector<std::int32_t> source_ids;   // [S] encoder-decoders: the source's ids (others: must be empty)
  std::vector<std::int32_t> type_ids;     // [T] BERT segment ids; empty = all 0 (causal models: must be empty or 0)
  std::vector<std::uint8_t> attention_mask;  // [T] 1 = attend, 0 = padding key; empty = all 1
  struct Head {
    int layer = 0;
    int head = 0;
    AttentionPart part = AttentionPart::self;  // encoder-decoders: encoder, decoder or cross
  };
  std::optional<Head> trace;              // keep q, k, v and scores of this head
  bool hidden_states = false;             // keep the residual stream after every layer
  bool logits = false;                    // keep logits (causal: [P, V] at prediction_positions; BERT: [M, V] at mask_positions;
                                          // vision classifiers: [1, labels])
  int top_k = 0;                          // top-k predictions (causal: prediction_positions; BERT: mask_positions; vision: labels)
  // Causal models and encoder-decoders' decoders: the positions whose logits
  // and top-k are computed, each predicting the token after it (a negative p
  // counts from the end: -1 is the last); empty = every position. The output
  // layer runs at these rows only: a generation step asks for the last, the
  // page for the token whose predictions it shows (a 262,144-token
  // vocabulary costs 336 MFLOP a row). The per-token loss needs every position.
  std::vector<int> prediction_positions;
  std::vector<int> mask_positions;        // BERT: positions to predict (needs the MLM head)
  // Heads knocked out (layer, query head; with GQA the shared key/value head
  // serves the other query heads unchanged). A head's output is its slice
  // z = A·V [T, d_k] of the concatenated heads, before the output projection;
  // zero ablation sets z to 0, mean ablation sets every row of z to
  // (1/T)·Σ_t z[t], the mean over this pass's T positions (all of them, also
  // later ones in a causal model; an encoder head's over the S source
  // tokens). The head's own attention weights are reported as computed;
  // later layers see the ablated residual stream.
  std::vector<Head> ablate;
  AblationMode ablation = AblationMode::zero;
  // Per-token loss, -log p(true token): causal and encoder-decoders: [T - 1],
  // position i predicting ids[i + 1] (teacher-forced); BERT: [M], mask
  // position m predicting mask_labels[m].
  bool token_loss = false;
  std::vector<std::int32_t> mask_labels;  // BERT: [M] the true token at each mask position
};

// The k most probable tokens of a softmax over the vocabulary, best first.
struct TopK {
  std::vector<std::int32_t> ids;
  std::vector<float> probabilities;
};

// The traced head's queries and keys before the rotary embedding, and the
// rotation that turned them into the trace's q and k (RoPE families only).
// Pair i of a head, dims (i, i + r/2) for i < r/2 (half-split form), at
// position p turns by the angle p·inverse_frequencies[i]; dims r..d_k pass
// unchanged (partial rotary, GPT-NeoX).
struct RotaryTrace {
  Matrix q;  // [T, d_k] the head's queries before RoPE (after q norm, Qwen3)
  Matrix k;  // [T, d_k] its key head's keys before RoPE (after k norm), the tokens run only (not cached keys)
  std::vector<double> inverse_frequencies;  // [r/2] θ_i, frequency scaling applied
  int first_position = 0;                   // position of row 0 (the tokens already in a KV cache)
  double attention_factor = 1.0;            // yarn, longrope: cos and sin scaled by it (q after = rotated · factor)
};

struct ForwardResult {
  int layers = 0, heads = 0, tokens = 0;  // L, H, T (the tokens run)
  int keys = 0;                           // Tk: keys each row covers (T, or cached + T)
  std::vector<float> attentions;          // [L, H, T, Tk] row-major, rows sum to 1
  std::optional<HeadTrace> trace;         // full trace of the requested head (scores, scaled, masked, ...)
  std::optional<RotaryTrace> rotary;      // RoPE families: that head's q and k before the rotation
  // L + 1 matrices [T, d] as in Hugging Face: the embeddings, then the output
  // of each layer (causal families: the last one after the final norm).
  std::vector<Matrix> hidden_states;
  Matrix logits;                          // [P, V] (causal) or [M, V] (BERT), when requested
  std::vector<TopK> top_k;                // one per prediction position (causal) or mask position (BERT)
  std::vector<int> prediction_positions;  // [P] causal: the positions of the logits' and top-k's rows, resolved
  std::vector<float> token_loss;          // [T - 1] (causal) or [M] (BERT), when requested

  // Weight of (layer, head, query, key).
  float attention(int layer, int head, int query, int key) const {
    return attentions[((static_cast<std::size_t>(layer) * heads + head) * tokens + query) * keys + key];
  }
};

// The tokens a request runs: its ids, or for a vision transformer the
// learned tokens and the patches of its picture.
int request_tokens(const ModelConfig& config, const ForwardRequest& request);

// A request's prediction_positions over a pass of `tokens` positions:
// negative ones counted from the end, every position when none is given.
// Throws std::invalid_argument for one outside the pass or out of order, and
// for a per-token loss (which needs every position) with a subset.
std::vector<int> resolve_prediction_positions(const ForwardRequest& request, int tokens);

// The keys and values of every layer for the tokens run so far: the cache of
// incremental decoding (causal families, and the encoder-decoders' decoders).
// Keys after q/k norm and RoPE, exactly as attention used them. Layer l keeps
// each key/value head's rows together: head h's are rows [h·capacity,
// h·capacity + length()) of keys[l] and values[l], so a decoding step reads
// each head's keys and values front to back, in place (layer_keys,
// layer_values). The matrices are first sized for `reserved` rows a head (a
// generation reserves its prompt and every token to come) and grow by
// doubling past them, so a step copies nothing already cached.
struct KvCache {
  std::vector<Matrix> keys, values;  // [KV·capacity, d_k] and [KV·capacity, d_v] each
  std::vector<int> filled;           // rows of each layer in use
  int reserved = 0;                  // rows a head each layer's first matrices hold (at least)

  int length() const { return filled.empty() ? 0 : filled.front(); }
  // A new cache takes `layers` layers; false when it holds another number.
  bool ready_for(int layers);
  // Appends each head's rows of k [T, d_k] and v [T, d_v] to layer `layer`.
  void append(int layer, const HeadRows& k, const HeadRows& v);
  // Layer `layer`'s keys and values so far, in place: KV heads of [length, d_k] and [length, d_v].
  HeadRows layer_keys(int layer) const { return rows_of(keys, layer); }
  HeadRows layer_values(int layer) const { return rows_of(values, layer); }

 private:
  HeadRows rows_of(const std::vector<Matrix>& blocks, int layer) const;
  std::vector<int> heads_;  // key/value heads of each layer, from its first append
};

class Model {
 public:
  // From the bytes of config.json and model.safetensors (weights are copied
  // in their stored dtype; the bytes need not outlive the model). Throws
  // std::invalid_argument with a specific message for malformed input.
  static Model from_buffers(std::string_view config_json, std::string_view safetensors);
  // From config.json and a checkpoint (one file or shards); weights the
  // checkpoint owns may be viewed in place rather than copied.
  static Model from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint);

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  std::int64_t parameter_count() const { return weights_.parameter_count(); }
  bool has_mlm_head() const { return weights_.has_mlm_head; }

  // Throws unless a tokenizer of this many entries fits the embedding matrix.
  void check_vocabulary(std::int32_t tokenizer_vocab_size) const;

  // Runs every layer over the request's tokens. Throws std::invalid_argument
  // for ids outside the vocabulary, more tokens than positions, bad type ids,
  // trace or mask positions out of range.
  ForwardResult forward(const ForwardRequest& request) const;

  // Runs request.ids as the continuation of the tokens in `cache` (at
  // positions cache.length()...), attending to the cached keys and values
  // without recomputing them, and appends the new ones: each generated token
  // costs one token's work. Causal families only; no type ids, padding mask or
  // mask positions; zero ablation only (the mean over positions needs the
  // whole text in one pass). Attentions are [L, H, T, cache.length() + T].
  ForwardResult forward(const ForwardRequest& request, KvCache& cache) const;

  // The output head applied to any residual stream x [N, d] (the logit lens):
  // causal families the final norm (skipped when `final_norm_applied`, as for
  // their last hidden state; post-LN OPT has none), OPT's project_out where it
  // has one, and the unembedding; the encoders the masked-LM head
  // (dense, activation, LayerNorm, decoder; throws std::invalid_argument
  // without it). The top-k of the softmax of each row, in row order.
  std::vector<TopK> read_out(const Matrix& x, bool final_norm_applied, int k) const;

 private:
  ForwardResult run(const ForwardRequest& request, KvCache* cache) const;  // cache may be null
  // Packs the weights for products (pack_for_products) when they fit its budget.
  Model(ModelConfig config, ModelWeights weights);
  ModelConfig config_;
  ModelWeights weights_;
};

}  // namespace attnplay
