// Implementation of model/model.h: one recipe per family, each a flat list
// of ops (embed → blocks → final norm → head, in the spirit of llm.c's
// gpt2_forward) over the shared ops of a Pass: norm (LayerNorm, RMSNorm),
// positions (learned tables, RoPE on a rotated fraction of each head),
// attention (MHA/GQA/MQA, causal, sliding window, q/k norm), MLP (GELU,
// SwiGLU) and residual (serial, parallel, post-LN).
#include "model/model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "attention/positional.h"
#include "model/logits.h"
#include "nn/layers.h"
#include "tensor/ops.h"

namespace attnplay {

void bad_request(const std::string& message) { throw std::invalid_argument(message); }

namespace {

std::string family_name(const ModelConfig& c) {
  return c.architecture == Architecture::gpt2 ? "GPT-2" : c.architecture == Architecture::bert ? "BERT" : c.model_type;
}

// BERT's masked-LM head: x [M, d] -> logits [M, V] (dense, activation, LayerNorm, tied or stored decoder, bias).
Matrix masked_lm_logits(const ModelConfig& c, const ModelWeights& w, const ConstMatrixRef& x) {
  Matrix t = linear(x, w.mlm.transform.w, w.mlm.transform.b);  // [M, d]
  activate(t, c.activation);
  t = layer_norm(t, w.mlm.norm.gamma, w.mlm.norm.beta, c.norm_eps);
  return linear(t, w.unembedding(), w.mlm.bias);  // [M, V]
}

// `past`: tokens already in the KV cache.
void validate(const ModelConfig& c, const ModelWeights& weights, const ForwardRequest& request, int past) {
  const int T = static_cast<int>(request.ids.size());
  const int L = c.layers, H = c.heads;
  if (T == 0) bad_request("no tokens to run");
  if (past + T > c.positions) {
    bad_request(std::to_string(past + T) + " tokens are more than the model's " + std::to_string(c.positions) +
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
    const int types = c.type_vocab_size > 0 ? c.type_vocab_size : 1;
    for (int i = 0; i < T; ++i) {
      if (request.type_ids[i] < 0 || request.type_ids[i] >= types) {
        bad_request("type id " + std::to_string(request.type_ids[i]) + " at position " + std::to_string(i) +
                    (c.type_vocab_size == 0 ? " (" + family_name(c) + " has no token types; use 0)"
                                                 : " is outside 0.." + std::to_string(types - 1)));
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
  for (const ForwardRequest::Head& head : request.ablate) {
    if (head.layer < 0 || head.layer >= L || head.head < 0 || head.head >= H) {
      bad_request("ablated head " + std::to_string(head.layer) + ":" + std::to_string(head.head) +
                  " (layer:head, from 0) does not exist: the model has " + std::to_string(L) + " layers of " +
                  std::to_string(H) + " heads");
    }
  }
  if (request.token_loss && request.last_logits_only) {
    bad_request("the per-token loss needs the logits of every position, not the last only");
  }
  if (c.causal() && !request.mask_labels.empty()) {
    bad_request("mask labels are for BERT; " + family_name(c) + "'s loss is that of each next token");
  }
  if (!c.causal() && request.token_loss) {
    if (request.mask_labels.size() != request.mask_positions.size()) {
      bad_request("BERT's per-token loss needs one true token per mask position: " +
                  std::to_string(request.mask_labels.size()) + " labels for " +
                  std::to_string(request.mask_positions.size()) + " mask positions");
    }
    for (const std::int32_t id : request.mask_labels) {
      if (id < 0 || id >= c.vocab_size) {
        bad_request("mask label " + std::to_string(id) + " is outside the vocabulary (0.." +
                    std::to_string(c.vocab_size - 1) + ")");
      }
    }
  }
  if (!request.mask_positions.empty()) {
    if (c.causal()) {
      bad_request("mask positions are for BERT; " + family_name(c) + " predicts the next token at every position");
    }
    if (!weights.has_mlm_head) bad_request("this BERT checkpoint has no masked-LM head (cls.predictions.*)");
    for (int p : request.mask_positions) {
      if (p < 0 || p >= T) bad_request("mask position " + std::to_string(p) + " is outside 0.." + std::to_string(T - 1));
    }
  }
}

// One forward pass in progress: the request, the result it fills, and the ops
// the recipes below are written in. Activations are [T, d] matrices, one row
// per token. With a KV cache, the tokens run are positions past..past + T - 1 and
// attention covers the Tk = past + T keys.
class Pass {
 public:
  Pass(const ModelConfig& c, const ModelWeights& w, const ForwardRequest& request, ForwardResult& result,
       KvCache* cache)
      : c_(c), w_(w), request_(request), result_(result), cache_(cache), T_(static_cast<int>(request.ids.size())),
        past_(cache ? cache->length() : 0) {
    options_.causal = c.causal();
    options_.window = c.sliding_window;
    options_.key_mask = request.attention_mask;
    if (c.rope) rope_inv_freq_ = rope_inverse_frequencies(c.rotary_dims, c.rope_theta, c.rope_scaling);
    if (cache_ && cache_->keys.empty()) {
      cache_->keys.resize(static_cast<std::size_t>(c.layers));
      cache_->values.resize(static_cast<std::size_t>(c.layers));
    }
    result_.layers = c.layers;
    result_.heads = c.heads;
    result_.tokens = T_;
    result_.keys = past_ + T_;
    result_.attentions.resize(static_cast<std::size_t>(c.layers) * c.heads * T_ * result_.keys);
  }

  // Token embedding rows: [T, d].
  Matrix embed() const {
    Matrix h(T_, c_.width);  // [T, d]
    for (int i = 0; i < T_; ++i) w_.token_embedding.row_to_float(request_.ids[i], h.row(i).data());
    return h;
  }

  // h += table[index(i)] for every token i; table [rows, d] (learned positions, token types).
  template <typename Index>
  void add_rows(Matrix& h, const WeightMatrix& table, Index index) const {
    RowVector row(c_.width);  // [d]
    for (int i = 0; i < T_; ++i) {
      table.row_to_float(index(i), row.data());
      h.row(i) += row;
    }
  }
  void add_learned_positions(Matrix& h) const {
    add_rows(h, w_.position_embedding, [this](int i) { return past_ + i; });
  }
  void add_token_types(Matrix& h) const {
    add_rows(h, w_.type_embedding, [this](int i) { return request_.type_ids.empty() ? 0 : request_.type_ids[i]; });
  }

  // LayerNorm or RMSNorm, as the family uses: [T, n] -> [T, n].
  Matrix norm(const ConstMatrixRef& x, const NormWeights& n) const {
    return c_.norm == NormKind::rms_norm ? rms_norm(x, n.gamma, c_.norm_eps)
                                         : layer_norm(x, n.gamma, n.beta, c_.norm_eps);
  }

  // Self-attention sub-layer of layer `layer`: x [T, d] -> [T, d]. Records
  // every head's weights (the very arrays the output was computed from) and
  // the traced head's full trace.
  Matrix attention(const ConstMatrixRef& x, const BlockWeights& b, int layer) {
    const int H = c_.heads, KV = c_.kv_heads, dk = c_.head_dim;
    Matrix q, k, v;  // [T, H·d_k], [T, KV·d_k], [T, KV·d_k]
    project_qkv(x, b, q, k, v);
    if (c_.qk_norm) {  // RMSNorm over each head's d_k
      for (int h = 0; h < H; ++h) q.middleCols(h * dk, dk) = rms_norm(q.middleCols(h * dk, dk), b.q_norm.gamma, c_.norm_eps);
      for (int h = 0; h < KV; ++h) k.middleCols(h * dk, dk) = rms_norm(k.middleCols(h * dk, dk), b.k_norm.gamma, c_.norm_eps);
    }
    const bool traced_layer = request_.trace && request_.trace->layer == layer;
    if (c_.rope) {
      if (traced_layer) {  // the traced head's q and its key head's k, before the rotation
        const int head = request_.trace->head, kv_head = head / (H / KV);
        result_.rotary = RotaryTrace{q.middleCols(head * dk, dk), k.middleCols(kv_head * dk, dk), rope_inv_freq_, past_};
      }
      apply_rope(q, dk, rope_inv_freq_, past_);
      apply_rope(k, dk, rope_inv_freq_, past_);
    }
    if (cache_) {  // keys and values [past + T, KV·d_k]: the cached ones, then this call's
      append_rows(cache_->keys[static_cast<std::size_t>(layer)], k);
      append_rows(cache_->values[static_cast<std::size_t>(layer)], v);
      k = cache_->keys[static_cast<std::size_t>(layer)];
      v = cache_->values[static_cast<std::size_t>(layer)];
    }
    MultiHeadTrace t = attend_heads(std::move(q), std::move(k), std::move(v), H, KV, options_,
                                    TraceLevel::weights_only, traced_layer ? request_.trace->head : -1);
    for (int h = 0; h < H; ++h) {  // weights [T, Tk] of each head into attentions [L, H, T, Tk]
      const Matrix& weights = t.heads[static_cast<std::size_t>(h)].weights;
      std::copy(weights.data(), weights.data() + weights.size(),
                result_.attentions.begin() + (static_cast<std::ptrdiff_t>(layer) * H + h) * weights.size());
    }
    if (traced_layer) result_.trace = std::move(t.heads[static_cast<std::size_t>(request_.trace->head)]);
    ablate(t.concat, layer);
    return linear(t.concat, b.attention_out.w, b.attention_out.b);  // [T, d]
  }

  // The request's ablated heads of this layer knocked out of concat [T, H·d_k].
  void ablate(Matrix& concat, int layer) const {
    for (const ForwardRequest::Head& head : request_.ablate) {
      if (head.layer == layer) ablate_head_output(concat, head.head, c_.heads, request_.ablation);
    }
  }

  // MLP sub-layer: x [T, d] -> [T, d]; act(x·W_in) or SwiGLU act(x·W_gate) ⊙ x·W_up, then W_out.
  Matrix mlp(const ConstMatrixRef& x, const BlockWeights& b) const {
    const LinearWeights& activated = c_.gated_mlp ? b.mlp_gate : b.mlp_in;
    Matrix inner = linear(x, activated.w, activated.b);  // [T, inner]
    activate(inner, c_.activation);
    if (c_.gated_mlp) inner.array() *= linear(x, b.mlp_in.w, b.mlp_in.b).array();  // ⊙ up(x)
    return linear(inner, b.mlp_out.w, b.mlp_out.b);  // [T, d]
  }

  void record_hidden(const Matrix& h) {
    if (request_.hidden_states) result_.hidden_states.push_back(h);
  }
  // Hugging Face reports the last hidden state after the final norm.
  void replace_last_hidden(const Matrix& h) {
    if (request_.hidden_states) result_.hidden_states.back() = h;
  }

  // Next-token logits [T, V] = h·Eᵀ and/or top-k at every position (or the
  // last only) and/or the loss of each next token, in chunks of rows to bound
  // memory when only top-k or the loss is wanted.
  void next_token_head(const Matrix& h) {
    if (!request_.logits && request_.top_k == 0 && !request_.token_loss) return;
    const WeightMatrix& unembedding = w_.unembedding();  // [V, d]
    const int V = c_.vocab_size;
    const int first = request_.last_logits_only ? T_ - 1 : 0;
    if (request_.logits) result_.logits.resize(T_ - first, V);
    constexpr int kChunk = 128;  // each chunk packs the whole unembedding once
    for (int start = first; start < T_; start += kChunk) {
      const int n = std::min(kChunk, T_ - start);
      const Matrix chunk = linear(h.middleRows(start, n), unembedding);  // [n, V]
      if (request_.logits) result_.logits.middleRows(start - first, n) = chunk;
      for (int i = 0; (request_.top_k > 0 || request_.token_loss) && i < n; ++i) {
        const float* row = chunk.row(i).data();
        const SoftmaxNorm norm = softmax_norm(row, V);
        if (request_.top_k > 0) result_.top_k.push_back(top_k_of(row, V, request_.top_k, norm));
        if (request_.token_loss && start + i + 1 < T_) {  // position start + i predicts the next id
          result_.token_loss.push_back(token_loss_of(row, norm, request_.ids[start + i + 1]));
        }
      }
    }
  }

  // BERT's masked-LM head at the mask positions: logits [M, V].
  void masked_lm_head(const Matrix& h) {
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

 private:
  // m [n, w] becomes [n + rows of x, w]: x below the old rows.
  static void append_rows(Matrix& m, const Matrix& x) {
    const Eigen::Index n = m.rows();
    m.conservativeResize(n + x.rows(), x.cols());
    m.bottomRows(x.rows()) = x;
  }

  // Queries [T, H·d_k], keys and values [T, KV·d_k] from x [T, d].
  void project_qkv(const ConstMatrixRef& x, const BlockWeights& b, Matrix& q, Matrix& k, Matrix& v) const {
    const int H = c_.heads, dk = c_.head_dim, d = H * dk;
    switch (w_.qkv_layout) {
      case QkvLayout::separate:
        q = linear(x, b.q.w, b.q.b);
        k = linear(x, b.k.w, b.k.b);
        v = linear(x, b.v.w, b.v.b);
        return;
      case QkvLayout::fused_blocks: {  // [T, 3d]: q | k | v
        const Matrix qkv = linear(x, b.qkv.w, b.qkv.b);
        q = qkv.leftCols(d);
        k = qkv.middleCols(d, d);
        v = qkv.rightCols(d);
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

  const ModelConfig& c_;
  const ModelWeights& w_;
  const ForwardRequest& request_;
  ForwardResult& result_;
  KvCache* cache_;  // null without a cache
  const int T_;     // tokens run
  const int past_;  // tokens in the cache before this pass
  AttentionOptions options_;
  std::vector<double> rope_inv_freq_;  // [r/2] with RoPE
};

// ---------------------------------------------------------------- recipes

// GPT-2: learned positions, pre-LN blocks, tied (or lm_head) unembedding.
void gpt2_forward(Pass& p, const ModelWeights& w) {
  Matrix h = p.embed();          // [T, d] wte[ids]
  p.add_learned_positions(h);    // [T, d] + wpe[0..T)
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    h += p.attention(p.norm(h, b.attention_norm), b, l);  // [T, d] h += attn(ln_1(h))
    h += p.mlp(p.norm(h, b.mlp_norm), b);                 // [T, d] h += mlp(ln_2(h)), GELU
    p.record_hidden(h);
  }
  h = p.norm(h, w.final_norm);  // [T, d] ln_f
  p.replace_last_hidden(h);
  p.next_token_head(h);         // [T, V]
}

// BERT: learned positions and token types, embedding LayerNorm, post-LN
// blocks, masked-LM head.
void bert_forward(Pass& p, const ModelWeights& w) {
  Matrix h = p.embed();          // [T, d] word embeddings
  p.add_learned_positions(h);    // [T, d] + position embeddings
  p.add_token_types(h);          // [T, d] + token type embeddings
  h = p.norm(h, w.embedding_norm);
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    h = p.norm(h + p.attention(h, b, l), b.attention_norm);  // [T, d] LN(h + attn(h))
    h = p.norm(h + p.mlp(h, b), b.mlp_norm);                 // [T, d] LN(h + mlp(h)), GELU
    p.record_hidden(h);
  }
  p.masked_lm_head(h);  // [M, V]
}

// Llama, Mistral, Qwen2, Qwen3: RoPE inside attention (GQA, optional q/k norm
// and sliding window), pre-RMSNorm blocks, SwiGLU.
void llama_forward(Pass& p, const ModelWeights& w) {
  Matrix h = p.embed();  // [T, d] embed_tokens[ids]
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    h += p.attention(p.norm(h, b.attention_norm), b, l);  // [T, d] h += attn(input_layernorm(h))
    h += p.mlp(p.norm(h, b.mlp_norm), b);                 // [T, d] h += swiglu(post_attention_layernorm(h))
    p.record_hidden(h);
  }
  h = p.norm(h, w.final_norm);  // [T, d] model.norm
  p.replace_last_hidden(h);
  p.next_token_head(h);         // [T, V] lm_head or tied embed_tokens
}

// GPT-NeoX (Pythia): partial RoPE inside attention, LayerNorm, parallel
// (h + attn(ln1(h)) + mlp(ln2(h))) or serial residual, untied embed_out.
void gpt_neox_forward(Pass& p, const ModelWeights& w, bool parallel_residual) {
  Matrix h = p.embed();  // [T, d] embed_in[ids]
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    const Matrix a = p.attention(p.norm(h, b.attention_norm), b, l);  // [T, d] attn(input_layernorm(h))
    if (parallel_residual) {
      h += a + p.mlp(p.norm(h, b.mlp_norm), b);  // [T, d] + mlp(post_attention_layernorm(h))
    } else {
      h += a;
      h += p.mlp(p.norm(h, b.mlp_norm), b);      // [T, d]
    }
    p.record_hidden(h);
  }
  h = p.norm(h, w.final_norm);  // [T, d] final_layer_norm
  p.replace_last_hidden(h);
  p.next_token_head(h);         // [T, V] embed_out
}

}  // namespace

Model::Model(ModelConfig config, ModelWeights weights) : config_(std::move(config)), weights_(std::move(weights)) {
  pack_for_products(weights_);
}

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

ForwardResult Model::forward(const ForwardRequest& request) const { return run(request, nullptr); }

ForwardResult Model::forward(const ForwardRequest& request, KvCache& cache) const {
  if (!config_.causal()) bad_request("a KV cache is for causal models; BERT reads the whole text at once");
  if (!request.type_ids.empty() || !request.attention_mask.empty()) {
    bad_request("type ids and padding masks cannot be used with a KV cache");
  }
  if (!request.ablate.empty() && request.ablation == AblationMode::mean) {
    bad_request("mean ablation averages a head over the whole text, which a KV cache never sees at once; "
                "use zero ablation when generating");
  }
  if (!cache.keys.empty() && static_cast<int>(cache.keys.size()) != config_.layers) {
    bad_request("the KV cache belongs to a model of " + std::to_string(cache.keys.size()) + " layers");
  }
  return run(request, &cache);
}

ForwardResult Model::run(const ForwardRequest& request, KvCache* cache) const {
  validate(config_, weights_, request, cache ? cache->length() : 0);  // every index checked before any work
  ForwardResult result;
  Pass pass(config_, weights_, request, result, cache);
  switch (config_.architecture) {
    case Architecture::gpt2: gpt2_forward(pass, weights_); break;
    case Architecture::bert: bert_forward(pass, weights_); break;
    case Architecture::llama: llama_forward(pass, weights_); break;
    case Architecture::gpt_neox: gpt_neox_forward(pass, weights_, config_.parallel_residual); break;
  }
  return result;
}

std::vector<TopK> Model::read_out(const Matrix& x, bool final_norm_applied, int k) const {
  if (k < 1) bad_request("top_k must be at least 1");
  if (x.cols() != config_.width) {
    bad_request("a residual stream of width " + std::to_string(x.cols()) + " for a model of width " +
                std::to_string(config_.width));
  }
  if (!config_.causal() && !weights_.has_mlm_head) {
    bad_request("this BERT checkpoint has no masked-LM head (cls.predictions.*) to read the residual stream with");
  }
  const int V = config_.vocab_size;
  std::vector<TopK> out;
  out.reserve(static_cast<std::size_t>(x.rows()));
  constexpr Eigen::Index kChunk = 128;  // rows per product: bounds the [chunk, V] logits held at once
  for (Eigen::Index start = 0; start < x.rows(); start += kChunk) {
    const Eigen::Index n = std::min(kChunk, x.rows() - start);
    Matrix logits;  // [n, V]
    if (!config_.causal()) {
      logits = masked_lm_logits(config_, weights_, x.middleRows(start, n));
    } else if (final_norm_applied) {
      logits = linear(x.middleRows(start, n), weights_.unembedding());
    } else {
      const NormWeights& f = weights_.final_norm;
      const Matrix h = config_.norm == NormKind::rms_norm ? rms_norm(x.middleRows(start, n), f.gamma, config_.norm_eps)
                                                          : layer_norm(x.middleRows(start, n), f.gamma, f.beta,
                                                                       config_.norm_eps);  // [n, d]
      logits = linear(h, weights_.unembedding());
    }
    for (Eigen::Index i = 0; i < n; ++i) {
      const float* row = logits.row(i).data();
      out.push_back(top_k_of(row, V, k, softmax_norm(row, V)));
    }
  }
  return out;
}

}  // namespace attnplay
