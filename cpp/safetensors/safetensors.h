// Reader for the safetensors format (Hugging Face): an 8-byte little-endian
// header length N, N bytes of JSON describing every tensor (dtype, shape,
// [begin, end) byte offsets into the data that follows), then raw
// little-endian tensor data. Everything is validated before any tensor is
// read: the header fits the file, offsets lie inside the data, tensors do not
// overlap, byte counts match dtype and shape. F32, F16 and BF16 convert to
// float32; other dtypes are listed but refused when read.
// Not here: what the tensors mean (model/), reading files (the caller passes
// bytes, so the same code runs on a native file and on a WASM buffer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attnplay {

struct TensorInfo {
  std::string dtype;                  // "F32", "F16", "BF16", "I64", ...
  std::vector<std::int64_t> shape;    // row-major; [] is a scalar
  std::uint64_t begin = 0, end = 0;   // byte range in the data section
  std::int64_t elements() const;      // product of shape (1 for a scalar)
};

// A parsed safetensors buffer. Holds a view of the bytes it was parsed from:
// they must outlive it.
class SafeTensors {
 public:
  // Parses and validates the header. Throws std::invalid_argument with a
  // specific message ("safetensors: ...") for any malformed input.
  static SafeTensors parse(std::string_view bytes);

  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  const TensorInfo& info(const std::string& name) const;  // throws if absent

  // The tensor's values as float32, row-major (F32, F16, BF16 only).
  std::vector<float> to_float(const std::string& name) const;
  // The tensor's raw little-endian bytes as stored (a view into the buffer).
  std::string_view bytes(const std::string& name) const;

 private:
  std::string_view data_;  // the data section (after the header)
  std::map<std::string, TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// The message refusing a PyTorch pickle checkpoint (pytorch_model.bin), with
// how to convert it to safetensors.
std::string pickle_checkpoint_message(const std::string& file);

// IEEE half and bfloat16 bit patterns to float (exact; subnormals, inf, NaN).
float half_to_float(std::uint16_t bits);
float bfloat16_to_float(std::uint16_t bits);

}  // namespace attnplay
