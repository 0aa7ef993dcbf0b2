// RoBERTa and its kin, model_type "roberta", "xlm-roberta", "camembert": BERT's
// config keys plus pad_token_id (default 1), BERT's tensors under "roberta."
// (embeddings, encoder.layer.N.*; position_embeddings has padding_idx + 1
// rows before the first token's), the masked-LM head lm_head.{dense,
// layer_norm, decoder, bias}; and its forward recipe: BERT's
// (bert_encoder_forward), with positions counted over the non-pad ids from
// padding_idx + 1 (a pad id inside the text takes padding_idx and does not
// advance the count, as transformers' create_position_ids_from_input_ids), one
// segment (a pair is told apart by its </s></s>), and GELU in the masked-LM
// head whatever hidden_act says.
// Not here: RoBERTa-PreLayerNorm (its own model_type, not supported).
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

// RobertaConfig's (and XLMRobertaConfig's, CamembertConfig's) default pad_token_id; their
// sizes (RobertaConfig's vocabulary is GPT-2's BPE, the others' BERT's default).
constexpr int kDefaultPaddingIdx = 1;
constexpr config_fields::SizeDefaults kRobertaSizes{12, 12, 768, 3072, 512, 50265};
constexpr config_fields::SizeDefaults kXlmRobertaSizes{12, 12, 768, 3072, 512, 30522};

ModelConfig read_roberta_config(const nlohmann::json& j, const std::string& model_type) {
  using namespace config_fields;
  ModelConfig c = bert_encoder_config(j, model_type == "xlm-roberta" ? "XLM-RoBERTa"
                                         : model_type == "camembert" ? "CamemBERT" : "RoBERTa",
                                      model_type == "roberta" ? kRobertaSizes : kXlmRobertaSizes);
  c.segment_input = false;                  // the tokenizer gives no token_type_ids: segment 0 throughout
  c.mlm_activation = Activation::gelu_erf;  // RobertaLMHead applies GELU whatever hidden_act says
  const std::int64_t pad = single_token_id(j, "pad_token_id", kDefaultPaddingIdx);
  // The positions' padding_idx indexes both embedding tables (torch refuses it outside either).
  if (pad < 0 || pad >= c.vocab_size || pad + 1 >= c.positions) {
    bad_config("\"pad_token_id\" " + std::to_string(pad) + " must be a token id below \"vocab_size\" (" +
               std::to_string(c.vocab_size) + ") that leaves a position in \"max_position_embeddings\" (" +
               std::to_string(c.positions) + "): RoBERTa's positions start after it");
  }
  c.position_count = ModelConfig::PositionCount::non_pad_ids;  // a pad id reads row pad_token_id
  c.position_offset = static_cast<int>(pad) + 1;
  c.positions -= c.position_offset;  // the rows up to padding_idx are no token's position
  derive_head_shapes(c);
  return c;
}

ModelWeights load_roberta_weights(const ModelConfig& c, const Checkpoint& st) {
  Reader r = base_model_reader(st, "roberta.", "embeddings.word_embeddings.weight", c);
  const std::int64_t d = c.width;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  read_bert_embeddings(r, c, d, w);
  for (int l = 0; l < c.layers; ++l) w.blocks.push_back(read_bert_encoder_layer(r, l, d, c.inner));
  read_masked_lm_head(r, {"lm_head.dense", "lm_head.layer_norm", "lm_head.bias", "lm_head.decoder.bias",
                          "lm_head.decoder.weight"}, c, d, w);  // RobertaForMaskedLM
  // Parts of RoBERTa checkpoints this runtime does not use: the pooler, the
  // position-id buffer, the decoder's copy of the bias.
  r.reject_unused({"pooler.*", "embeddings.position_ids", "lm_head.bias", "lm_head.decoder.bias"});
  return w;
}

}  // namespace

extern const ModelFamily roberta_family{{"roberta", "xlm-roberta", "camembert"}, read_roberta_config,
                                        load_roberta_weights, bert_encoder_forward};

}  // namespace attnplay
