// Implementation of model/weights.h.
#include "model/weights.h"

#include <regex>
#include <set>
#include <stdexcept>
#include <string>

namespace attnplay {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Takes tensors by name (prefix added), checks shapes, remembers what was used.
class Reader {
 public:
  Reader(const Checkpoint& st, std::string prefix) : st_(st), prefix_(std::move(prefix)) {}

  bool has(const std::string& name) const { return st_.contains(full_name(name)); }

  // Tensor `name` with exactly `shape`, as float32 values.
  std::vector<float> take(const std::string& name, const std::vector<std::int64_t>& shape) {
    const std::string full = resolve(name);
    const TensorInfo& info = st_.info(full);
    if (info.shape != shape) {
      throw std::invalid_argument("tensor '" + full + "' has shape " + shape_text(info.shape) +
                                  " but config.json implies " + shape_text(shape));
    }
    used_.insert(full);
    return st_.to_float(full);
  }

  // [rows, cols] matrix stored as is.
  Matrix matrix(const std::string& name, std::int64_t rows, std::int64_t cols) {
    const std::vector<float> v = take(name, {rows, cols});
    return Eigen::Map<const Matrix>(v.data(), rows, cols);
  }

  // nn.Linear weight stored [out, in], returned as [in, out].
  Matrix transposed(const std::string& name, std::int64_t in, std::int64_t out) {
    const std::vector<float> v = take(name, {out, in});
    return Eigen::Map<const Matrix>(v.data(), out, in).transpose();
  }

  RowVector vector(const std::string& name, std::int64_t n) {
    const std::vector<float> v = take(name, {n});
    return Eigen::Map<const RowVector>(v.data(), n);
  }

  // LayerNorm as weight/bias, or gamma/beta in older BERT checkpoints.
  NormWeights norm(const std::string& base, std::int64_t d) {
    const bool old_names = !has(base + ".weight") && has(base + ".gamma");
    return {vector(base + (old_names ? ".gamma" : ".weight"), d), vector(base + (old_names ? ".beta" : ".bias"), d)};
  }

  // Refuses tensors that were not used and are not known-harmless extras.
  void reject_unused(const std::regex& ignorable) const {
    std::vector<std::string> unexpected;
    for (const auto& entry : st_.tensors()) {
      if (used_.count(entry.first) == 0 && !std::regex_match(entry.first, ignorable)) {
        unexpected.push_back(entry.first);
      }
    }
    if (unexpected.empty()) return;
    std::string list;
    for (std::size_t i = 0; i < unexpected.size() && i < 5; ++i) list += (i ? "', '" : "'") + unexpected[i];
    throw std::invalid_argument(std::to_string(unexpected.size()) + " unexpected tensor(s) for this " +
                                "architecture: " + list + "'" + (unexpected.size() > 5 ? ", ..." : "") +
                                " (does config.json describe this checkpoint?)");
  }

 private:
  // The heads (lm_head, cls.) sit outside the base model's prefix.
  std::string full_name(const std::string& name) const {
    const bool head = name.rfind("lm_head.", 0) == 0 || name.rfind("cls.", 0) == 0;
    return head ? name : prefix_ + name;
  }

  std::string resolve(const std::string& name) const {
    const std::string full = full_name(name);
    if (!st_.contains(full)) throw std::invalid_argument("tensor '" + full + "' is missing from model.safetensors");
    return full;
  }

  const Checkpoint& st_;
  std::string prefix_;
  std::set<std::string> used_;
};

void require_vocabulary(const ModelConfig& c, const Checkpoint& st, const std::string& name) {
  const TensorInfo& info = st.info(name);
  if (info.shape.size() == 2 && info.shape[0] < c.vocab_size) {
    throw std::invalid_argument("the vocabulary (vocab_size " + std::to_string(c.vocab_size) +
                                " in config.json) is larger than the embedding matrix '" + name + "' (" +
                                std::to_string(info.shape[0]) + " rows)");
  }
}

ModelWeights load_gpt2(const ModelConfig& c, const Checkpoint& st) {
  const bool prefixed = st.contains("transformer.wte.weight");
  if (!prefixed && !st.contains("wte.weight")) {
    throw std::invalid_argument("tensor 'wte.weight' (or 'transformer.wte.weight') is missing: not a GPT-2 checkpoint");
  }
  Reader r(st, prefixed ? "transformer." : "");
  require_vocabulary(c, st, prefixed ? "transformer.wte.weight" : "wte.weight");
  const std::int64_t d = c.width, V = c.vocab_size;
  ModelWeights w;
  w.token_embedding = r.matrix("wte.weight", V, d);
  w.position_embedding = r.matrix("wpe.weight", c.positions, d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    BlockWeights b;
    b.attention_norm = r.norm(p + "ln_1", d);
    b.qkv = {r.matrix(p + "attn.c_attn.weight", d, 3 * d), r.vector(p + "attn.c_attn.bias", 3 * d)};
    b.attention_out = {r.matrix(p + "attn.c_proj.weight", d, d), r.vector(p + "attn.c_proj.bias", d)};
    b.mlp_norm = r.norm(p + "ln_2", d);
    b.mlp_in = {r.matrix(p + "mlp.c_fc.weight", d, c.inner), r.vector(p + "mlp.c_fc.bias", c.inner)};
    b.mlp_out = {r.matrix(p + "mlp.c_proj.weight", c.inner, d), r.vector(p + "mlp.c_proj.bias", d)};
    w.blocks.push_back(std::move(b));
  }
  w.final_norm = r.norm("ln_f", d);
  if (st.contains("lm_head.weight")) w.output_embedding = r.matrix("lm_head.weight", V, d);
  // The causal-mask buffers some exports include.
  r.reject_unused(std::regex(R"((transformer\.)?h\.\d+\.attn\.(bias|masked_bias))"));
  return w;
}

ModelWeights load_bert(const ModelConfig& c, const Checkpoint& st) {
  const bool prefixed = st.contains("bert.embeddings.word_embeddings.weight");
  if (!prefixed && !st.contains("embeddings.word_embeddings.weight")) {
    throw std::invalid_argument(
        "tensor 'embeddings.word_embeddings.weight' (or 'bert.embeddings.word_embeddings.weight') is missing: "
        "not a BERT checkpoint");
  }
  Reader r(st, prefixed ? "bert." : "");
  require_vocabulary(c, st, prefixed ? "bert.embeddings.word_embeddings.weight" : "embeddings.word_embeddings.weight");
  const std::int64_t d = c.width, V = c.vocab_size;
  ModelWeights w;
  w.token_embedding = r.matrix("embeddings.word_embeddings.weight", V, d);
  w.position_embedding = r.matrix("embeddings.position_embeddings.weight", c.positions, d);
  w.type_embedding = r.matrix("embeddings.token_type_embeddings.weight", c.type_vocab_size, d);
  w.embedding_norm = r.norm("embeddings.LayerNorm", d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    BlockWeights b;
    // query | key | value side by side, read (and shape-checked) before allocating.
    const std::string s = p + "attention.self.";
    const Matrix wq = r.transposed(s + "query.weight", d, d), wk = r.transposed(s + "key.weight", d, d),
                 wv = r.transposed(s + "value.weight", d, d);
    const RowVector bq = r.vector(s + "query.bias", d), bk = r.vector(s + "key.bias", d),
                    bv = r.vector(s + "value.bias", d);
    b.qkv.w.resize(d, 3 * d);
    b.qkv.w << wq, wk, wv;
    b.qkv.b.resize(3 * d);
    b.qkv.b << bq, bk, bv;
    b.attention_out = {r.transposed(p + "attention.output.dense.weight", d, d),
                       r.vector(p + "attention.output.dense.bias", d)};
    b.attention_norm = r.norm(p + "attention.output.LayerNorm", d);
    b.mlp_in = {r.transposed(p + "intermediate.dense.weight", d, c.inner), r.vector(p + "intermediate.dense.bias", c.inner)};
    b.mlp_out = {r.transposed(p + "output.dense.weight", c.inner, d), r.vector(p + "output.dense.bias", d)};
    b.mlp_norm = r.norm(p + "output.LayerNorm", d);
    w.blocks.push_back(std::move(b));
  }
  if (st.contains("cls.predictions.transform.dense.weight")) {
    w.has_mlm_head = true;
    w.mlm.transform = {r.transposed("cls.predictions.transform.dense.weight", d, d),
                       r.vector("cls.predictions.transform.dense.bias", d)};
    w.mlm.norm = r.norm("cls.predictions.transform.LayerNorm", d);
    w.mlm.bias = r.vector(st.contains("cls.predictions.bias") ? "cls.predictions.bias" : "cls.predictions.decoder.bias", V);
    if (st.contains("cls.predictions.decoder.weight")) {
      w.output_embedding = r.matrix("cls.predictions.decoder.weight", V, d);
    }
  }
  // Parts of BERT checkpoints this runtime does not use: the pooler, the
  // next-sentence head, the position-id buffer, the decoder's copy of the bias.
  r.reject_unused(std::regex(R"((bert\.)?(pooler\..*|embeddings\.position_ids)|cls\.seq_relationship\..*|)"
                             R"(cls\.predictions\.(decoder\.)?bias)"));
  return w;
}

}  // namespace

std::int64_t ModelWeights::parameter_count() const {
  auto linear = [](const LinearWeights& l) { return l.w.size() + l.b.size(); };
  auto norm = [](const NormWeights& n) { return n.gamma.size() + n.beta.size(); };
  std::int64_t n = token_embedding.size() + position_embedding.size() + type_embedding.size() +
                   norm(embedding_norm) + norm(final_norm) + output_embedding.size();
  for (const BlockWeights& b : blocks) {
    n += norm(b.attention_norm) + linear(b.qkv) + linear(b.attention_out) + norm(b.mlp_norm) + linear(b.mlp_in) +
         linear(b.mlp_out);
  }
  if (has_mlm_head) n += linear(mlm.transform) + norm(mlm.norm) + mlm.bias.size();
  return n;
}

ModelWeights load_weights(const ModelConfig& config, const Checkpoint& checkpoint) {
  return config.architecture == Architecture::gpt2 ? load_gpt2(config, checkpoint) : load_bert(config, checkpoint);
}

}  // namespace attnplay
