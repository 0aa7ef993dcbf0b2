// ELECTRA, model_type "electra": its config.json (BERT's keys plus
// embedding_size), its tensors ("electra." + embeddings.{word, position,
// token_type}_embeddings and LayerNorm, all embedding_size wide,
// embeddings_project when embedding_size ≠ hidden_size,
// encoder.layer.N.* as BERT's; the generator's masked-LM head
// generator_predictions.{dense, LayerNorm} and generator_lm_head; the
// discriminator's replaced-token head discriminator_predictions.*, which
// attention does not use), and its forward recipe: BERT's, with the
// embeddings projected to the hidden width before the first layer.
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/forward_pass.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

// ElectraConfig's default embedding_size (transformers).
constexpr int kDefaultEmbeddingSize = 128;

ModelConfig read_electra_config(const nlohmann::json& j, const std::string& /*model_type*/) {
  using namespace config_fields;
  ModelConfig c = bert_encoder_config(j, "ELECTRA");
  c.mlm_activation = Activation::gelu_erf;  // the generator's head applies GELU whatever hidden_act says
  c.embedding_size = optional_integer(j, "embedding_size", kMaxWidth, kDefaultEmbeddingSize);
  derive_head_shapes(c);
  return c;
}

ModelWeights load_electra_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "electra.", "embeddings.word_embeddings.weight", c);
  const std::int64_t d = c.width, V = c.vocab_size, E = c.embedding_size;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  w.token_embedding = r.out_by_in("embeddings.word_embeddings.weight", V, E);
  w.position_embedding = r.out_by_in("embeddings.position_embeddings.weight", c.positions, E);
  w.type_embedding = r.out_by_in("embeddings.token_type_embeddings.weight", c.type_vocab_size, E);
  w.embedding_norm = r.layer_norm("embeddings.LayerNorm", E);
  if (E != d) w.embedding_projection = r.linear("embeddings_project", E, d, true);
  for (int l = 0; l < c.layers; ++l) w.blocks.push_back(read_bert_encoder_layer(r, l, d, c.inner));
  if (st.contains("generator_predictions.dense.weight")) {  // ElectraForMaskedLM (a generator)
    w.has_mlm_head = true;
    w.mlm.transform = r.linear("generator_predictions.dense", d, E, true);
    w.mlm.norm = r.layer_norm("generator_predictions.LayerNorm", E);
    w.mlm.bias = r.vector("generator_lm_head.bias", V);
    // Tied to the word embeddings; a checkpoint may store the copy.
    if (st.contains("generator_lm_head.weight")) w.output_embedding = r.out_by_in("generator_lm_head.weight", V, E);
  }
  // The discriminator's replaced-token head and the position-id buffer.
  r.reject_unused(R"(discriminator_predictions\..*|(electra\.)?embeddings\.position_ids)");
  return w;
}

void electra_forward(ForwardPass& p, const ModelWeights& w) {
  Matrix h = p.embed();          // [T, E] word embeddings
  p.add_learned_positions(h);    // [T, E] + position embeddings
  p.add_token_types(h);          // [T, E] + token type embeddings
  h = p.norm(h, w.embedding_norm);
  if (!w.embedding_projection.w.empty()) h = p.project_embeddings(h);  // [T, d]
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    h = p.norm(h + p.attention(h, b, l), b.attention_norm);  // [T, d] LN(h + attn(h))
    h = p.norm(h + p.mlp(h, b), b.mlp_norm);                 // [T, d] LN(h + mlp(h))
    p.record_hidden(h);
  }
  p.masked_lm_head(h);  // [M, V] (generators)
}

}  // namespace

extern const ModelFamily electra_family{{"electra"}, read_electra_config, load_electra_weights, electra_forward};

}  // namespace attnplay
