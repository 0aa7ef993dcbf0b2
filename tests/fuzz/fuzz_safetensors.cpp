// libFuzzer target: arbitrary bytes as a safetensors file. Parsing must either
// succeed or throw std::invalid_argument; reading every float tensor of a
// parsed file must stay inside the buffer (ASan) without undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "safetensors/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const attnplay::SafeTensors st =
        attnplay::SafeTensors::parse(std::string_view(reinterpret_cast<const char*>(data), size));
    for (const auto& entry : st.tensors()) {
      try {
        st.to_float(entry.first);
      } catch (const std::invalid_argument&) {  // non-float dtype
      }
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
