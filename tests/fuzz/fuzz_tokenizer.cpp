// libFuzzer target: arbitrary bytes as "tokenizer.json NUL text". Loading must
// either succeed or throw an exception with a message; a loaded tokenizer must
// encode the text (alone and as a pair), and decode the ids, without memory
// errors or undefined behaviour, whatever the bytes (invalid UTF-8 included).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  const std::string_view json = input.substr(0, split);
  const std::string_view text = split == std::string_view::npos ? std::string_view() : input.substr(split + 1);
  try {
    const attnplay::Tokenizer tokenizer = attnplay::Tokenizer::from_json(json);
    const attnplay::Encoding single = tokenizer.encode(text);
    tokenizer.decode(single.ids());
    tokenizer.encode(text, text.substr(0, text.size() / 2));
  } catch (const std::exception&) {  // malformed or unsupported tokenizer.json: a message, not a crash
  }
  return 0;
}
