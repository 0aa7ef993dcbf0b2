// libFuzzer target: arbitrary bytes as config.json (of the decoder-only and
// encoder-only families, and of the encoder-decoders), and, split at the
// first NUL byte, as config.json + model.safetensors for the whole model loader.
// Everything must either load or throw std::invalid_argument.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "model/config.h"
#include "model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    attnplay::parse_config(bytes);
  } catch (const std::invalid_argument&) {
  }
  try {
    attnplay::parse_seq2seq_config(bytes);
  } catch (const std::invalid_argument&) {
  }
  const std::size_t nul = bytes.find('\0');
  if (nul != std::string_view::npos) {
    try {
      const attnplay::Model model = attnplay::Model::from_buffers(bytes.substr(0, nul), bytes.substr(nul + 1));
      attnplay::ForwardRequest request;
      request.ids = {0};
      request.top_k = 1;
      model.forward(request);
    } catch (const std::invalid_argument&) {
    }
  }
  return 0;
}
