// libFuzzer target: a sharded checkpoint from arbitrary bytes, split at the
// first NUL into model.safetensors.index.json text and the bytes given for
// every shard the index names. Checkpoint::sharded must either succeed or
// throw std::invalid_argument; every tensor of a checkpoint it accepts must be
// readable within its shard (ASan) as floats and, when 2-D, as a weight matrix.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view index = input.substr(0, nul);
  const std::string_view shard = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  try {
    std::vector<attnplay::CheckpointFile> shards;
    for (const std::string& name : attnplay::Checkpoint::shard_files(index)) {
      shards.push_back(attnplay::CheckpointFile::owning(name, std::string(shard)));
    }
    const attnplay::Checkpoint checkpoint = attnplay::Checkpoint::sharded(index, std::move(shards));
    for (const auto& entry : checkpoint.tensors()) {
      try {
        checkpoint.to_float(entry.first);
        if (entry.second.shape.size() == 2) {
          checkpoint.weight(entry.first, attnplay::WeightLayout::out_by_in).to_matrix();
        }
      } catch (const std::invalid_argument&) {  // non-float dtype
      }
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
