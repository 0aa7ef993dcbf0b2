// A model's weights as one safetensors file or as the shards of a sharded
// checkpoint (model.safetensors.index.json, whose "weight_map" names the
// shard file of every tensor, plus model-0000N-of-0000M.safetensors), behind
// the lookup methods of SafeTensors (contains, info, bytes, to_float,
// tensors), so code reading weights does not care which. Everything is
// validated when the checkpoint is made: every shard parses, every tensor the
// index names is in the shard it names and in no other, every shard the index
// names is given and every given shard is named, and every tensor of a shard
// is listed by the index.
// The checkpoint may share ownership of the file bytes (owners, below): then
// weight() returns weight matrices that view the bytes in place instead of
// copying them, and the bytes stay alive as long as any of those weights do.
// Not here: the safetensors format (safetensors.h), reading files
// (model/directory.h), what the tensors mean (model/).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/safetensors.h"
#include "tensor/weight.h"

namespace attnplay {

// The conventional file names of a Hugging Face checkpoint.
inline constexpr const char* kSafetensorsFile = "model.safetensors";
inline constexpr const char* kSafetensorsIndexFile = "model.safetensors.index.json";

// The bytes of one safetensors file. `owner` keeps them alive (null when the
// caller guarantees they outlive the checkpoint and everything taken from it).
struct CheckpointFile {
  std::string name;  // file name, e.g. model-00001-of-00002.safetensors
  std::string_view bytes;
  std::shared_ptr<const void> owner;

  // The file's bytes moved into a buffer the CheckpointFile owns.
  static CheckpointFile owning(std::string name, std::string bytes);
};

class Checkpoint {
 public:
  // One safetensors file (model.safetensors). Throws std::invalid_argument
  // ("safetensors: ...") when malformed.
  static Checkpoint single(CheckpointFile file);
  // A checkpoint from the text of model.safetensors.index.json and its
  // shards (in any order). Throws std::invalid_argument naming the index, the
  // shard or the tensor at fault.
  static Checkpoint sharded(std::string_view index_json, std::vector<CheckpointFile> shards);
  // The shard file names an index names, sorted, each once (plain file names:
  // no directories). Throws std::invalid_argument for a malformed index.
  static std::vector<std::string> shard_files(std::string_view index_json);

  // The lookups of SafeTensors, over every shard. TensorInfo's begin/end are
  // offsets in the data section of the tensor's own shard.
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  const TensorInfo& info(const std::string& name) const;  // throws if absent
  std::vector<float> to_float(const std::string& name) const;
  std::string_view bytes(const std::string& name) const;

  // The file a tensor is stored in.
  const std::string& file_of(const std::string& name) const;
  std::size_t file_count() const { return files_.size(); }

  // A 2-D F32/F16/BF16 tensor as a weight matrix in its stored precision: a
  // view of the file bytes when the checkpoint owns them (and a float32
  // tensor is 4-byte aligned), a copy otherwise. Throws for other dtypes or
  // ranks, naming the tensor.
  WeightMatrix weight(const std::string& name, WeightLayout layout) const;

 private:
  struct File {
    CheckpointFile source;
    SafeTensors parsed;
  };
  const File& file_holding(const std::string& name) const;

  std::vector<File> files_;
  std::map<std::string, TensorInfo> tensors_;
  std::map<std::string, std::size_t> file_index_;  // tensor -> index into files_
};

}  // namespace attnplay
