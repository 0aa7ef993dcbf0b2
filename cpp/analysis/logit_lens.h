// The logit lens (nostalgebraist, 2020): the residual stream after every layer,
// at every position, read through the model's own output head, so the reader
// watches the prediction form layer by layer. Causal families (GPT-2, Llama
// family, GPT-NeoX): the final norm (ln_f, RMSNorm, final_layer_norm) and the
// tied or untied unembedding; the last layer's hidden state is already after
// the final norm, so it is not applied twice and that row equals the model's
// predictions. BERT: the masked-LM head (dense, GELU, LayerNorm, decoder) at
// every position; its last row is the MLM prediction at every position.
// Row 0 is the embeddings (before any layer). Encoder-decoders: the decoder's
// residual stream through the output layer.
// Not here: running the model (model/), tokenization, output formats.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"
#include "model/seq2seq.h"

namespace attnplay {

struct LogitLens {
  int rows = 0;            // L + 1: the embeddings, then the output of each layer
  int tokens = 0;          // T
  int k = 0;               // predictions kept per cell
  std::vector<TopK> cells;  // [L + 1, T] row-major: cells[r·T + t], each best first

  const TopK& at(int row, int position) const {
    return cells[static_cast<std::size_t>(row) * tokens + position];
  }
};

// Every hidden state of a forward pass (ForwardRequest::hidden_states: L + 1
// matrices [T, d]) read out. Throws std::invalid_argument for k < 1, a count
// of hidden states other than L + 1, and a BERT checkpoint without its
// masked-LM head.
LogitLens logit_lens(const Model& model, const std::vector<Matrix>& hidden_states, int k);

// An encoder-decoder's decoder (Marian, BART, T5): its hidden states
// (ForwardRequest::hidden_states: L_dec + 1 matrices [T, d]) read through the
// output layer (Seq2SeqModel::output_logits; Marian's and BART's decoders
// have no final norm, T5's is applied to every row but the last, which has
// it), so the last row is the decoder's own output: at decoder input t, the
// probabilities of the target token it writes next (before the search's
// rules, such as never writing the pad token: model/translate.h). Throws std::invalid_argument for k < 1
// and a count of hidden states other than L_dec + 1.
LogitLens logit_lens(const Seq2SeqModel& model, const std::vector<Matrix>& hidden_states, int k);

}  // namespace attnplay
