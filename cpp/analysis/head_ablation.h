// Ranks every head of a model by how much knocking it out (zero or mean
// ablation, model.h's ForwardRequest::ablate) raises the loss on one text:
// one forward pass per head, each head alone against the intact model. And
// the same for an encoder-decoder's three parts (encoder, decoder
// self-attention, cross-attention) on a source and a target, the loss being
// that of each target token, teacher-forced.
// Not here: the ablated forward pass itself (model/model.h), drawing the ranking.
#pragma once

#include <vector>

#include "model/model.h"
#include "model/seq2seq.h"

namespace attnplay {

struct HeadAblationEffect {
  int layer = 0;
  int head = 0;
  double loss = 0;   // mean per-token loss with this head ablated
  double delta = 0;  // loss - the intact model's loss (positive: the head helps)
};

struct HeadAblationRanking {
  double base_loss = 0;                     // mean per-token loss of the intact model
  std::vector<HeadAblationEffect> heads;    // every head, largest delta first (ties: layer, then head)
  std::vector<std::int32_t> mask_labels;    // BERT: the labels the loss used
};

// `text`: ids (and BERT's type ids and mask positions) of the text; its
// ablate list, top-k, logits, trace and hidden-state requests are ignored.
// The loss is the mean of ForwardRequest::token_loss: causal models over the
// T - 1 next tokens (needs T >= 2); BERT over the mask positions (needs at
// least one), against text.mask_labels, or, when those are empty, against the
// intact model's own top prediction at each mask position (how much the head
// matters to what the model predicts). Throws std::invalid_argument otherwise.
HeadAblationRanking rank_heads_by_ablation(const Model& model, const ForwardRequest& text, AblationMode mode);

struct Seq2SeqHeadAblationEffect {
  ForwardRequest::Head head;  // with its part
  double loss = 0;   // mean per-target-token loss with this head ablated
  double delta = 0;  // loss - the intact model's loss
};

struct Seq2SeqHeadAblationRanking {
  double base_loss = 0;                            // the intact model's mean per-target-token loss
  std::vector<Seq2SeqHeadAblationEffect> heads;    // every head of every part, largest delta first
                                                   // (ties: encoder, decoder, cross; then layer, head)
};

// Every head of an encoder-decoder ranked by how much knocking it out alone
// raises the mean teacher-forced loss of pair.ids[1..] (ForwardRequest::
// token_loss: pair.ids is the start token and a target, needs T >= 2) given
// the source pair.source_ids; the pair's other fields are ignored. An encoder
// head costs an encoder and a decoder pass; a decoder or cross head a decoder
// pass over the intact encoding. Throws std::invalid_argument for fewer than
// two decoder ids and as Seq2SeqModel::forward does.
Seq2SeqHeadAblationRanking rank_heads_by_ablation(const Seq2SeqModel& model, const ForwardRequest& pair, AblationMode mode);

}  // namespace attnplay
