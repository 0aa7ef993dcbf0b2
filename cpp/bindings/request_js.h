// The one request of every model from JS (model/model.h's ForwardRequest,
// written by web/engine/engine-inputs.js's forwardRequestSpec), every field
// read here and only here, for the text models' bindings and the
// encoder-decoders' alike; and the parts of a response both write the same
// way (a traced head, the hidden states, a ranked head). No logic beyond
// copying and naming: whether a head or a field suits the model is the core's
// check.
#pragma once

#include <emscripten/val.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "bindings/marshal.h"
#include "model/model.h"

namespace attnplay::bindings {

// spec.ablation: 'zero' (the default) or 'mean'.
inline AblationMode ablation_mode_from_js(const emscripten::val& spec) {
  const std::string name = has(spec, "ablation") ? spec["ablation"].as<std::string>() : "zero";
  const std::optional<AblationMode> mode = ablation_mode_from_name(name);
  if (!mode) throw std::invalid_argument("ablation is 'zero' or 'mean', not '" + name + "'");
  return *mode;
}

// { layer, head, part?: 'encoder' | 'decoder' | 'cross' } -> a head (no part: the model's one attention).
inline ForwardRequest::Head head_from_js(const emscripten::val& spec, const char* what) {
  ForwardRequest::Head head{spec["layer"].as<int>(), spec["head"].as<int>()};
  if (has(spec, "part")) {
    const std::string name = spec["part"].as<std::string>();
    const std::optional<AttentionPart> part = part_from_name(name);
    if (!part) throw std::invalid_argument(std::string(what) + ".part must be encoder, decoder or cross, not '" + name + "'");
    head.part = *part;
  }
  return head;
}

// spec.ablate: [head] (head_from_js); spec.ablation: ablation_mode_from_js. The
// request's fields, also for a translation's passes (model/translate.h).
inline void ablation_from_js(const emscripten::val& spec, std::vector<ForwardRequest::Head>& heads, AblationMode& mode) {
  if (has(spec, "ablate")) {
    const emscripten::val list = spec["ablate"];
    const int n = list["length"].as<int>();
    for (int i = 0; i < n; ++i) heads.push_back(head_from_js(list[i], "ablate[]"));
  }
  mode = ablation_mode_from_js(spec);
}

// { ids?: Int32Array, pixels?: { data, shape: [C, H, W] } (vision transformers), sourceIds? (encoder-decoders),
//   typeIds?, attentionMask?: Uint8Array, maskPositions?,
//   trace?: head, hiddenStates?, logits?, topK?, predictionPositions?, ablate?: [head], ablation?: 'zero' | 'mean',
//   tokenLoss?, maskLabels? } -> ForwardRequest (heads as head_from_js reads them)
inline ForwardRequest request_from_js(const emscripten::val& spec) {
  ForwardRequest request;
  request.ids = numbers<std::int32_t>(spec, "ids");
  if (has(spec, "pixels")) {
    const emscripten::val shape = spec["pixels"]["shape"];
    if (!has(spec["pixels"], "data") || shape.isUndefined() || shape["length"].as<int>() != 3) {
      throw std::invalid_argument("pixels: expected { data: Float32Array, shape: [channels, height, width] }");
    }
    request.pixels = {shape[0].as<int>(), shape[1].as<int>(), shape[2].as<int>(),
                      numbers<float>(spec["pixels"], "data")};
  }
  request.source_ids = numbers<std::int32_t>(spec, "sourceIds");
  request.type_ids = numbers<std::int32_t>(spec, "typeIds");
  request.attention_mask = numbers<std::uint8_t>(spec, "attentionMask");
  request.mask_positions = numbers<int>(spec, "maskPositions");
  if (has(spec, "trace")) request.trace = head_from_js(spec["trace"], "trace");
  request.hidden_states = has(spec, "hiddenStates") && spec["hiddenStates"].as<bool>();
  request.logits = has(spec, "logits") && spec["logits"].as<bool>();
  request.top_k = has(spec, "topK") ? spec["topK"].as<int>() : 0;
  request.prediction_positions = numbers<int>(spec, "predictionPositions");
  ablation_from_js(spec, request.ablate, request.ablation);
  request.token_loss = has(spec, "tokenLoss") && spec["tokenLoss"].as<bool>();
  request.mask_labels = numbers<std::int32_t>(spec, "maskLabels");
  return request;
}

// spec.lens: k of the logit lens (0 or absent: none).
inline int lens_k_from_js(const emscripten::val& spec) { return has(spec, "lens") ? spec["lens"].as<int>() : 0; }

// The request to run for what JS asked: the logit lens reads the hidden
// states, which JS gets only when it asked for them.
inline ForwardRequest with_lens_inputs(ForwardRequest asked, int lens_k) {
  asked.hidden_states = asked.hidden_states || lens_k > 0;
  return asked;
}

// A head -> { layer, head, part? } (part: an encoder-decoder's), written into `out` (a fresh object by default).
inline emscripten::val head_to_js(const ForwardRequest::Head& head, emscripten::val out = emscripten::val::object()) {
  if (head.part != AttentionPart::self) out.set("part", std::string(part_name(head.part)));
  out.set("layer", head.layer);
  out.set("head", head.head);
  return out;
}

// The traced head and its trace -> head_to_js + head_trace_to_js (marshal.h).
inline emscripten::val trace_to_js(const ForwardRequest::Head& head, const HeadTrace& trace) {
  return head_to_js(head, head_trace_to_js(trace));
}

// L + 1 hidden states [T, d] -> one tensor [L + 1, T, d].
inline emscripten::val hidden_states_to_js(const std::vector<Matrix>& hidden_states, int tokens, int width) {
  std::vector<float> flat;
  flat.reserve(hidden_states.size() * static_cast<std::size_t>(tokens) * width);
  for (const Matrix& h : hidden_states) flat.insert(flat.end(), h.data(), h.data() + h.size());
  return tensor_to_js(flat.data(), flat.size(), {static_cast<int>(hidden_states.size()), tokens, width});
}

// One head of a ranking by ablation (analysis/head_ablation.h) -> head_to_js + { loss, delta }.
inline emscripten::val ranked_head_to_js(const ForwardRequest::Head& head, double loss, double delta) {
  emscripten::val item = head_to_js(head);
  item.set("loss", loss);
  item.set("delta", delta);
  return item;
}

}  // namespace attnplay::bindings
