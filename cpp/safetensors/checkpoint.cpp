// Implementation of safetensors/checkpoint.h (index JSON via nlohmann-json).
#include "safetensors/checkpoint.h"

#include <cstdint>
#include <set>
#include <stdexcept>

#include "json/json_text.h"

namespace attnplay {
namespace {

[[noreturn]] void bad_checkpoint(const std::string& message) { throw std::invalid_argument(message); }

[[noreturn]] void bad_index(const std::string& message) {
  bad_checkpoint(std::string(kSafetensorsIndexFile) + ": " + message);
}

// The parsed shard, with its name in front of any parse error.
SafeTensors parse_shard(const CheckpointFile& file) {
  try {
    return SafeTensors::parse(file.bytes);
  } catch (const std::invalid_argument& e) {
    bad_checkpoint(file.name + ": " + e.what());
  }
}

bool plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find_first_of("/\\") == std::string::npos &&
         name.find('\0') == std::string::npos;
}

DType weight_dtype(const std::string& name, const std::string& dtype) {
  if (dtype == "F32") return DType::f32;
  if (dtype == "F16") return DType::f16;
  if (dtype == "BF16") return DType::bf16;
  bad_checkpoint("tensor '" + name + "' has dtype " + dtype + "; only F32, F16 and BF16 weights are supported");
}

// The index's weight_map (tensor -> shard file), validated.
std::map<std::string, std::string> parse_weight_map(std::string_view index_json) {
  const nlohmann::json index = json_text::parse_or_discarded(index_json);
  if (index.is_discarded()) bad_index("not valid JSON");
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    bad_index("no \"weight_map\" object (tensor name -> shard file)");
  }
  const nlohmann::json& weight_map = index["weight_map"];
  if (weight_map.empty()) bad_index("\"weight_map\" lists no tensors");
  std::map<std::string, std::string> shard_of;
  for (const auto& [tensor, file] : weight_map.items()) {
    if (!file.is_string()) bad_index("the shard of tensor '" + tensor + "' is not a file name");
    const std::string name = file.get<std::string>();
    if (!plain_file_name(name)) bad_index("shard '" + name + "' (of tensor '" + tensor + "') is not a plain file name");
    shard_of[tensor] = name;
  }
  return shard_of;
}

}  // namespace

CheckpointFile CheckpointFile::owning(std::string name, std::string bytes) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  const std::string_view view = *owned;
  return {std::move(name), view, std::move(owned)};
}

Checkpoint Checkpoint::single(CheckpointFile file) {
  Checkpoint c;
  SafeTensors parsed = SafeTensors::parse(file.bytes);
  c.tensors_ = parsed.tensors();
  for (const auto& entry : c.tensors_) c.file_index_[entry.first] = 0;
  c.files_.push_back({std::move(file), std::move(parsed)});
  return c;
}

Checkpoint Checkpoint::sharded(std::string_view index_json, std::vector<CheckpointFile> shards) {
  const std::map<std::string, std::string> shard_of = parse_weight_map(index_json);  // tensor -> shard file
  std::map<std::string, std::string> first_tensor_of;  // shard file -> a tensor it should hold (for messages)
  for (const auto& [tensor, file] : shard_of) first_tensor_of.emplace(file, tensor);

  Checkpoint c;
  std::set<std::string> given;
  for (CheckpointFile& shard : shards) {
    if (!given.insert(shard.name).second) bad_checkpoint("shard '" + shard.name + "' is given twice");
    if (first_tensor_of.count(shard.name) == 0) {
      bad_checkpoint("shard '" + shard.name + "' is not named by " + kSafetensorsIndexFile);
    }
    SafeTensors parsed = parse_shard(shard);
    c.files_.push_back({std::move(shard), std::move(parsed)});
  }
  for (const auto& [file, tensor] : first_tensor_of) {
    if (given.count(file) == 0) {
      bad_checkpoint("shard '" + file + "' is missing (" + kSafetensorsIndexFile + " places tensor '" + tensor + "' in it)");
    }
  }
  // Every tensor of every shard: in one shard only, and where the index says.
  for (std::size_t f = 0; f < c.files_.size(); ++f) {
    const std::string& shard = c.files_[f].source.name;
    for (const auto& [tensor, info] : c.files_[f].parsed.tensors()) {
      const auto earlier = c.file_index_.find(tensor);
      if (earlier != c.file_index_.end()) {
        bad_checkpoint("tensor '" + tensor + "' is in two shards, '" + c.files_[earlier->second].source.name + "' and '" +
                       shard + "'");
      }
      c.tensors_.emplace(tensor, info);
      c.file_index_.emplace(tensor, f);
    }
  }
  for (const auto& [tensor, f] : c.file_index_) {
    const std::string& shard = c.files_[f].source.name;
    const auto listed = shard_of.find(tensor);
    if (listed == shard_of.end()) {
      bad_checkpoint("shard '" + shard + "' holds tensor '" + tensor + "', which " + kSafetensorsIndexFile + " does not list");
    }
    if (listed->second != shard) {
      bad_checkpoint("tensor '" + tensor + "' is in shard '" + shard + "' but " + kSafetensorsIndexFile + " places it in '" +
                     listed->second + "'");
    }
  }
  for (const auto& [tensor, file] : shard_of) {
    if (c.tensors_.count(tensor) == 0) {
      bad_checkpoint("tensor '" + tensor + "' is not in shard '" + file + "', where " + kSafetensorsIndexFile + " places it");
    }
  }
  return c;
}

std::vector<std::string> Checkpoint::shard_files(std::string_view index_json) {
  std::set<std::string> files;
  for (const auto& entry : parse_weight_map(index_json)) files.insert(entry.second);
  return {files.begin(), files.end()};
}

const Checkpoint::File& Checkpoint::file_holding(const std::string& name) const {
  const auto it = file_index_.find(name);
  if (it == file_index_.end()) bad_checkpoint("checkpoint: no tensor named '" + name + "'");
  return files_[it->second];
}

const TensorInfo& Checkpoint::info(const std::string& name) const { return file_holding(name).parsed.info(name); }

std::vector<float> Checkpoint::to_float(const std::string& name) const { return file_holding(name).parsed.to_float(name); }

std::string_view Checkpoint::bytes(const std::string& name) const { return file_holding(name).parsed.bytes(name); }

const std::string& Checkpoint::file_of(const std::string& name) const { return file_holding(name).source.name; }

WeightMatrix Checkpoint::weight(const std::string& name, WeightLayout layout) const {
  const File& file = file_holding(name);
  const TensorInfo& info = file.parsed.info(name);
  const DType dtype = weight_dtype(name, info.dtype);
  if (info.shape.size() != 2) {
    bad_checkpoint("tensor '" + name + "' has " + std::to_string(info.shape.size()) + " dimensions; a weight matrix has 2");
  }
  const std::string_view bytes = file.parsed.bytes(name);
  const bool aligned = dtype != DType::f32 || reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(float) == 0;
  if (file.source.owner && aligned) {
    return WeightMatrix::view_of(dtype, file.source.owner, bytes.data(), info.shape[0], info.shape[1], layout);
  }
  return WeightMatrix::copy_of(dtype, bytes.data(), info.shape[0], info.shape[1], layout);
}

}  // namespace attnplay
