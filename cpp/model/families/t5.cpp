// The T5 family (Raffel et al. 2020): t5 (the original checkpoints, T5 v1.1,
// flan-T5) and mt5, an encoder-decoder whose attention knows positions only
// through a learned bias per head on each bucket of key - query distance
// (layer 0's table, shared by every layer of its side; bidirectional buckets
// in the encoder, causal ones in the decoder). Here: its config.json keys
// (t5_config, with T5Config's defaults for the keys a config leaves out) and
// its tensor names (load_t5_weights). The recipe is model/seq2seq.cpp's, as
// for Marian and BART, with T5's steps where Seq2SeqConfig::t5() says: pre-RMS
// norm layers and a final norm per side, no biases, q·k unscaled plus the
// position bias, ReLU or gated feed-forward, and the output layer read through
// d_model^-0.5 when it is the tied embedding table.
// Not here: UMT5 (a bias table per layer), refused by name in model/config.cpp.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "model/config.h"
#include "model/config_fields.h"
#include "model/seq2seq.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

// q, k, v, o of a T5Attention block: [d -> H·d_kv] and back, no biases.
AttentionWeights attention_weights(Reader& r, const std::string& base, std::int64_t d, std::int64_t inner) {
  return {r.linear(base + ".q", d, inner, false), r.linear(base + ".k", d, inner, false),
          r.linear(base + ".v", d, inner, false), r.linear(base + ".o", inner, d, false)};
}

// block.{l}: layer.0 self-attention, (decoder) layer.1 cross-attention, then
// the feed-forward layer, each with the RMS norm before it.
Seq2SeqLayerWeights layer_weights(Reader& r, const Seq2SeqConfig& c, const std::string& base, std::int64_t inner,
                                  int ffn, bool cross) {
  const std::int64_t d = c.width;
  Seq2SeqLayerWeights l;
  l.self_attn = attention_weights(r, base + "layer.0.SelfAttention", d, inner);
  l.self_attn_norm = r.rms_norm(base + "layer.0.layer_norm", d);
  if (cross) {
    l.cross_attn = attention_weights(r, base + "layer.1.EncDecAttention", d, inner);
    l.cross_attn_norm = r.rms_norm(base + "layer.1.layer_norm", d);
  }
  const std::string ff = base + "layer." + (cross ? "2" : "1") + ".";
  if (c.gated_feed_forward) {
    l.fc1 = r.linear(ff + "DenseReluDense.wi_0", d, ffn, false);  // the gate, through the activation
    l.fc1_up = r.linear(ff + "DenseReluDense.wi_1", d, ffn, false);
  } else {
    l.fc1 = r.linear(ff + "DenseReluDense.wi", d, ffn, false);
  }
  l.fc2 = r.linear(ff + "DenseReluDense.wo", ffn, d, false);
  l.final_norm = r.rms_norm(ff + "layer_norm", d);
  return l;
}

}  // namespace

// T5Config's keys and defaults (MT5Config's for mt5: gated GELU, untied).
Seq2SeqConfig config_fields::t5_config(const nlohmann::json& j, const std::string& type) {
  using namespace config_fields;
  const bool mt5 = type == "mt5";
  Seq2SeqConfig c;
  c.family = Seq2SeqFamily::t5;
  c.vocab_size = optional_integer(j, "vocab_size", kMaxVocab, mt5 ? 250112 : 32128);
  c.width = optional_integer(j, "d_model", kMaxWidth, 512);
  c.head_dim = optional_integer(j, "d_kv", kMaxWidth, 64);
  c.encoder_inner = c.decoder_inner = optional_integer(j, "d_ff", 16 * kMaxWidth, mt5 ? 1024 : 2048);
  c.encoder_layers = optional_integer(j, "num_layers", kMaxLayers, mt5 ? 8 : 6);
  c.decoder_layers = optional_integer(j, "num_decoder_layers", kMaxLayers, c.encoder_layers);
  c.encoder_heads = c.decoder_heads = optional_integer(j, "num_heads", kMaxHeads, mt5 ? 6 : 8);
  c.relative_buckets = optional_integer(j, "relative_attention_num_buckets", 1 << 16, 32);
  c.relative_max_distance = optional_integer(j, "relative_attention_max_distance", kMaxPositions, 128);
  if (c.relative_buckets < 2) bad_config("\"relative_attention_num_buckets\" must be at least 2");
  c.norm_eps = epsilon(j, "layer_norm_epsilon", 1e-6f);
  // Positions are relative: any length runs, as in transformers (n_positions is not a limit there).
  // A translation stops after transformers' default max_length of 20 unless the config says otherwise
  // (parse_seq2seq_config reads "max_length"), not after a million positions.
  c.positions = kMaxPositions;
  c.max_length = 20;
  // feed_forward_proj: "ACT" or "gated-ACT" (transformers' T5Config; "gated-gelu" means gelu_new).
  const std::string proj = text(j, "feed_forward_proj", mt5 ? "gated-gelu" : "relu");
  const std::size_t dash = proj.find('-');
  c.gated_feed_forward = dash != std::string::npos;
  if (c.gated_feed_forward && (proj.substr(0, dash) != "gated" || proj.find('-', dash + 1) != std::string::npos)) {
    bad_config("\"feed_forward_proj\" is \"" + proj + "\"; it must be an activation or \"gated-\" and one, "
               "such as \"relu\" or \"gated-gelu\"");
  }
  const std::string act = c.gated_feed_forward ? proj.substr(dash + 1) : proj;
  c.activation = activation(proj == "gated-gelu" ? "gelu_new" : act, "feed_forward_proj");
  c.tied_output = flag(j, "tie_word_embeddings", !mt5);
  // The token ids' defaults (parse_seq2seq_config reads the keys): pad 0, eos 1, the decoder starting from the pad token.
  c.pad_token_id = 0;
  c.decoder_start_token_id = static_cast<int>(single_token_id(j, "pad_token_id", 0));
  c.eos_token_ids = {1};
  return c;
}

// shared.weight (the one token table; encoder.embed_tokens and
// decoder.embed_tokens are its tied copies), {encoder,decoder}.block.{l}.*,
// block 0's relative_attention_bias, the final layer norms, and lm_head when
// the output layer is untied (a tied lm_head copy is ignored).
Seq2SeqWeights load_t5_weights(const Seq2SeqConfig& c, const Checkpoint& st) {
  Reader r(st, "");
  const std::int64_t d = c.width, V = c.vocab_size;
  const std::string table = r.has("shared.weight") ? "shared.weight" : "encoder.embed_tokens.weight";
  if (!r.has(table)) {
    throw std::invalid_argument("tensor 'shared.weight' (or 'encoder.embed_tokens.weight') is missing: not a " +
                                c.model_type + " checkpoint");
  }
  require_vocabulary_size(c.vocab_size, st, table);
  Seq2SeqWeights w;
  w.encoder_embedding = r.out_by_in(table, V, d);
  w.decoder_embedding = w.encoder_embedding;
  for (const auto& [side, layers, heads, bias, final_norm] :
       {std::tuple{"encoder", c.encoder_layers, c.encoder_heads, &w.encoder_position_bias, &w.encoder_final_norm},
        std::tuple{"decoder", c.decoder_layers, c.decoder_heads, &w.decoder_position_bias, &w.decoder_final_norm}}) {
    const std::string prefix = std::string(side) + ".block.";
    const bool decoder = side == std::string("decoder");
    // [buckets, H]: nn.Embedding(relative_attention_num_buckets, n_heads), read as a small matrix.
    *bias = r.out_by_in(prefix + "0.layer.0.SelfAttention.relative_attention_bias.weight", c.relative_buckets, heads).to_matrix();
    for (int l = 0; l < layers; ++l) {
      (decoder ? w.decoder : w.encoder)
          .push_back(layer_weights(r, c, prefix + std::to_string(l) + ".", static_cast<std::int64_t>(heads) * c.head_dim,
                                   decoder ? c.decoder_inner : c.encoder_inner, decoder));
    }
    *final_norm = r.rms_norm(std::string(side) + ".final_layer_norm", d);
  }
  if (!c.tied_output) w.output_embedding = untied_output_layer(st, r, c.vocab_size, d, "lm_head.weight");
  std::vector<std::string> tied{"encoder.embed_tokens.weight", "decoder.embed_tokens.weight"};
  if (c.tied_output) tied.push_back("lm_head.weight");
  r.reject_unused(tied);
  return w;
}

}  // namespace attnplay
