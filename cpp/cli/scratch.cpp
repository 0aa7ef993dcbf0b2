// `attnplay scratch`: runs the from-scratch attention of a JSON spec and prints
// every intermediate as JSON. Spec keys: x, and either wq, wk, wv (optionally
// wo, heads) or "parameter_free": true; options scale, temperature, causal,
// key_mask. Example: tests/golden/seed_numpy_example.json.
#include <fstream>
#include <iostream>
#include <iterator>

#include "attention/attention.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/json_matrix.h"
#include "json/json_text.h"

namespace attnplay::cli {
namespace {

nlohmann::json head_to_json(const HeadTrace& t) {
  return {{"q", matrix_to_json(t.q)},           {"k", matrix_to_json(t.k)},
          {"v", matrix_to_json(t.v)},           {"scores", matrix_to_json(t.scores)},
          {"scaled", matrix_to_json(t.scaled)}, {"masked", matrix_to_json(t.masked)},
          {"weights", matrix_to_json(t.weights)}, {"output", matrix_to_json(t.output)},
          {"divisor", t.divisor}};
}

}  // namespace

int run_scratch(const Args& args) {
  std::string path = "-";
  parse_flags(args, {text_flag("--spec", path)});
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const nlohmann::json spec = json_text::parse(text);

  AttentionOptions options;
  options.scale = spec.value("scale", true);
  options.temperature = spec.value("temperature", 1.0f);
  options.causal = spec.value("causal", false);
  if (spec.contains("key_mask")) options.key_mask = spec["key_mask"].get<std::vector<std::uint8_t>>();
  const Matrix x = matrix_from_json(spec.at("x"), "x");

  nlohmann::json out;
  if (spec.value("parameter_free", false)) {
    out = head_to_json(parameter_free_self_attention(x, options));
  } else {
    const Matrix wo = spec.contains("wo") ? matrix_from_json(spec["wo"], "wo") : Matrix();
    const MultiHeadTrace t = multi_head_attention(x, matrix_from_json(spec.at("wq"), "wq"),
                                                  matrix_from_json(spec.at("wk"), "wk"),
                                                  matrix_from_json(spec.at("wv"), "wv"), wo,
                                                  spec.value("heads", 1), options);
    out["heads"] = nlohmann::json::array();
    for (const HeadTrace& h : t.heads) out["heads"].push_back(head_to_json(h));
    out["concat"] = matrix_to_json(t.concat);
    out["output"] = matrix_to_json(t.output);
  }
  std::cout << json_text::write(out) << "\n";
  return 0;
}

}  // namespace attnplay::cli
