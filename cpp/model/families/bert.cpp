// BERT, model_type "bert": its config.json, its tensors ("bert." +
// embeddings.{word, position, token_type}_embeddings and LayerNorm,
// encoder.layer.N.{attention.self.{query, key, value}, attention.output,
// intermediate, output}; the masked-LM head cls.predictions.*, LayerNorm as
// weight/bias or gamma/beta), and its forward recipe: learned positions and
// token types, embedding LayerNorm, post-LN blocks read both ways, the
// masked-LM head at the mask positions.
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/forward_pass.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

ModelConfig read_bert_config(const nlohmann::json& j, const std::string& /*model_type*/) {
  using namespace config_fields;
  ModelConfig c = bert_encoder_config(j, "BERT");
  c.mlm_activation = c.activation;
  derive_head_shapes(c);
  return c;
}

ModelWeights load_bert_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "bert.", "embeddings.word_embeddings.weight", c);
  const std::int64_t d = c.width, V = c.vocab_size;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  w.token_embedding = r.out_by_in("embeddings.word_embeddings.weight", V, d);
  w.position_embedding = r.out_by_in("embeddings.position_embeddings.weight", c.positions, d);
  w.type_embedding = r.out_by_in("embeddings.token_type_embeddings.weight", c.type_vocab_size, d);
  w.embedding_norm = r.layer_norm("embeddings.LayerNorm", d);
  for (int l = 0; l < c.layers; ++l) w.blocks.push_back(read_bert_encoder_layer(r, l, d, c.inner));
  if (st.contains("cls.predictions.transform.dense.weight")) {
    w.has_mlm_head = true;
    w.mlm.transform = r.linear("cls.predictions.transform.dense", d, d, true);
    w.mlm.norm = r.layer_norm("cls.predictions.transform.LayerNorm", d);
    w.mlm.bias = r.vector(st.contains("cls.predictions.bias") ? "cls.predictions.bias" : "cls.predictions.decoder.bias", V);
    if (st.contains("cls.predictions.decoder.weight")) {
      w.output_embedding = r.out_by_in("cls.predictions.decoder.weight", V, d);
    }
  }
  // Parts of BERT checkpoints this runtime does not use: the pooler, the
  // next-sentence head, the position-id buffer, the decoder's copy of the bias.
  r.reject_unused(R"((bert\.)?(pooler\..*|embeddings\.position_ids)|cls\.seq_relationship\..*|)"
                  R"(cls\.predictions\.(decoder\.)?bias)");
  return w;
}

void bert_forward(ForwardPass& p, const ModelWeights& w) {
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

}  // namespace

extern const ModelFamily bert_family{{"bert"}, read_bert_config, load_bert_weights, bert_forward};

}  // namespace attnplay
