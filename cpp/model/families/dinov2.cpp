// DINOv2 (model_type "dinov2": Dinov2Model, Dinov2ForImageClassification)
// and DINOv2 with registers (model_type "dinov2_with_registers", Darcet et
// al. 2023): their config.json (Dinov2Config, Dinov2WithRegistersConfig),
// their tensors ("dinov2." / "dinov2_with_registers." + embeddings.*
// (read_vision_embeddings, with register_tokens), encoder.layer.N.{norm1,
// attention.attention.{query, key, value}, attention.output.dense,
// layer_scale1.lambda1, norm2, mlp.{fc1, fc2} or the SwiGLU mlp.{weights_in,
// weights_out}, layer_scale2.lambda1}, layernorm; classifier at the root,
// reading [CLS, mean of the patch rows]). Their recipe is ViT's
// (vision_encoder_forward) with layer scale; the position table (learned for
// 518-pixel pictures in the released checkpoints) is resized to the
// picture's patch grid by torch's bicubic interpolation, antialiased with
// registers, as each family's interpolate_pos_encoding does.
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/forward_pass.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

ModelConfig read_dinov2_config(const nlohmann::json& j, const std::string& model_type) {
  using namespace config_fields;
  const bool registers = model_type == "dinov2_with_registers";
  // Dinov2Config: 224-pixel pictures of 14-pixel patches; Dinov2WithRegistersConfig: 16-pixel patches.
  ModelConfig c = vision_encoder_config(j, registers ? "DINOv2 with registers" : "DINOv2", {1e-6f, 224, registers ? 16 : 14});
  VisionConfig& v = c.vision;
  if (v.table_grid_rows() != v.table_grid_columns()) {
    bad_config("\"image_size\" must make a square grid of patches: DINOv2 resizes its positions as a square grid");
  }
  const double mlp_ratio = number(j, "mlp_ratio", 4.0);
  const int hidden = static_cast<int>(c.width * mlp_ratio);
  if (hidden < 1 || hidden > 4 * kMaxWidth) bad_config("\"mlp_ratio\" gives an MLP width out of range");
  if (flag(j, "use_swiglu_ffn", false)) {  // Dinov2SwiGLUFFN: silu(x·W1) ⊙ x·W2 from one weights_in of 2·inner outputs
    c.inner = (static_cast<int>(hidden * 2.0 / 3.0) + 7) / 8 * 8;
    c.gated_mlp = true;
    c.activation = Activation::silu;
  } else {
    c.inner = hidden;
  }
  v.layer_scale = true;
  v.registers = registers ? optional_integer(j, "num_register_tokens", 1 << 10, 4) : 0;
  v.position_resize = registers ? VisionConfig::PositionResize::bicubic_antialiased : VisionConfig::PositionResize::bicubic;
  v.processor_type = "BitImageProcessor";
  return c;
}

ModelWeights load_dinov2_weights(const ModelConfig& c, const Checkpoint& st) {
  const bool registers = c.model_type == "dinov2_with_registers";
  Reader r = base_model_reader(st, registers ? "dinov2_with_registers." : "dinov2.", "embeddings.cls_token", c);
  const std::int64_t d = c.width;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  read_vision_embeddings(r, c, w);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    BlockWeights b;
    b.attention_norm = r.layer_norm(p + "norm1", d);
    read_vision_attention(r, p, c, b);
    b.attention_scale = r.vector(p + "layer_scale1.lambda1", d);
    b.mlp_norm = r.layer_norm(p + "norm2", d);
    if (c.gated_mlp) {  // weights_in's outputs: x1 (the gate, through SiLU) | x2
      b.mlp_gate_up = r.linear(p + "mlp.weights_in", d, 2 * std::int64_t{c.inner}, true);
      b.mlp_out = r.linear(p + "mlp.weights_out", c.inner, d, true);
    } else {
      b.mlp_in = r.linear(p + "mlp.fc1", d, c.inner, true);
      b.mlp_out = r.linear(p + "mlp.fc2", c.inner, d, true);
    }
    b.mlp_scale = r.vector(p + "layer_scale2.lambda1", d);
    w.blocks.push_back(std::move(b));
  }
  w.final_norm = r.layer_norm("layernorm", d);
  if (r.has("classifier.weight")) {
    w.vision.classifier = read_image_classifier(r, c, "classifier", 2 * d);
    w.vision.pooling = VisionConfig::Pooling::cls_and_patch_mean;
  }
  r.reject_unused({"embeddings.mask_token"});  // masked-image training's token
  return w;
}

}  // namespace

extern const ModelFamily dinov2_family{{"dinov2", "dinov2_with_registers"}, read_dinov2_config, load_dinov2_weights,
                                       vision_encoder_forward};

}  // namespace attnplay
