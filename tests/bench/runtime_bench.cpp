// Native timing of the model runtime for tests/bench/runtime-bench.mjs (a
// benchmark tool, not a test): loads a model folder, then runs the forward pass
// (attention of every layer and head + top-5 next tokens) at each requested
// length, and prints JSON {load_ms, runs: [{tokens, ms: [...]}]}.
// usage: runtime_bench DIR REPEATS T1 [T2 ...]
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/directory.h"
#include "model/model.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: runtime_bench DIR REPEATS T1 [T2 ...]\n";
    return 2;
  }
  using clock = std::chrono::steady_clock;
  const auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto start = clock::now();
  const attnplay::ModelFiles files = attnplay::read_model_directory(argv[1]);
  const attnplay::Model model = attnplay::Model::from_checkpoint(files.config_json, files.checkpoint);
  nlohmann::json out = {{"load_ms", ms(clock::now() - start)}, {"runs", nlohmann::json::array()}};
  const int repeats = std::atoi(argv[2]);
  for (int a = 3; a < argc; ++a) {
    attnplay::ForwardRequest request;
    const int tokens = std::atoi(argv[a]);
    for (int i = 0; i < tokens; ++i) request.ids.push_back((i * 7919) % model.config().vocab_size);
    request.top_k = 5;
    nlohmann::json times = nlohmann::json::array();
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = clock::now();
      const attnplay::ForwardResult result = model.forward(request);
      times.push_back(ms(clock::now() - t0));
      if (result.attentions.empty()) return 1;
    }
    out["runs"].push_back({{"tokens", tokens}, {"ms", times}});
  }
  std::cout << out.dump() << "\n";
  return 0;
}
