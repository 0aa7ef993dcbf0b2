// Implementation of safetensors/safetensors.h (header JSON via nlohmann-json).
#include "safetensors/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "json/json_text.h"

namespace attnplay {
namespace {

[[noreturn]] void bad_safetensors(const std::string& message) { throw std::invalid_argument("safetensors: " + message); }

// Bytes per element, 0 for a dtype this reader does not know.
std::uint64_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, std::uint64_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},    {"I32", 4},     {"I16", 2},
      {"I8", 1},  {"U64", 8}, {"U32", 4}, {"U16", 2},  {"U8", 1},     {"BOOL", 1},    {"F8_E4M3", 1},
      {"F8_E5M2", 1}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

std::uint64_t read_u64_le(const char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::uint16_t read_u16_le(const char* p) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(p[0]) | (static_cast<unsigned char>(p[1]) << 8));
}

std::uint64_t offset_value(const nlohmann::json& j, const std::string& name) {
  if (!j.is_number_unsigned()) bad_safetensors("tensor '" + name + "' has a data offset that is not a non-negative integer");
  return j.get<std::uint64_t>();
}

TensorInfo parse_entry(const std::string& name, const nlohmann::json& entry, std::uint64_t data_size) {
  if (!entry.is_object()) bad_safetensors("entry for tensor '" + name + "' is not an object");
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(key)) bad_safetensors("tensor '" + name + "' has no \"" + key + "\"");
  }
  TensorInfo t;
  if (!entry["dtype"].is_string()) bad_safetensors("tensor '" + name + "' has a dtype that is not a string");
  t.dtype = entry["dtype"].get<std::string>();
  const std::uint64_t element_size = dtype_size(t.dtype);
  if (element_size == 0) bad_safetensors("unknown dtype '" + t.dtype + "' for tensor '" + name + "'");

  const nlohmann::json& shape = entry["shape"];
  if (!shape.is_array()) bad_safetensors("tensor '" + name + "' has a shape that is not an array");
  // Product of the dimensions, capped so a hostile shape cannot overflow.
  std::uint64_t count = 1;
  bool beyond_data = false;
  for (const nlohmann::json& dim : shape) {
    if (!dim.is_number_unsigned()) bad_safetensors("tensor '" + name + "' has a dimension that is not a non-negative integer");
    const std::uint64_t d = dim.get<std::uint64_t>();
    t.shape.push_back(static_cast<std::int64_t>(std::min<std::uint64_t>(d, std::numeric_limits<std::int64_t>::max())));
    if (d != 0 && count > data_size / d) beyond_data = true;
    count = beyond_data ? count : count * d;
  }
  const nlohmann::json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) bad_safetensors("tensor '" + name + "' needs data_offsets [begin, end]");
  t.begin = offset_value(offsets[0], name);
  t.end = offset_value(offsets[1], name);
  if (t.begin > t.end) bad_safetensors("tensor '" + name + "' has data_offsets with begin after end");
  if (t.end > data_size) {
    bad_safetensors("tensor '" + name + "' has data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                    "] beyond the " + std::to_string(data_size) + " bytes of data (file truncated?)");
  }
  if (beyond_data || count * element_size != t.end - t.begin) {
    bad_safetensors("tensor '" + name + "' occupies " + std::to_string(t.end - t.begin) + " bytes but its dtype " + t.dtype +
                    " and shape need " + (beyond_data ? std::string("more than the file holds") : std::to_string(count * element_size)));
  }
  return t;
}

}  // namespace

std::int64_t TensorInfo::elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

SafeTensors SafeTensors::parse(std::string_view bytes) {
  if (bytes.size() < 8) {
    bad_safetensors("file is " + std::to_string(bytes.size()) + " bytes, too short for the 8-byte header length");
  }
  const std::uint64_t header_size = read_u64_le(bytes.data());
  if (header_size > bytes.size() - 8) {
    // A PyTorch checkpoint: a zip archive (torch.save since 1.6) or a raw pickle.
    if (bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4) ||
        (static_cast<unsigned char>(bytes[0]) == 0x80 && bytes[1] >= 2 && bytes[1] <= 5)) {
      throw std::invalid_argument(pickle_checkpoint_message("the weights file"));
    }
    bad_safetensors("header length " + std::to_string(header_size) + " is beyond the file size (" +
                    std::to_string(bytes.size()) + " bytes); the file is truncated or not safetensors");
  }
  const std::string_view header = bytes.substr(8, header_size);
  nlohmann::json j;
  try {
    j = json_text::parse(header);
  } catch (const nlohmann::json::exception& e) {  // syntax errors, numbers out of range, bad UTF-8
    bad_safetensors(std::string("header is not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) bad_safetensors("header is not a JSON object");

  SafeTensors st;
  st.data_ = bytes.substr(8 + header_size);
  for (const auto& [name, entry] : j.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) bad_safetensors("__metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) bad_safetensors("__metadata__ value for '" + key + "' is not a string");
        st.metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    st.tensors_[name] = parse_entry(name, entry, st.data_.size());
  }

  std::vector<std::pair<const std::string*, const TensorInfo*>> by_offset;
  for (const auto& [name, info] : st.tensors_) {
    if (info.end > info.begin) by_offset.emplace_back(&name, &info);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto& a, const auto& b) { return a.second->begin < b.second->begin; });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i].second->begin < by_offset[i - 1].second->end) {
      bad_safetensors("tensors '" + *by_offset[i - 1].first + "' and '" + *by_offset[i].first + "' overlap in the data");
    }
  }
  return st;
}

const TensorInfo& SafeTensors::info(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) bad_safetensors("no tensor named '" + name + "'");
  return it->second;
}

std::vector<float> SafeTensors::to_float(const std::string& name) const {
  const TensorInfo& t = info(name);
  const char* p = data_.data() + t.begin;
  const std::size_t n = static_cast<std::size_t>(t.elements());
  std::vector<float> out(n);
  if (t.dtype == "F32") {
    std::memcpy(out.data(), p, n * sizeof(float));  // little-endian hosts (x86, WASM)
  } else if (t.dtype == "F16") {
    for (std::size_t i = 0; i < n; ++i) out[i] = half_to_float(read_u16_le(p + 2 * i));
  } else if (t.dtype == "BF16") {
    for (std::size_t i = 0; i < n; ++i) out[i] = bfloat16_to_float(read_u16_le(p + 2 * i));
  } else {
    bad_safetensors("tensor '" + name + "' has dtype " + t.dtype + "; only F32, F16 and BF16 weights are supported");
  }
  return out;
}

std::string_view SafeTensors::bytes(const std::string& name) const {
  const TensorInfo& t = info(name);
  return data_.substr(t.begin, t.end - t.begin);
}

std::string pickle_checkpoint_message(const std::string& file) {
  return file + " is a PyTorch pickle checkpoint, which attnplay does not load (unpickling can run arbitrary "
                "code). Convert it to model.safetensors, e.g. in Python with transformers: "
                "AutoModel.from_pretrained(DIR).save_pretrained(DIR, safe_serialization=True)";
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {  // inf / NaN
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // ±0
    bits = sign;
  } else {  // subnormal: normalise
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float bfloat16_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace attnplay
