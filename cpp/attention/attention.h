// Scaled dot-product attention with every intermediate kept, multi-head
// attention (split, per-head attention, concat, output projection) and the
// parameter-free self-attention the tutorials start from.
// Shapes: T = tokens (queries Tq, keys Tk), d = model width, H = heads,
// d_k = key/query width per head, d_v = value width per head.
// Knocking a head out (ablation) rewrites its slice of the concatenated output.
// Not here: positional encodings (positional.h), layer norm / GELU (nn/).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "tensor/tensor.h"

namespace attnplay {

struct AttentionOptions {
  bool scale = true;         // divide scores by √d_k (Vaswani et al.)
  int scale_width = 0;       // with scale: divide by √scale_width instead (Gemma 2/3's query_pre_attn_scalar); 0: d_k
  float temperature = 1.0f;  // divide scores by this as well; must be > 0
  // Gemma 2's attention-logit softcapping: scaled scores s become cap·tanh(s / cap) before the mask; 0: none.
  float softcap = 0.0f;
  // [Tq, Tk] added to the scaled scores before the mask (T5's relative
  // position bias; attend_heads takes one per head); null: none. Not owned.
  const Matrix* score_bias = nullptr;
  // Query i may only see keys j <= i. With fewer queries than keys (Tq < Tk,
  // a cache of earlier keys) the queries are the last Tq positions: query i
  // sits at position Tk - Tq + i.
  bool causal = false;
  // With causal: query at position p sees only keys j with p - j < window
  // (a sliding window, Mistral); 0 = no window.
  int window = 0;
  // Optional padding mask over keys, [Tk]: 1 = real token, 0 = padding (never
  // attended to). Empty means no padding.
  std::vector<std::uint8_t> key_mask;
};

// How much of the computation a trace keeps. `full` keeps q, k, v, scores,
// scaled and masked scores for explanation views; `weights_only` keeps the
// weights and output (the runtime's mode: nothing copied of q, k and v, which
// a KV cache holds in place, and memory bounded on long inputs).
enum class TraceLevel { full, weights_only };

// One head's attention, every step of softmax(mask(cap(Q·Kᵀ / (√d_k·τ)) + bias))·V.
struct HeadTrace {
  Matrix q;        // [Tq, d_k]                             (full trace only)
  Matrix k;        // [Tk, d_k]                             (full trace only)
  Matrix v;        // [Tk, d_v]                             (full trace only)
  Matrix scores;   // [Tq, Tk] Q·Kᵀ                       (full trace only)
  Matrix scaled;   // [Tq, Tk] scores / divisor             (full trace only)
  Matrix capped;   // [Tq, Tk] softcap·tanh(scaled / softcap) (full trace with a softcap only)
  Matrix bias;     // [Tq, Tk] the score bias added next (full trace with a bias only)
  Matrix masked;   // [Tq, Tk] scaled (or capped) + bias, -inf where masked (full trace only)
  Matrix weights;  // [Tq, Tk] row softmax of masked; rows sum to 1
  Matrix output;   // [Tq, d_v] weights·V
  float divisor = 1.0f;  // √d_k·τ (√scale_width·τ) when scaling, τ otherwise
  float softcap = 0.0f;  // the cap applied, 0 for none
};

// Attention of given queries, keys and values (copied into a full trace).
HeadTrace attend(const ConstMatrixRef& q, const ConstMatrixRef& k, const ConstMatrixRef& v,
                 const AttentionOptions& options, TraceLevel level = TraceLevel::full);

// Single-head self-attention: Q = X·Wq, K = X·Wk, V = X·Wv.
// x [T, d], wq [d, d_k], wk [d, d_k], wv [d, d_v].
HeadTrace self_attention(const ConstMatrixRef& x, const ConstMatrixRef& wq, const ConstMatrixRef& wk,
                         const ConstMatrixRef& wv, const AttentionOptions& options,
                         TraceLevel level = TraceLevel::full);

// Self-attention without learned projections: Q = K = V = X, i.e.
// softmax(X·Xᵀ)·X when options.scale is false (the tutorials' first step).
HeadTrace parameter_free_self_attention(const ConstMatrixRef& x, const AttentionOptions& options,
                                        TraceLevel level = TraceLevel::full);

struct MultiHeadTrace {
  Matrix q;                     // [T, H·d_k] X·Wq before the split (multi_head_attention only)
  Matrix k;                     // [T, KV·d_k] (KV = H without grouped-query attention)
  Matrix v;                     // [T, KV·d_v]
  std::vector<HeadTrace> heads; // H traces; head h uses q columns [h·d_k, (h+1)·d_k)
  Matrix concat;                // [T, H·d_v] head outputs side by side
  Matrix output;                // [T, d_out] concat·Wo (= concat when Wo is empty)
};

// The keys (or the values) of `heads` key/value heads, read where they are:
// head h's [rows, width] starts at data + h·head_stride, its rows row_stride
// floats apart. A projection's output holds the heads side by side
// (side_by_side); a KV cache keeps each head's rows together, so that a
// decoding step reads them front to back (model/model.h's KvCache).
struct HeadRows {
  const float* data = nullptr;
  int heads = 0;
  Eigen::Index rows = 0, width = 0;
  Eigen::Index row_stride = 0, head_stride = 0;

  // m [rows, heads·width] as `heads` heads of width `width`; throws
  // std::invalid_argument when its width does not split into `heads`.
  static HeadRows side_by_side(const ConstMatrixRef& m, int heads);
  ConstMatrixRef head(int h) const;  // [rows, width], in place
};

// Multi-head attention of already projected queries, keys and values (the
// core both multi_head_attention below and the model runtime use). Head h
// reads columns [h·d_k, (h+1)·d_k) of q and key/value head h / (H / KV) of k
// and v: KV = H is standard multi-head attention, KV < H grouped-query, KV = 1
// multi-query. q [Tq, H·d_k], k KV heads of [Tk, d_k], v KV heads of [Tk, d_v].
// Every head is traced at `level`, except `full_head` (if >= 0), traced in
// full. `head_bias`: empty, or H matrices [Tq, Tk], head h's added to its
// scores (options.score_bias for each head). q, k and v are read in place (a
// KV cache's rows); fills heads and concat; q, k, v and output are left empty.
MultiHeadTrace attend_heads(const ConstMatrixRef& q, const HeadRows& k, const HeadRows& v, int n_heads,
                            const AttentionOptions& options, TraceLevel level, int full_head = -1,
                            const std::vector<Matrix>& head_bias = {});
// The same with k [Tk, KV·d_k] and v [Tk, KV·d_v], the heads side by side.
MultiHeadTrace attend_heads(const ConstMatrixRef& q, const ConstMatrixRef& k, const ConstMatrixRef& v, int n_heads,
                            int n_kv_heads, const AttentionOptions& options, TraceLevel level, int full_head = -1,
                            const std::vector<Matrix>& head_bias = {});

// Attention of one or two query rows (a decoding step: at most
// gemm::kVectorRows) against keys and values read in place, keeping what a
// model pass keeps: head h's weights [Tq, Tk] written to weights + h·Tq·Tk
// ([H, Tq, Tk]), its output to columns [h·d_v, (h+1)·d_v) of concat [Tq, H·d_v].
// Shapes as attend_heads'; no score bias. The heads are shared out among the
// threads whole (one dispatch for all of them), each computed as attend
// computes it.
void attend_heads_into(const ConstMatrixRef& q, const HeadRows& k, const HeadRows& v, int n_heads,
                       const AttentionOptions& options, float* weights, MatrixRef concat);

// Each head's weights [Tq, Tk] of `trace` into `attentions` [L, H, Tq, Tk] at
// layer `layer` (the tensor a model pass keeps of every layer).
void store_head_weights(const MultiHeadTrace& trace, int layer, std::vector<float>& attentions);

// What a knocked-out (ablated) head's output becomes.
enum class AblationMode {
  zero,  // zero at every position
  mean,  // at every position, its mean over the T positions of this pass
};

// "zero" or "mean": the modes' names in JSON, JS, links and the CLI; and back
// (nullopt for another name).
const char* ablation_mode_name(AblationMode mode);
std::optional<AblationMode> ablation_mode_from_name(std::string_view name);

// Knocks head `head` out of concat [T, H·d_v] (attend_heads' concat, before
// the output projection): its slice z [T, d_v] (columns head·d_v..) set to
// zero, or every row of z to (1/T)·Σ_t z[t]. The head's weights stay as computed.
void ablate_head_output(Matrix& concat, int head, int n_heads, AblationMode mode);

// Multi-head self-attention. x [T, d]; wq, wk [d, H·d_k]; wv [d, H·d_v];
// wo [H·d_v, d_out] or an empty matrix for no output projection.
MultiHeadTrace multi_head_attention(const ConstMatrixRef& x, const ConstMatrixRef& wq,
                                    const ConstMatrixRef& wk, const ConstMatrixRef& wv,
                                    const ConstMatrixRef& wo, int n_heads, const AttentionOptions& options,
                                    TraceLevel level = TraceLevel::full);

}  // namespace attnplay
