// Reading and writing tokenizer files: Hugging Face tokenizer.json (from_json,
// to_json: the model, post-processor and added tokens here, the normalizer,
// pre-tokenizer and decoder through their own from_json/to_json), GPT-2's
// vocab.json + merges.txt, BERT's vocab.txt. JSON through nlohmann-json.
// Anything unsupported is an error that names its section.
#include <algorithm>
#include <stdexcept>

#include "tokenizer/json_util.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/tokenizer.h"

namespace attnplay {
namespace {

using detail::AddedToken;
using detail::fail;
using detail::get_or;
using detail::member_or_null;
using detail::json;
using detail::ojson;
using detail::PostProcessor;
using detail::TemplateItem;
using detail::TokenizerData;
using detail::type_of;

std::unordered_map<std::string, std::int32_t> read_vocab(const json& vocab, const std::string& section) {
  if (!vocab.is_object()) fail(section, "vocab must be an object of piece -> id");
  std::unordered_map<std::string, std::int32_t> out;
  out.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer()) fail(section, "id of '" + it.key() + "' is not an integer");
    out.emplace(it.key(), it.value().get<std::int32_t>());
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> read_merges(const json& merges) {
  if (!merges.is_array()) fail("model.merges", "expected an array");
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.size());
  for (const json& m : merges) {
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const std::size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        fail("model.merges", "merge \"" + s + "\" is not two pieces separated by one space");
      }
      out.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      out.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      fail("model.merges", "each merge must be \"a b\" or [\"a\", \"b\"]");
    }
  }
  return out;
}

void read_model(const json& model, TokenizerData& d) {
  if (!model.is_object()) fail("model", "missing or not an object");
  std::string type = model.contains("type") ? type_of(model, "model") : (model.contains("merges") ? "BPE" : "WordPiece");
  if (type == "BPE") {
    if (get_or<double>(model, "dropout", 0.0) != 0.0) fail("model", "BPE dropout is not supported");
    if (!get_or<std::string>(model, "continuing_subword_prefix", "").empty() ||
        !get_or<std::string>(model, "end_of_word_suffix", "").empty()) {
      fail("model", "BPE continuing_subword_prefix / end_of_word_suffix are not supported");
    }
    if (!model.contains("vocab") || !model.contains("merges")) fail("model", "BPE needs vocab and merges");
    BpeOptions options;
    options.byte_fallback = get_or<bool>(model, "byte_fallback", false);
    options.ignore_merges = get_or<bool>(model, "ignore_merges", false);
    options.fuse_unk = get_or<bool>(model, "fuse_unk", false);
    if (model.contains("unk_token") && !model["unk_token"].is_null()) options.unk_token = model["unk_token"].get<std::string>();
    try {
      d.bpe.emplace(read_vocab(model["vocab"], "model.vocab"), read_merges(model["merges"]), std::move(options));
    } catch (const std::invalid_argument& e) {
      fail("model", e.what());
    }
  } else if (type == "WordPiece") {
    if (!model.contains("vocab")) fail("model", "WordPiece needs vocab");
    WordPieceOptions options;
    options.unk_token = get_or<std::string>(model, "unk_token", "[UNK]");
    options.continuing_subword_prefix = get_or<std::string>(model, "continuing_subword_prefix", "##");
    options.max_input_chars_per_word = get_or<std::size_t>(model, "max_input_chars_per_word", 100);
    d.wordpiece.emplace(read_vocab(model["vocab"], "model.vocab"), options);
  } else if (type == "Unigram") {
    const json& vocab = member_or_null(model, "vocab");
    if (!vocab.is_array()) fail("model", "Unigram needs vocab, an array of [piece, score]");
    std::vector<std::pair<std::string, double>> pieces;
    pieces.reserve(vocab.size());
    for (const json& entry : vocab) {
      if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number()) {
        fail("model.vocab", "each Unigram entry must be [piece, score]");
      }
      pieces.emplace_back(entry[0].get<std::string>(), entry[1].get<double>());
    }
    if (!model.contains("unk_id") || !model["unk_id"].is_number_integer()) fail("model", "Unigram needs an integer unk_id");
    try {
      d.unigram.emplace(std::move(pieces), model["unk_id"].get<std::int32_t>(), get_or<bool>(model, "byte_fallback", false));
    } catch (const std::invalid_argument& e) {
      fail("model", e.what());
    }
  } else {
    fail("model", "type \"" + type + "\" is not supported (BPE, WordPiece or Unigram)");
  }
}

ByteLevelOptions read_byte_level(const json& j) {
  ByteLevelOptions o;
  o.add_prefix_space = get_or<bool>(j, "add_prefix_space", false);
  o.trim_offsets = get_or<bool>(j, "trim_offsets", true);
  o.use_regex = get_or<bool>(j, "use_regex", true);
  return o;
}

void read_pre_tokenizer(const json& j, TokenizerData& d) {
  if (j.is_null()) {
    // No pre-tokenizer: the whole (normalized) text is one word.
    d.pre_tokenizer.kind = PreTokenizer::Kind::Sequence;
    return;
  }
  d.pre_tokenizer = PreTokenizer::from_json(j);
}

std::pair<std::string, std::int32_t> read_named_id(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_array() || j[key].size() != 2 || !j[key][0].is_string() ||
      !j[key][1].is_number_integer()) {
    fail("post_processor", std::string(key) + " must be [\"token\", id]");
  }
  return {j[key][0].get<std::string>(), j[key][1].get<std::int32_t>()};
}

TemplateItem special_item(const std::string& name, std::int32_t type_id) { return {true, name, 0, type_id}; }
TemplateItem sequence_item(int sequence, std::int32_t type_id) { return {false, "", sequence, type_id}; }

}  // namespace

namespace detail {

void set_special_pair_template(PostProcessor& p) {
  const auto& [cls, cls_id] = p.cls;
  const auto& [sep, sep_id] = p.sep;
  p.special_tokens[cls] = {{cls_id}, {cls}};
  p.special_tokens[sep] = {{sep_id}, {sep}};
  p.single = {special_item(cls, 0), sequence_item(0, 0), special_item(sep, 0)};
  if (p.kind == PostProcessor::Kind::Bert) {
    p.pair = {special_item(cls, 0), sequence_item(0, 0), special_item(sep, 0), sequence_item(1, 1),
              special_item(sep, 1)};
  } else {  // RoBERTa: <s> A </s> </s> B </s>, no token types
    p.pair = {special_item(cls, 0), sequence_item(0, 0), special_item(sep, 0), special_item(sep, 0),
              sequence_item(1, 0), special_item(sep, 0)};
  }
}

}  // namespace detail

namespace {

std::vector<TemplateItem> read_template(const json& items, const char* which) {
  if (!items.is_array()) fail("post_processor", std::string(which) + " template must be an array");
  std::vector<TemplateItem> out;
  for (const json& item : items) {
    TemplateItem t;
    if (item.contains("SpecialToken")) {
      t.is_special = true;
      t.special = item["SpecialToken"].at("id").get<std::string>();
      t.type_id = item["SpecialToken"].value("type_id", 0);
    } else if (item.contains("Sequence")) {
      const std::string id = item["Sequence"].at("id").get<std::string>();
      if (id != "A" && id != "B") fail("post_processor", "sequence id must be A or B, not " + id);
      t.sequence = id == "A" ? 0 : 1;
      t.type_id = item["Sequence"].value("type_id", 0);
    } else {
      fail("post_processor", std::string(which) + " template items must be SpecialToken or Sequence");
    }
    out.push_back(t);
  }
  return out;
}

void read_post_processor(const json& j, TokenizerData& d) {
  PostProcessor& p = d.post;
  if (j.is_null()) return;
  const std::string type = type_of(j, "post_processor");
  if (type == "Sequence") {
    // [ByteLevel, X] (Llama 3's shape) or a single processor.
    const json& steps = member_or_null(j, "processors");
    if (!steps.is_array() || steps.empty() || steps.size() > 2 ||
        (steps.size() == 2 && (!steps[0].is_object() || steps[0].value("type", "") != "ByteLevel"))) {
      fail("post_processor", "Sequence is supported as [processor] or [ByteLevel, processor]");
    }
    read_post_processor(steps.back(), d);
    if (steps.size() == 2) p.leading_byte_level = read_byte_level(steps[0]);
    return;
  }
  if (type == "ByteLevel") {
    p.kind = PostProcessor::Kind::ByteLevel;
    p.byte_level = read_byte_level(j);
  } else if (type == "BertProcessing" || type == "RobertaProcessing") {
    p.kind = type == "BertProcessing" ? PostProcessor::Kind::Bert : PostProcessor::Kind::Roberta;
    p.cls = read_named_id(j, "cls");
    p.sep = read_named_id(j, "sep");
    p.byte_level.trim_offsets = get_or<bool>(j, "trim_offsets", true);
    p.byte_level.add_prefix_space = get_or<bool>(j, "add_prefix_space", true);
    detail::set_special_pair_template(p);
  } else if (type == "TemplateProcessing") {
    p.kind = PostProcessor::Kind::Template;
    p.single = read_template(j.at("single"), "single");
    p.pair = read_template(j.at("pair"), "pair");
    const json& specials = j.at("special_tokens");
    if (!specials.is_object()) fail("post_processor", "special_tokens must be an object");
    for (auto it = specials.begin(); it != specials.end(); ++it) {
      p.special_tokens[it.key()] = {it.value().at("ids").get<std::vector<std::int32_t>>(),
                                    it.value().at("tokens").get<std::vector<std::string>>()};
    }
  } else {
    fail("post_processor", "type \"" + type + "\" is not supported (ByteLevel, BertProcessing, RobertaProcessing, "
                           "TemplateProcessing, Sequence or null)");
  }
}

void read_decoder(const json& j, TokenizerData& d) {
  if (j.is_null()) return;
  d.decoder = Decoder::from_json(j);
}

void read_added_tokens(const json& j, TokenizerData& d) {
  if (j.is_null()) return;
  if (!j.is_array()) fail("added_tokens", "expected an array");
  for (const json& t : j) {
    if (!t.is_object() || !t.contains("id") || !t.contains("content")) {
      fail("added_tokens", "each entry needs id and content");
    }
    AddedToken a;
    a.id = t["id"].get<std::int32_t>();
    a.content = t["content"].get<std::string>();
    a.special = get_or<bool>(t, "special", false);
    a.single_word = get_or<bool>(t, "single_word", false);
    a.lstrip = get_or<bool>(t, "lstrip", false);
    a.rstrip = get_or<bool>(t, "rstrip", false);
    a.normalized = get_or<bool>(t, "normalized", !a.special);
    d.added.push_back(std::move(a));
  }
}

ojson byte_level_json(const ByteLevelOptions& o) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", o.add_prefix_space},
          {"trim_offsets", o.trim_offsets},
          {"use_regex", o.use_regex}};
}

ojson template_json(const std::vector<TemplateItem>& items) {
  ojson out = ojson::array();
  for (const TemplateItem& t : items) {
    if (t.is_special) {
      out.push_back({{"SpecialToken", {{"id", t.special}, {"type_id", t.type_id}}}});
    } else {
      out.push_back({{"Sequence", {{"id", t.sequence == 0 ? "A" : "B"}, {"type_id", t.type_id}}}});
    }
  }
  return out;
}

ojson ordered_vocab(const std::unordered_map<std::string, std::int32_t>& vocab) {
  std::vector<std::pair<std::int32_t, const std::string*>> by_id;
  by_id.reserve(vocab.size());
  for (const auto& [piece, id] : vocab) by_id.emplace_back(id, &piece);
  std::sort(by_id.begin(), by_id.end());
  // Insertion order: the file lists pieces by id. The pieces are distinct, so
  // they are appended to the ordered map's vector as they are: its operator[]
  // searches linearly, which made this quadratic (seconds for 50k pieces).
  ojson out = ojson::object();
  auto& entries = static_cast<ojson::object_t::Container&>(out.get_ref<ojson::object_t&>());
  entries.reserve(by_id.size());
  for (const auto& [id, piece] : by_id) entries.emplace_back(*piece, id);
  return out;
}

}  // namespace

Tokenizer Tokenizer::from_json(std::string_view tokenizer_json) {
  json j;
  try {
    j = json_text::parse(tokenizer_json);
  } catch (const json::exception& e) {  // syntax errors, numbers out of range, bad UTF-8
    throw std::invalid_argument(std::string("tokenizer.json is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument("tokenizer.json: expected a JSON object");
  for (const char* key : {"truncation", "padding"}) {
    if (j.contains(key) && !j[key].is_null()) fail(key, "is not supported (must be null)");
  }
  auto d = std::make_shared<TokenizerData>();
  try {
    read_model(member_or_null(j, "model"), *d);
    const json& normalizer = member_or_null(j, "normalizer");
    if (!normalizer.is_null()) d->normalizer = Normalizer::from_json(normalizer);
    read_pre_tokenizer(member_or_null(j, "pre_tokenizer"), *d);
    read_post_processor(member_or_null(j, "post_processor"), *d);
    read_decoder(member_or_null(j, "decoder"), *d);
    read_added_tokens(member_or_null(j, "added_tokens"), *d);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("tokenizer.json: ") + e.what());
  }
  d->finish();
  return Tokenizer(std::move(d));
}

Tokenizer Tokenizer::from_gpt2_files(std::string_view vocab_json, std::string_view merges_txt, Gpt2FilesConvention convention) {
  json vocab;
  try {
    vocab = json_text::parse(vocab_json);
  } catch (const json::exception& e) {  // syntax errors, numbers out of range, bad UTF-8
    throw std::invalid_argument(std::string("vocab.json is not valid JSON: ") + e.what());
  }
  std::vector<std::pair<std::string, std::string>> merges;
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start < merges_txt.size()) {
    std::size_t end = merges_txt.find('\n', start);
    if (end == std::string_view::npos) end = merges_txt.size();
    std::string_view line = merges_txt.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || (line_no == 1 && line.substr(0, 9) == "#version:")) continue;
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) {
      throw std::invalid_argument("merges.txt line " + std::to_string(line_no) + ": expected two pieces separated by one space");
    }
    merges.emplace_back(std::string(line.substr(0, space)), std::string(line.substr(space + 1)));
  }
  auto d = std::make_shared<TokenizerData>();
  d->bpe.emplace(read_vocab(vocab, "vocab.json"), std::move(merges));
  d->pre_tokenizer.kind = PreTokenizer::Kind::ByteLevel;
  d->post.kind = PostProcessor::Kind::ByteLevel;
  d->post.byte_level.trim_offsets = false;
  d->decoder.emplace().kind = Decoder::Kind::ByteLevel;
  const auto& ids = d->bpe->vocab();
  // A special token of the vocabulary (matched in the text), or a message naming what the convention needs.
  auto special = [&](const std::string& token, bool required) {
    const auto it = ids.find(token);
    if (it == ids.end()) {
      if (required) throw std::invalid_argument("vocab.json has no '" + token + "', which this model's tokenizer adds");
      return std::int32_t{-1};
    }
    d->added.push_back({it->second, token, true, false, false, false, false});
    return it->second;
  };
  switch (convention) {
    case Gpt2FilesConvention::gpt2:
      special("<|endoftext|>", false);
      break;
    case Gpt2FilesConvention::opt: {
      const std::int32_t bos = special("</s>", true);
      special("<pad>", false);
      d->post.kind = PostProcessor::Kind::Template;
      d->post.special_tokens["</s>"] = {{bos}, {"</s>"}};
      d->post.single = {special_item("</s>", 0), sequence_item(0, 0)};
      d->post.pair = {special_item("</s>", 0), sequence_item(0, 0), sequence_item(1, 1)};
      break;
    }
    case Gpt2FilesConvention::roberta: {
      const std::int32_t cls = special("<s>", true);
      special("<pad>", false);
      const std::int32_t sep = special("</s>", true);
      special("<unk>", false);
      if (special("<mask>", false) >= 0) d->added.back().lstrip = true;
      d->post.kind = PostProcessor::Kind::Roberta;
      d->post.cls = {"<s>", cls};
      d->post.sep = {"</s>", sep};
      d->post.byte_level.trim_offsets = true;
      d->post.byte_level.add_prefix_space = false;
      detail::set_special_pair_template(d->post);
      break;
    }
  }
  d->finish();
  return Tokenizer(std::move(d));
}

Tokenizer Tokenizer::from_bert_vocab(std::string_view vocab_txt, bool lowercase) {
  std::unordered_map<std::string, std::int32_t> vocab;
  std::int32_t id = 0;
  std::size_t start = 0;
  while (start < vocab_txt.size()) {
    std::size_t end = vocab_txt.find('\n', start);
    if (end == std::string_view::npos) end = vocab_txt.size();
    std::string_view line = vocab_txt.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) throw std::invalid_argument("vocab.txt line " + std::to_string(id + 1) + " is empty");
    if (!vocab.emplace(std::string(line), id).second) {
      throw std::invalid_argument("vocab.txt line " + std::to_string(id + 1) + " repeats '" + std::string(line) + "'");
    }
    ++id;
  }
  auto d = std::make_shared<TokenizerData>();
  d->wordpiece.emplace(std::move(vocab), WordPieceOptions{});
  d->normalizer.emplace().kind = Normalizer::Kind::Bert;
  d->normalizer->bert.lowercase = lowercase;
  d->pre_tokenizer.kind = PreTokenizer::Kind::Bert;
  d->decoder.emplace().kind = Decoder::Kind::WordPiece;
  const auto& v = d->wordpiece->vocab();
  for (const char* name : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
    const auto it = v.find(name);
    if (it != v.end()) d->added.push_back({it->second, name, true, false, false, false, false});
  }
  if (!v.count("[CLS]") || !v.count("[SEP]")) throw std::invalid_argument("vocab.txt has no [CLS] or [SEP]");
  d->post.kind = PostProcessor::Kind::Bert;
  d->post.cls = {"[CLS]", v.at("[CLS]")};
  d->post.sep = {"[SEP]", v.at("[SEP]")};
  detail::set_special_pair_template(d->post);
  d->finish();
  return Tokenizer(std::move(d));
}

std::string Tokenizer::to_json() const {
  const TokenizerData& d = *data_;
  if (d.from_sentencepiece) {
    throw std::invalid_argument(
        "a tokenizer read from a SentencePiece .model has no tokenizer.json form (its normalizer, BPE ranks and "
        "decoder follow SentencePiece's own rules)");
  }
  ojson j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = ojson::array();
  for (const AddedToken& t : d.added) {
    j["added_tokens"].push_back({{"id", t.id},
                                 {"content", t.content},
                                 {"single_word", t.single_word},
                                 {"lstrip", t.lstrip},
                                 {"rstrip", t.rstrip},
                                 {"normalized", t.normalized},
                                 {"special", t.special}});
  }
  j["normalizer"] = d.normalizer ? d.normalizer->to_json() : ojson(nullptr);
  const bool no_pre_tokenizer = d.pre_tokenizer.kind == PreTokenizer::Kind::Sequence && d.pre_tokenizer.sequence.empty();
  j["pre_tokenizer"] = no_pre_tokenizer ? ojson(nullptr) : d.pre_tokenizer.to_json();
  const PostProcessor& p = d.post;
  switch (p.kind) {
    case PostProcessor::Kind::None:
      j["post_processor"] = nullptr;
      break;
    case PostProcessor::Kind::ByteLevel:
      j["post_processor"] = byte_level_json(p.byte_level);
      break;
    case PostProcessor::Kind::Bert:
      j["post_processor"] = {{"type", "BertProcessing"}, {"sep", {p.sep.first, p.sep.second}},
                             {"cls", {p.cls.first, p.cls.second}}};
      break;
    case PostProcessor::Kind::Roberta:
      j["post_processor"] = {{"type", "RobertaProcessing"},          {"sep", {p.sep.first, p.sep.second}},
                             {"cls", {p.cls.first, p.cls.second}},   {"trim_offsets", p.byte_level.trim_offsets},
                             {"add_prefix_space", p.byte_level.add_prefix_space}};
      break;
    case PostProcessor::Kind::Template: {
      ojson specials = ojson::object();
      for (const auto& [name, entry] : p.special_tokens) {
        specials[name] = {{"id", name}, {"ids", entry.ids}, {"tokens", entry.tokens}};
      }
      j["post_processor"] = {{"type", "TemplateProcessing"},
                             {"single", template_json(p.single)},
                             {"pair", template_json(p.pair)},
                             {"special_tokens", specials}};
      break;
    }
  }
  if (p.leading_byte_level && p.kind != PostProcessor::Kind::None) {
    j["post_processor"] = {{"type", "Sequence"},
                           {"processors", {byte_level_json(*p.leading_byte_level), j["post_processor"]}}};
  }
  j["decoder"] = d.decoder ? d.decoder->to_json() : ojson(nullptr);
  if (d.bpe) {
    ojson merges = ojson::array();  // pairs: pieces may hold spaces
    for (const auto& [a, b] : d.bpe->merges()) merges.push_back({a, b});
    const BpeOptions& o = d.bpe->options();
    j["model"] = {{"type", "BPE"},
                  {"dropout", nullptr},
                  {"unk_token", o.unk_token ? ojson(*o.unk_token) : ojson(nullptr)},
                  {"continuing_subword_prefix", nullptr},
                  {"end_of_word_suffix", nullptr},
                  {"fuse_unk", o.fuse_unk},
                  {"byte_fallback", o.byte_fallback},
                  {"ignore_merges", o.ignore_merges},
                  {"vocab", ordered_vocab(d.bpe->vocab())},
                  {"merges", merges}};
  } else if (d.unigram) {
    ojson pieces = ojson::array();
    for (const auto& [piece, score] : d.unigram->pieces()) pieces.push_back({piece, score});
    j["model"] = {{"type", "Unigram"},
                  {"unk_id", d.unigram->unk_id()},
                  {"vocab", pieces},
                  {"byte_fallback", d.unigram->byte_fallback()}};
  } else {
    const WordPieceOptions& o = d.wordpiece->options();
    j["model"] = {{"type", "WordPiece"},
                  {"unk_token", o.unk_token},
                  {"continuing_subword_prefix", o.continuing_subword_prefix},
                  {"max_input_chars_per_word", o.max_input_chars_per_word},
                  {"vocab", ordered_vocab(d.wordpiece->vocab())}};
  }
  return json_text::write(j);
}

}  // namespace attnplay
