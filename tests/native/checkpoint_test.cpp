// Checkpoint (safetensors/checkpoint.h) and sharded model folders
// (model/directory.h): a golden model split into shards with an index loads
// and runs exactly as its single file does; lookups agree with the single
// file; weights view owned bytes in place; and every way a sharded
// checkpoint can be inconsistent gets its own message.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "golden_models.h"
#include "model/directory.h"
#include "model/model.h"
#include "safetensors/checkpoint.h"

using attnplay::Checkpoint;
using attnplay::CheckpointFile;
using attnplay::SafeTensors;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A safetensors file holding `names`, copied from `source`.
std::string safetensors_with(const SafeTensors& source, const std::vector<std::string>& names) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const std::string& name : names) {
    const attnplay::TensorInfo& info = source.info(name);
    header[name] = {{"dtype", info.dtype}, {"shape", info.shape}, {"data_offsets", {data.size(), data.size() + (info.end - info.begin)}}};
    data += source.bytes(name);
  }
  const std::string text = header.dump();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<std::uint64_t>(text.size()) >> (8 * i)) & 0xff);
  return out + text + data;
}

std::string shard_name(int i, int n) {
  char name[64];
  std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", i, n);
  return name;
}

// The tensors of a golden model dealt round-robin into `n` shards, with the index.
struct Split {
  std::string index;
  std::vector<std::pair<std::string, std::string>> shards;  // file name, bytes
};

Split split(const std::string& single, int n) {
  const SafeTensors st = SafeTensors::parse(single);
  std::vector<std::vector<std::string>> names(static_cast<std::size_t>(n));
  nlohmann::json map = nlohmann::json::object();
  int i = 0;
  for (const auto& entry : st.tensors()) {
    names[static_cast<std::size_t>(i % n)].push_back(entry.first);
    map[entry.first] = shard_name(i % n + 1, n);
    ++i;
  }
  Split s;
  s.index = nlohmann::json{{"metadata", {{"total_size", single.size()}}}, {"weight_map", map}}.dump(2);
  for (int k = 0; k < n; ++k) s.shards.emplace_back(shard_name(k + 1, n), safetensors_with(st, names[static_cast<std::size_t>(k)]));
  return s;
}

std::vector<CheckpointFile> owned(const Split& s) {
  std::vector<CheckpointFile> files;
  for (const auto& [name, bytes] : s.shards) files.push_back(CheckpointFile::owning(name, bytes));
  return files;
}

std::string sharded_error(const std::string& index, std::vector<CheckpointFile> shards) {
  try {
    Checkpoint::sharded(index, std::move(shards));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

// A fresh empty folder under the system's temporary directory.
std::filesystem::path fresh_folder(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("attnplay-checkpoint-test-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

TEST_CASE("a golden model split into 3 shards loads from its folder and runs exactly as the single file") {
  const std::string name = "gpt2-l4-h4-k8-bf16";
  const std::string dir = golden_models::model_dir(name);
  const std::string single = read_file(dir + "/model.safetensors");
  const Split s = split(single, 3);
  const std::filesystem::path folder = fresh_folder(name);
  write(folder / "config.json", read_file(dir + "/config.json"));
  write(folder / "model.safetensors.index.json", s.index);
  for (const auto& [file, bytes] : s.shards) write(folder / file, bytes);

  const attnplay::ModelFiles files = attnplay::read_model_directory(folder.string());
  CHECK(files.checkpoint.file_count() == 3);
  CHECK(files.checkpoint.file_of(files.checkpoint.tensors().begin()->first) == s.shards[0].first);
  const attnplay::Model sharded = attnplay::Model::from_checkpoint(files.config_json, files.checkpoint);
  const attnplay::Model whole = attnplay::Model::from_buffers(read_file(dir + "/config.json"), single);
  attnplay::ForwardRequest request;
  request.ids = {5, 1, 9, 30, 2, 2, 17};
  request.logits = true;
  const attnplay::ForwardResult a = sharded.forward(request), b = whole.forward(request);
  CHECK(a.attentions == b.attentions);
  CHECK(a.logits == b.logits);

  // A shard file missing from the folder is named.
  std::filesystem::remove(folder / s.shards[1].first);
  const std::string missing = "shard '" + s.shards[1].first + "' is missing";
  CHECK_THROWS_WITH_AS(attnplay::read_model_directory(folder.string()), doctest::Contains(missing.c_str()),
                       std::invalid_argument);
  std::filesystem::remove_all(folder);
}

TEST_CASE("Checkpoint: lookups over shards agree with the single file; owned weights are views") {
  const std::string single = read_file(golden_models::model_dir("bert-l3-h6-k16-f16") + "/model.safetensors");
  const SafeTensors st = SafeTensors::parse(single);
  const Split s = split(single, 2);
  const Checkpoint sharded = Checkpoint::sharded(s.index, owned(s));
  const Checkpoint whole = Checkpoint::single({attnplay::kSafetensorsFile, single, nullptr});
  REQUIRE(sharded.tensors().size() == st.tensors().size());
  for (const auto& entry : st.tensors()) {
    const std::string& name = entry.first;  // named, not bound: clang 14's CAPTURE lambdas cannot capture bindings
    const auto& info = entry.second;
    CAPTURE(name);
    CHECK(sharded.contains(name));
    CHECK(sharded.info(name).shape == info.shape);
    CHECK(sharded.info(name).dtype == info.dtype);
    CHECK(sharded.bytes(name) == st.bytes(name));
    CHECK(sharded.to_float(name) == st.to_float(name));
    CHECK(whole.to_float(name) == st.to_float(name));
  }
  CHECK_FALSE(sharded.contains("no.such.tensor"));
  CHECK_THROWS_WITH_AS(sharded.info("no.such.tensor"), "checkpoint: no tensor named 'no.such.tensor'", std::invalid_argument);

  const std::string name = "encoder.layer.0.intermediate.dense.weight";  // F16 [inner, d]
  REQUIRE(st.contains(name));
  const attnplay::WeightMatrix view = sharded.weight(name, attnplay::WeightLayout::out_by_in);
  CHECK(view.dtype() == attnplay::DType::f16);
  CHECK(view.data() == sharded.bytes(name).data());  // in place
  const attnplay::WeightMatrix copy = whole.weight(name, attnplay::WeightLayout::out_by_in);
  CHECK(copy.data() != whole.bytes(name).data());  // not owned: copied
  CHECK(copy.to_matrix() == view.to_matrix());
  CHECK_THROWS_WITH_AS(sharded.weight("encoder.layer.0.intermediate.dense.bias", attnplay::WeightLayout::out_by_in),
                       "tensor 'encoder.layer.0.intermediate.dense.bias' has 1 dimensions; a weight matrix has 2",
                       std::invalid_argument);
}

TEST_CASE("Checkpoint: every inconsistency of a sharded checkpoint is named") {
  const std::string single = read_file(golden_models::model_dir("gpt2-l1-h1-k64-f32") + "/model.safetensors");
  const SafeTensors st = SafeTensors::parse(single);
  const Split s = split(single, 2);
  const std::string a = s.shards[0].first, b = s.shards[1].first;
  const std::string index_file = "model.safetensors.index.json";

  CHECK(sharded_error("{not json", owned(s)) == index_file + ": not valid JSON");
  CHECK(sharded_error(R"({"metadata": {}})", owned(s)) ==
        index_file + ": no \"weight_map\" object (tensor name -> shard file)");
  CHECK(sharded_error(R"({"weight_map": {}})", owned(s)) == index_file + ": \"weight_map\" lists no tensors");
  CHECK(sharded_error(R"({"weight_map": {"wte.weight": 3}})", owned(s)) ==
        index_file + ": the shard of tensor 'wte.weight' is not a file name");
  CHECK(sharded_error(R"({"weight_map": {"wte.weight": "../model.safetensors"}})", owned(s)) ==
        index_file + ": shard '../model.safetensors' (of tensor 'wte.weight') is not a plain file name");

  // A shard missing, one given twice, one the index does not name.
  std::vector<CheckpointFile> only_first = owned(s);
  only_first.pop_back();
  CHECK(sharded_error(s.index, std::move(only_first)).rfind("shard '" + b + "' is missing (", 0) == 0);
  std::vector<CheckpointFile> twice = owned(s);
  twice.push_back(twice[0]);
  CHECK(sharded_error(s.index, std::move(twice)) == "shard '" + a + "' is given twice");
  std::vector<CheckpointFile> extra = owned(s);
  extra.push_back(CheckpointFile::owning("model-00003-of-00002.safetensors", s.shards[0].second));
  CHECK(sharded_error(s.index, std::move(extra)) ==
        "shard 'model-00003-of-00002.safetensors' is not named by " + index_file);

  // A malformed shard is named with the parser's message.
  std::vector<CheckpointFile> broken = owned(s);
  broken[1] = CheckpointFile::owning(b, "short");
  CHECK(sharded_error(s.index, std::move(broken)).rfind(b + ": safetensors: ", 0) == 0);

  // Tensors: named but absent, in two shards, unlisted, in the wrong shard.
  nlohmann::json index = nlohmann::json::parse(s.index);
  index["weight_map"]["h.0.attn.phantom"] = a;
  CHECK(sharded_error(index.dump(), owned(s)) ==
        "tensor 'h.0.attn.phantom' is not in shard '" + a + "', where " + index_file + " places it");
  std::vector<CheckpointFile> overlapping = owned(s);
  std::vector<std::string> second_names;
  const SafeTensors second = SafeTensors::parse(s.shards[1].second);
  for (const auto& entry : second.tensors()) second_names.push_back(entry.first);
  const std::string moved = SafeTensors::parse(s.shards[0].second).tensors().begin()->first;
  second_names.push_back(moved);
  overlapping[1] = CheckpointFile::owning(b, safetensors_with(st, second_names));
  CHECK(sharded_error(s.index, std::move(overlapping)) ==
        "tensor '" + moved + "' is in two shards, '" + a + "' and '" + b + "'");
  index = nlohmann::json::parse(s.index);
  index["weight_map"].erase(moved);
  CHECK(sharded_error(index.dump(), owned(s)) ==
        "shard '" + a + "' holds tensor '" + moved + "', which " + index_file + " does not list");
  index = nlohmann::json::parse(s.index);
  index["weight_map"][moved] = b;
  CHECK(sharded_error(index.dump(), owned(s)) ==
        "tensor '" + moved + "' is in shard '" + a + "' but " + index_file + " places it in '" + b + "'");
}

TEST_CASE("a folder with neither model.safetensors nor an index is refused by name") {
  const std::filesystem::path folder = fresh_folder("empty");
  write(folder / "config.json", "{}");
  CHECK_THROWS_WITH_AS(attnplay::read_model_directory(folder.string()),
                       doctest::Contains("model.safetensors (nor a sharded model.safetensors.index.json)"),
                       std::runtime_error);
  std::filesystem::remove_all(folder);
}
