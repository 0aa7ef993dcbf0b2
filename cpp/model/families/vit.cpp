// ViT (model_type "vit": ViTModel with or without its pooler,
// ViTForImageClassification; DeiT checkpoints without distillation, such as
// facebook/deit-tiny-patch16-224, are written as "vit" too) and DeiT
// (model_type "deit": DeiTModel, DeiTForImageClassification and
// DeiTForImageClassificationWithTeacher): their config.json (ViTConfig and
// DeiTConfig alike), their tensors ("vit." / "deit." + embeddings.*
// (read_vision_embeddings), encoder.layer.N.{layernorm_before,
// attention.attention.{query, key, value}, attention.output.dense,
// layernorm_after, intermediate.dense, output.dense}, layernorm; at the root
// classifier, or DeiT's cls_classifier and distillation_classifier), and the
// recipe every vision family runs (vision_encoder_forward): patch
// embeddings, pre-LN blocks (DINOv2's with layer scale), the final
// LayerNorm, the classifier.
#include <string>

#include "model/config_fields.h"
#include "model/family.h"
#include "model/forward_pass.h"
#include "model/weight_reader.h"

namespace attnplay {
namespace {

ModelConfig read_vit_config(const nlohmann::json& j, const std::string& model_type) {
  using namespace config_fields;
  const bool deit = model_type == "deit";
  // ViTConfig's and DeiTConfig's defaults.
  ModelConfig c = vision_encoder_config(j, deit ? "DeiT" : "ViT", {1e-12f, 224, 16});
  c.inner = optional_integer(j, "intermediate_size", 4 * kMaxWidth, 3072);
  c.vision.distillation_token = deit;
  c.vision.processor_type = deit ? "DeiTImageProcessor" : "ViTImageProcessor";
  return c;
}

ModelWeights load_vit_weights(const ModelConfig& c, const Checkpoint& st) {
  const bool deit = c.model_type == "deit";
  Reader r = base_model_reader(st, deit ? "deit." : "vit.", "embeddings.cls_token", c);
  const std::int64_t d = c.width;
  ModelWeights w;
  w.qkv_layout = QkvLayout::separate;
  read_vision_embeddings(r, c, w);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    BlockWeights b;
    b.attention_norm = r.layer_norm(p + "layernorm_before", d);
    read_vision_attention(r, p, c, b);
    b.mlp_norm = r.layer_norm(p + "layernorm_after", d);
    b.mlp_in = r.linear(p + "intermediate.dense", d, c.inner, true);
    b.mlp_out = r.linear(p + "output.dense", c.inner, d, true);
    w.blocks.push_back(std::move(b));
  }
  w.final_norm = r.layer_norm("layernorm", d);
  if (deit && r.has("cls_classifier.weight")) {  // DeiTForImageClassificationWithTeacher
    w.vision.classifier = read_image_classifier(r, c, "cls_classifier", d);
    w.vision.distillation_classifier = read_image_classifier(r, c, "distillation_classifier", d);
    w.vision.pooling = VisionConfig::Pooling::cls_and_distillation;
  } else if (r.has("classifier.weight")) {
    w.vision.classifier = read_image_classifier(r, c, "classifier", d);
  }
  // ViTModel's pooler (a dense layer and tanh over the CLS row: no part of
  // the attention or the classifier), the masked-image-modelling mask token.
  r.reject_unused({"pooler.*", "embeddings.mask_token"});
  return w;
}

}  // namespace

void vision_encoder_forward(ForwardPass& p, const ModelWeights& w) {
  Matrix h = p.embed_patches();  // [T, d] CLS (, distillation, registers), then the patches, with positions
  p.record_hidden(h);
  for (int l = 0; l < static_cast<int>(w.blocks.size()); ++l) {
    const BlockWeights& b = w.blocks[static_cast<std::size_t>(l)];
    h += ForwardPass::layer_scale(p.attention(p.norm(h, b.attention_norm), b, l), b.attention_scale);  // [T, d]
    h += ForwardPass::layer_scale(p.mlp(p.norm(h, b.mlp_norm), b), b.mlp_scale);                      // [T, d]
    p.record_hidden(h);  // transformers' hidden states: before the final LayerNorm
  }
  h = p.norm(h, w.final_norm);  // [T, d] layernorm
  p.image_classifier_head(h);   // [1, labels]
}

extern const ModelFamily vit_family{{"vit", "deit"}, read_vit_config, load_vit_weights, vision_encoder_forward};

}  // namespace attnplay
