// Text normalization with alignment: NormalizedText keeps, for every
// normalized character, the byte range of the original character it came from,
// so tokens can point back into the user's text. The normalizers of Hugging
// Face `tokenizers` (same semantics, same tokenizer.json form): BertNormalizer
// (clean text, pad CJK ideographs with spaces, NFD + strip non-spacing marks,
// lowercase), NFC, NFD, NFKC, NFKD, Lowercase, Strip, Prepend, Replace (with a
// String pattern), Precompiled (SentencePiece's charsmap as T5, XLM-R and
// mBART files carry it, applied as Hugging Face applies it: to each extended
// grapheme cluster of under 6 bytes whole, else character by character, the
// shortest matching rule winning) and Sequence. A character made by composition keeps the
// original range of its first part (as Hugging Face); inserted characters (Prepend) cover the
// range of the character they are put in front of (as Hugging Face).
// SentencePiece: the normalizer of a SentencePiece .model (sentencepiece_normalizer.h),
// which has no tokenizer.json form. Not here: splitting into words.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

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

struct SentencePieceNormalization;
class PrecompiledCharsmap;

struct BertNormalizerOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  std::optional<bool> strip_accents;  // unset: follows lowercase
  bool lowercase = true;
};

NormalizedText bert_normalize(NormalizedText text, const BertNormalizerOptions& options);

struct Normalizer {
  enum class Kind { Bert, NFC, NFD, NFKC, NFKD, Lowercase, Strip, Prepend, Replace, Precompiled, Sequence, SentencePiece } kind = Kind::NFC;
  BertNormalizerOptions bert;         // Bert
  bool strip_left = true, strip_right = true;  // Strip
  std::u32string pattern, content;    // Prepend: content; Replace: pattern -> content
  std::vector<Normalizer> sequence;   // Sequence
  std::shared_ptr<const SentencePieceNormalization> sentencepiece;  // SentencePiece
  std::shared_ptr<const PrecompiledCharsmap> charsmap;  // Precompiled
  std::string charsmap_blob;          // Precompiled: the charsmap's bytes (tokenizer.json has them in base64)

  // tokenizer.json's "normalizer" object (throws std::invalid_argument naming
  // the section and the unsupported type or field).
  static Normalizer from_json(const nlohmann::json& j);
  // Throws std::invalid_argument for SentencePiece, which tokenizer.json cannot express.
  nlohmann::ordered_json to_json() const;
};

NormalizedText normalize(const Normalizer& normalizer, NormalizedText text);

// The CJK ideograph ranges that BERT pads with spaces.
bool is_chinese_char(char32_t cp);

}  // namespace attnplay
