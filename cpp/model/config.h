// A transformer's hyper-parameters, read from a Hugging Face config.json, and
// what they mean for the forward pass (norm, positions, attention, MLP,
// residual). Families by "model_type": "gpt2" (GPT-2, DistilGPT-2), "bert", "distilbert", "electra",
// "roberta" / "xlm-roberta" / "camembert", "opt",
// "llama" (SmolLM, TinyLlama, Llama 3.x), "mistral", "qwen2", "qwen3", "smollm3", "gemma" / "gemma2" /
// "gemma3_text", "olmo2", "phi3" and
// "gpt_neox" (Pythia), and the vision transformers "vit" (ViT, DeiT without
// distillation), "deit", "dinov2" and "dinov2_with_registers". Every value is validated (positive, within limits,
// widths divisible by the number of heads, supported activation and options)
// with a specific message naming the key; unknown families and options that
// would change the computation are refused by name. Which keys each family
// reads: its file in model/families/.
// Not here: the weights (model/weights.h) or the forward pass (model/model.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attention/positional.h"
#include "nn/layers.h"

namespace attnplay {

enum class NormKind { layer_norm, rms_norm };

// A vision transformer's input: a picture cut into patches, each patch one
// token after the learned ones (CLS, DeiT's distillation token, DINOv2's
// registers). Token order: CLS, distillation, registers, then the patches
// row by row.
struct VisionConfig {
  int image_height = 0, image_width = 0;  // image_size: the picture size the position table was learned for
  int patch_height = 0, patch_width = 0;  // patch_size
  int channels = 3;                       // num_channels
  bool distillation_token = false;        // DeiT
  int registers = 0;                      // DINOv2 with registers: tokens after CLS without a position
  // How the learned patch positions meet a picture of another grid: ViT and
  // DeiT refuse it (transformers does unless asked to interpolate); DINOv2
  // resizes them with torch's bicubic interpolation, DINOv2 with registers
  // antialiased.
  enum class PositionResize { refuse, bicubic, bicubic_antialiased };
  PositionResize position_resize = PositionResize::refuse;
  bool layer_scale = false;               // DINOv2: each sub-layer's output times a learned vector before the residual add
  // The classifier's input: the final CLS row (ViT, DeiT); the average of
  // the CLS and distillation classifiers (DeiT with teacher: which of the two
  // a checkpoint is, its tensors say, VisionWeights::pooling); [CLS, mean of
  // the patch rows] (DINOv2).
  enum class Pooling { cls, cls_and_distillation, cls_and_patch_mean };
  std::vector<std::string> labels;        // id2label in id order ("LABEL_i" where it names none); one per classifier output
  std::string processor_type;             // AutoImageProcessor's class when preprocessor_config.json names none

  // Tokens before the patches: CLS, distillation, registers.
  int prefix_tokens() const { return 1 + (distillation_token ? 1 : 0) + registers; }
  // Patches of a height × width picture along each axis (a partial patch at the edge is dropped, as Conv2d drops it).
  int grid_rows(int height) const { return height / patch_height; }
  int grid_columns(int width) const { return width / patch_width; }
  // The position table's patch grid (square for DINOv2, image_size / patch_size for ViT).
  int table_grid_rows() const { return image_height / patch_height; }
  int table_grid_columns() const { return image_width / patch_width; }
};

struct ModelConfig {
  std::string model_type;        // as written in config.json (its family: model/family.h)
  std::string family_name;       // as messages name it: "GPT-2", "BERT", "Llama", "Qwen2", "GPT-NeoX", ...
  bool bidirectional = false;    // BERT: every token reads every other, no next-token head
  int layers = 0;                // L: n_layer / num_hidden_layers
  int heads = 0;                 // H: query heads (n_head / num_attention_heads)
  int kv_heads = 0;              // KV: key/value heads (num_key_value_heads; = H without GQA)
  int width = 0;                 // d: n_embd / hidden_size
  int head_dim = 0;              // d_k: head_dim, or d / H
  int inner = 0;                 // MLP width: n_inner (default 4d) / intermediate_size
  int positions = 0;             // tokens a text may have: n_positions / max_position_embeddings (RoBERTa: less
                                 // the position_offset rows before the first token's)
  int vocab_size = 0;            // rows of the token embedding
  int type_vocab_size = 0;       // token types (segments): BERT's two, RoBERTa's one; 0: none (DistilBERT)
  bool segment_input = false;    // BERT, ELECTRA: a text pair's segment ids (token_type_ids) are an input; RoBERTa
                                 // and DistilBERT tell a pair apart by its separators alone (segment 0 throughout)
  // Learned positions: the t-th counted token reads row position_offset + t; a token not counted reads row
  // position_offset - 1 (RoBERTa: transformers' create_position_ids_from_input_ids, offset padding_idx + 1;
  // OPT: OPTLearnedPositionalEmbedding, offset 2, counting the tokens the attention mask keeps).
  enum class PositionCount { every_token, non_pad_ids, unmasked_tokens };
  PositionCount position_count = PositionCount::every_token;
  int position_offset = 0;       // rows before the first token's: RoBERTa pad_token_id + 1, OPT 2
  // The embedding table's width E, projected to d before the first layer (ELECTRA's embedding_size, OPT's
  // word_embed_proj_dim; OPT projects back before the unembedding); 0: d.
  int embedding_size = 0;
  bool post_layer_norm = false;  // OPT do_layer_norm_before false (OPT-350m): LayerNorm after each residual add
  float norm_eps = 1e-5f;        // layer_norm_epsilon / layer_norm_eps / rms_norm_eps
  NormKind norm = NormKind::layer_norm;
  Activation activation = Activation::gelu_tanh;
  // The masked-LM head's activation: BERT's and DistilBERT's hidden_act; ELECTRA's generator always GELU.
  Activation mlm_activation = Activation::gelu_erf;
  bool gated_mlp = false;        // SwiGLU: down(act(gate(x)) * up(x)) instead of out(act(in(x)))
  bool parallel_residual = false;  // GPT-NeoX: h + attn(ln1(h)) + mlp(ln2(h))
  // Positions: learned tables (GPT-2, BERT) or rotary embeddings on q and k.
  bool rope = false;
  double rope_theta = 10000.0;   // rope_theta / rotary_emb_base
  int rotary_dims = 0;           // leading dims of each head that rotate (rotary_pct · d_k); even
  RopeFrequencyScaling rope_scaling;  // rope_scaling: none, linear, dynamic, yarn, longrope or llama3
  bool qk_norm = false;          // Qwen3, Gemma 3: RMSNorm on each head's q and k before RoPE
  bool qk_norm_across_heads = false;  // OLMo 2: the same over all heads' q [H·d_k] and k [KV·d_k] at once
  std::vector<bool> rope_layers; // SmolLM3: the layers that turn q and k (no_rope_layers); empty: every layer
  int sliding_window = 0;        // query i sees keys j with i - j < window; 0 = no window
  std::vector<bool> sliding_layers;  // Gemma 2/3: the layers with the window (layer_types); empty: every layer
  double rope_local_theta = 0;   // Gemma 3: RoPE base of the sliding layers (unscaled); 0: rope_theta
  float embedding_scale = 0;     // Gemma: the token embeddings times √d; 0: none
  int attention_scale_width = 0; // Gemma 2/3: scores divided by √query_pre_attn_scalar instead of √d_k; 0: d_k
  bool norm_affine = true;       // OPT's layer_norm_elementwise_affine: false = LayerNorms without gain and bias
  bool final_norm = true;        // a final norm before the head (OPT's _remove_final_layer_norm: false)
  bool scale_attention = true;   // scores divided by √d_k (GPT-2's scale_attn_weights: false leaves them unscaled)
  bool scale_by_inverse_layer = false;  // GPT-2's scale_attn_by_inverse_layer_idx: layer l's scores also divided by l + 1
  float attention_softcap = 0;   // Gemma 2: scaled scores s -> cap·tanh(s / cap) before the mask; 0: none
  float final_logit_softcap = 0; // Gemma 2: logits x -> cap·tanh(x / cap); 0: none
  bool qkv_bias = true;          // biases on the q, k, v projections
  bool attention_out_bias = true;  // bias on the attention output projection
  bool mlp_bias = true;          // biases on the MLP projections
  bool tied_embeddings = true;   // logits use the token embedding (no separate lm_head)
  std::vector<int> eos_token_ids;  // eos_token_id (one id or a list) in the vocabulary: generation stops after one
  VisionConfig vision;             // vision transformers only (is_vision())

  int head_width() const { return head_dim; }  // d_k
  // Rows of the learned position table: positions, plus the rows before the first token's.
  int position_table_rows() const { return positions + position_offset; }
  // The width of the token embedding table (E or d).
  int embedding_width() const { return embedding_size > 0 ? embedding_size : width; }
  bool causal() const { return !bidirectional; }
  // A vision transformer: pixels in, no vocabulary.
  bool is_vision() const { return vision.patch_width > 0; }
  // Whether layer `layer` turns q and k by RoPE (when the model has RoPE).
  bool layer_has_rope(int layer) const { return rope_layers.empty() || rope_layers[static_cast<std::size_t>(layer)]; }
  // Whether layer `layer` attends within sliding_window (when there is one).
  bool layer_is_sliding(int layer) const {
    return sliding_layers.empty() || sliding_layers[static_cast<std::size_t>(layer)];
  }
};

// Parses config.json with the reader of its model_type's family
// (model/family.h). Throws std::invalid_argument ("config.json: ...").
// Encoder-decoders (marian, bart, t5, mt5) are refused here: see parse_seq2seq_config.
ModelConfig parse_config(std::string_view config_json);

// ---------------------------------------------------------------- encoder-decoders

enum class Seq2SeqFamily {
  marian,  // Helsinki-NLP opus-mt: sinusoidal positions, scaled embeddings, swish, post-LN
  bart,    // learned positions (offset 2), layernorm_embedding, GELU, post-LN
  t5,      // T5 / mT5 / flan-T5: relative position buckets, pre-RMSNorm, no biases, unscaled q·k
};

// Hyper-parameters of an encoder-decoder ("model_type" marian, bart, t5 or mt5).
struct Seq2SeqConfig {
  Seq2SeqFamily family = Seq2SeqFamily::marian;
  std::string model_type;
  int encoder_layers = 0, decoder_layers = 0;  // L_enc, L_dec
  int encoder_heads = 0, decoder_heads = 0;    // H of each side (decoder self- and cross-attention share it)
  int width = 0;                               // d_model
  int encoder_inner = 0, decoder_inner = 0;    // encoder_ffn_dim, decoder_ffn_dim
  int positions = 0;                           // max_position_embeddings (source and target each)
  int vocab_size = 0;
  Activation activation = Activation::silu;    // activation_function
  bool scale_embedding = false;                // embeddings · √d_model
  bool shared_embeddings = true;               // one token table for encoder and decoder (Marian's share_encoder_decoder_embeddings)
  float norm_eps = 1e-5f;
  int pad_token_id = -1;                       // never generated; -1 = none (also when config.json's lies outside the vocabulary)
  int decoder_start_token_id = 0;              // the decoder's first input
  std::vector<int> eos_token_ids;              // generation stops after one (those in the vocabulary)
  int forced_bos_token_id = -1;                // BART: the first generated token; -1 = none (outside the vocabulary: the search refuses it)
  int num_beams = 1;                           // generation default (config "num_beams")
  double length_penalty = 1.0;                 // beam scores are log-probability / length^length_penalty
  int max_length = 0;                          // generation default ("max_length"); 0 = positions
  // T5 only (family t5): heads of d_kv dims (their concatenation need not be
  // d_model wide), T5's bucketed relative positions (buckets, max distance)
  // in place of absolute ones, a gated feed-forward act(wi_0·x) ⊙ wi_1·x
  // (v1.1, mT5, flan-T5), and an output layer tied to the embeddings (read
  // through d_model^-0.5) or its own lm_head.
  int head_dim = 0;                            // d_kv; 0: width / heads
  int relative_buckets = 0;                    // relative_attention_num_buckets
  int relative_max_distance = 0;               // relative_attention_max_distance
  bool gated_feed_forward = false;             // feed_forward_proj "gated-..."
  bool tied_output = true;                     // tie_word_embeddings (every family): false reads lm_head

  bool t5() const { return family == Seq2SeqFamily::t5; }
  int encoder_head_dim() const { return head_dim > 0 ? head_dim : width / encoder_heads; }
  int decoder_head_dim() const { return head_dim > 0 ? head_dim : width / decoder_heads; }
  // The row of a position's embedding is position + position_offset():
  // BART's learned tables have two extra rows (a quirk of fairseq's
  // padding-aware positions, kept by Hugging Face).
  int position_offset() const { return family == Seq2SeqFamily::bart ? 2 : 0; }
};

// Whether config.json names an encoder-decoder family (marian, bart, t5, mt5, or one
// refused by name such as umt5): such folders load as Seq2SeqModel.
bool is_encoder_decoder_config(std::string_view config_json);

// Parses an encoder-decoder's config.json with its family's reader
// (model/families/marian_bart.cpp, model/families/t5.cpp). Throws
// std::invalid_argument ("config.json: ...") for anything malformed or
// unsupported (UMT5's per-layer position biases, a start token outside the
// vocabulary or null without a bos token). Keys left out take the config
// class's defaults, as in transformers.
Seq2SeqConfig parse_seq2seq_config(std::string_view config_json);

}  // namespace attnplay
