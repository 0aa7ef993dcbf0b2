// `attnplay attention --model DIR --ids 1,2,3 [--type-ids 0,0,1]
//                    [--format json|npy] [--out FILE]`
// Runs a Hugging Face model folder over token ids and writes the attention
// weights of every layer and head: JSON {"model_type", "tokens",
// "attentions"} with attentions nested [layer][head][query][key] (stdout
// unless --out), or the same [L, H, T, T] tensor as float32 .npy (--out needed).
#include <climits>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/npy.h"
#include "model/directory.h"
#include "model/model.h"

namespace attnplay::cli {
namespace {

const char* const kUsage =
    "usage: attnplay attention --model DIR --ids 1,2,3 [--type-ids 0,0,1] [--format json|npy] [--out FILE]\n";

std::vector<std::int32_t> parse_ids(const std::string& text, const std::string& option) {
  std::vector<std::int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value < INT32_MIN || value > INT32_MAX) {
      throw std::invalid_argument(option + ": '" + item + "' is not an integer");
    }
    ids.push_back(static_cast<std::int32_t>(value));
  }
  return ids;
}

}  // namespace

int run_attention(const Args& args) {
  std::string dir, format = "json", out_path;
  ForwardRequest request;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    if (args[i] == "--model" && has_value) {
      dir = args[++i];
    } else if (args[i] == "--ids" && has_value) {
      request.ids = parse_ids(args[++i], "--ids");
    } else if (args[i] == "--type-ids" && has_value) {
      request.type_ids = parse_ids(args[++i], "--type-ids");
    } else if (args[i] == "--format" && has_value) {
      format = args[++i];
    } else if (args[i] == "--out" && has_value) {
      out_path = args[++i];
    } else {
      std::cerr << "attnplay attention: unknown or incomplete argument '" << args[i] << "'\n" << kUsage;
      return 2;
    }
  }
  if (dir.empty() || request.ids.empty() || (format != "json" && format != "npy") ||
      (format == "npy" && out_path.empty())) {
    std::cerr << kUsage << "(--model and --ids are required; --format npy needs --out)\n";
    return 2;
  }

  const ModelFiles files = read_model_directory(dir);
  const Model model = Model::from_buffers(files.config_json, files.safetensors);
  const ForwardResult result = model.forward(request);  // attentions [L, H, T, T]

  if (format == "npy") {
    write_npy(out_path, {result.layers, result.heads, result.tokens, result.tokens}, result.attentions);
    return 0;
  }
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  for (int i = 0; i < result.tokens; ++i) {
    tokens.push_back({{"id", request.ids[i]}, {"type_id", request.type_ids.empty() ? 0 : request.type_ids[i]}});
  }
  nlohmann::ordered_json attentions = nlohmann::ordered_json::array();  // [layer][head][query][key]
  const float* w = result.attentions.data();
  for (int l = 0; l < result.layers; ++l) {
    nlohmann::ordered_json layer = nlohmann::ordered_json::array();
    for (int h = 0; h < result.heads; ++h) {
      nlohmann::ordered_json head = nlohmann::ordered_json::array();
      for (int q = 0; q < result.tokens; ++q, w += result.tokens) head.push_back(std::vector<float>(w, w + result.tokens));
      layer.push_back(std::move(head));
    }
    attentions.push_back(std::move(layer));
  }
  const nlohmann::ordered_json out = {
      {"model_type", model.config().model_type}, {"tokens", std::move(tokens)}, {"attentions", std::move(attentions)}};
  if (out_path.empty()) {
    std::cout << out.dump() << "\n";
  } else {
    std::ofstream file(out_path);
    if (!(file << out.dump() << "\n")) throw std::runtime_error("cannot write " + out_path);
  }
  return 0;
}

}  // namespace attnplay::cli
