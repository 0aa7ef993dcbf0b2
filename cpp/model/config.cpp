// Implementation of model/config.h: the families' configs through their
// readers (model/families/, found by model/family.h's registry); the
// encoder-decoders' through model/families/marian_bart.cpp's and t5.cpp's,
// and the generation keys they share.
#include "model/config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "model/config_fields.h"
#include "model/family.h"

namespace attnplay {
namespace {

bool encoder_decoder_type(const std::string& type) {
  return type == "marian" || type == "bart" || type == "t5" || type == "mt5" || type == "umt5";
}

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
                                  "; encoder-decoders: marian, bart, t5, mt5)");
  }
  ModelConfig c = family->read_config(j, type);
  c.model_type = type;
  c.eos_token_ids = ids_in_vocabulary(token_ids(j, "eos_token_id"), c.vocab_size);  // one it cannot produce never stops it
  if (c.rope && c.rotary_dims == 0) {
    bad_config("no dimension of a head rotates (head width " + std::to_string(c.head_dim) + ")");
  }
  if (c.rope && c.rope_scaling.type == RopeFrequencyScaling::Type::longrope) {
    const std::size_t pairs = static_cast<std::size_t>(c.rotary_dims / 2);
    if (c.rope_scaling.short_factors.size() != pairs || c.rope_scaling.long_factors.size() != pairs) {
      bad_config("rope_scaling: longrope's \"short_factor\" and \"long_factor\" need one factor per rotated pair (" +
                 std::to_string(pairs) + "), not " + std::to_string(c.rope_scaling.short_factors.size()) + " and " +
                 std::to_string(c.rope_scaling.long_factors.size()));
    }
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
  if (type == "marian" || type == "bart") {
    c = marian_bart_config(j, type);
  } else if (type == "t5" || type == "mt5") {
    c = t5_config(j, type);
  } else if (type == "umt5") {
    bad_config("model_type \"umt5\" is not supported: its layers each learn their own relative position bias "
               "(supported encoder-decoders: marian, bart, t5, mt5)");
  } else {
    bad_config("model_type \"" + type + "\" is not an encoder-decoder this runtime supports (marian, bart, t5, mt5)");
  }
  c.model_type = type;
  // Token ids: config.json's, else the config class's defaults (set by the
  // family's reader). Ids outside the vocabulary load, as in transformers: a
  // pad or stop token the model cannot produce is never masked or met; the
  // start token, every decoder pass's first input, must fit; a forced first
  // token that does not is refused by the search that would force it
  // (model/translate.h). A null start token is generate()'s: the bos token.
  const std::vector<int> pad = ids_in_vocabulary({single_token_id(j, "pad_token_id", c.pad_token_id)}, c.vocab_size);
  c.pad_token_id = pad.empty() ? -1 : pad.front();
  std::int64_t start = single_token_id(j, "decoder_start_token_id", c.decoder_start_token_id);
  if (j.contains("decoder_start_token_id") && j["decoder_start_token_id"].is_null()) {
    start = single_token_id(j, "bos_token_id", c.family == Seq2SeqFamily::bart ? 0 : -1);  // BartConfig's bos 0
    if (start < 0) {
      bad_config("\"decoder_start_token_id\" is null and there is no \"bos_token_id\": the decoder's first input token must be given");
    }
  }
  if (start < 0 || start >= c.vocab_size) {
    bad_config("\"decoder_start_token_id\" " + std::to_string(start) + " is outside the vocabulary (0.." +
               std::to_string(c.vocab_size - 1) + "): every decoder pass starts with it");
  }
  c.decoder_start_token_id = static_cast<int>(start);
  std::vector<std::int64_t> eos(c.eos_token_ids.begin(), c.eos_token_ids.end());
  if (j.contains("eos_token_id")) eos = token_ids(j, "eos_token_id");  // null: none
  c.eos_token_ids = ids_in_vocabulary(eos, c.vocab_size);
  c.forced_bos_token_id = static_cast<int>(std::clamp<std::int64_t>(single_token_id(j, "forced_bos_token_id", -1), -1, INT32_MAX));
  if (j.contains("num_beams") && !j["num_beams"].is_null()) c.num_beams = integer(j, "num_beams", 64);
  c.length_penalty = j.contains("length_penalty") && !j["length_penalty"].is_null() && j["length_penalty"].is_number()
                         ? j["length_penalty"].get<double>()
                         : 1.0;
  if (!std::isfinite(c.length_penalty)) bad_config("\"length_penalty\" must be a finite number");
  if (j.contains("max_length") && !j["max_length"].is_null()) c.max_length = integer(j, "max_length", kMaxPositions);
  return c;
}

}  // namespace attnplay
