// BERT, model_type "bert": its config.json, its tensors ("bert." +
// embeddings.{word, position, token_type}_embeddings and LayerNorm,
// encoder.layer.N.{attention.self.{query, key, value}, attention.output,
// intermediate, output}; the masked-LM head cls.predictions.*, LayerNorm as
// weight/bias or gamma/beta), and its forward recipe: learned positions and
// token types, embedding LayerNorm, post-LN blocks read both ways, the
// masked-LM head at the mask positions; the recipe (bert_encoder_forward) is
// the other encoder families' too.
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/forward_pass.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

// BertConfig's sizes.
constexpr config_fields::SizeDefaults kBertSizes{12, 12, 768, 3072, 512, 30522};

ModelConfig read_bert_config(const nlohmann::json& j, const std::string& /*model_type*/) {
  using namespace config_fields;
  ModelConfig c = bert_encoder_config(j, "BERT", kBertSizes);
  c.mlm_activation = c.activation;
  derive_head_shapes(c);
  return c;
}

ModelWeights load_bert_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "bert.", "embeddings.word_embeddings.weight", c);
  const std::int64_t d = c.width;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  read_bert_embeddings(r, c, d, w);
  for (int l = 0; l < c.layers; ++l) w.blocks.push_back(read_bert_encoder_layer(r, l, d, c.inner));
  read_masked_lm_head(r, {"cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.bias",
                          "cls.predictions.decoder.bias", "cls.predictions.decoder.weight"}, c, d, w);
  // Parts of BERT checkpoints this runtime does not use: the pooler, the
  // next-sentence head, the position-id buffer, the decoder's copy of the bias.
  r.reject_unused({"pooler.*", "embeddings.position_ids", "cls.seq_relationship.*", "cls.predictions.bias",
                   "cls.predictions.decoder.bias"});
  return w;
}

}  // namespace

void bert_encoder_forward(ForwardPass& p, const ModelWeights& w) {
  Matrix h = p.embed();          // [T, E] word embeddings (E = d but for ELECTRA)
  p.add_learned_positions(h);    // [T, E] + position embeddings (RoBERTa's from padding_idx + 1)
  p.add_token_types(h);          // [T, E] + token type embeddings (none in DistilBERT)
  h = p.norm(h, w.embedding_norm);
  if (!w.embedding_projection.empty()) h = p.project_embeddings(h);  // ELECTRA: [T, E] -> [T, d]
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    h = p.norm(h + p.attention(h, b, l), b.attention_norm);  // [T, d] LN(h + attn(h))
    h = p.norm(h + p.mlp(h, b), b.mlp_norm);                 // [T, d] LN(h + mlp(h))
    p.record_hidden(h);
  }
  p.masked_lm_head(h);  // [M, V] at the mask positions
}

extern const ModelFamily bert_family{{"bert"}, read_bert_config, load_bert_weights, bert_encoder_forward};

}  // namespace attnplay
