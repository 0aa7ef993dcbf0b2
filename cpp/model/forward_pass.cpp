// Implementation of model/forward_pass.h.
#include "model/forward_pass.h"

#include <algorithm>

#include "attention/positional.h"
#include "model/logits.h"
#include "nn/layers.h"
#include "tensor/gemv.h"
#include "tensor/ops.h"

namespace attnplay {
namespace {

// h [T, d] += table[index(i)] for every token i; table [rows, d].
template <typename Index>
void add_rows(Matrix& h, const WeightMatrix& table, int T, Index index) {
  RowVector row(h.cols());  // [d]
  for (int i = 0; i < T; ++i) {
    table.row_to_float(index(i), row.data());
    h.row(i) += row;
  }
}

}  // namespace

Matrix masked_lm_logits(const ModelConfig& c, const ModelWeights& w, const ConstMatrixRef& x) {
  Matrix t = linear(x, w.mlm.transform.w, w.mlm.transform.b);  // [M, d]
  activate(t, c.mlm_activation);
  t = layer_norm(t, w.mlm.norm.gamma, w.mlm.norm.beta, c.norm_eps);
  return linear(t, w.unembedding(), w.mlm.bias);  // [M, V]
}

ForwardPass::ForwardPass(const ModelConfig& c, const ModelWeights& w, const ForwardRequest& request,
                         ForwardResult& result, KvCache* cache)
    : c_(c), w_(w), request_(request), result_(result), cache_(cache), T_(request_tokens(c, request)),
      past_(cache ? cache->length() : 0) {
  options_.causal = c.causal();
  options_.key_mask = request.attention_mask;
  options_.scale = c.scale_attention;
  options_.scale_width = c.attention_scale_width;
  options_.softcap = c.attention_softcap;
  if (c.rope) {  // longrope picks its factors by the positions this pass reaches
    rope_inv_freq_ = rope_inverse_frequencies(c.rotary_dims, c.rope_theta, c.rope_scaling, past_ + T_);
    rope_attention_factor_ = rope_attention_factor(c.rope_scaling);
  }
  if (c.rope && c.rope_local_theta > 0) {
    rope_local_inv_freq_ = rope_inverse_frequencies(c.rotary_dims, c.rope_local_theta, RopeFrequencyScaling{});
  }
  result_.layers = c.layers;
  result_.heads = c.heads;
  result_.tokens = T_;
  result_.keys = past_ + T_;
  result_.attentions.resize(static_cast<std::size_t>(c.layers) * c.heads * T_ * result_.keys);
}

Matrix ForwardPass::embed() const {
  Matrix h(T_, w_.token_embedding.cols());  // [T, E] (E = d but for ELECTRA's narrower embeddings)
  for (int i = 0; i < T_; ++i) w_.token_embedding.row_to_float(request_.ids[i], h.row(i).data());
  if (c_.embedding_scale > 0) h *= c_.embedding_scale;  // Gemma: ·√d
  return h;
}

void ForwardPass::add_learned_positions(Matrix& h) const {
  using Count = ModelConfig::PositionCount;
  const int offset = c_.position_offset;
  const auto counted = [this, offset](int i) {
    switch (c_.position_count) {
      case Count::every_token: return true;
      case Count::non_pad_ids: return request_.ids[i] != offset - 1;  // RoBERTa: offset - 1 is pad_token_id
      case Count::unmasked_tokens: return request_.attention_mask.empty() || request_.attention_mask[i] != 0;
    }
    return true;
  };
  std::vector<int> rows(static_cast<std::size_t>(T_));  // [T] offset + past + tokens counted before; uncounted: offset - 1
  for (int i = 0, count = past_; i < T_; ++i) rows[i] = counted(i) ? offset + count++ : offset - 1;
  add_rows(h, w_.position_embedding, T_, [&rows](int i) { return rows[i]; });
}

Matrix ForwardPass::embed_patches() const {
  const VisionConfig& v = c_.vision;
  const VisionWeights& vw = w_.vision;
  const PixelValues& px = request_.pixels;
  const int rows = v.grid_rows(px.height), cols = v.grid_columns(px.width), N = rows * cols;
  const int ph = v.patch_height, pw = v.patch_width, C = v.channels;
  const std::size_t plane = static_cast<std::size_t>(px.height) * px.width;
  Matrix patches(N, C * ph * pw);  // [N, C·p_h·p_w]: each patch's pixels in the Conv2d kernel's (channel, row, column) order
  for (int gy = 0; gy < rows; ++gy) {
    for (int gx = 0; gx < cols; ++gx) {
      float* out = patches.row(gy * cols + gx).data();
      for (int ch = 0; ch < C; ++ch) {
        for (int ky = 0; ky < ph; ++ky, out += pw) {
          const float* in = px.values.data() + ch * plane + static_cast<std::size_t>(gy * ph + ky) * px.width + gx * pw;
          std::copy(in, in + pw, out);
        }
      }
    }
  }
  const int lead = v.distillation_token ? 2 : 1;  // learned tokens with a position: CLS (, distillation)
  Matrix grid_positions = vw.positions.bottomRows(vw.positions.rows() - lead);  // [table grid, d]
  if (rows != v.table_grid_rows() || cols != v.table_grid_columns()) {  // DINOv2 (validate refuses it for ViT)
    grid_positions = resize_position_grid(grid_positions, v.table_grid_rows(), v.table_grid_columns(), rows, cols,
                                          v.position_resize == VisionConfig::PositionResize::bicubic_antialiased);
  }
  Matrix h(T_, c_.width);  // [T, d]
  h.row(0) = vw.class_token + vw.positions.row(0);
  if (v.distillation_token) h.row(1) = vw.distillation_token + vw.positions.row(1);
  if (v.registers > 0) h.middleRows(lead, v.registers) = vw.register_tokens;
  h.bottomRows(N) = linear(patches, vw.patch_embedding.w, vw.patch_embedding.b) + grid_positions;  // [N, d]
  return h;
}

Matrix ForwardPass::project_embeddings(const ConstMatrixRef& h) const {
  return linear(h, w_.embedding_projection.w, w_.embedding_projection.b);  // [T, E] -> [T, d]
}

Matrix ForwardPass::project_output(const ConstMatrixRef& h) const {
  return linear(h, w_.output_projection.w, w_.output_projection.b);  // [T, d] -> [T, E]
}

void ForwardPass::add_token_types(Matrix& h) const {
  if (w_.type_embedding.empty()) return;  // DistilBERT
  add_rows(h, w_.type_embedding, T_, [this](int i) { return request_.type_ids.empty() ? 0 : request_.type_ids[i]; });
}

Matrix ForwardPass::norm(const ConstMatrixRef& x, const NormWeights& n) const {
  return c_.norm == NormKind::rms_norm ? rms_norm(x, n.gamma, c_.norm_eps) : layer_norm(x, n.gamma, n.beta, c_.norm_eps);
}

Matrix ForwardPass::attention(const ConstMatrixRef& x, const BlockWeights& b, int layer) {
  const int H = c_.heads, KV = c_.kv_heads, dk = c_.head_dim;
  Matrix q, k, v;  // [T, H·d_k], [T, KV·d_k], [T, KV·d_k]
  project_qkv(x, b, q, k, v);
  if (c_.qk_norm_across_heads) {  // OLMo 2: RMSNorm over all of q [T, H·d_k] and of k [T, KV·d_k]
    q = rms_norm(q, b.q_norm.gamma, c_.norm_eps);
    k = rms_norm(k, b.k_norm.gamma, c_.norm_eps);
  } else if (c_.qk_norm) {  // RMSNorm over each head's d_k
    for (int h = 0; h < H; ++h) q.middleCols(h * dk, dk) = rms_norm(q.middleCols(h * dk, dk), b.q_norm.gamma, c_.norm_eps);
    for (int h = 0; h < KV; ++h) k.middleCols(h * dk, dk) = rms_norm(k.middleCols(h * dk, dk), b.k_norm.gamma, c_.norm_eps);
  }
  const bool traced_layer = request_.trace && request_.trace->layer == layer;
  const bool sliding = c_.sliding_window > 0 && c_.layer_is_sliding(layer);
  options_.window = sliding ? c_.sliding_window : 0;  // this layer's (the padding mask stays, uncopied)
  options_.temperature = c_.scale_by_inverse_layer ? static_cast<float>(layer + 1) : 1.0f;
  if (c_.rope && c_.layer_has_rope(layer)) {  // Gemma 3's sliding layers turn at their own base
    const std::vector<double>& inv_freq = sliding && !rope_local_inv_freq_.empty() ? rope_local_inv_freq_ : rope_inv_freq_;
    if (traced_layer) {  // the traced head's q and its key head's k, before the rotation
      const int head = request_.trace->head, kv_head = head / (H / KV);
      result_.rotary = RotaryTrace{q.middleCols(head * dk, dk), k.middleCols(kv_head * dk, dk), inv_freq, past_,
                                   rope_attention_factor_};
    }
    apply_rope(q, dk, inv_freq, past_, rope_attention_factor_);
    apply_rope(k, dk, inv_freq, past_, rope_attention_factor_);
  }
  HeadRows keys = HeadRows::side_by_side(k, KV), values = HeadRows::side_by_side(v, KV);  // [T, d_k] a head
  if (cache_) {  // keys and values [past + T, d_k] a head: the cached ones, then this call's
    cache_->append(layer, keys, values);
    keys = cache_->layer_keys(layer);
    values = cache_->layer_values(layer);
  }
  Matrix concat;  // [T, H·d_v]
  if (T_ <= gemm::kVectorRows && !traced_layer) {  // a decoding step: the weights straight into attentions [L, H, T, Tk]
    concat.resize(T_, H * values.width);
    attend_heads_into(q, keys, values, H, options_,
                      result_.attentions.data() + static_cast<std::size_t>(layer) * H * T_ * result_.keys, concat);
  } else {
    MultiHeadTrace t = attend_heads(q, keys, values, H, options_, TraceLevel::weights_only,
                                    traced_layer ? request_.trace->head : -1);
    store_head_weights(t, layer, result_.attentions);  // [T, Tk] of each head into attentions [L, H, T, Tk]
    if (traced_layer) result_.trace = std::move(t.heads[static_cast<std::size_t>(request_.trace->head)]);
    concat = std::move(t.concat);
  }
  ablate(concat, layer);
  return linear(concat, b.attention_out.w, b.attention_out.b);  // [T, d]
}

void ForwardPass::ablate(Matrix& concat, int layer) const {
  for (const ForwardRequest::Head& head : request_.ablate) {
    if (head.layer == layer) ablate_head_output(concat, head.head, c_.heads, request_.ablation);
  }
}

Matrix ForwardPass::mlp(const ConstMatrixRef& x, const BlockWeights& b) const {
  if (!b.mlp_gate_up.empty()) {  // Phi-3: gate | up from one product [T, 2·inner]
    const Matrix gate_up = linear(x, b.mlp_gate_up.w, b.mlp_gate_up.b);
    Matrix inner = gate_up.leftCols(c_.inner);  // [T, inner]
    activate(inner, c_.activation);
    inner.array() *= gate_up.rightCols(c_.inner).array();  // ⊙ up(x)
    return linear(inner, b.mlp_out.w, b.mlp_out.b);  // [T, d]
  }
  Matrix inner, up;  // [T, inner] each
  if (c_.gated_mlp) {  // gate and up in one pass
    linear_together(x, {{&b.mlp_gate.w, &b.mlp_gate.b, &inner}, {&b.mlp_in.w, &b.mlp_in.b, &up}});
  } else {
    inner = linear(x, b.mlp_in.w, b.mlp_in.b);
  }
  activate(inner, c_.activation);
  if (c_.gated_mlp) inner.array() *= up.array();  // ⊙ up(x)
  return linear(inner, b.mlp_out.w, b.mlp_out.b);  // [T, d]
}

Matrix ForwardPass::layer_scale(Matrix x, const RowVector& gamma) {
  if (gamma.size() > 0) x.array().rowwise() *= gamma.array();
  return x;
}

void ForwardPass::record_hidden(const Matrix& h) {
  if (request_.hidden_states) result_.hidden_states.push_back(h);
}

void ForwardPass::replace_last_hidden(const Matrix& h) {
  if (request_.hidden_states) result_.hidden_states.back() = h;
}

void ForwardPass::next_token_head(const Matrix& h) {
  if (!request_.logits && request_.top_k == 0 && !request_.token_loss) return;
  const WeightMatrix& unembedding = w_.unembedding();  // [V, d]
  const int V = c_.vocab_size;
  result_.prediction_positions = resolve_prediction_positions(request_, T_);
  const std::vector<int>& positions = result_.prediction_positions;  // [P]
  const int P = static_cast<int>(positions.size());
  if (request_.logits) result_.logits.resize(P, V);
  constexpr int kChunk = 128;  // each chunk packs the whole unembedding once
  for (int start = 0; start < P; start += kChunk) {
    const int n = std::min(kChunk, P - start);
    Matrix rows(n, h.cols());  // [n, d] the positions' hidden states
    for (int i = 0; i < n; ++i) rows.row(i) = h.row(positions[static_cast<std::size_t>(start + i)]);
    Matrix chunk = linear(rows, unembedding);        // [n, V]
    softcap_logits(chunk, c_.final_logit_softcap);  // Gemma 2
    if (request_.logits) result_.logits.middleRows(start, n) = chunk;
    for (int i = 0; (request_.top_k > 0 || request_.token_loss) && i < n; ++i) {
      const float* row = chunk.row(i).data();
      const SoftmaxNorm norm = softmax_norm(row, V);
      if (request_.top_k > 0) result_.top_k.push_back(top_k_of(row, V, request_.top_k, norm));
      const int p = positions[static_cast<std::size_t>(start + i)];
      if (request_.token_loss && p + 1 < T_) {  // position p predicts the next id (every position: see resolve)
        result_.token_loss.push_back(token_loss_of(row, norm, request_.ids[static_cast<std::size_t>(p + 1)]));
      }
    }
  }
}

void ForwardPass::masked_lm_head(const Matrix& h) {
  if (request_.mask_positions.empty()) return;
  const int M = static_cast<int>(request_.mask_positions.size());
  Matrix x(M, c_.width);  // [M, d]
  for (int m = 0; m < M; ++m) x.row(m) = h.row(request_.mask_positions[m]);
  Matrix logits = masked_lm_logits(c_, w_, x);  // [M, V]
  for (int m = 0; (request_.top_k > 0 || request_.token_loss) && m < M; ++m) {
    const float* row = logits.row(m).data();
    const SoftmaxNorm norm = softmax_norm(row, c_.vocab_size);
    if (request_.top_k > 0) result_.top_k.push_back(top_k_of(row, c_.vocab_size, request_.top_k, norm));
    if (request_.token_loss) result_.token_loss.push_back(token_loss_of(row, norm, request_.mask_labels[m]));
  }
  if (request_.logits) result_.logits = std::move(logits);
}

void ForwardPass::image_classifier_head(const Matrix& h) {
  const VisionWeights& vw = w_.vision;
  if (vw.classifier.empty() || (!request_.logits && request_.top_k == 0)) return;
  Matrix logits;  // [1, labels]
  switch (vw.pooling) {
    case VisionConfig::Pooling::cls:
      logits = linear(h.topRows(1), vw.classifier.w, vw.classifier.b);
      break;
    case VisionConfig::Pooling::cls_and_distillation:  // DeiT with teacher: the mean of its two classifiers
      logits = (linear(h.topRows(1), vw.classifier.w, vw.classifier.b) +
                linear(h.middleRows(1, 1), vw.distillation_classifier.w, vw.distillation_classifier.b)) / 2;
      break;
    case VisionConfig::Pooling::cls_and_patch_mean: {  // DINOv2: [CLS, mean of the patch rows], registers left out
      const int patches = T_ - c_.vision.prefix_tokens();
      Matrix x(1, 2 * c_.width);  // [1, 2d]
      x << h.row(0), h.bottomRows(patches).colwise().mean();
      logits = linear(x, vw.classifier.w, vw.classifier.b);
      break;
    }
  }
  const int labels = static_cast<int>(logits.cols());
  if (request_.top_k > 0) {
    const float* row = logits.row(0).data();
    result_.top_k.push_back(top_k_of(row, labels, request_.top_k, softmax_norm(row, labels)));
  }
  if (request_.logits) result_.logits = std::move(logits);
}

void ForwardPass::project_qkv(const ConstMatrixRef& x, const BlockWeights& b, Matrix& q, Matrix& k, Matrix& v) const {
  const int H = c_.heads, dk = c_.head_dim, d = H * dk;
  switch (w_.qkv_layout) {
    case QkvLayout::separate:  // one pass over the three weights
      linear_together(x, {{&b.q.w, &b.q.b, &q}, {&b.k.w, &b.k.b, &k}, {&b.v.w, &b.v.b, &v}});
      return;
    case QkvLayout::fused_blocks: {  // [T, (H + 2·KV)·d_k]: q | k | v
      const int kv_width = c_.kv_heads * dk;
      const Matrix qkv = linear(x, b.qkv.w, b.qkv.b);
      q = qkv.leftCols(d);
      k = qkv.middleCols(d, kv_width);
      v = qkv.rightCols(kv_width);
      return;
    }
    case QkvLayout::fused_per_head: {  // [T, H·3d_k]: head h at h·3d_k as q_h | k_h | v_h
      const Matrix qkv = linear(x, b.qkv.w, b.qkv.b);
      q.resize(x.rows(), d);
      k.resize(x.rows(), d);
      v.resize(x.rows(), d);
      for (int h = 0; h < H; ++h) {
        q.middleCols(h * dk, dk) = qkv.middleCols(3 * h * dk, dk);
        k.middleCols(h * dk, dk) = qkv.middleCols(3 * h * dk + dk, dk);
        v.middleCols(h * dk, dk) = qkv.middleCols(3 * h * dk + 2 * dk, dk);
      }
      return;
    }
  }
}

}  // namespace attnplay
