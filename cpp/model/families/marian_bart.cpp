// The encoder-decoder families Marian (Helsinki-NLP opus-mt) and BART: their
// config.json keys (marian_bart_config, model/config_fields.h) and their
// tensor names (load_marian_bart_weights, model/seq2seq.h), beside the other
// families' readers and loaders. Their recipes, which they share with T5
// (model/families/t5.cpp) through flags, are model/seq2seq.cpp's encode() and
// decode().
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "model/config.h"
#include "model/config_fields.h"
#include "model/seq2seq.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

// Marian's fixed positions [P, d]: angle(p, j) = p / 10000^(2·floor(j/2)/d);
// the sines of the even-j angles fill the first half of each row, the cosines
// of the odd-j angles the second (Hugging Face's MarianSinusoidalPositionalEmbedding,
// computed in double, then rounded to float32 as it does).
Matrix marian_sinusoids(int positions, int d) {
  Matrix table(positions, d);  // [P, d]
  const int half = d / 2 + d % 2;  // sines: ceil(d/2) columns
  for (int p = 0; p < positions; ++p) {
    for (int j = 0; j < d; ++j) {
      const double angle = p / std::pow(10000.0, 2.0 * (j / 2) / d);
      if (j % 2 == 0) {
        table(p, j / 2) = static_cast<float>(std::sin(angle));
      } else {
        table(p, half + j / 2) = static_cast<float>(std::cos(angle));
      }
    }
  }
  return table;
}

AttentionWeights attention_weights(Reader& r, const std::string& base, std::int64_t d) {
  return {r.linear(base + ".q_proj", d, d, true), r.linear(base + ".k_proj", d, d, true),
          r.linear(base + ".v_proj", d, d, true), r.linear(base + ".out_proj", d, d, true)};
}

Seq2SeqLayerWeights layer_weights(Reader& r, const std::string& base, std::int64_t d, std::int64_t inner,
                                  bool cross) {
  Seq2SeqLayerWeights l;
  l.self_attn = attention_weights(r, base + "self_attn", d);
  l.self_attn_norm = r.layer_norm(base + "self_attn_layer_norm", d);
  if (cross) {
    l.cross_attn = attention_weights(r, base + "encoder_attn", d);
    l.cross_attn_norm = r.layer_norm(base + "encoder_attn_layer_norm", d);
  }
  l.fc1 = r.linear(base + "fc1", d, inner, true);
  l.fc2 = r.linear(base + "fc2", inner, d, true);
  l.final_norm = r.layer_norm(base + "final_layer_norm", d);
  return l;
}

}  // namespace

Seq2SeqConfig config_fields::marian_bart_config(const nlohmann::json& j, const std::string& type) {
  using namespace config_fields;
  Seq2SeqConfig c;
  c.family = type == "bart" ? Seq2SeqFamily::bart : Seq2SeqFamily::marian;
  const bool marian = c.family == Seq2SeqFamily::marian;
  // MarianConfig's and BartConfig's defaults where a key is absent.
  c.encoder_layers = optional_integer(j, "encoder_layers", kMaxLayers, 12);
  c.decoder_layers = optional_integer(j, "decoder_layers", kMaxLayers, 12);
  c.encoder_heads = optional_integer(j, "encoder_attention_heads", kMaxHeads, 16);
  c.decoder_heads = optional_integer(j, "decoder_attention_heads", kMaxHeads, 16);
  c.width = optional_integer(j, "d_model", kMaxWidth, 1024);
  c.encoder_inner = optional_integer(j, "encoder_ffn_dim", 16 * kMaxWidth, 4096);
  c.decoder_inner = optional_integer(j, "decoder_ffn_dim", 16 * kMaxWidth, 4096);
  c.positions = optional_integer(j, "max_position_embeddings", kMaxPositions, 1024);
  c.vocab_size = optional_integer(j, "vocab_size", kMaxVocab, marian ? 58101 : 50265);
  c.pad_token_id = marian ? 58100 : 1;  // the token ids' defaults (parse_seq2seq_config reads the keys)
  c.decoder_start_token_id = marian ? 58100 : 2;
  c.eos_token_ids = {marian ? 0 : 2};
  for (const auto& [heads, side] : {std::pair{c.encoder_heads, "encoder"}, std::pair{c.decoder_heads, "decoder"}}) {
    if (c.width % heads != 0) {
      bad_config("d_model (" + std::to_string(c.width) + ") is not divisible by the " + side + "'s " + std::to_string(heads) +
                 " attention heads");
    }
  }
  c.activation = activation(text(j, "activation_function", "gelu"), "activation_function");
  c.scale_embedding = flag(j, "scale_embedding", false);
  c.shared_embeddings = flag(j, "share_encoder_decoder_embeddings", true);
  // fairseq's normalize_before, add_final_layer_norm, add_bias_logits,
  // normalize_embedding and static_position_embeddings, which older configs
  // carry, are read by neither BartModel nor MarianModel: ignored here too.
  c.tied_output = flag(j, "tie_word_embeddings", true);
  return c;
}

// model.{shared, encoder.*, decoder.*}, final_logits_bias, lm_head when
// untied; the tied copies (encoder/decoder embed_tokens when shared, lm_head)
// are ignored as Hugging Face ties them.
Seq2SeqWeights load_marian_bart_weights(const Seq2SeqConfig& c, const Checkpoint& st) {
  std::string prefix = "model.";
  if (!st.contains("model.shared.weight") && !st.contains("model.encoder.embed_tokens.weight")) {
    if (st.contains("shared.weight") || st.contains("encoder.embed_tokens.weight")) {
      prefix = "";  // a bare base-model export
    } else {
      throw std::invalid_argument("tensor 'model.shared.weight' (or 'model.encoder.embed_tokens.weight') is missing: "
                                  "not a " + c.model_type + " checkpoint");
    }
  }
  Reader r(st, prefix);
  const std::int64_t d = c.width, V = c.vocab_size;
  Seq2SeqWeights w;
  if (c.shared_embeddings) {
    const std::string name = r.has("shared.weight") ? "shared.weight" : "encoder.embed_tokens.weight";
    require_vocabulary_size(c.vocab_size, st, prefix + name);
    w.encoder_embedding = r.out_by_in(name, V, d);
    w.decoder_embedding = w.encoder_embedding;
  } else {
    require_vocabulary_size(c.vocab_size, st, prefix + "encoder.embed_tokens.weight");
    w.encoder_embedding = r.out_by_in("encoder.embed_tokens.weight", V, d);
    w.decoder_embedding = r.out_by_in("decoder.embed_tokens.weight", V, d);
  }
  const std::int64_t P = c.positions + c.position_offset();
  for (const auto& [side, table] : {std::pair{"encoder", &w.encoder_positions}, std::pair{"decoder", &w.decoder_positions}}) {
    const std::string name = std::string(side) + ".embed_positions.weight";
    if (c.family == Seq2SeqFamily::bart || r.has(name)) {
      *table = r.out_by_in(name, P, d);
    } else {  // Marian: static sinusoids, computed when the checkpoint does not store them
      *table = WeightMatrix::from_matrix(marian_sinusoids(c.positions, c.width), WeightLayout::out_by_in);
    }
  }
  if (c.family == Seq2SeqFamily::bart) {
    w.encoder_embedding_norm = r.layer_norm("encoder.layernorm_embedding", d);
    w.decoder_embedding_norm = r.layer_norm("decoder.layernorm_embedding", d);
  }
  for (int l = 0; l < c.encoder_layers; ++l) {
    w.encoder.push_back(layer_weights(r, "encoder.layers." + std::to_string(l) + ".", d, c.encoder_inner, false));
  }
  for (int l = 0; l < c.decoder_layers; ++l) {
    w.decoder.push_back(layer_weights(r, "decoder.layers." + std::to_string(l) + ".", d, c.decoder_inner, true));
  }
  // final_logits_bias is [1, V]; a checkpoint without it adds nothing.
  if (st.contains("final_logits_bias")) w.final_logits_bias = r.take("final_logits_bias", 1, V, false, WeightLayout::out_by_in).to_matrix();
  if (!c.tied_output) w.output_embedding = untied_output_layer(st, r, c.vocab_size, d, "lm_head.weight");
  std::vector<std::string> tied;
  if (c.tied_output) tied.push_back("lm_head.weight");
  if (c.shared_embeddings) tied.insert(tied.end(), {"encoder.embed_tokens.weight", "decoder.embed_tokens.weight"});
  r.reject_unused(tied);
  return w;
}

}  // namespace attnplay
