// Implementation of model/config.h: the families' configs through their
// readers (model/families/, found by model/family.h's registry), the
// encoder-decoders' here.
#include "model/config.h"

#include <cmath>
#include <string>

#include "model/config_fields.h"
#include "model/family.h"

namespace attnplay {
namespace {

bool encoder_decoder_type(const std::string& type) { return type == "marian" || type == "bart" || type == "t5"; }

}  // namespace

ModelConfig parse_config(std::string_view config_json) {
  using namespace config_fields;
  const nlohmann::json j = parse_object(config_json);
  const std::string type = text(j, "model_type", "");
  if (encoder_decoder_type(type)) {
    bad_config("model_type \"" + type + "\" is an encoder-decoder; it loads as a sequence-to-sequence model, not here");
  }
  const ModelFamily* family = find_family(type);
  if (!family) {
    bad_config(type.empty() ? "\"model_type\" is missing"
                            : "model_type \"" + type + "\" is not supported (supported: " + supported_model_types() +
                                  "; encoder-decoders: marian, bart)");
  }
  ModelConfig c = family->read_config(j, type);
  c.model_type = type;
  c.eos_token_ids = token_ids(j, "eos_token_id", c.vocab_size);
  if (c.rope && c.rotary_dims == 0) {
    bad_config("no dimension of a head rotates (head width " + std::to_string(c.head_dim) + ")");
  }
  return c;
}

bool is_encoder_decoder_config(std::string_view config_json) {
  using namespace config_fields;
  return encoder_decoder_type(text(parse_object(config_json), "model_type", ""));
}

Seq2SeqConfig parse_seq2seq_config(std::string_view config_json) {
  using namespace config_fields;
  const nlohmann::json j = parse_object(config_json);
  const std::string type = text(j, "model_type", "");
  Seq2SeqConfig c;
  if (type == "marian") {
    c.family = Seq2SeqFamily::marian;
  } else if (type == "bart") {
    c.family = Seq2SeqFamily::bart;
  } else if (type == "t5") {
    bad_config("model_type \"t5\" is not supported: T5's relative position buckets, RMS-style norm and gated GELU "
               "are not implemented (supported encoder-decoders: marian, bart)");
  } else {
    bad_config("model_type \"" + type + "\" is not an encoder-decoder this runtime supports (marian, bart)");
  }
  c.model_type = type;
  c.encoder_layers = integer(j, "encoder_layers", kMaxLayers);
  c.decoder_layers = integer(j, "decoder_layers", kMaxLayers);
  c.encoder_heads = integer(j, "encoder_attention_heads", kMaxHeads);
  c.decoder_heads = integer(j, "decoder_attention_heads", kMaxHeads);
  c.width = integer(j, "d_model", kMaxWidth);
  c.encoder_inner = integer(j, "encoder_ffn_dim", 16 * kMaxWidth);
  c.decoder_inner = integer(j, "decoder_ffn_dim", 16 * kMaxWidth);
  c.positions = integer(j, "max_position_embeddings", kMaxPositions);
  c.vocab_size = integer(j, "vocab_size", kMaxVocab);
  for (const auto& [heads, side] : {std::pair{c.encoder_heads, "encoder"}, std::pair{c.decoder_heads, "decoder"}}) {
    if (c.width % heads != 0) {
      bad_config("d_model (" + std::to_string(c.width) + ") is not divisible by the " + side + "'s " + std::to_string(heads) +
                 " attention heads");
    }
  }
  c.activation = activation(text(j, "activation_function", c.family == Seq2SeqFamily::marian ? "swish" : "gelu"),
                            "activation_function");
  c.scale_embedding = flag(j, "scale_embedding", false);
  c.shared_embeddings = flag(j, "share_encoder_decoder_embeddings", true);
  // Variants that compute something else (mBART-style pre-LN, extra final norms) are refused by name.
  require_flag(j, "normalize_before", false);
  require_flag(j, "add_final_layer_norm", false);
  require_flag(j, "add_bias_logits", false);
  require_flag(j, "normalize_embedding", c.family == Seq2SeqFamily::bart);
  require_flag(j, "static_position_embeddings", c.family == Seq2SeqFamily::marian);
  const bool tied = flag(j, "tie_word_embeddings", true);
  if (!tied) bad_config("\"tie_word_embeddings\": false is not supported (the output layer is the token embedding)");
  c.pad_token_id = single_token_id(j, "pad_token_id", c.vocab_size, -1);
  c.decoder_start_token_id = single_token_id(j, "decoder_start_token_id", c.vocab_size, -1);
  if (c.decoder_start_token_id < 0) {
    bad_config("\"decoder_start_token_id\" is missing: the decoder's first input token must be given");
  }
  c.eos_token_ids = token_ids(j, "eos_token_id", c.vocab_size);
  c.forced_bos_token_id = single_token_id(j, "forced_bos_token_id", c.vocab_size, -1);
  if (j.contains("num_beams") && !j["num_beams"].is_null()) c.num_beams = integer(j, "num_beams", 64);
  c.length_penalty = j.contains("length_penalty") && !j["length_penalty"].is_null() && j["length_penalty"].is_number()
                         ? j["length_penalty"].get<double>()
                         : 1.0;
  if (!std::isfinite(c.length_penalty)) bad_config("\"length_penalty\" must be a finite number");
  if (j.contains("max_length") && !j["max_length"].is_null()) c.max_length = integer(j, "max_length", kMaxPositions);
  return c;
}

}  // namespace attnplay
