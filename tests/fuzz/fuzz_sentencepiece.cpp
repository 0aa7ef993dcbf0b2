// libFuzzer target: arbitrary bytes as "text NUL model.model" (a SentencePiece
// ModelProto after the first NUL). Loading must either succeed or throw an
// exception with a message (truncated or malformed protobuf, a broken
// precompiled charsmap, unsupported pieces); a loaded tokenizer must encode the
// text and decode the ids without memory errors or undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  if (split == std::string_view::npos) return 0;
  const std::string_view text = input.substr(0, split);
  const std::string_view model = input.substr(split + 1);
  try {
    const attnplay::Tokenizer tokenizer = attnplay::Tokenizer::from_sentencepiece(model);
    const attnplay::Encoding encoding = tokenizer.encode(text);
    tokenizer.decode(encoding.ids());
  } catch (const std::exception&) {  // malformed or unsupported model: a message, not a crash
  }
  return 0;
}
