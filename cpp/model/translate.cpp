// Implementation of model/translate.h.
#include "model/translate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace attnplay {
namespace {

// A pass with the options' heads knocked out.
ForwardRequest ablated_pass(const TranslateOptions& options) {
  ForwardRequest pass;
  pass.ablate = options.ablate;
  pass.ablation = options.ablation;
  return pass;
}

// A decoding step: the logits of the last position only, with the options' heads knocked out.
ForwardRequest decoding_step(const TranslateOptions& options) {
  ForwardRequest step = ablated_pass(options);
  step.prediction_positions = {-1};
  return step;
}

bool is_eos(const Seq2SeqConfig& c, std::int32_t id) {
  return std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), id) != c.eos_token_ids.end();
}

// log-softmax of one row of logits [V] in double precision, with the pad
// token excluded and, at the first step, every token but forced_bos_token_id.
std::vector<double> next_log_probabilities(const Seq2SeqConfig& c, const float* logits, bool first) {
  const int V = c.vocab_size;
  std::vector<double> out(static_cast<std::size_t>(V));
  const double minus_inf = -std::numeric_limits<double>::infinity();
  double max = minus_inf;
  for (int i = 0; i < V; ++i) {
    const bool allowed = i != c.pad_token_id && !(first && c.forced_bos_token_id >= 0 && i != c.forced_bos_token_id);
    out[static_cast<std::size_t>(i)] = allowed ? logits[i] : minus_inf;
    if (std::isnan(logits[i])) throw std::invalid_argument("the decoder produced NaN logits (broken weights?)");
    max = std::max(max, out[static_cast<std::size_t>(i)]);
  }
  double sum = 0;
  for (const double x : out) sum += std::exp(x - max);
  const double log_sum = max + std::log(sum);
  for (double& x : out) x -= log_sum;
  return out;
}

// One decoding step of a hypothesis (its ids: the start token and the target so far): the logits of its next
// token. With the cache only its last token runs, attending to the cached keys and values of the ones before
// it; without (mean ablation of a decoder or cross head, whose mean spans the target so far) the decoder
// reruns over the whole target.
class Decoding {
 public:
  Decoding(const Seq2SeqModel& model, const EncoderOutput& encoded, const ForwardRequest& request)
      : model_(model), encoded_(encoded), request_(request), cached_(!mean_ablates_decoder_heads(request)) {}
  DecoderOutput step(const std::vector<std::int32_t>& ids, DecoderCache& cache) const {
    return cached_ ? model_.decode(encoded_, {ids.back()}, request_, cache) : model_.decode(encoded_, ids, request_);
  }

 private:
  const Seq2SeqModel& model_;
  const EncoderOutput& encoded_;
  const ForwardRequest& request_;
  bool cached_;
};

double length_normalised(const Seq2SeqConfig& c, double log_probability, std::size_t generated) {
  return log_probability / std::pow(static_cast<double>(std::max<std::size_t>(generated, 1)), c.length_penalty);
}

Translation greedy(const Seq2SeqModel& model, const EncoderOutput& encoded, const ForwardRequest& step_request, int max_new,
                   const std::function<bool(const TranslationStep&)>& on_step) {
  const Seq2SeqConfig& c = model.config();
  const int S = encoded.tokens, H = c.decoder_heads;
  const Decoding decoding(model, encoded, step_request);
  DecoderCache cache;
  Translation t;
  t.decoder_ids = {c.decoder_start_token_id};
  for (int step = 0; step < max_new; ++step) {
    const DecoderOutput out = decoding.step(t.decoder_ids, cache);
    const std::vector<double> lp = next_log_probabilities(c, out.logits.data(), step == 0);
    const auto best = std::max_element(lp.begin(), lp.end());  // lowest id on ties
    const std::int32_t token = static_cast<std::int32_t>(best - lp.begin());
    t.decoder_ids.push_back(token);
    t.log_probability += *best;
    if (on_step) {
      TranslationStep s;
      s.index = step;
      s.token = token;
      const int T = out.tokens;  // 1 with the cache
      s.cross_attention.resize(static_cast<std::size_t>(c.decoder_layers) * H * S);
      for (int lh = 0; lh < c.decoder_layers * H; ++lh) {  // row T - 1 of each [T, S] block
        const float* row = out.cross_attentions.data() + (static_cast<std::size_t>(lh) * T + (T - 1)) * S;
        std::copy(row, row + S, s.cross_attention.begin() + static_cast<std::ptrdiff_t>(lh) * S);
      }
      if (!on_step(s)) break;
    }
    if (is_eos(c, token)) break;
  }
  t.score = length_normalised(c, t.log_probability, t.decoder_ids.size() - 1);
  return t;
}

struct Hypothesis {
  std::vector<std::int32_t> ids;
  double log_probability = 0;
  DecoderCache cache;  // the keys and values of ids but the last (Decoding::step runs the last)
};

Translation beam_search(const Seq2SeqModel& model, const EncoderOutput& encoded, const ForwardRequest& step_request,
                        int beams, int max_new) {
  const Seq2SeqConfig& c = model.config();
  const Decoding decoding(model, encoded, step_request);
  std::vector<Hypothesis> running = {{{c.decoder_start_token_id}, 0.0, {}}};
  std::vector<Translation> finished;  // best first, at most `beams`
  auto finish = [&](const Hypothesis& h) {
    Translation t{h.ids, h.log_probability, length_normalised(c, h.log_probability, h.ids.size() - 1), {}};
    finished.insert(std::upper_bound(finished.begin(), finished.end(), t,
                                     [](const Translation& a, const Translation& b) { return a.score > b.score; }),
                    t);
    if (static_cast<int>(finished.size()) > beams) finished.pop_back();
  };
  for (int step = 0; step < max_new && !running.empty(); ++step) {
    struct Candidate {
      double log_probability;
      std::size_t beam;
      std::int32_t token;
    };
    std::vector<Candidate> candidates;
    for (std::size_t b = 0; b < running.size(); ++b) {
      const DecoderOutput out = decoding.step(running[b].ids, running[b].cache);  // the cache now holds every id of b
      const std::vector<double> lp = next_log_probabilities(c, out.logits.data(), step == 0);
      for (std::size_t id = 0; id < lp.size(); ++id) {
        if (std::isfinite(lp[id])) candidates.push_back({running[b].log_probability + lp[id], b, static_cast<std::int32_t>(id)});
      }
    }
    const std::size_t keep = std::min(candidates.size(), static_cast<std::size_t>(2 * beams));
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end(),
                      [](const Candidate& a, const Candidate& b) {
                        return a.log_probability != b.log_probability ? a.log_probability > b.log_probability
                                                                      : a.token < b.token;
                      });
    std::vector<Hypothesis> next;
    for (std::size_t rank = 0; rank < keep && static_cast<int>(next.size()) < beams; ++rank) {
      const Candidate& k = candidates[rank];
      if (is_eos(c, k.token)) {  // an end among the N best finishes a hypothesis
        if (static_cast<int>(rank) < beams) {
          Hypothesis h{running[k.beam].ids, k.log_probability, {}};
          h.ids.push_back(k.token);
          finish(h);
        }
      } else {
        Hypothesis h{running[k.beam].ids, k.log_probability, running[k.beam].cache};  // the cache copied: beams fork
        h.ids.push_back(k.token);
        next.push_back(std::move(h));
      }
    }
    running = std::move(next);
    // Done when N are finished and the best running beam, scored at its
    // current length, cannot beat the worst finished one.
    if (static_cast<int>(finished.size()) == beams && !running.empty() &&
        length_normalised(c, running.front().log_probability, running.front().ids.size() - 1) <= finished.back().score) {
      running.clear();
    }
  }
  for (const Hypothesis& h : running) finish(h);  // the length limit
  return finished.front();
}

}  // namespace

Translation translate(const Seq2SeqModel& model, const std::vector<std::int32_t>& source_ids,
                      const TranslateOptions& options, const std::function<bool(const TranslationStep&)>& on_step) {
  const Seq2SeqConfig& c = model.config();
  if (options.beams < 1 || options.beams > 64) {
    throw std::invalid_argument("beams must be from 1 to 64, got " + std::to_string(options.beams));
  }
  if (options.max_new_tokens < 0) throw std::invalid_argument("max_new_tokens must not be negative");
  if (c.forced_bos_token_id >= c.vocab_size) {
    throw std::invalid_argument("config.json's forced_bos_token_id " + std::to_string(c.forced_bos_token_id) +
                                " is outside the vocabulary (0.." + std::to_string(c.vocab_size - 1) +
                                "): a translation cannot start with it");
  }
  int max_new = options.max_new_tokens > 0 ? options.max_new_tokens : c.max_length > 0 ? c.max_length : c.positions;
  max_new = std::min(max_new, c.positions - 1);  // the start token takes one position
  const ForwardRequest step_request = decoding_step(options);
  EncoderOutput encoded = model.encode(source_ids, step_request);
  Translation t = options.beams == 1 ? greedy(model, encoded, step_request, max_new, on_step)
                                     : beam_search(model, encoded, step_request, options.beams, max_new);
  t.encoded = std::move(encoded);
  return t;
}

DecoderOutput decode_translation(const Seq2SeqModel& model, const Translation& translation, const TranslateOptions& options) {
  const std::vector<std::int32_t>& ids = translation.decoder_ids;
  const std::vector<std::int32_t> inputs(ids.begin(), ids.size() > 1 ? ids.end() - 1 : ids.end());
  return model.decode(translation.encoded, inputs, ablated_pass(options));
}

}  // namespace attnplay
