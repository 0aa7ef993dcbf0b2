// ELECTRA, model_type "electra": its config.json (BERT's keys plus
// embedding_size), its tensors ("electra." + embeddings.{word, position,
// token_type}_embeddings and LayerNorm, all embedding_size wide,
// embeddings_project when embedding_size ≠ hidden_size,
// encoder.layer.N.* as BERT's; the generator's masked-LM head
// generator_predictions.{dense, LayerNorm} and generator_lm_head; the
// discriminator's replaced-token head discriminator_predictions.*, which
// attention does not use), and its forward recipe: BERT's
// (bert_encoder_forward), with the embeddings projected to the hidden width
// before the first layer.
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

// ElectraConfig's sizes and embedding_size.
constexpr config_fields::SizeDefaults kElectraSizes{12, 4, 256, 1024, 512, 30522};
constexpr int kDefaultEmbeddingSize = 128;

ModelConfig read_electra_config(const nlohmann::json& j, const std::string& /*model_type*/) {
  using namespace config_fields;
  ModelConfig c = bert_encoder_config(j, "ELECTRA", kElectraSizes);
  c.mlm_activation = Activation::gelu_erf;  // the generator's head applies GELU whatever hidden_act says
  c.embedding_size = optional_integer(j, "embedding_size", kMaxWidth, kDefaultEmbeddingSize);
  derive_head_shapes(c);
  return c;
}

ModelWeights load_electra_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "electra.", "embeddings.word_embeddings.weight", c);
  const std::int64_t d = c.width, E = c.embedding_size;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  read_bert_embeddings(r, c, E, w);
  if (E != d) w.embedding_projection = r.linear("embeddings_project", E, d, true);
  for (int l = 0; l < c.layers; ++l) w.blocks.push_back(read_bert_encoder_layer(r, l, d, c.inner));
  read_masked_lm_head(r, {"generator_predictions.dense", "generator_predictions.LayerNorm", "generator_lm_head.bias",
                          "generator_lm_head.bias", "generator_lm_head.weight"}, c, E, w);  // ElectraForMaskedLM
  // The discriminator's replaced-token head and the position-id buffer.
  r.reject_unused({"discriminator_predictions.*", "embeddings.position_ids"});
  return w;
}

}  // namespace

extern const ModelFamily electra_family{{"electra"}, read_electra_config, load_electra_weights, bert_encoder_forward};

}  // namespace attnplay
