// Implementation of model/directory.h.
#include "model/directory.h"

#include <fstream>
#include <stdexcept>
#include <vector>

#include "safetensors/safetensors.h"

namespace attnplay {
namespace {

std::optional<std::string> read_if_present(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const std::streamoff size = in.tellg();
  if (size < 0) throw std::runtime_error("cannot read " + path);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) throw std::runtime_error("cannot read " + path);
  return bytes;
}

Checkpoint read_checkpoint(const std::string& dir) {
  if (std::optional<std::string> single = read_if_present(dir + kSafetensorsFile)) {
    return Checkpoint::single(CheckpointFile::owning(kSafetensorsFile, std::move(*single)));
  }
  std::optional<std::string> index = read_if_present(dir + kSafetensorsIndexFile);
  if (!index) {
    if (std::ifstream(dir + "pytorch_model.bin").good()) throw std::runtime_error(pickle_checkpoint_message(dir + "pytorch_model.bin"));
    throw std::runtime_error("cannot open " + dir + kSafetensorsFile + " (nor a sharded " + kSafetensorsIndexFile + ")");
  }
  std::vector<CheckpointFile> shards;
  for (const std::string& name : Checkpoint::shard_files(*index)) {
    std::optional<std::string> bytes = read_if_present(dir + name);  // a missing shard is named by sharded()
    if (bytes) shards.push_back(CheckpointFile::owning(name, std::move(*bytes)));
  }
  return Checkpoint::sharded(*index, std::move(shards));
}

// The folder's config, weights and tokenizer files (`dir` ends with '/').
ModelFiles read_model_and_tokenizer(const std::string& dir, const std::string& directory) {
  std::optional<std::string> config = read_if_present(dir + "config.json");
  if (!config) throw std::runtime_error("cannot open " + dir + "config.json (is " + directory + " a model folder?)");
  Checkpoint checkpoint = read_checkpoint(dir);
  for (const char* name : kTokenizerFiles) {
    if (std::optional<std::string> tokenizer = read_if_present(dir + name)) {
      return {std::move(*config), std::move(checkpoint), std::move(tokenizer), name, std::nullopt, std::nullopt, std::nullopt};
    }
  }
  std::optional<std::string> source = read_if_present(dir + "source.spm"), target = read_if_present(dir + "target.spm"),
                             vocab = read_if_present(dir + "vocab.json");
  if (!source && !target) {
    ModelFiles files{std::move(*config), std::move(checkpoint), std::nullopt, "", std::nullopt, std::nullopt, std::nullopt};
    std::optional<std::string> merges = read_if_present(dir + "merges.txt");
    if (vocab && merges) files.gpt2_tokenizer = Gpt2TokenizerFiles{std::move(*vocab), std::move(*merges)};
    return files;
  }
  for (const auto& [file, name] : {std::pair{&source, "source.spm"}, {&target, "target.spm"}, {&vocab, "vocab.json"}}) {
    if (!*file) {
      throw std::runtime_error("cannot open " + dir + name +
                               " (a Marian folder without tokenizer.json needs source.spm, target.spm and vocab.json)");
    }
  }
  if (std::ifstream(dir + "target_vocab.json").good()) {
    throw std::runtime_error(dir + "target_vocab.json: separate source and target vocabularies are not supported");
  }
  return {std::move(*config), std::move(checkpoint), std::nullopt, "",
          MarianTokenizerFiles{std::move(*source), std::move(*target), std::move(*vocab)}, std::nullopt, std::nullopt};
}

}  // namespace

ModelFiles read_model_directory(const std::string& directory) {
  const std::string dir = directory.empty() || directory.back() == '/' ? directory : directory + "/";
  ModelFiles files = read_model_and_tokenizer(dir, directory);
  files.preprocessor_config = read_if_present(dir + "preprocessor_config.json");
  return files;
}

}  // namespace attnplay
