// analysis/rollout.* against tests/golden/rollout.json: random attention stacks
// (causal and not) whose rollout and flow were computed by a direct float64
// implementation of Abnar & Zuidema's definitions (tests/node/rollout-reference.mjs:
// plain matrix products, Edmonds–Karp max flow; made by make_rollout_goldens.mjs).
// Plus known cases (identity attention) and the errors for bad shapes, an
// unknown method and too much flow work.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "analysis/rollout.h"
#include "golden_models.h"

using namespace attnplay;
using nlohmann::json;

namespace {

json rollout_golden() {
  std::ifstream in(std::string(ATTNPLAY_GOLDEN_DIR) + "/rollout.json");
  return json::parse(in);
}

}  // namespace

TEST_CASE("rollout and flow equal the float64 reference") {
  const json golden = rollout_golden();
  for (const json& c : golden["cases"]) {
    const std::vector<int> shape = c["shape"].get<std::vector<int>>();
    CAPTURE(c["shape"].dump());
    const std::vector<float> attentions = c["attentions"].get<std::vector<float>>();
    const int L = shape[0], H = shape[1], T = shape[2];
    for (const RolloutMethod method : {RolloutMethod::rollout, RolloutMethod::flow}) {
      CAPTURE(rollout_method_name(method));
      const std::vector<double> ours = rolled_out(attentions, L, H, T, method);
      const std::vector<double> ref = golden_models::flat(c[rollout_method_name(method)]);
      REQUIRE(ours.size() == ref.size());
      for (std::size_t i = 0; i < ref.size(); ++i) CHECK(std::abs(ours[i] - ref[i]) <= 1e-9);
    }
  }
}

TEST_CASE("identity attention rolls out and flows to the identity") {
  const int L = 3, H = 2, T = 4;
  std::vector<float> attentions(static_cast<std::size_t>(L) * H * T * T, 0.0f);
  for (int m = 0; m < L * H; ++m)
    for (int i = 0; i < T; ++i) attentions[(static_cast<std::size_t>(m) * T + i) * T + i] = 1.0f;
  for (const RolloutMethod method : {RolloutMethod::rollout, RolloutMethod::flow}) {
    const std::vector<double> out = rolled_out(attentions, L, H, T, method);
    for (int k = 0; k < T * T; ++k) CHECK(out[static_cast<std::size_t>(k)] == (k / T == k % T ? 1.0 : 0.0));
  }
}

TEST_CASE("bad shapes, unknown methods and too much flow work are refused with a message") {
  CHECK_THROWS_WITH_AS(attention_rollout({}, 0, 1, 1), doctest::Contains("at least one layer"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(attention_rollout(std::vector<float>(7), 1, 1, 2), doctest::Contains("needs 4"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_rollout_method("max"), doctest::Contains("use rollout or flow"), std::invalid_argument);
  CHECK(parse_rollout_method("flow") == RolloutMethod::flow);
  const int T = 65;  // 1·65⁴ > 2^24
  std::vector<float> uniform(static_cast<std::size_t>(T) * T, 1.0f / T);
  CHECK_THROWS_WITH_AS(attention_flow(uniform, 1, 1, T), doctest::Contains("too much work"), std::invalid_argument);
  CHECK(attention_rollout(uniform, 1, 1, T).size() == static_cast<std::size_t>(T) * T);
}
