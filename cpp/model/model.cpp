// Implementation of model/model.h: the GPT-2 (pre-LN, causal) and BERT
// (post-LN, bidirectional) forward passes over the shared block weights.
#include "model/model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "nn/layers.h"
#include "tensor/fast_exp.h"
#include "tensor/ops.h"

namespace attnplay {
namespace {

[[noreturn]] void bad_request(const std::string& message) { throw std::invalid_argument(message); }

void activate(MatrixRef x, Activation activation) {
  if (activation == Activation::gelu_erf) {
    gelu_erf(x);
  } else {
    gelu_tanh(x);
  }
}

Matrix norm(const ConstMatrixRef& x, const NormWeights& n, float eps) { return layer_norm(x, n.gamma, n.beta, eps); }

Matrix apply(const ConstMatrixRef& x, const LinearWeights& l) { return linear(x, l.w, l.b); }

// The k most probable entries of softmax(logits) (one row), best first (ties:
// lower id first). One pass keeps the k best in order (k is small); the
// softmax denominator uses fast_exp, which vectorizes.
TopK top_k_of(const float* logits, int vocab, int k) {
  k = std::min(k, vocab);
  if (k <= 0) return {};
  const float max = *std::max_element(logits, logits + vocab);
  float lanes[8] = {};  // eight partial sums, so that the loop vectorizes
  int tail = 0;
  for (; tail + 8 <= vocab; tail += 8)
    for (int j = 0; j < 8; ++j) lanes[j] += fast_exp(logits[tail + j] - max);
  float sum = 0;
  for (; tail < vocab; ++tail) sum += fast_exp(logits[tail] - max);
  for (const float lane : lanes) sum += lane;
  std::vector<std::int32_t> best;  // ids, best first
  best.reserve(static_cast<std::size_t>(k) + 1);
  for (int i = 0; i < vocab; ++i) {
    if (static_cast<int>(best.size()) == k && !(logits[i] > logits[best.back()])) continue;
    auto at = best.end();
    while (at != best.begin() && logits[i] > logits[*(at - 1)]) --at;
    best.insert(at, i);
    if (static_cast<int>(best.size()) > k) best.pop_back();
  }
  TopK top;
  for (const std::int32_t id : best) {
    top.ids.push_back(id);
    top.probabilities.push_back(fast_exp(logits[id] - max) / sum);
  }
  return top;
}

}  // namespace

Model Model::from_buffers(std::string_view config_json, std::string_view safetensors) {
  ModelConfig config = parse_config(config_json);
  const Checkpoint checkpoint = Checkpoint::single({kSafetensorsFile, safetensors, nullptr});
  ModelWeights weights = load_weights(config, checkpoint);
  return Model(std::move(config), std::move(weights));
}

Model Model::from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint) {
  ModelConfig config = parse_config(config_json);
  ModelWeights weights = load_weights(config, checkpoint);
  return Model(std::move(config), std::move(weights));
}

void Model::check_vocabulary(std::int32_t tokenizer_vocab_size) const {
  if (tokenizer_vocab_size > weights_.token_embedding.rows()) {
    throw std::invalid_argument("the tokenizer's vocabulary (" + std::to_string(tokenizer_vocab_size) +
                                " tokens) is larger than the embedding matrix (" +
                                std::to_string(weights_.token_embedding.rows()) + " rows)");
  }
}

ForwardResult Model::forward(const ForwardRequest& request) const {
  const ModelConfig& c = config_;
  const int T = static_cast<int>(request.ids.size());
  const int L = c.layers, H = c.heads, d = c.width, d_k = c.head_width();
  const bool gpt2 = c.architecture == Architecture::gpt2;

  // Validation of the request: every index checked before any work.
  if (T == 0) bad_request("no tokens to run");
  if (T > c.positions) {
    bad_request(std::to_string(T) + " tokens are more than the model's " + std::to_string(c.positions) +
                " positions");
  }
  for (int i = 0; i < T; ++i) {
    if (request.ids[i] < 0 || request.ids[i] >= c.vocab_size) {
      bad_request("token id " + std::to_string(request.ids[i]) + " at position " + std::to_string(i) +
                  " is outside the vocabulary (0.." + std::to_string(c.vocab_size - 1) + ")");
    }
  }
  if (!request.type_ids.empty()) {
    if (static_cast<int>(request.type_ids.size()) != T) {
      bad_request(std::to_string(request.type_ids.size()) + " type ids for " + std::to_string(T) + " tokens");
    }
    const int types = gpt2 ? 1 : c.type_vocab_size;
    for (int i = 0; i < T; ++i) {
      if (request.type_ids[i] < 0 || request.type_ids[i] >= types) {
        bad_request("type id " + std::to_string(request.type_ids[i]) + " at position " + std::to_string(i) +
                    (gpt2 ? " (GPT-2 has no token types; use 0)" : " is outside 0.." + std::to_string(types - 1)));
      }
    }
  }
  if (!request.attention_mask.empty() && static_cast<int>(request.attention_mask.size()) != T) {
    bad_request("attention mask has " + std::to_string(request.attention_mask.size()) + " entries for " +
                std::to_string(T) + " tokens");
  }
  if (request.trace && (request.trace->layer < 0 || request.trace->layer >= L || request.trace->head < 0 ||
                        request.trace->head >= H)) {
    bad_request("traced head (layer " + std::to_string(request.trace->layer) + ", head " +
                std::to_string(request.trace->head) + ") does not exist: the model has " + std::to_string(L) +
                " layers of " + std::to_string(H) + " heads");
  }
  if (request.top_k < 0) bad_request("top_k must not be negative");
  if (!request.mask_positions.empty()) {
    if (gpt2) bad_request("mask positions are for BERT; GPT-2 predicts the next token at every position");
    if (!weights_.has_mlm_head) bad_request("this BERT checkpoint has no masked-LM head (cls.predictions.*)");
    for (int p : request.mask_positions) {
      if (p < 0 || p >= T) bad_request("mask position " + std::to_string(p) + " is outside 0.." + std::to_string(T - 1));
    }
  }

  ForwardResult result;
  result.layers = L;
  result.heads = H;
  result.tokens = T;
  result.attentions.resize(static_cast<std::size_t>(L) * H * T * T);

  // Embeddings: token + position (+ token type, then layer norm, for BERT).
  Matrix h(T, d);  // [T, d]
  for (int i = 0; i < T; ++i) {
    h.row(i) = weights_.token_embedding.row(request.ids[i]) + weights_.position_embedding.row(i);
    if (!gpt2) h.row(i) += weights_.type_embedding.row(request.type_ids.empty() ? 0 : request.type_ids[i]);
  }
  if (!gpt2) h = norm(h, weights_.embedding_norm, c.layer_norm_eps);
  if (request.hidden_states) result.hidden_states.push_back(h);

  AttentionOptions options;
  options.causal = c.causal();
  options.key_mask = request.attention_mask;

  // Multi-head self-attention of x [T, d], recording each head's weights;
  // returns the projected output [T, d].
  auto self_attention = [&](const Matrix& x, const BlockWeights& b, int layer) {
    const Matrix qkv = apply(x, b.qkv);  // [T, 3d]: queries | keys | values
    Matrix concat(T, d);                 // [T, d]: head outputs side by side
    for (int head = 0; head < H; ++head) {
      const bool traced = request.trace && request.trace->layer == layer && request.trace->head == head;
      HeadTrace t = attend(qkv.middleCols(head * d_k, d_k), qkv.middleCols(d + head * d_k, d_k),
                           qkv.middleCols(2 * d + head * d_k, d_k), options,
                           traced ? TraceLevel::full : TraceLevel::weights_only);  // weights [T, T]
      std::copy(t.weights.data(), t.weights.data() + t.weights.size(),
                result.attentions.begin() + (static_cast<std::ptrdiff_t>(layer) * H + head) * T * T);
      concat.middleCols(head * d_k, d_k) = t.output;  // [T, d_k]
      if (traced) result.trace = std::move(t);
    }
    return apply(concat, b.attention_out);  // [T, d]
  };
  auto mlp = [&](const Matrix& x, const BlockWeights& b) {
    Matrix inner = apply(x, b.mlp_in);  // [T, inner]
    activate(inner, c.activation);
    return apply(inner, b.mlp_out);     // [T, d]
  };

  for (int layer = 0; layer < L; ++layer) {
    const BlockWeights& b = weights_.blocks[static_cast<std::size_t>(layer)];
    if (gpt2) {  // pre-LN: h += attn(ln_1(h)); h += mlp(ln_2(h))
      add_residual(h, self_attention(norm(h, b.attention_norm, c.layer_norm_eps), b, layer));  // [T, d]
      add_residual(h, mlp(norm(h, b.mlp_norm, c.layer_norm_eps), b));                          // [T, d]
    } else {  // post-LN: h = LN(h + attn(h)); h = LN(h + mlp(h))
      Matrix a = self_attention(h, b, layer);  // [T, d]
      add_residual(a, h);
      h = norm(a, b.attention_norm, c.layer_norm_eps);
      Matrix m = mlp(h, b);  // [T, d]
      add_residual(m, h);
      h = norm(m, b.mlp_norm, c.layer_norm_eps);
    }
    if (request.hidden_states) result.hidden_states.push_back(h);
  }
  if (gpt2) {
    h = norm(h, weights_.final_norm, c.layer_norm_eps);  // [T, d]
    if (request.hidden_states) result.hidden_states.back() = h;
  }

  // Predictions. GPT-2: logits [T, V] = h·Eᵀ, in chunks of rows to bound
  // memory when only top-k is wanted. BERT: MLM head at the mask positions.
  const Matrix& unembedding = weights_.unembedding();  // [V, d]
  const int V = c.vocab_size;
  if (gpt2 && (request.logits || request.top_k > 0)) {
    if (request.logits) result.logits.resize(T, V);
    constexpr int kChunk = 128;  // each chunk packs the whole unembedding once
    for (int start = 0; start < T; start += kChunk) {
      const int n = std::min(kChunk, T - start);
      const Matrix chunk = matmul_transposed(h.middleRows(start, n), unembedding);  // [n, V]
      if (request.logits) result.logits.middleRows(start, n) = chunk;
      for (int i = 0; request.top_k > 0 && i < n; ++i) result.top_k.push_back(top_k_of(chunk.row(i).data(), V, request.top_k));
    }
  }
  if (!gpt2 && !request.mask_positions.empty()) {
    const int M = static_cast<int>(request.mask_positions.size());
    Matrix x(M, d);  // [M, d]
    for (int m = 0; m < M; ++m) x.row(m) = h.row(request.mask_positions[m]);
    Matrix t = apply(x, weights_.mlm.transform);  // [M, d]
    activate(t, c.activation);
    t = norm(t, weights_.mlm.norm, c.layer_norm_eps);
    Matrix logits = matmul_transposed(t, unembedding);  // [M, V]
    logits.rowwise() += weights_.mlm.bias;
    for (int m = 0; request.top_k > 0 && m < M; ++m) result.top_k.push_back(top_k_of(logits.row(m).data(), V, request.top_k));
    if (request.logits) result.logits = std::move(logits);
  }
  return result;
}

}  // namespace attnplay
