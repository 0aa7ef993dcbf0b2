// Native timing of the model runtime for the benchmarks (a benchmark tool, not
// a test): loads a model folder, then either
// - runs the forward pass (attention of every layer and head + top-5 next
//   tokens) at each requested length and prints JSON
//   {load_ms, runs: [{tokens, ms: [...]}]} (runtime-bench.mjs, llama.mjs), or
// - with --generate, generates NEW tokens greedily after a PROMPT-id prompt
//   on THREADS threads (the prompt's pass untimed) and prints JSON
//   {load_ms, threads, ms_per_token (the mean), median_step_ms} (decode.mjs,
//   llama.mjs).
// usage: runtime_bench DIR REPEATS T1 [T2 ...]
//        runtime_bench --generate DIR THREADS PROMPT NEW
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/directory.h"
#include "model/generate.h"
#include "model/model.h"
#include "tensor/thread_pool.h"

namespace {

using clock_type = std::chrono::steady_clock;

double ms(clock_type::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::vector<std::int32_t> ids_of(int tokens, int vocab) {
  std::vector<std::int32_t> ids;
  for (int i = 0; i < tokens; ++i) ids.push_back((i * 7919) % vocab);
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  const bool generate = argc == 6 && std::strcmp(argv[1], "--generate") == 0;
  if (!generate && argc < 4) {
    std::cerr << "usage: runtime_bench DIR REPEATS T1 [T2 ...]\n"
                 "       runtime_bench --generate DIR THREADS PROMPT NEW\n";
    return 2;
  }
  const auto start = clock_type::now();
  const attnplay::ModelFiles files = attnplay::read_model_directory(argv[generate ? 2 : 1]);
  const attnplay::Model model = attnplay::Model::from_checkpoint(files.config_json, files.checkpoint);
  nlohmann::json out = {{"load_ms", ms(clock_type::now() - start)}};
  if (generate) {
    const int threads = attnplay::threads::set_concurrency(std::atoi(argv[3]));
    attnplay::GenerationOptions options;
    options.max_new_tokens = std::atoi(argv[5]) + 1;  // the prompt's pass gives the first
    options.stop_at_eos = false;
    attnplay::Generator generator(model, ids_of(std::atoi(argv[4]), model.config().vocab_size), options);
    if (!generator.step()) return 1;  // the prompt's pass
    std::vector<double> steps;  // ms of each step
    for (auto t0 = clock_type::now(); generator.step(); t0 = clock_type::now()) steps.push_back(ms(clock_type::now() - t0));
    if (steps.empty()) return 1;
    double total = 0;
    for (const double step : steps) total += step;
    std::sort(steps.begin(), steps.end());
    out["threads"] = threads;
    out["ms_per_token"] = total / static_cast<double>(steps.size());
    out["median_step_ms"] = steps[steps.size() / 2];
    std::cout << out.dump() << "\n";
    return 0;
  }
  out["runs"] = nlohmann::json::array();
  const int repeats = std::atoi(argv[2]);
  for (int a = 3; a < argc; ++a) {
    attnplay::ForwardRequest request;
    request.ids = ids_of(std::atoi(argv[a]), model.config().vocab_size);
    request.top_k = 5;
    nlohmann::json times = nlohmann::json::array();
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = clock_type::now();
      const attnplay::ForwardResult result = model.forward(request);
      times.push_back(ms(clock_type::now() - t0));
      if (result.attentions.empty()) return 1;
    }
    out["runs"].push_back({{"tokens", std::atoi(argv[a])}, {"ms", times}});
  }
  std::cout << out.dump() << "\n";
  return 0;
}
