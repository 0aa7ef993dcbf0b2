// Implementation of model/config.h: the families' configs through their
// readers (model/families/, found by model/family.h's registry); the
// encoder-decoders' reader is model/families/marian_bart.cpp's.
#include "model/config.h"

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
  c.eos_token_ids = ids_in_vocabulary(token_ids(j, "eos_token_id"), c.vocab_size);  // one it cannot produce never stops it
  if (c.rope && c.rotary_dims == 0) {
    bad_config("no dimension of a head rotates (head width " + std::to_string(c.head_dim) + ")");
  }
  return c;
}

bool is_encoder_decoder_config(std::string_view config_json) {
  using namespace config_fields;
  return encoder_decoder_type(text(parse_object(config_json), "model_type", ""));
}

}  // namespace attnplay
