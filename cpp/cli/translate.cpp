// The encoder-decoder commands of the CLI:
// `attnplay translate --model DIR (--text TEXT | --file PATH) [--beams N] [--max-new-tokens N] [--all-layers]
//                    [--ablate PART:L:H[,...] [--ablation zero|mean]]`
// translates each input line (with the heads of --ablate knocked out in every pass) (--file: one source per line, empty lines
// skipped) and prints one JSON object per line: {"source", "translation",
// "source_tokens", "target_tokens", "cross_attentions"}; target_tokens are the
// generated tokens (the closing </s> included when produced), and
// cross_attentions[i] is the cross-attention row of the step that produced
// target_tokens[i] over the source tokens, averaged over the last decoder
// layer's heads ([T][S]), or with --all-layers every layer and head
// ([layer][head][T][S]).
// And the encoder-decoder form of `attnplay attention` (seq2seq_attention,
// called by model_attention.cpp): JSON {"model_type", "encoder_tokens",
// "decoder_tokens", "encoder_attentions", "decoder_attentions",
// "cross_attentions"}, nested [layer][head][query][key] as Hugging Face names
// them; tokens are {"id", "token", "special"}, so the output is the widget's
// data format (web/attention/attention-data-source.js) as it is; with --ablate,
// --top-k, --token-loss and --rank-heads also "ablate", "ablation", "top_k" (of
// every decoder position), "token_loss" (teacher-forced: decoder position i
// predicting decoder token i + 1) and "head_ranking" (every head of the
// three parts, analysis/head_ablation.h).
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "analysis/head_ablation.h"
#include "cli/flags.h"
#include "cli/ids.h"
#include "cli/json_matrix.h"
#include "cli/seq2seq.h"
#include "model/directory.h"
#include "json/json_text.h"

namespace attnplay::cli {
namespace {

// [["cross", 0, 1], ...]
nlohmann::ordered_json heads_json(const std::vector<ForwardRequest::Head>& heads) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ForwardRequest::Head& h : heads) out.push_back({part_name(h.part), h.layer, h.head});
  return out;
}

nlohmann::ordered_json token_list(const Tokenizer* tokenizer, const std::vector<std::int32_t>& ids) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const std::int32_t id : ids) {
    nlohmann::ordered_json token = {{"id", id}};
    token["token"] = tokenizer ? tokenizer->display(id) : std::to_string(id);  // no tokenizer: the id is the label
    if (tokenizer) token["special"] = tokenizer->is_special(id);
    out.push_back(std::move(token));
  }
  return out;
}

nlohmann::ordered_json translate_line(const TranslationModel& model, const std::string& line,
                                      const TranslateOptions& options, bool all_layers) {
  const TranslationRun run = model.translate(line, options);
  const std::vector<std::int32_t>& ids = run.translation.decoder_ids;  // start, target...
  // The cross-attention of the chosen target as the search produced it: row i predicted ids[i + 1].
  const DecoderOutput decoded = decode_translation(model.model(), run.translation, options);
  const Seq2SeqConfig& c = model.model().config();
  const int T = static_cast<int>(ids.size()) - 1, S = run.translation.encoded.tokens, H = c.decoder_heads;
  nlohmann::ordered_json cross;
  if (all_layers) {
    cross = nested_attentions(decoded.cross_attentions, c.decoder_layers, H, T, S);
  } else {  // mean over the last layer's heads: [T][S]
    cross = nlohmann::ordered_json::array();
    const std::size_t last = static_cast<std::size_t>(c.decoder_layers - 1) * H * T * S;
    for (int t = 0; t < T; ++t) {
      std::vector<float> row(static_cast<std::size_t>(S), 0.0f);
      for (int h = 0; h < H; ++h) {
        for (int s = 0; s < S; ++s) row[static_cast<std::size_t>(s)] += decoded.cross_attentions[last + (static_cast<std::size_t>(h) * T + t) * S + s] / H;
      }
      cross.push_back(std::move(row));
    }
  }
  const Tokenizer& tokenizer = *model.target_tokenizer();
  nlohmann::ordered_json source_tokens = nlohmann::ordered_json::array();
  for (const Token& t : run.source.tokens) source_tokens.push_back(t.display);
  nlohmann::ordered_json target_tokens = nlohmann::ordered_json::array();
  for (std::size_t i = 1; i < ids.size(); ++i) target_tokens.push_back(tokenizer.display(ids[i]));
  nlohmann::ordered_json out = {{"source", line}, {"translation", run.text}, {"source_tokens", source_tokens},
                                {"target_tokens", target_tokens}, {"cross_attentions", cross}};
  if (run.truncated) out["truncated_source_tokens"] = run.input_tokens;
  if (!options.ablate.empty()) {
    out["ablate"] = heads_json(options.ablate);
    out["ablation"] = ablation_mode_name(options.ablation);
  }
  return out;
}

}  // namespace

int run_translate(const Args& args) {
  std::string dir;
  std::optional<std::string> text, file;
  TranslateOptions options;
  bool all_layers = false;
  parse_flags(args, {text_flag("--model", dir), text_flag("--text", text), text_flag("--file", file),
                     int_flag("--beams", options.beams), int_flag("--max-new-tokens", options.max_new_tokens),
                     switch_flag("--all-layers", all_layers),
                     {"--ablate", [&](const std::string& value) { options.ablate = parse_heads(value, "--ablate", true); }},
                     ablation_flag(options.ablation)});
  if (dir.empty() || text.has_value() == file.has_value()) throw UsageError("--model and one of --text or --file are required");
  const ModelFiles files = read_model_directory(dir);
  const TranslationModel model = load_translation_model(files);
  if (!model.has_tokenizer()) {
    throw std::invalid_argument("this model has no tokenizer (tokenizer.json, a SentencePiece model such as spiece.model, or source.spm, target.spm and vocab.json), so it cannot read text");
  }
  std::string input = text.value_or("");
  if (file) {
    std::ifstream in(*file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + *file);
    input.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::istringstream lines(input);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::cout << json_text::write_replacing_invalid_utf8(translate_line(model, line, options, all_layers)) << "\n";
  }
  return 0;
}

TranslationModel load_translation_model(const ModelFiles& files) {
  if (files.marian_tokenizer) {
    return TranslationModel::from_checkpoint(files.config_json, files.checkpoint, read_marian_tokenizers(*files.marian_tokenizer));
  }
  Seq2SeqModel model = Seq2SeqModel::from_checkpoint(files.config_json, files.checkpoint);
  std::optional<Tokenizer> tokenizer = folder_tokenizer(files, model.config().model_type);
  return TranslationModel(std::move(model), tokenizer, tokenizer);
}

int seq2seq_attention(const ModelFiles& files, const Seq2SeqAttentionRequest& request, std::ostream& out) {
  const TranslationModel model = load_translation_model(files);
  const Seq2SeqConfig& c = model.model().config();
  ForwardRequest pass = request.forward;
  if (request.text) pass.source_ids = model.encode_source(*request.text).ids();
  if (request.target) pass.ids = model.decoder_ids(*request.target);
  if (pass.ids.empty()) pass.ids = {c.decoder_start_token_id};
  const Seq2SeqResult result = model.model().forward(pass);
  const EncoderOutput& encoded = result.encoder;
  const DecoderOutput& decoded = result.decoder;
  const std::vector<std::int32_t>& source_ids = pass.source_ids;
  const std::vector<std::int32_t>& decoder_ids = pass.ids;
  const Tokenizer* source_tokenizer = model.source_tokenizer() ? &*model.source_tokenizer() : nullptr;
  const Tokenizer* target_tokenizer = model.target_tokenizer() ? &*model.target_tokenizer() : nullptr;
  const int S = encoded.tokens, T = decoded.tokens;
  nlohmann::ordered_json j = {
      {"model_type", c.model_type},
      {"encoder_tokens", token_list(source_tokenizer, source_ids)},
      {"decoder_tokens", token_list(target_tokenizer, decoder_ids)},
      {"encoder_attentions", nested_attentions(encoded.attentions, c.encoder_layers, c.encoder_heads, S, S)},
      {"decoder_attentions", nested_attentions(decoded.self_attentions, c.decoder_layers, c.decoder_heads, T, T)},
      {"cross_attentions", nested_attentions(decoded.cross_attentions, c.decoder_layers, c.decoder_heads, T, S)}};
  if (!pass.ablate.empty()) {
    j["ablate"] = heads_json(pass.ablate);
    j["ablation"] = ablation_mode_name(pass.ablation);
  }
  if (pass.top_k > 0) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const TopK& row : decoded.top_k) {
      rows.push_back({{"ids", row.ids}, {"probabilities", row.probabilities}, {"tokens", token_list(target_tokenizer, row.ids)}});
    }
    j["top_k"] = std::move(rows);
  }
  if (pass.token_loss) j["token_loss"] = decoded.token_loss;
  if (request.rank_heads) {
    const Seq2SeqHeadAblationRanking ranking = rank_heads_by_ablation(model.model(), pass, pass.ablation);
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (const Seq2SeqHeadAblationEffect& e : ranking.heads) {
      heads.push_back({{"part", part_name(e.head.part)}, {"layer", e.head.layer}, {"head", e.head.head}, {"loss", e.loss}, {"delta", e.delta}});
    }
    j["head_ranking"] = {{"mode", ablation_mode_name(pass.ablation)}, {"base_loss", ranking.base_loss}, {"heads", std::move(heads)}};
  }
  out << json_text::write_replacing_invalid_utf8(j) << "\n";
  return 0;
}

}  // namespace attnplay::cli
