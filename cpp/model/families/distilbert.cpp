// DistilBERT, model_type "distilbert": its config.json (dim, n_layers,
// n_heads, hidden_dim, activation), its tensors ("distilbert." +
// embeddings.{word, position}_embeddings and LayerNorm,
// transformer.layer.N.{attention.{q,k,v,out}_lin, sa_layer_norm, ffn.lin1,
// ffn.lin2, output_layer_norm}; the masked-LM head vocab_transform,
// vocab_layer_norm, vocab_projector), and its forward recipe: BERT's
// (bert_encoder_forward) without token types (every LayerNorm at eps 1e-12, as
// transformers builds them whatever the config says).
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

ModelConfig read_distilbert_config(const nlohmann::json& j, const std::string& /*model_type*/) {
  using namespace config_fields;
  ModelConfig c;
  c.family_name = "DistilBERT";
  c.bidirectional = true;
  // DistilBertConfig's defaults where a key is absent.
  c.layers = optional_integer(j, "n_layers", kMaxLayers, 6);
  c.heads = optional_integer(j, "n_heads", kMaxHeads, 12);
  c.width = optional_integer(j, "dim", kMaxWidth, 768);
  c.inner = optional_integer(j, "hidden_dim", 4 * kMaxWidth, 4 * 768);
  c.positions = optional_integer(j, "max_position_embeddings", kMaxPositions, 512);
  c.vocab_size = optional_integer(j, "vocab_size", kMaxVocab, 30522);
  c.type_vocab_size = 0;  // no token types: a pair of texts is told apart by [SEP] alone
  c.norm_eps = 1e-12f;
  c.activation = activation(text(j, "activation", "gelu"), "activation");
  c.mlm_activation = c.activation;
  derive_head_shapes(c);
  return c;
}

ModelWeights load_distilbert_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "distilbert.", "embeddings.word_embeddings.weight", c);
  const std::int64_t d = c.width, V = c.vocab_size;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  w.token_embedding = r.out_by_in("embeddings.word_embeddings.weight", V, d);
  w.position_embedding = r.out_by_in("embeddings.position_embeddings.weight", c.positions, d);
  w.embedding_norm = r.layer_norm("embeddings.LayerNorm", d);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "transformer.layer." + std::to_string(l) + ".";
    BlockWeights b;
    b.q = r.linear(p + "attention.q_lin", d, d, true);
    b.k = r.linear(p + "attention.k_lin", d, d, true);
    b.v = r.linear(p + "attention.v_lin", d, d, true);
    b.attention_out = r.linear(p + "attention.out_lin", d, d, true);
    b.attention_norm = r.layer_norm(p + "sa_layer_norm", d);
    b.mlp_in = r.linear(p + "ffn.lin1", d, c.inner, true);
    b.mlp_out = r.linear(p + "ffn.lin2", c.inner, d, true);
    b.mlp_norm = r.layer_norm(p + "output_layer_norm", d);
    w.blocks.push_back(std::move(b));
  }
  read_masked_lm_head(r, {"vocab_transform", "vocab_layer_norm", "vocab_projector.bias", "vocab_projector.bias",
                          "vocab_projector.weight"}, c, d, w);
  // The position-id buffer some exports include.
  r.reject_unused({"embeddings.position_ids"});
  return w;
}

}  // namespace

extern const ModelFamily distilbert_family{{"distilbert"}, read_distilbert_config, load_distilbert_weights,
                                           bert_encoder_forward};

}  // namespace attnplay
