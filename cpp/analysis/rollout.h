// Attention rollout and attention flow (Abnar & Zuidema, 2020, "Quantifying
// Attention Flow in Transformers"): where each token's final representation
// draws on the input tokens, across all layers at once. The same definitions
// as web/attention/rollout.js (which draws them with no WASM in data mode), in float64:
//   Ā_l = ½·mean_h(A_l) + ½·I, each row renormalised to sum to 1;
//   rollout R = Ā_L · … · Ā_1;
//   flow    F[i][j] = max flow from node (L, i) to node (0, j) of the layered
//           graph whose edge (l, a) → (l−1, b) has capacity Ā_l[a][b].
// Not here: running the model (model/), drawing, output formats.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnplay {

enum class RolloutMethod { rollout, flow };

// "rollout" or "flow"; throws std::invalid_argument naming the choices otherwise.
RolloutMethod parse_rollout_method(const std::string& name);
const char* rollout_method_name(RolloutMethod method);

// Attention flow solves T² max-flow problems: above this much work (L·T⁴) it
// is refused with a message (as web/attention/rollout.js's MAX_FLOW_WORK).
inline constexpr double kMaxFlowWork = 16777216.0;  // 2^24

// attentions [L, H, T, T] row-major (self-attention) -> [T, T] row-major.
// Throws std::invalid_argument for an empty or inconsistent shape, and for
// flow over more than kMaxFlowWork.
std::vector<double> attention_rollout(const std::vector<float>& attentions, int layers, int heads, int tokens);
std::vector<double> attention_flow(const std::vector<float>& attentions, int layers, int heads, int tokens);
std::vector<double> rolled_out(const std::vector<float>& attentions, int layers, int heads, int tokens,
                               RolloutMethod method);

}  // namespace attnplay
