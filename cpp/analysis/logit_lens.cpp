// Implementation of analysis/logit_lens.h: each hidden state read out by
// Model::read_out, or by Seq2SeqModel::output_logits and its top k.
#include "analysis/logit_lens.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/logits.h"

namespace attnplay {
namespace {

// Throws unless k >= 1 and there are `layers` + 1 hidden states (`what`: which ones; `how`: how to get them).
void check_request(int k, std::size_t hidden_states, int layers, const std::string& what, const std::string& how) {
  if (k < 1) throw std::invalid_argument("the logit lens needs top_k of at least 1");
  if (static_cast<int>(hidden_states) != layers + 1) {
    throw std::invalid_argument("the logit lens reads " + std::to_string(layers + 1) + " " + what + " (the embeddings and " +
                                std::to_string(layers) + " layers), not " + std::to_string(hidden_states) + "; " + how);
  }
}

}  // namespace

LogitLens logit_lens(const Model& model, const std::vector<Matrix>& hidden_states, int k) {
  const int layers = model.config().layers;
  check_request(k, hidden_states.size(), layers, "hidden states", "run the model with hidden_states");
  if (!model.config().causal() && !model.has_mlm_head()) {
    throw std::invalid_argument(
        "this " + model.config().family_name + " checkpoint has no masked-LM head, so its residual stream cannot be "
        "read as predictions");
  }
  LogitLens lens;
  lens.rows = layers + 1;
  lens.tokens = static_cast<int>(hidden_states.front().rows());
  lens.k = k;
  lens.cells.reserve(static_cast<std::size_t>(lens.rows) * lens.tokens);
  for (int r = 0; r < lens.rows; ++r) {
    // Causal families report the last hidden state after the final norm already (BERT has none).
    const bool final_norm_applied = r == layers;
    std::vector<TopK> row = model.read_out(hidden_states[static_cast<std::size_t>(r)], final_norm_applied, k);
    for (TopK& cell : row) lens.cells.push_back(std::move(cell));
  }
  return lens;
}

LogitLens logit_lens(const Seq2SeqModel& model, const std::vector<Matrix>& hidden_states, int k) {
  const int layers = model.config().decoder_layers;
  check_request(k, hidden_states.size(), layers, "decoder hidden states", "decode with hidden_states");
  const int V = model.config().vocab_size;
  LogitLens lens;
  lens.rows = layers + 1;
  lens.tokens = static_cast<int>(hidden_states.front().rows());
  lens.k = k;
  lens.cells.reserve(static_cast<std::size_t>(lens.rows) * lens.tokens);
  constexpr Eigen::Index kChunk = 128;  // rows per product: bounds the [chunk, V] logits held at once
  for (int r = 0; r < lens.rows; ++r) {
    const Matrix& h = hidden_states[static_cast<std::size_t>(r)];  // [T, d]
    const bool final_norm_applied = r == layers;  // T5's last hidden state has its final norm
    for (Eigen::Index start = 0; start < h.rows(); start += kChunk) {
      const Matrix logits = model.output_logits(h.middleRows(start, std::min(kChunk, h.rows() - start)), final_norm_applied);  // [n, V]
      for (Eigen::Index i = 0; i < logits.rows(); ++i) {
        const float* row = logits.row(i).data();
        lens.cells.push_back(top_k_of(row, V, k, softmax_norm(row, V)));
      }
    }
  }
  return lens;
}

}  // namespace attnplay
