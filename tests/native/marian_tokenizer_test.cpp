// Marian's tokenizer files without tokenizer.json (tokenizer/marian_tokenizer.h):
// source.spm / target.spm / vocab.json of models/gettext-en-fr give the ids
// Hugging Face's MarianTokenizer gives (tests/tokenizer/marian/goldens.json:
// python3-sentencepiece pieces looked up in vocab.json, made by
// make_goldens.py), for the shipped vocabulary and for derived ones whose ids
// are not the .spm's (reversed), lack pieces (missing) or hold language codes;
// they equal the shipped tokenizer.json's ids; a copy of the folder without
// tokenizer.json translates exactly as the folder does; broken files name themselves.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "model/directory.h"
#include "pipeline/translation_model.h"
#include "tokenizer/marian_tokenizer.h"

using namespace attnplay;
using nlohmann::json;

namespace {

const std::string kModel = std::string(ATTNPLAY_MODELS_DIR) + "/gettext-en-fr/";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The vocabularies of make_goldens.py, by the same rules.
std::string vocabulary(const std::string& name, const json& golden) {
  const json shipped = json::parse(read(kModel + "vocab.json"));
  std::int32_t size = 0;
  for (const auto& [piece, id] : shipped.items()) size = std::max(size, id.get<std::int32_t>() + 1);
  json out = json::object();
  for (const auto& [piece, id] : shipped.items()) {
    if (name == "reversed") {
      out[piece] = size - 1 - id.get<std::int32_t>();
    } else if (name != "missing" || std::find(golden["missing"].begin(), golden["missing"].end(), piece) == golden["missing"].end()) {
      out[piece] = id;
    }
  }
  if (name == "codes") {
    out[">>fr<<"] = size;
    out[">>de<<"] = size + 1;
  }
  return out.dump();
}

MarianTokenizers tokenizers(const std::string& vocab_json) {
  return read_marian_tokenizers(read(kModel + "source.spm"), read(kModel + "target.spm"), vocab_json);
}

std::vector<std::int32_t> ids_of(const json& j) { return j.get<std::vector<std::int32_t>>(); }

// A temporary copy of the folder without tokenizer.json (the weights linked, not copied).
struct MarianFolder {
  std::filesystem::path dir;
  explicit MarianFolder(const std::string& name, const std::vector<std::string>& files = {"source.spm", "target.spm", "vocab.json"}) {
    dir = std::filesystem::temp_directory_path() / ("attnplay-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(kModel + "config.json", dir / "config.json");
    std::filesystem::create_symlink(kModel + "model.safetensors", dir / "model.safetensors");
    for (const std::string& f : files) std::filesystem::copy_file(kModel + f, dir / f);
  }
  ~MarianFolder() { std::filesystem::remove_all(dir); }
  std::string path() const { return dir.string(); }
};

}  // namespace

TEST_CASE("source.spm + vocab.json give MarianTokenizer's ids (python3-sentencepiece goldens)") {
  const json golden = json::parse(read(std::string(ATTNPLAY_TOKENIZER_DIR) + "/marian/goldens.json"));
  REQUIRE(golden["cases"].size() > 200);
  for (const char* name : {"shipped", "reversed", "missing", "codes"}) {
    CAPTURE(name);
    const MarianTokenizers t = tokenizers(vocabulary(name, golden));
    EncodeOptions plain;
    plain.add_special_tokens = false;
    for (const json& c : golden["cases"]) {
      const std::string text = c["text"].get<std::string>();
      CAPTURE(text);
      const json& expected = c[name];
      CHECK(t.source.encode_ids(text) == ids_of(expected["source_ids"]));
      CHECK(t.source.encode(text).ids() == ids_of(expected["source_ids"]));
      CHECK(t.target.encode_ids(text, plain) == ids_of(expected["target_ids"]));
      CHECK(t.target.decode(ids_of(expected["target_ids"]), true) == expected["text"].get<std::string>());
    }
  }
}

TEST_CASE("a piece vocab.json lacks becomes <unk>; the reversed vocabulary really moves ids") {
  const json golden = json::parse(read(std::string(ATTNPLAY_TOKENIZER_DIR) + "/marian/goldens.json"));
  const MarianTokenizers missing = tokenizers(vocabulary("missing", golden));
  const std::int32_t unk = *missing.source.token_to_id("<unk>");
  CHECK(missing.source.encode_ids("Cannot open the file") ==
        std::vector<std::int32_t>{103, 75, 298, unk, 53, 0});  // "▁the" absent: <unk>
  const MarianTokenizers reversed = tokenizers(vocabulary("reversed", golden));
  const MarianTokenizers shipped = tokenizers(read(kModel + "vocab.json"));
  const std::vector<std::int32_t> a = shipped.source.encode_ids("Cannot open file"), b = reversed.source.encode_ids("Cannot open file");
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(b[i] == shipped.source.vocab_size() - 1 - a[i]);
}

TEST_CASE("the three files encode and decode as the shipped tokenizer.json on the validation texts") {
  const json validation = json::parse(read(std::string(ATTNPLAY_GOLDEN_DIR) + "/models/gettext-en-fr-spm.json"));
  const Tokenizer shipped = Tokenizer::from_json(read(kModel + "tokenizer.json"));
  const MarianTokenizers marian = tokenizers(read(kModel + "vocab.json"));
  CHECK(marian.source.vocab_size() == shipped.vocab_size());
  EncodeOptions plain;
  plain.add_special_tokens = false;
  for (const json& c : validation["cases"]) {
    const std::string text = c["text"].get<std::string>();
    CAPTURE(text);
    CHECK(marian.source.encode_ids(text) == ids_of(c["ids"]));
    CHECK(marian.source.encode_ids(text) == shipped.encode_ids(text));
    const std::vector<std::int32_t> target = marian.target.encode_ids(text, plain);
    CHECK(target == shipped.encode_ids(text, plain));
    CHECK(marian.target.decode(target, true) == shipped.decode(target, true));
  }
}

TEST_CASE("a gettext-en-fr folder without tokenizer.json translates exactly as the shipped folder") {
  const MarianFolder folder("marian-folder");
  const ModelFiles files = read_model_directory(folder.path());
  CHECK_FALSE(files.tokenizer.has_value());
  REQUIRE(files.marian_tokenizer.has_value());
  const TranslationModel marian =
      TranslationModel::from_checkpoint(files.config_json, files.checkpoint, read_marian_tokenizers(*files.marian_tokenizer));
  const ModelFiles shipped_files = read_model_directory(kModel);
  REQUIRE(shipped_files.tokenizer_file == "tokenizer.json");
  const TranslationModel shipped =
      TranslationModel::from_checkpoint(shipped_files.config_json, shipped_files.checkpoint, *shipped_files.tokenizer);
  for (const char* text : {"incorrect binary data format", "Cannot open file %s", "No password has been supplied.",
                           "Error in service module"}) {
    CAPTURE(text);
    const TranslationRun a = marian.translate(text, {}), b = shipped.translate(text, {});
    CHECK(a.source.ids() == b.source.ids());
    CHECK(a.translation.decoder_ids == b.translation.decoder_ids);
    CHECK(a.text == b.text);
    CHECK_FALSE(a.text.empty());
    CHECK(marian.decoder_ids("format de données") == shipped.decoder_ids("format de données"));
  }
}

TEST_CASE("broken Marian files are named") {
  const std::string source = read(kModel + "source.spm"), target = read(kModel + "target.spm");
  auto message = [&](const std::string& s, const std::string& t, const std::string& v) {
    try {
      read_marian_tokenizers(s, t, v);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(source, target, "{\"</s>\": 0, \"<unk>\": ").rfind("vocab.json: not valid JSON", 0) == 0);
  CHECK(message(source, target, "[1, 2]") == "vocab.json: expected an object of piece -> id");
  CHECK(message(source, target, "{\"</s>\": 0, \"a\": \"x\", \"<unk>\": 1}") ==
        "vocab.json: the id of 'a' is not a non-negative integer");
  CHECK(message(source, target, "{\"</s>\": 0, \"a\": 1, \"<unk>\": 1}").find("vocab.json: id 1 is used by") == 0);
  CHECK(message(source, target, "{\"</s>\": 0, \"a\": 1}") == "vocab.json: no '<unk>' entry (MarianTokenizer needs it)");
  const std::string vocab = read(kModel + "vocab.json");
  CHECK(message("not a model", target, vocab).rfind("source.spm: SentencePiece model", 0) == 0);
  CHECK(message(source, target.substr(0, 100), vocab).rfind("target.spm: SentencePiece model", 0) == 0);

  const MarianFolder partial("marian-partial", {"source.spm", "vocab.json"});
  try {
    read_model_directory(partial.path());
    FAIL("a folder with source.spm but no target.spm was read");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("target.spm") != std::string::npos);
  }
  const MarianFolder separate("marian-separate", {"source.spm", "target.spm", "vocab.json"});
  std::filesystem::copy_file(kModel + "vocab.json", separate.dir / "target_vocab.json");
  try {
    read_model_directory(separate.path());
    FAIL("a folder with target_vocab.json was read");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("target_vocab.json: separate source and target vocabularies are not supported") != std::string::npos);
  }
}
