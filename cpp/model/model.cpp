// Implementation of model/model.h: loading (the family's config reader and
// weight names), checking each request before any work, running the family's
// recipe (model/families/, each a flat list of ops in the spirit of llm.c's
// gpt2_forward) over a ForwardPass (model/forward_pass.h), and reading any
// residual stream out (the logit lens).
#include "model/model.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "model/family.h"
#include "model/forward_pass.h"
#include "model/logits.h"
#include "nn/layers.h"
#include "tensor/ops.h"

namespace attnplay {

int request_tokens(const ModelConfig& c, const ForwardRequest& request) {
  if (!c.is_vision()) return static_cast<int>(request.ids.size());
  const VisionConfig& v = c.vision;
  return v.prefix_tokens() + v.grid_rows(request.pixels.height) * v.grid_columns(request.pixels.width);
}

std::vector<int> resolve_prediction_positions(const ForwardRequest& request, int tokens) {
  std::vector<int> positions;
  if (request.prediction_positions.empty()) {
    for (int p = 0; p < tokens; ++p) positions.push_back(p);
    return positions;
  }
  if (request.token_loss) bad_request("the per-token loss needs the logits of every position: give no prediction positions");
  for (const int given : request.prediction_positions) {
    const int p = given < 0 ? tokens + given : given;
    if (p < 0 || p >= tokens) {
      bad_request("prediction position " + std::to_string(given) + " is outside the " + std::to_string(tokens) + " positions run");
    }
    if (!positions.empty() && p <= positions.back()) bad_request("prediction positions must be in increasing order, each once");
    positions.push_back(p);
  }
  return positions;
}

void bad_request(const std::string& message) { throw std::invalid_argument(message); }

const char* part_name(AttentionPart part) {
  switch (part) {
    case AttentionPart::encoder: return "encoder";
    case AttentionPart::decoder: return "decoder";
    case AttentionPart::cross: return "cross";
    case AttentionPart::self: break;
  }
  return "self";
}

std::optional<AttentionPart> part_from_name(std::string_view name) {
  for (const AttentionPart part : {AttentionPart::encoder, AttentionPart::decoder, AttentionPart::cross}) {
    if (name == part_name(part)) return part;
  }
  return std::nullopt;
}

namespace {

// A vision transformer's request: a picture of the model's channels, at
// least one patch, of the size the position table was learned for unless
// the family resizes its positions; nothing of a text's.
void validate_pixels(const ModelConfig& c, const ModelWeights& weights, const ForwardRequest& request) {
  const VisionConfig& v = c.vision;
  const PixelValues& px = request.pixels;
  if (!request.ids.empty() || !request.type_ids.empty() || !request.attention_mask.empty() ||
      !request.mask_positions.empty() || !request.mask_labels.empty() || !request.prediction_positions.empty() ||
      request.token_loss) {
    bad_request(c.family_name + " reads a picture: token ids, type ids, masks, prediction positions and the token loss are for text models");
  }
  if (px.values.empty()) bad_request(c.family_name + " reads a picture: give its pixels");
  if (px.channels != v.channels || px.height < 1 || px.width < 1 ||
      px.values.size() != static_cast<std::size_t>(px.channels) * px.height * px.width) {
    bad_request("pixels: " + std::to_string(px.values.size()) + " values for " + std::to_string(px.channels) +
                " channels of " + std::to_string(px.width) + "×" + std::to_string(px.height) + "; " + c.family_name +
                " reads " + std::to_string(v.channels) + " channels");
  }
  if (v.grid_rows(px.height) < 1 || v.grid_columns(px.width) < 1) {
    bad_request("the picture (" + std::to_string(px.width) + "×" + std::to_string(px.height) +
                " pixels) is smaller than one patch (" + std::to_string(v.patch_width) + "×" +
                std::to_string(v.patch_height) + ")");
  }
  if (v.position_resize == VisionConfig::PositionResize::refuse &&
      (px.height != v.image_height || px.width != v.image_width)) {
    bad_request("the picture is " + std::to_string(px.width) + "×" + std::to_string(px.height) + " pixels, but " +
                c.family_name + " reads " + std::to_string(v.image_width) + "×" + std::to_string(v.image_height) +
                " (config.json's image_size): preprocess it as preprocessor_config.json says");
  }
  if (request.top_k > 0 && weights.vision.classifier.empty()) {
    bad_request("this " + c.family_name + " checkpoint has no classifier: there are no labels to rank");
  }
}

// `past`: tokens already in the KV cache.
void validate(const ModelConfig& c, const ModelWeights& weights, const ForwardRequest& request, int past) {
  const int L = c.layers, H = c.heads;
  if (!request.source_ids.empty()) bad_request("source ids are for encoder-decoders; " + c.family_name + " reads one text");
  auto check_part = [&c](const ForwardRequest::Head& head, const char* what) {
    if (head.part != AttentionPart::self) {
      bad_request(std::string(what) + " head names the part '" + part_name(head.part) + "', but " + c.family_name +
                  " has one attention: parts are for encoder-decoders");
    }
  };
  if (request.trace) check_part(*request.trace, "the traced");
  for (const ForwardRequest::Head& head : request.ablate) check_part(head, "an ablated");
  if (request.trace && (request.trace->layer < 0 || request.trace->layer >= L || request.trace->head < 0 ||
                        request.trace->head >= H)) {
    bad_request("traced head (layer " + std::to_string(request.trace->layer) + ", head " +
                std::to_string(request.trace->head) + ") does not exist: the model has " + std::to_string(L) +
                " layers of " + std::to_string(H) + " heads");
  }
  if (request.top_k < 0) bad_request("top_k must not be negative");
  for (const ForwardRequest::Head& head : request.ablate) {
    if (head.layer < 0 || head.layer >= L || head.head < 0 || head.head >= H) {
      bad_request("ablated head " + std::to_string(head.layer) + ":" + std::to_string(head.head) +
                  " (layer:head, from 0) does not exist: the model has " + std::to_string(L) + " layers of " +
                  std::to_string(H) + " heads");
    }
  }
  if (c.is_vision()) return validate_pixels(c, weights, request);
  if (!request.pixels.values.empty()) bad_request("pixels are for vision transformers; " + c.family_name + " reads token ids");
  const int T = static_cast<int>(request.ids.size());
  if (T == 0) bad_request("no tokens to run");
  if (past + T > c.positions) {
    bad_request(std::to_string(past + T) + " tokens are more than the model's " + std::to_string(c.positions) +
                " positions");
  }
  for (int i = 0; i < T; ++i) {
    if (request.ids[i] < 0 || request.ids[i] >= c.vocab_size) {
      bad_request("token id " + std::to_string(request.ids[i]) + " at position " + std::to_string(i) +
                  " is outside the vocabulary (0.." + std::to_string(c.vocab_size - 1) + ")");
    }
  }
  if (!request.type_ids.empty()) {
    if (static_cast<int>(request.type_ids.size()) != T) {
      bad_request(std::to_string(request.type_ids.size()) + " type ids for " + std::to_string(T) + " tokens");
    }
    const int types = c.type_vocab_size > 0 ? c.type_vocab_size : 1;
    for (int i = 0; i < T; ++i) {
      if (request.type_ids[i] < 0 || request.type_ids[i] >= types) {
        bad_request("type id " + std::to_string(request.type_ids[i]) + " at position " + std::to_string(i) +
                    (c.type_vocab_size == 0 ? " (" + c.family_name + " has no token types; use 0)"
                                                 : " is outside 0.." + std::to_string(types - 1)));
      }
    }
  }
  if (!request.attention_mask.empty() && static_cast<int>(request.attention_mask.size()) != T) {
    bad_request("attention mask has " + std::to_string(request.attention_mask.size()) + " entries for " +
                std::to_string(T) + " tokens");
  }
  if (!c.causal() && !request.prediction_positions.empty()) {
    bad_request("prediction positions are for causal models; " + c.family_name + " predicts at its mask tokens");
  }
  resolve_prediction_positions(request, static_cast<int>(request.ids.size()));  // refuses bad ones even when nothing is predicted
  if (c.causal() && !request.mask_labels.empty()) {
    bad_request("mask labels are for BERT; " + c.family_name + "'s loss is that of each next token");
  }
  if (!c.causal() && request.token_loss) {
    if (request.mask_labels.size() != request.mask_positions.size()) {
      bad_request("BERT's per-token loss needs one true token per mask position: " +
                  std::to_string(request.mask_labels.size()) + " labels for " +
                  std::to_string(request.mask_positions.size()) + " mask positions");
    }
    for (const std::int32_t id : request.mask_labels) {
      if (id < 0 || id >= c.vocab_size) {
        bad_request("mask label " + std::to_string(id) + " is outside the vocabulary (0.." +
                    std::to_string(c.vocab_size - 1) + ")");
      }
    }
  }
  if (!request.mask_positions.empty()) {
    if (c.causal()) {
      bad_request("mask positions are for encoders (BERT, RoBERTa, ...); " + c.family_name + " predicts the next token at every position");
    }
    if (!weights.has_mlm_head) bad_request("this " + c.family_name + " checkpoint has no masked-LM head");
    for (int p : request.mask_positions) {
      if (p < 0 || p >= T) bad_request("mask position " + std::to_string(p) + " is outside 0.." + std::to_string(T - 1));
    }
  }
}

}  // namespace

Model::Model(ModelConfig config, ModelWeights weights) : config_(std::move(config)), weights_(std::move(weights)) {
  pack_for_products(weights_);
}

Model Model::from_buffers(std::string_view config_json, std::string_view safetensors) {
  ModelConfig config = parse_config(config_json);
  const Checkpoint checkpoint = Checkpoint::single({kSafetensorsFile, safetensors, nullptr});
  ModelWeights weights = load_weights(config, checkpoint);
  return Model(std::move(config), std::move(weights));
}

Model Model::from_checkpoint(std::string_view config_json, const Checkpoint& checkpoint) {
  ModelConfig config = parse_config(config_json);
  ModelWeights weights = load_weights(config, checkpoint);
  return Model(std::move(config), std::move(weights));
}

void Model::check_vocabulary(std::int32_t tokenizer_vocab_size) const {
  if (config_.is_vision()) bad_request(config_.family_name + " reads pictures: it has no tokenizer");
  check_vocabulary_fits(tokenizer_vocab_size, weights_.token_embedding.rows());
}

ForwardResult Model::forward(const ForwardRequest& request) const { return run(request, nullptr); }

ForwardResult Model::forward(const ForwardRequest& request, KvCache& cache) const {
  if (!config_.causal()) {
    bad_request("a KV cache is for causal models; " + config_.family_name + " reads " +
                (config_.is_vision() ? "the whole picture" : "the whole text") + " at once");
  }
  if (!request.type_ids.empty() || !request.attention_mask.empty()) {
    bad_request("type ids and padding masks cannot be used with a KV cache");
  }
  if (!request.ablate.empty() && request.ablation == AblationMode::mean) {
    bad_request("mean ablation averages a head over the whole text, which a KV cache never sees at once; "
                "use zero ablation when generating");
  }
  if (!cache.ready_for(config_.layers)) {
    bad_request("the KV cache belongs to a model of " + std::to_string(cache.keys.size()) + " layers");
  }
  return run(request, &cache);
}

bool KvCache::ready_for(int layers) {
  if (keys.empty()) {
    keys.resize(static_cast<std::size_t>(layers));
    values.resize(static_cast<std::size_t>(layers));
    filled.assign(static_cast<std::size_t>(layers), 0);
    heads_.assign(static_cast<std::size_t>(layers), 0);
  }
  return static_cast<int>(keys.size()) == layers;
}

void KvCache::append(int layer, const HeadRows& k, const HeadRows& v) {
  constexpr Eigen::Index kFirstCapacity = 64;
  const std::size_t l = static_cast<std::size_t>(layer);
  if (heads_[l] == 0) heads_[l] = k.heads;
  if (k.heads != heads_[l] || v.heads != heads_[l]) {
    throw std::invalid_argument("KV cache: layer " + std::to_string(layer) + " holds " + std::to_string(heads_[l]) +
                                " heads; appending " + std::to_string(k.heads) + " key and " + std::to_string(v.heads) +
                                " value heads");
  }
  if (k.rows != v.rows) {
    throw std::invalid_argument("KV cache: appending " + std::to_string(k.rows) + " keys but " + std::to_string(v.rows) +
                                " values");
  }
  const Eigen::Index heads = heads_[l], used = filled[l], added = k.rows;
  for (auto [m, rows] : {std::pair{&keys[l], &k}, std::pair{&values[l], &v}}) {
    const Eigen::Index capacity = m->rows() / heads;
    if (capacity < used + added || m->cols() != rows->width) {  // double, keeping each head's rows in use
      const Eigen::Index grown_capacity = std::max<Eigen::Index>({used + added, 2 * capacity, kFirstCapacity, reserved});
      Matrix grown(heads * grown_capacity, rows->width);  // [KV·capacity, width]
      for (Eigen::Index h = 0; h < heads; ++h) grown.middleRows(h * grown_capacity, used) = m->middleRows(h * capacity, used);
      *m = std::move(grown);
    }
    const Eigen::Index head_capacity = m->rows() / heads;
    for (Eigen::Index h = 0; h < heads; ++h) {
      m->middleRows(h * head_capacity + used, added) = rows->head(static_cast<int>(h));  // [T, width]
    }
  }
  filled[l] += static_cast<int>(added);
}

HeadRows KvCache::rows_of(const std::vector<Matrix>& blocks, int layer) const {
  const std::size_t l = static_cast<std::size_t>(layer);
  const Matrix& m = blocks[l];
  const Eigen::Index capacity = heads_[l] == 0 ? 0 : m.rows() / heads_[l];
  return {m.data(), heads_[l], filled[l], m.cols(), m.cols(), capacity * m.cols()};
}

ForwardResult Model::run(const ForwardRequest& request, KvCache* cache) const {
  validate(config_, weights_, request, cache ? cache->length() : 0);  // every index checked before any work
  ForwardResult result;
  ForwardPass pass(config_, weights_, request, result, cache);
  family_of(config_).forward(pass, weights_);
  return result;
}

std::vector<TopK> Model::read_out(const Matrix& x, bool final_norm_applied, int k) const {
  if (k < 1) bad_request("top_k must be at least 1");
  if (config_.is_vision()) bad_request(config_.family_name + " has no vocabulary to read a residual stream with");
  if (x.cols() != config_.width) {
    bad_request("a residual stream of width " + std::to_string(x.cols()) + " for a model of width " +
                std::to_string(config_.width));
  }
  if (!config_.causal() && !weights_.has_mlm_head) {
    bad_request("this " + config_.family_name + " checkpoint has no masked-LM head to read the residual stream with");
  }
  const int V = config_.vocab_size;
  std::vector<TopK> out;
  out.reserve(static_cast<std::size_t>(x.rows()));
  constexpr Eigen::Index kChunk = 128;  // rows per product: bounds the [chunk, V] logits held at once
  for (Eigen::Index start = 0; start < x.rows(); start += kChunk) {
    const Eigen::Index n = std::min(kChunk, x.rows() - start);
    Matrix logits;  // [n, V]
    if (!config_.causal()) {
      logits = masked_lm_logits(config_, weights_, x.middleRows(start, n));
    } else {
      Matrix h = x.middleRows(start, n);  // [n, d]
      const NormWeights& f = weights_.final_norm;
      if (!final_norm_applied && f.gamma.size() > 0) {  // none in post-LN OPT
        h = config_.norm == NormKind::rms_norm ? rms_norm(h, f.gamma, config_.norm_eps)
                                               : layer_norm(h, f.gamma, f.beta, config_.norm_eps);
      }
      const LinearWeights& out = weights_.output_projection;
      if (!out.empty()) h = linear(h, out.w, out.b);  // [n, E] OPT's project_out
      logits = linear(h, weights_.unembedding());
      softcap_logits(logits, config_.final_logit_softcap);  // Gemma 2
    }
    for (Eigen::Index i = 0; i < n; ++i) {
      const float* row = logits.row(i).data();
      out.push_back(top_k_of(row, V, k, softmax_norm(row, V)));
    }
  }
  return out;
}

}  // namespace attnplay
