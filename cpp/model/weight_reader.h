// Reading a model's weights by tensor name out of a checkpoint: the Reader
// checks each tensor's shape against what config.json implies and its dtype
// (F32, F16, BF16), views matrices in place, and refuses tensors no part of
// the architecture used. Shared by the loaders of the decoder/encoder families
// (model/families/) and the encoder-decoders (seq2seq.cpp).
// Not here: which tensors a family has (the loaders), the file format (safetensors/).
#pragma once

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/weights.h"
#include "safetensors/checkpoint.h"

namespace attnplay {

inline std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Takes tensors by name (prefix added), checks dtype and shape, remembers what
// was used. Uses only the checkpoint's lookup methods.
class Reader {
 public:
  Reader(const Checkpoint& st, std::string prefix) : st_(st), prefix_(std::move(prefix)) {}

  bool has(const std::string& name) const { return st_.contains(full_name(name)); }

  // Tensor `name` with exactly `shape` ([rows, cols] or [n]), as stored.
  WeightMatrix take(const std::string& name, std::int64_t rows, std::int64_t cols, bool vector, WeightLayout layout) {
    const std::vector<std::int64_t> shape = vector ? std::vector<std::int64_t>{cols} : std::vector<std::int64_t>{rows, cols};
    const std::string full = resolve(name);
    const DType dtype = checked_dtype(full, shape);
    // Matrices view the checkpoint's bytes in place when it owns them.
    return vector ? WeightMatrix::copy_of(dtype, st_.bytes(full).data(), rows, cols, layout) : st_.weight(full, layout);
  }

  // Tensor `name` stored with `shape` (any rank) read as [rows, cols], rows ×
  // cols being its elements in stored order: a Conv2d kernel [out, C, k_h,
  // k_w] as [out, C·k_h·k_w], a [1, N, d] table as [N, d]. A copy.
  WeightMatrix reshaped(const std::string& name, const std::vector<std::int64_t>& shape, std::int64_t rows,
                        std::int64_t cols, WeightLayout layout) {
    const std::string full = resolve(name);
    const DType dtype = checked_dtype(full, shape);
    return WeightMatrix::copy_of(dtype, st_.bytes(full).data(), rows, cols, layout);
  }

  // [rows, cols] as stored, y = x·W (Conv1D).
  WeightMatrix in_by_out(const std::string& name, std::int64_t in, std::int64_t out) {
    return take(name, in, out, false, WeightLayout::in_by_out);
  }
  // [rows, cols] as stored, y = x·Wᵀ (nn.Linear, embedding tables).
  WeightMatrix out_by_in(const std::string& name, std::int64_t out, std::int64_t in) {
    return take(name, out, in, false, WeightLayout::out_by_in);
  }

  RowVector vector(const std::string& name, std::int64_t n) {
    return take(name, 1, n, true, WeightLayout::out_by_in).to_matrix();
  }

  // nn.Linear `base`.weight [out, in] and, if `bias`, `base`.bias [out].
  LinearWeights linear(const std::string& base, std::int64_t in, std::int64_t out, bool bias) {
    return {out_by_in(base + ".weight", out, in), bias ? vector(base + ".bias", out) : RowVector()};
  }

  // LayerNorm as weight/bias, or gamma/beta in older BERT checkpoints.
  NormWeights layer_norm(const std::string& base, std::int64_t d) {
    const bool old_names = !has(base + ".weight") && has(base + ".gamma");
    return {vector(base + (old_names ? ".gamma" : ".weight"), d), vector(base + (old_names ? ".beta" : ".bias"), d)};
  }

  NormWeights rms_norm(const std::string& base, std::int64_t d) { return {vector(base + ".weight", d), RowVector()}; }

  // Refuses tensors that were not used and are not known-harmless extras:
  // names that one of `ignorable` matches whole (name_matches), each pattern
  // under the base model's prefix as tensor names are (the heads at the root).
  void reject_unused(const std::vector<std::string>& ignorable) const;

 private:
  // The stored dtype of tensor `full`, after checking that it has `shape`.
  DType checked_dtype(const std::string& full, const std::vector<std::int64_t>& shape) {
    const TensorInfo& info = st_.info(full);
    if (info.shape != shape) {
      throw std::invalid_argument("tensor '" + full + "' has shape " + shape_text(info.shape) +
                                  " but config.json implies " + shape_text(shape));
    }
    used_.insert(full);
    if (info.dtype == "F16") return DType::f16;
    if (info.dtype == "BF16") return DType::bf16;
    if (info.dtype != "F32") {
      throw std::invalid_argument("safetensors: tensor '" + full + "' has dtype " + info.dtype +
                                  "; only F32, F16 and BF16 weights are supported");
    }
    return DType::f32;
  }

  // The heads (lm_head, embed_out, cls., DistilBERT's vocab_*, ELECTRA's generator_* and
  // discriminator_*, final_logits_bias; the vision classifiers classifier., cls_classifier.,
  // distillation_classifier.) sit outside the base model's prefix.
  std::string full_name(const std::string& name) const {
    const bool head = name.rfind("lm_head.", 0) == 0 || name.rfind("cls.", 0) == 0 || name.rfind("embed_out.", 0) == 0 ||
                      name.rfind("vocab_", 0) == 0 || name.rfind("generator_", 0) == 0 ||
                      name.rfind("discriminator_", 0) == 0 || name.rfind("classifier.", 0) == 0 ||
                      name.rfind("cls_classifier.", 0) == 0 || name.rfind("distillation_classifier.", 0) == 0 ||
                      name == "final_logits_bias";
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

// Whether `pattern` matches all of `name`: "*" stands for any run of
// characters, "#" for a run of one or more digits, any other character for
// itself ("h.#.attn.bias" matches "h.11.attn.bias").
bool name_matches(std::string_view pattern, std::string_view name);

// A family loader's Reader: under `prefix` when the token embedding sits at
// `prefix` + `embedding`, under none when at `embedding` alone (a bare
// base-model export), after checking that the embedding has config.json's
// vocab_size rows. Throws, naming the family, when neither is there.
Reader base_model_reader(const Checkpoint& st, const std::string& prefix, const std::string& embedding,
                         const ModelConfig& c);

// BERT's embeddings, E wide (E = d but for ELECTRA's narrower ones), shared by
// BERT, ELECTRA and RoBERTa: embeddings.{word, position, token_type}_embeddings
// (position_table_rows() rows of positions) and embeddings.LayerNorm.
void read_bert_embeddings(Reader& r, const ModelConfig& c, std::int64_t E, ModelWeights& w);

// A vision transformer's embeddings, under the names ViT, DeiT and DINOv2
// share: embeddings.{cls_token [1, 1, d], distillation_token (DeiT),
// register_tokens [1, R, d] (DINOv2 with registers), position_embeddings
// [1, CLS (+ distillation) + table grid, d], patch_embeddings.projection
// (a Conv2d [d, C, p_h, p_w] with bias)}.
void read_vision_embeddings(Reader& r, const ModelConfig& c, ModelWeights& w);

// A vision transformer's self-attention in layer `prefix` ("encoder.layer.N."),
// under the names ViT, DeiT and DINOv2 share: attention.attention.{query,
// key, value} [d -> d] (biases with c.qkv_bias) and attention.output.dense.
void read_vision_attention(Reader& r, const std::string& prefix, const ModelConfig& c, BlockWeights& b);

// A vision classifier `name` [labels, in] with bias, which must have one
// output per label of config.json (id2label / num_labels).
LinearWeights read_image_classifier(Reader& r, const ModelConfig& c, const std::string& name, std::int64_t in);

// A masked-LM head's tensor names (root-level, as the checkpoints store them).
struct MaskedLmHeadNames {
  const char* transform;     // the dense layer [d -> E], read when stored (else the checkpoint has no head)
  const char* norm;          // its LayerNorm [E]
  const char* bias;          // the output bias [V] ...
  const char* decoder_bias;  // ... or where an export keeps it instead (may equal bias)
  const char* decoder;       // the output weight [V, E]: tied to the word embeddings unless stored
};

// The masked-LM head of BERT (cls.predictions.*), DistilBERT (vocab_*),
// ELECTRA's generator (generator_*) and RoBERTa (lm_head.*) into w.mlm and
// w.has_mlm_head, when its transform is stored. E: the embeddings' width.
void read_masked_lm_head(Reader& r, const MaskedLmHeadNames& names, const ModelConfig& c, std::int64_t E,
                         ModelWeights& w);

// Encoder layer `layer` under BERT's names, shared by BERT, ELECTRA and RoBERTa:
// encoder.layer.N.{attention.self.{query, key, value}, attention.output.{dense,
// LayerNorm}, intermediate.dense, output.{dense, LayerNorm}}, with biases.
BlockWeights read_bert_encoder_layer(Reader& r, int layer, std::int64_t d, std::int64_t inner);

// A rotary decoder's layer `prefix` ("layers.N."; the Llama family, Gemma,
// OLMo 2): self_attn.{q,k,v}_proj [d -> heads · head_dim, kv_heads · head_dim]
// with c.qkv_bias and o_proj back with c.attention_out_bias; and its gated
// MLP, mlp.{gate,up}_proj [d -> inner] and mlp.down_proj back, with c.mlp_bias.
void read_rotary_attention(Reader& r, const std::string& prefix, const ModelConfig& c, BlockWeights& b);
void read_gated_mlp(Reader& r, const std::string& prefix, const ModelConfig& c, BlockWeights& b);

// The end of loading a "model."-prefixed rotary decoder (the Llama family,
// Gemma, OLMo 2): lm_head.weight unless tied (output_embedding below), then
// reject_unused, allowing the rotary frequency buffers older exports include
// (layers.N.self_attn.rotary_emb.inv_freq) and a tied copy of the embedding.
void read_rotary_lm_head(const ModelConfig& c, const Checkpoint& st, Reader& r, ModelWeights& w);

// The untied output embedding `name` [V, E] into w.output_embedding, required
// unless the embeddings are tied (then a stored copy is ignored, as Hugging
// Face ties it).
void output_embedding(const ModelConfig& c, const Checkpoint& st, Reader& r, ModelWeights& w, const std::string& name);

// An untied output layer `name` [vocab_size, width] (lm_head.weight), which
// config.json's "tie_word_embeddings": false requires: a missing one is named
// with that reason, one with too few rows as the vocabulary's.
WeightMatrix untied_output_layer(const Checkpoint& st, Reader& r, int vocab_size, std::int64_t width, const std::string& name);

// Throws when the embedding matrix `name` has fewer rows than config.json's vocab_size.
inline void require_vocabulary_size(int vocab_size, const Checkpoint& st, const std::string& name) {
  const TensorInfo& info = st.info(name);
  if (info.shape.size() == 2 && info.shape[0] < vocab_size) {
    throw std::invalid_argument("the vocabulary (vocab_size " + std::to_string(vocab_size) +
                                " in config.json) is larger than the embedding matrix '" + name + "' (" +
                                std::to_string(info.shape[0]) + " rows)");
  }
}

}  // namespace attnplay
