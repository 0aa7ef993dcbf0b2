// Implementation of attention/attention.h.
#include "attention/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "tensor/gemv.h"
#include "tensor/ops.h"
#include "tensor/thread_pool.h"

namespace attnplay {
namespace {

void validate(const ConstMatrixRef& q, const ConstMatrixRef& k, const ConstMatrixRef& v, const AttentionOptions& options) {
  if (q.cols() != k.cols()) {
    throw std::invalid_argument("attention: queries have width " + std::to_string(q.cols()) +
                                " but keys have width " + std::to_string(k.cols()));
  }
  if (k.rows() != v.rows()) {
    throw std::invalid_argument("attention: " + std::to_string(k.rows()) + " keys but " +
                                std::to_string(v.rows()) + " values");
  }
  if (q.cols() == 0) throw std::invalid_argument("attention: key width d_k is 0");
  if (!(options.temperature > 0.0f) || !std::isfinite(options.temperature)) {
    throw std::invalid_argument("attention: temperature must be a positive finite number");
  }
  if (options.causal && q.rows() > k.rows()) {
    throw std::invalid_argument("attention: a causal mask needs at least as many keys as queries");
  }
  if (options.window < 0) throw std::invalid_argument("attention: the sliding window must not be negative");
  if (options.score_bias && (options.score_bias->rows() != q.rows() || options.score_bias->cols() != k.rows())) {
    throw std::invalid_argument("attention: a score bias of " + std::to_string(options.score_bias->rows()) + " x " +
                                std::to_string(options.score_bias->cols()) + " for " + std::to_string(q.rows()) +
                                " queries and " + std::to_string(k.rows()) + " keys");
  }
  if (!options.key_mask.empty() && static_cast<Eigen::Index>(options.key_mask.size()) != k.rows()) {
    throw std::invalid_argument("attention: padding mask has " + std::to_string(options.key_mask.size()) +
                                " entries for " + std::to_string(k.rows()) + " keys");
  }
}

// Sets masked entries of scores [Tq, Tk] to -inf.
void apply_masks(MatrixRef scores, const AttentionOptions& options) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const Eigen::Index offset = scores.cols() - scores.rows();  // position of query 0
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    if (options.causal) {
      const Eigen::Index position = offset + i;
      for (Eigen::Index j = position + 1; j < scores.cols(); ++j) scores(i, j) = neg_inf;
      for (Eigen::Index j = 0; options.window > 0 && j <= position - options.window; ++j) scores(i, j) = neg_inf;
    }
    for (std::size_t j = 0; j < options.key_mask.size(); ++j) {
      if (options.key_mask[j] == 0) scores(i, static_cast<Eigen::Index>(j)) = neg_inf;
    }
  }
}

// Throws std::invalid_argument unless q [Tq, H·d_k] splits into n_heads heads
// that share k's and v's key/value heads.
void check_heads(const ConstMatrixRef& q, const HeadRows& k, const HeadRows& v, int n_heads) {
  if (n_heads <= 0 || k.heads <= 0 || n_heads % k.heads != 0 || v.heads != k.heads) {
    throw std::invalid_argument("attention: " + std::to_string(n_heads) + " query heads cannot share " +
                                std::to_string(k.heads) + " key and " + std::to_string(v.heads) + " value heads");
  }
  if (q.cols() % n_heads != 0 || q.cols() / n_heads != k.width) {
    throw std::invalid_argument("attention: a query width of " + std::to_string(q.cols()) + " does not split into " +
                                std::to_string(n_heads) + " heads of the keys' width " + std::to_string(k.width));
  }
}

// √d_k·τ (√scale_width·τ) when scaling, τ otherwise: what the scores are divided by.
float divisor_of(const AttentionOptions& options, Eigen::Index d_k) {
  const Eigen::Index scale_width = options.scale_width > 0 ? options.scale_width : d_k;
  return options.temperature * (options.scale ? std::sqrt(static_cast<float>(scale_width)) : 1.0f);
}

// Scaled scores [Tq, Tk] -> cap·tanh(scaled / cap) (Gemma 2's softcap).
void apply_softcap(MatrixRef scores, float cap) {
  scores = scores.unaryExpr([cap](float s) { return cap * std::tanh(s / cap); });
}

}  // namespace

HeadTrace attend(const ConstMatrixRef& q, const ConstMatrixRef& k, const ConstMatrixRef& v, const AttentionOptions& options,
                 TraceLevel level) {
  validate(q, k, v, options);
  HeadTrace t;
  if (level == TraceLevel::full) {
    t.q = q;
    t.k = k;
    t.v = v;
  }
  t.divisor = divisor_of(options, q.cols());
  t.softcap = options.softcap;

  t.weights = matmul_transposed(q, k);  // [Tq, Tk] raw scores
  if (level == TraceLevel::full) t.scores = t.weights;
  t.weights *= 1.0f / t.divisor;  // [Tq, Tk] scaled
  if (level == TraceLevel::full) t.scaled = t.weights;
  if (t.softcap > 0.0f) {  // [Tq, Tk] cap·tanh(scaled / cap)
    apply_softcap(t.weights, t.softcap);
    if (level == TraceLevel::full) t.capped = t.weights;
  }
  if (options.score_bias) {  // [Tq, Tk] + bias
    t.weights += *options.score_bias;
    if (level == TraceLevel::full) t.bias = *options.score_bias;
  }
  apply_masks(t.weights, options);  // [Tq, Tk] masked
  if (level == TraceLevel::full) t.masked = t.weights;
  softmax_rows(t.weights);          // [Tq, Tk] weights
  t.output = matmul(t.weights, v);  // [Tq, d_v]
  return t;
}

HeadTrace self_attention(const ConstMatrixRef& x, const ConstMatrixRef& wq, const ConstMatrixRef& wk,
                         const ConstMatrixRef& wv, const AttentionOptions& options, TraceLevel level) {
  if (wq.rows() != x.cols() || wk.rows() != x.cols() || wv.rows() != x.cols()) {
    throw std::invalid_argument("self_attention: Wq, Wk and Wv need " + std::to_string(x.cols()) +
                                " rows (the width of X)");
  }
  return attend(matmul(x, wq), matmul(x, wk), matmul(x, wv), options, level);
}

HeadTrace parameter_free_self_attention(const ConstMatrixRef& x, const AttentionOptions& options,
                                        TraceLevel level) {
  return attend(x, x, x, options, level);
}

HeadRows HeadRows::side_by_side(const ConstMatrixRef& m, int heads) {
  if (heads <= 0 || m.cols() % heads != 0) {
    throw std::invalid_argument("attention: a width of " + std::to_string(m.cols()) + " does not split into " +
                                std::to_string(heads) + " heads");
  }
  const Eigen::Index width = m.cols() / heads;
  return {m.data(), heads, m.rows(), width, m.outerStride(), width};
}

ConstMatrixRef HeadRows::head(int h) const {
  return Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>(data + h * head_stride, rows, width,
                                                            Eigen::OuterStride<>(row_stride));
}

MultiHeadTrace attend_heads(const ConstMatrixRef& q, const HeadRows& k, const HeadRows& v, int n_heads,
                            const AttentionOptions& options, TraceLevel level, int full_head,
                            const std::vector<Matrix>& head_bias) {
  check_heads(q, k, v, n_heads);
  if (!head_bias.empty() && static_cast<int>(head_bias.size()) != n_heads) {
    throw std::invalid_argument("attention: " + std::to_string(head_bias.size()) + " score biases for " +
                                std::to_string(n_heads) + " heads");
  }
  const Eigen::Index d_k = k.width, d_v = v.width;
  const int group = n_heads / k.heads;  // query heads per key/value head
  MultiHeadTrace t;
  t.concat.resize(q.rows(), n_heads * d_v);  // [Tq, H·d_v]
  t.heads.reserve(static_cast<std::size_t>(n_heads));
  AttentionOptions biased;  // options with head h's bias, when there are biases
  if (!head_bias.empty()) biased = options;
  for (int h = 0; h < n_heads; ++h) {
    const int kv = h / group;
    if (!head_bias.empty()) biased.score_bias = &head_bias[static_cast<std::size_t>(h)];
    t.heads.push_back(attend(q.middleCols(h * d_k, d_k), k.head(kv), v.head(kv), head_bias.empty() ? options : biased,
                             h == full_head ? TraceLevel::full : level));
    t.concat.middleCols(h * d_v, d_v) = t.heads.back().output;  // [Tq, d_v]
  }
  return t;
}

MultiHeadTrace attend_heads(const ConstMatrixRef& q, const ConstMatrixRef& k, const ConstMatrixRef& v, int n_heads,
                            int n_kv_heads, const AttentionOptions& options, TraceLevel level, int full_head,
                            const std::vector<Matrix>& head_bias) {
  if (n_heads <= 0 || n_kv_heads <= 0 || n_heads % n_kv_heads != 0) {
    throw std::invalid_argument("attention: " + std::to_string(n_heads) + " query heads cannot share " +
                                std::to_string(n_kv_heads) + " key/value heads");
  }
  if (q.cols() % n_heads != 0 || k.cols() % n_kv_heads != 0 || v.cols() % n_kv_heads != 0 ||
      q.cols() / n_heads != k.cols() / n_kv_heads) {
    throw std::invalid_argument("attention: widths of q (" + std::to_string(q.cols()) + "), k (" +
                                std::to_string(k.cols()) + ") and v (" + std::to_string(v.cols()) +
                                ") do not split into " + std::to_string(n_heads) + " query and " +
                                std::to_string(n_kv_heads) + " key/value heads");
  }
  return attend_heads(q, HeadRows::side_by_side(k, n_kv_heads), HeadRows::side_by_side(v, n_kv_heads), n_heads, options,
                      level, full_head, head_bias);
}

void attend_heads_into(const ConstMatrixRef& q, const HeadRows& k, const HeadRows& v, int n_heads,
                       const AttentionOptions& options, float* weights, MatrixRef concat) {
  check_heads(q, k, v, n_heads);
  if (q.rows() > gemm::kVectorRows || options.score_bias) {
    throw std::invalid_argument("attend_heads_into: at most " + std::to_string(gemm::kVectorRows) +
                                " query rows and no score bias");
  }
  const Eigen::Index Tq = q.rows(), Tk = k.rows, d_k = k.width, d_v = v.width;
  if (concat.rows() != Tq || concat.cols() != n_heads * d_v) {
    throw std::invalid_argument("attend_heads_into: the output needs " + std::to_string(Tq) + " x " +
                                std::to_string(n_heads * d_v));
  }
  const int group = n_heads / k.heads;  // query heads per key/value head
  validate(q.middleCols(0, d_k), k.head(0), v.head(0), options);  // every head has these shapes
  const float divisor = divisor_of(options, d_k);
  const auto head = [&](std::ptrdiff_t h) {
    const int kv = static_cast<int>(h) / group;
    float* head_weights = weights + h * Tq * Tk;  // [Tq, Tk]
    gemm::multiply_vectors_on_this_thread(Tq, Tk, d_k, {q.data() + h * d_k, q.outerStride()},
                                          gemm::WeightView(k.data + kv * k.head_stride, k.row_stride, gemm::Element::f32),
                                          gemm::RightOperand::n_by_k, nullptr, head_weights, Tk);  // [Tq, Tk] q·Kᵀ
    Eigen::Map<Matrix> scores(head_weights, Tq, Tk);
    scores *= 1.0f / divisor;  // scaled
    if (options.softcap > 0.0f) apply_softcap(scores, options.softcap);
    apply_masks(scores, options);
    softmax_rows(scores);  // weights
    gemm::multiply_vectors_on_this_thread(Tq, d_v, Tk, {head_weights, Tk},
                                          gemm::WeightView(v.data + kv * v.head_stride, v.row_stride, gemm::Element::f32),
                                          gemm::RightOperand::k_by_n, nullptr, concat.data() + h * d_v,
                                          concat.outerStride());  // [Tq, d_v] weights·V
  };
  const std::ptrdiff_t work = n_heads * Tq * Tk * (d_k + d_v);  // multiply-adds
  if (work < gemm::kSharedWork) {
    for (int h = 0; h < n_heads; ++h) head(h);
  } else {
    threads::parallel_for(n_heads, head);
  }
}

MultiHeadTrace multi_head_attention(const ConstMatrixRef& x, const ConstMatrixRef& wq,
                                    const ConstMatrixRef& wk, const ConstMatrixRef& wv,
                                    const ConstMatrixRef& wo, int n_heads, const AttentionOptions& options,
                                    TraceLevel level) {
  if (n_heads <= 0) throw std::invalid_argument("multi_head_attention: number of heads must be positive");
  const Eigen::Index d = x.cols();
  if (wq.rows() != d || wk.rows() != d || wv.rows() != d) {
    throw std::invalid_argument("multi_head_attention: Wq, Wk and Wv need " + std::to_string(d) +
                                " rows (the width of X)");
  }
  if (wq.cols() != wk.cols()) throw std::invalid_argument("multi_head_attention: Wq and Wk widths differ");
  if (wq.cols() % n_heads != 0 || wv.cols() % n_heads != 0) {
    throw std::invalid_argument("multi_head_attention: projection widths (" + std::to_string(wq.cols()) +
                                ", " + std::to_string(wv.cols()) + ") are not divisible by " +
                                std::to_string(n_heads) + " heads");
  }
  if (wo.size() != 0 && wo.rows() != wv.cols()) {
    throw std::invalid_argument("multi_head_attention: Wo needs " + std::to_string(wv.cols()) +
                                " rows (heads x d_v)");
  }
  Matrix q = matmul(x, wq), k = matmul(x, wk), v = matmul(x, wv);  // [T, H·d_k], [T, H·d_k], [T, H·d_v]
  MultiHeadTrace t = attend_heads(q, k, v, n_heads, n_heads, options, level);
  t.q = std::move(q);
  t.k = std::move(k);
  t.v = std::move(v);
  t.output = wo.size() == 0 ? t.concat : matmul(t.concat, wo);  // [T, d_out]
  return t;
}

void store_head_weights(const MultiHeadTrace& trace, int layer, std::vector<float>& attentions) {
  const auto heads = static_cast<std::ptrdiff_t>(trace.heads.size());
  for (std::ptrdiff_t h = 0; h < heads; ++h) {
    const Matrix& weights = trace.heads[static_cast<std::size_t>(h)].weights;  // [Tq, Tk]
    std::copy(weights.data(), weights.data() + weights.size(), attentions.begin() + (layer * heads + h) * weights.size());
  }
}

const char* ablation_mode_name(AblationMode mode) { return mode == AblationMode::mean ? "mean" : "zero"; }

std::optional<AblationMode> ablation_mode_from_name(std::string_view name) {
  for (const AblationMode mode : {AblationMode::zero, AblationMode::mean}) {
    if (name == ablation_mode_name(mode)) return mode;
  }
  return std::nullopt;
}

// Plain loops: this runs once per ablated head, and Eigen's reductions here
// would only add code to the page's download.
void ablate_head_output(Matrix& concat, int head, int n_heads, AblationMode mode) {
  const int dv = static_cast<int>(concat.cols()) / n_heads;
  const int T = static_cast<int>(concat.rows());
  const Eigen::Index stride = concat.cols();
  float* z = concat.data() + static_cast<std::ptrdiff_t>(head) * dv;  // row t at z + t·(H·d_v)
  std::vector<double> mean(static_cast<std::size_t>(dv), 0.0);  // [d_v]
  for (int t = 0; mode == AblationMode::mean && t < T; ++t)
    for (int j = 0; j < dv; ++j) mean[j] += z[t * stride + j] / T;
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < dv; ++j) z[t * stride + j] = static_cast<float>(mean[j]);
}

}  // namespace attnplay
