// Implementation of analysis/head_ablation.h.
#include "analysis/head_ablation.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace attnplay {
namespace {

double mean_loss(const std::vector<float>& loss) {
  return std::accumulate(loss.begin(), loss.end(), 0.0) / static_cast<double>(loss.size());
}

}  // namespace

HeadAblationRanking rank_heads_by_ablation(const Model& model, const ForwardRequest& text, AblationMode mode) {
  const ModelConfig& c = model.config();
  ForwardRequest request;  // only what the loss needs
  request.ids = text.ids;
  request.type_ids = text.type_ids;
  request.attention_mask = text.attention_mask;
  request.mask_positions = text.mask_positions;
  request.mask_labels = text.mask_labels;
  request.ablation = mode;
  request.token_loss = true;
  if (c.causal() && request.ids.size() < 2) {
    throw std::invalid_argument("ranking heads needs at least two tokens (a next token to predict)");
  }
  if (!c.causal() && request.mask_positions.empty()) {
    throw std::invalid_argument("ranking BERT's heads needs at least one [MASK] position to predict");
  }
  HeadAblationRanking ranking;
  if (!c.causal() && request.mask_labels.empty()) {  // the intact model's own predictions as labels
    ForwardRequest top = request;
    top.token_loss = false;
    top.top_k = 1;
    for (const TopK& row : model.forward(top).top_k) request.mask_labels.push_back(row.ids.front());
  }
  ranking.mask_labels = request.mask_labels;
  ranking.base_loss = mean_loss(model.forward(request).token_loss);
  for (int l = 0; l < c.layers; ++l) {
    for (int h = 0; h < c.heads; ++h) {
      request.ablate = {{l, h}};
      const double loss = mean_loss(model.forward(request).token_loss);
      ranking.heads.push_back({l, h, loss, loss - ranking.base_loss});
    }
  }
  std::sort(ranking.heads.begin(), ranking.heads.end(), [](const HeadAblationEffect& a, const HeadAblationEffect& b) {
    return a.delta != b.delta ? a.delta > b.delta : a.layer != b.layer ? a.layer < b.layer : a.head < b.head;
  });
  return ranking;
}

Seq2SeqHeadAblationRanking rank_heads_by_ablation(const Seq2SeqModel& model, const ForwardRequest& pair, AblationMode mode) {
  const std::vector<std::int32_t>& source_ids = pair.source_ids;
  const std::vector<std::int32_t>& decoder_ids = pair.ids;
  if (decoder_ids.size() < 2) {
    throw std::invalid_argument("ranking heads needs a target: the start token and at least one target token");
  }
  const Seq2SeqConfig& c = model.config();
  ForwardRequest request;  // without ids: encode() and decode() take them
  request.token_loss = true;
  request.ablation = mode;
  const EncoderOutput intact = model.encode(source_ids);
  Seq2SeqHeadAblationRanking ranking;
  ranking.base_loss = mean_loss(model.decode(intact, decoder_ids, request).token_loss);
  for (const AttentionPart part : {AttentionPart::encoder, AttentionPart::decoder, AttentionPart::cross}) {
    const bool encoder = part == AttentionPart::encoder;  // its heads change the encoding
    const auto [layers, heads] = part_shape(c, part);
    for (int l = 0; l < layers; ++l) {
      for (int h = 0; h < heads; ++h) {
        request.ablate = {{l, h, part}};
        const double loss = mean_loss(
            model.decode(encoder ? model.encode(source_ids, request) : intact, decoder_ids, request).token_loss);
        ranking.heads.push_back({{l, h, part}, loss, loss - ranking.base_loss});
      }
    }
  }
  std::stable_sort(ranking.heads.begin(), ranking.heads.end(),  // built in part, layer, head order: ties keep it
                   [](const Seq2SeqHeadAblationEffect& a, const Seq2SeqHeadAblationEffect& b) { return a.delta > b.delta; });
  return ranking;
}

}  // namespace attnplay
