// `attnplay attention --model DIR (--text TEXT | --file PATH) [--pair TEXT]
//                    | --ids 1,2,3 [--type-ids 0,0,1]) [--format json|npy|html] [--view V] [--out FILE]
//                    [--ablate L:H[,L:H...] [--ablation zero|mean]] [--top-k K] [--prediction-positions P,...]
//                    [--token-loss] [--rank-heads]`
//                  | --model DIR --image PATH [--format json|npy] [--out FILE] [--ablate ...] [--top-k K]
// Runs a Hugging Face model folder over text (tokenized by the folder's
// tokenizer.json) or token ids and writes the attention weights of every layer
// and head, with the listed heads knocked out (--ablate, 0-based; model.h
// defines zero and mean ablation); JSON adds the top-k predictions per
// position (causal) or [MASK] position (BERT), the loss of each next token
// (--token-loss, causal) and every head ranked by the loss increase its ablation
// causes (--rank-heads, analysis/head_ablation.h):
// JSON {"model_type", "tokens", "attentions"} with attentions nested
// [layer][head][query][key] (stdout unless --out), or the same [L, H, T, T]
// tensor as float32 .npy (--out needed), or a one-file HTML page that shows it
// in the <attention-view> widget (html_page.h; --view head|model|matrix).
// Text longer than the model's
// positions is truncated and the JSON says so ("truncated", "input_tokens").
// Encoder-decoder folders (marian, bart, t5, mt5) take the source as --text/--file or
// --ids and the decoder's input as --target TEXT or --decoder-ids, and print
// their three kinds of attention (cli/seq2seq.h; JSON only), with heads of
// any part knocked out (--ablate PART:L:H), and the decoder's top-k, its
// teacher-forced loss of each target token and the ranking of every head.
// Vision transformers' folders (vit, deit, dinov2, dinov2_with_registers)
// take a picture, --image PATH (cli/image_attention.cpp).
#include <climits>
#include <filesystem>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <iterator>
#include <optional>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/html_page.h"
#include "cli/ids.h"
#include "cli/image.h"
#include "cli/json_matrix.h"
#include "cli/npy.h"
#include "cli/seq2seq.h"
#include "cli/text_or_ids.h"
#include "analysis/head_ablation.h"
#include "model/directory.h"
#include "pipeline/text_model.h"
#include "json/json_text.h"

namespace attnplay::cli {
namespace {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int run_attention(const Args& args) {
  std::string dir, format = "json", out_path, view = "head";
  std::optional<std::string> text, pair, target, image;
  std::optional<std::string> ablate;  // parsed once the model's kind is known (L:H, or PART:L:H)
  std::vector<std::int32_t> decoder_ids;
  ForwardRequest request;
  bool rank_heads = false;
  parse_flags(args, {text_flag("--model", dir), text_flag("--text", text),
                     {"--file", [&](const std::string& path) { text = read_text_file(path); }}, text_flag("--pair", pair),
                     text_flag("--target", target), ids_flag("--decoder-ids", decoder_ids), text_flag("--image", image),
                     text_flag("--format", format), text_flag("--view", view), text_flag("--out", out_path),
                     // The request's fields (ForwardRequest, model/model.h), by the same names.
                     ids_flag("--ids", request.ids), ids_flag("--type-ids", request.type_ids),
                     {"--top-k", [&](const std::string& value) {
                        const std::vector<std::int32_t> k = parse_ids(value, "--top-k");
                        if (k.size() != 1 || k[0] < 1) throw std::invalid_argument("--top-k: give one number from 1");
                        request.top_k = k[0];
                      }},
                     ids_flag("--prediction-positions", request.prediction_positions),
                     switch_flag("--token-loss", request.token_loss), text_flag("--ablate", ablate),
                     ablation_flag(request.ablation), switch_flag("--rank-heads", rank_heads)});
  if (image) {
    if (dir.empty() || text || pair || target || !request.ids.empty() || !request.type_ids.empty() ||
        !decoder_ids.empty() || request.token_loss || rank_heads || !request.prediction_positions.empty() ||
        (format != "json" && format != "npy") || (format == "npy" && out_path.empty())) {
      throw UsageError("--image takes --model, and --format json or npy (npy needs --out), --ablate, --ablation and "
                       "--top-k; no text, ids, --token-loss, --rank-heads or --prediction-positions");
    }
    if (ablate) request.ablate = parse_heads(*ablate, "--ablate", false);
    const ModelFiles files = read_model_directory(dir);
    std::ofstream file;
    if (!out_path.empty() && format == "json") {
      file.open(out_path);
      if (!file) throw std::runtime_error("cannot write " + out_path);
    }
    const bool top_k_given = request.top_k > 0;
    return image_attention(files, {std::move(request), *image, format, out_path, top_k_given},
                           out_path.empty() ? std::cout : file);
  }
  if (dir.empty() || (request.ids.empty() == !text.has_value()) || (pair && !text) ||
      (format != "json" && format != "npy" && format != "html") || (format == "npy" && out_path.empty()) ||
      (view != "head" && view != "model" && view != "matrix")) {
    throw UsageError("--model and either text or --ids are required; --format npy needs --out; --view is head, model or matrix");
  }
  if ((request.top_k > 0 || request.token_loss || rank_heads) && format != "json") {
    throw UsageError("--top-k, --token-loss and --rank-heads add to the JSON output (--format json)");
  }
  const std::string ablation = ablation_mode_name(request.ablation);

  const ModelFiles files = read_model_directory(dir);
  if (is_encoder_decoder_config(files.config_json)) {
    if (format != "json" || pair || !request.type_ids.empty() || (target && !decoder_ids.empty())) {
      throw UsageError("an encoder-decoder takes --format json only, no --pair or --type-ids, and one of --target or --decoder-ids");
    }
    std::ofstream file;
    if (!out_path.empty()) {
      file.open(out_path);
      if (!file) throw std::runtime_error("cannot write " + out_path);
    }
    request.source_ids = std::move(request.ids);
    request.ids = decoder_ids;
    if (ablate) request.ablate = parse_heads(*ablate, "--ablate", true);
    return seq2seq_attention(files, {request, text, target, rank_heads}, out_path.empty() ? std::cout : file);
  }
  if (ablate) request.ablate = parse_heads(*ablate, "--ablate", false);
  const ModelConfig config = parse_config(files.config_json);
  if (config.is_vision()) throw UsageError(dir + " is a vision model (" + config.model_type + "): it reads a picture, --image PATH");
  if (target || !decoder_ids.empty()) {
    throw UsageError("--target and --decoder-ids are for encoder-decoder models; " + dir + " is a " + config.model_type +
                     " model");
  }
  const TextModel model = text_model_of(files);
  const bool causal = model.model().config().causal();
  if (!causal && request.token_loss) {
    throw UsageError("--token-loss is for causal models (an encoder's mask positions have no true token to score); "
                     "--rank-heads scores BERT's own predictions");
  }
  // An encoder predicts (top-k) and is ranked at its mask token's ids ([MASK] or <mask>).
  const bool at_masks = !causal && (request.top_k > 0 || rank_heads);
  std::optional<RunResult> run;
  if (text) {
    run = model.run(*text, pair ? std::optional<std::string_view>(*pair) : std::nullopt, request);
    model.set_text_inputs(run->encoding, request);
    if (at_masks) request.mask_positions = model.mask_positions(request.ids);
  } else if (at_masks) {
    request.mask_positions = model.mask_positions(request.ids);
    if (request.mask_positions.empty()) request.top_k = 0;  // nothing to fill, as for text
  }
  const ForwardResult result = run ? std::move(run->forward) : model.model().forward(request);  // attentions [L, H, T, T]

  if (format == "npy") {
    write_npy(out_path, {result.layers, result.heads, result.tokens, result.tokens}, result.attentions);
    return 0;
  }
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  for (int i = 0; i < result.tokens; ++i) {
    nlohmann::ordered_json token = {{"id", request.ids[i]}, {"type_id", request.type_ids.empty() ? 0 : request.type_ids[i]}};
    if (!run && format == "html") token["token"] = std::to_string(request.ids[i]);  // no tokenizer ran: the id is the label
    if (run) {
      const Token& t = run->encoding.tokens[static_cast<std::size_t>(i)];
      token["token"] = t.display;
      token["piece"] = t.piece;
      token["offsets"] = {t.byte_begin, t.byte_end};
      token["special"] = t.special;
    }
    tokens.push_back(std::move(token));
  }
  if (format == "html") {
    std::filesystem::path folder = std::filesystem::path(dir).lexically_normal();
    if (folder.filename().empty()) folder = folder.parent_path();  // "models/x/"
    const std::string name = folder.filename().string();
    const nlohmann::ordered_json data = {
        {"model", name},
        {"model_type", model.model().config().model_type},
        {"causal", model.model().config().causal()},
        {"tokens", tokens},
        {"attentions", base64_tensor({result.layers, result.heads, result.tokens, result.tokens}, result.attentions)}};
    const std::string page = html_page("Attention of " + name + ": " + std::to_string(result.layers) + " layers × " +
                                           std::to_string(result.heads) + " heads, " + std::to_string(result.tokens) + " tokens",
                                       {{"view", view}, {"controls", ""}}, data);
    if (out_path.empty()) {
      std::cout << page;
    } else {
      std::ofstream file(out_path, std::ios::binary);
      if (!(file << page)) throw std::runtime_error("cannot write " + out_path);
    }
    return 0;
  }
  nlohmann::ordered_json out = {{"model_type", model.model().config().model_type}, {"tokens", std::move(tokens)}};
  if (run) {
    out["truncated"] = run->truncated;
    out["input_tokens"] = run->input_tokens;
  }
  out["attentions"] = nested_attentions(result.attentions, result.layers, result.heads, result.tokens, result.tokens);
  if (!request.ablate.empty()) {
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (const ForwardRequest::Head& h : request.ablate) heads.push_back({h.layer, h.head});
    out["ablate"] = std::move(heads);
    out["ablation"] = ablation;
  }
  if (!causal && (request.top_k > 0 || rank_heads)) out["mask_positions"] = request.mask_positions;
  if (causal && request.top_k > 0) out["prediction_positions"] = result.prediction_positions;
  if (request.top_k > 0) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (std::size_t r = 0; r < result.top_k.size(); ++r) {
      const TopK& row = result.top_k[r];
      nlohmann::ordered_json entry = {{"ids", row.ids}, {"probabilities", row.probabilities}};
      if (run) {
        const auto first = run->top_k_displays.begin() + static_cast<std::ptrdiff_t>(r * row.ids.size());
        entry["tokens"] = std::vector<std::string>(first, first + static_cast<std::ptrdiff_t>(row.ids.size()));
      }
      rows.push_back(std::move(entry));
    }
    out["top_k"] = std::move(rows);
  }
  if (request.token_loss) out["token_loss"] = result.token_loss;
  if (rank_heads) {
    const HeadAblationRanking ranking = rank_heads_by_ablation(model.model(), request, request.ablation);
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (const HeadAblationEffect& e : ranking.heads) {
      heads.push_back({{"layer", e.layer}, {"head", e.head}, {"loss", e.loss}, {"delta", e.delta}});
    }
    out["head_ranking"] = {{"mode", ablation}, {"base_loss", ranking.base_loss}, {"heads", std::move(heads)}};
    if (!causal) out["head_ranking"]["mask_labels"] = ranking.mask_labels;
  }
  if (out_path.empty()) {
    std::cout << json_text::write(out) << "\n";
  } else {
    std::ofstream file(out_path);
    if (!(file << json_text::write(out) << "\n")) throw std::runtime_error("cannot write " + out_path);
  }
  return 0;
}

}  // namespace attnplay::cli
