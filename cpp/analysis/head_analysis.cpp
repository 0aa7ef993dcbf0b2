// Implementation of analysis/head_analysis.h.
#include "analysis/head_analysis.h"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace attnplay {
namespace {

// Map of (layer, head) from a forward result, as an Eigen view [T, T].
Eigen::Map<const Matrix> head_map(const ForwardResult& r, int layer, int head) {
  const auto t = static_cast<std::size_t>(r.tokens);
  return Eigen::Map<const Matrix>(r.attentions.data() + (static_cast<std::size_t>(layer) * r.heads + head) * t * t,
                                  r.tokens, r.tokens);
}

}  // namespace

// Plain sentences in which previous-token, next-token, sink, local and broad patterns show.
const std::vector<std::string>& head_analysis_sentences() {
  static const std::vector<std::string> sentences = {
      "The old house stood at the end of the lane, and nobody had lived in it for many years.",
      "She opened the letter slowly, read it twice, and then put it back into the drawer.",
      "When the rain stopped, the children ran outside to play in the garden with their dog.",
      "He said that the journey would take three days, but it took almost a week.",
  };
  return sentences;
}

std::vector<HeadReport> analyze_heads(const TextModel& text_model, const HeadAnalysisOptions& options) {
  if (!text_model.tokenizer()) throw std::invalid_argument("head analysis needs the model's tokenizer.json");
  const Model& model = text_model.model();
  const Tokenizer& tokenizer = *text_model.tokenizer();
  const int layers = model.config().layers;
  const int heads = model.config().heads;
  std::vector<HeadReport> reports(static_cast<std::size_t>(layers * heads));
  for (int l = 0; l < layers; ++l)
    for (int h = 0; h < heads; ++h) reports[static_cast<std::size_t>(l * heads + h)] = {l, h, {}, {}};

  // Previous-token, next-token, self, sink, local and broad scores on natural sentences.
  const bool causal = model.config().causal();
  const int sentences = static_cast<int>(head_analysis_sentences().size());
  for (const std::string& sentence : head_analysis_sentences()) {
    const RunResult run = text_model.run(sentence, std::nullopt, ForwardRequest{});
    std::vector<int> sinks = {0};
    for (std::size_t i = 1; i < run.encoding.tokens.size(); ++i) {
      if (run.encoding.tokens[i].special) sinks.push_back(static_cast<int>(i));
    }
    for (HeadReport& report : reports) {
      const auto a = head_map(run.forward, report.layer, report.head);  // [T, T]
      report.scores.previous_token += previous_token_score(a) / sentences;
      report.scores.next_token += next_token_score(a) / sentences;
      report.scores.self += self_score(a) / sentences;
      report.scores.sink += sink_score(a, sinks) / sentences;
      report.scores.local += local_score(a) / sentences;
      report.scores.broad += broad_score(a, causal) / sentences;
    }
  }

  // Induction on random tokens repeated twice: [prefix] r r [suffix].
  std::vector<std::int32_t> prefix, suffix;
  if (!model.config().causal()) {
    const auto cls = tokenizer.token_to_id("[CLS]");
    const auto sep = tokenizer.token_to_id("[SEP]");
    if (cls) prefix.push_back(*cls);
    if (sep) suffix.push_back(*sep);
  }
  const int room = model.config().positions - static_cast<int>(prefix.size() + suffix.size());
  const int period = std::min(options.period, room / 2);
  if (period < 2) throw std::invalid_argument("head analysis: the model has too few positions for induction sequences");
  const int vocab = std::min(model.config().vocab_size, tokenizer.vocab_size());
  // mt19937's output is fixed by the standard (its distributions are not), so
  // the same seed gives the same sequences natively and in WASM.
  std::mt19937 rng(options.seed);
  for (int s = 0; s < options.random_sequences; ++s) {
    std::vector<std::int32_t> half;
    while (static_cast<int>(half.size()) < period) {
      const auto id = static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(vocab));
      if (!tokenizer.is_special(id)) half.push_back(id);
    }
    ForwardRequest request;
    request.ids = prefix;
    request.ids.insert(request.ids.end(), half.begin(), half.end());
    request.ids.insert(request.ids.end(), half.begin(), half.end());
    request.ids.insert(request.ids.end(), suffix.begin(), suffix.end());
    const ForwardResult r = model.forward(request);
    const auto offset = static_cast<Eigen::Index>(prefix.size());
    for (HeadReport& report : reports) {
      const auto block = head_map(r, report.layer, report.head).block(offset, offset, 2 * period, 2 * period);
      report.scores.induction += induction_score(block, period) / options.random_sequences;
    }
  }
  for (HeadReport& report : reports) report.labels = head_labels(report.scores);
  return reports;
}

}  // namespace attnplay
