// Text normalization with alignment: NormalizedText keeps, for every
// normalized character, the byte range of the original character it came from,
// so tokens can point back into the user's text. BertNormalizer: clean text,
// pad CJK ideographs with spaces, NFD + strip non-spacing marks, lowercase
// (Hugging Face `tokenizers` semantics). Not here: splitting into words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnplay {

// Stands for an invalid UTF-8 sequence of the input: kept (never dropped by
// cleaning), never a letter or punctuation, and never in a vocabulary.
inline constexpr char32_t kInvalidUtf8 = 0x110000;

struct NormalizedText {
  std::u32string chars;
  std::vector<std::uint32_t> begin, end;  // original byte range of chars[i]

  // Decodes UTF-8 (invalid sequences become kInvalidUtf8 over their bytes).
  static NormalizedText from_utf8(std::string_view text);
  void push(char32_t c, std::uint32_t b, std::uint32_t e) {
    chars += c;
    begin.push_back(b);
    end.push_back(e);
  }
};

struct BertNormalizerOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  std::optional<bool> strip_accents;  // unset: follows lowercase
  bool lowercase = true;
};

NormalizedText bert_normalize(NormalizedText text, const BertNormalizerOptions& options);

// The CJK ideograph ranges that BERT pads with spaces.
bool is_chinese_char(char32_t cp);

}  // namespace attnplay
