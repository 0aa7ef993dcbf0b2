// Decoding with an encoder-decoder (model/seq2seq.h): the source is encoded
// once, then the decoder runs on the start token plus the target so far and
// picks the next token, greedily or by beam search, until an end-of-sequence
// token (config.json's eos_token_id) or the length limit. The pad token is
// never generated (Marian's bad_words_ids), and BART's forced_bos_token_id is
// the first token when the config names one. Each decoding step runs the
// decoder on the newest token alone, attending to the self-attention keys and
// values of the ones before it (model/seq2seq.h's DecoderCache; each beam
// keeps its own), so a step costs one token's work; with a decoder or cross
// head mean-ablated (its mean spans the target so far) each step reruns the
// decoder over the whole target instead.
// Not here: tokenization, the forward pass itself.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/seq2seq.h"

namespace attnplay {

struct TranslateOptions {
  int beams = 1;           // 1 = greedy; N > 1 = beam search with N beams
  int max_new_tokens = 0;  // 0: config.json's max_length, else the model's positions less the start token
  // Heads knocked out in every pass (model/model.h's ForwardRequest::ablate,
  // each naming its part); mean ablation averages over the positions of each
  // pass (the decoder's: the target so far).
  std::vector<ForwardRequest::Head> ablate;
  AblationMode ablation = AblationMode::zero;
};

// One greedy step: the token it chose and the cross-attention row of the
// position that predicted it (the decoder's last input), in every layer and head.
struct TranslationStep {
  int index = 0;                       // 0 for the first target token
  std::int32_t token = 0;
  std::vector<float> cross_attention;  // [L_dec, H, S]
};

struct Translation {
  std::vector<std::int32_t> decoder_ids;  // the start token, the target tokens, the end token when one was produced
  double log_probability = 0;             // sum over the target tokens (the end token included)
  double score = 0;                       // beam search's ranking: log_probability / length^length_penalty
  // The source's encoding the search read (the options' heads knocked out):
  // a caller decodes the final target against it without encoding again.
  EncoderOutput encoded;
};

// Translates source ids (usually ending in </s>). on_step (greedy only; may
// be empty) runs after each token, and returning false stops there. Beam
// search (Hugging Face's rule): each step keeps the N best continuations of
// the N beams by summed log-probability; a hypothesis ending in </s> among
// them is finished with the score above; search ends when N are finished and
// no running beam can beat the worst of them, or at the length limit (the
// running beams then count as finished). Throws std::invalid_argument for bad
// ids or options.
Translation translate(const Seq2SeqModel& model, const std::vector<std::int32_t>& source_ids,
                      const TranslateOptions& options,
                      const std::function<bool(const TranslationStep&)>& on_step = {});

// The attention of a translation's target as its search produced it: the
// decoder over its decoder ids but the last (row i wrote decoder_ids[i + 1];
// the start token alone when nothing was written) against the search's
// encoding, with the options' heads knocked out.
DecoderOutput decode_translation(const Seq2SeqModel& model, const Translation& translation, const TranslateOptions& options);

}  // namespace attnplay
