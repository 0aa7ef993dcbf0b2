// Implementation of model/directory.h.
#include "model/directory.h"

#include "safetensors/safetensors.h"

#include <fstream>
#include <stdexcept>

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

}  // namespace

ModelFiles read_model_directory(const std::string& directory) {
  const std::string dir = directory.empty() || directory.back() == '/' ? directory : directory + "/";
  ModelFiles files;
  std::optional<std::string> config = read_if_present(dir + "config.json");
  if (!config) throw std::runtime_error("cannot open " + dir + "config.json (is " + directory + " a model folder?)");
  files.config_json = std::move(*config);
  std::optional<std::string> weights = read_if_present(dir + "model.safetensors");
  if (!weights) {
    if (std::ifstream(dir + "pytorch_model.bin").good()) throw std::runtime_error(pickle_checkpoint_message(dir + "pytorch_model.bin"));
    throw std::runtime_error("cannot open " + dir + "model.safetensors");
  }
  files.safetensors = std::move(*weights);
  files.tokenizer_json = read_if_present(dir + "tokenizer.json");
  return files;
}

}  // namespace attnplay
