// Pre-tokenizers: split text into the words that the model then splits into
// tokens, as Hugging Face `tokenizers` does (same tokenizer.json form).
// GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// is implemented as a hand-written scanner (no regex engine), linear in the
// input; \s is White_Space. Invalid UTF-8 sequences count as "other" characters.
// BertPreTokenizer: split on whitespace (dropped) and punctuation (kept alone).
// PreTokenizer: the tree of a tokenizer.json "pre_tokenizer": ByteLevel (last
// in a Sequence: the model then sees bytes), BertPreTokenizer, Split (a String
// or one of the Regex patterns of split_patterns.h; behavior and invert as in
// Hugging Face), Digits, Metaspace and Sequence.
// Not here: the models, normalization, the regex scanners (split_patterns.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tokenizer/normalizer.h"

namespace attnplay {

struct Span {
  std::uint32_t begin, end;
};

// Byte ranges of GPT-2's pre-tokens; they partition text. Appends to out.
void split_gpt2(std::string_view text, std::vector<Span>& out);

// Character ranges (indices into text.chars) of BERT's words.
std::vector<Span> split_bert(const NormalizedText& text);

bool is_bert_punctuation(char32_t c);

struct ByteLevelOptions {
  bool add_prefix_space = false;
  bool trim_offsets = true;
  bool use_regex = true;
};

// What Split and the other splitting pre-tokenizers do with the matches.
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
// Where Metaspace adds its replacement character in front of a word.
enum class PrependScheme { Always, First, Never };

struct PreTokenizer {
  enum class Kind { ByteLevel, Bert, Split, Digits, Metaspace, Sequence } kind = Kind::ByteLevel;
  ByteLevelOptions byte_level;              // ByteLevel
  std::string pattern;                      // Split: the pattern string
  bool pattern_is_regex = false;            // Split: {"Regex": pattern} (a known scanner) or {"String": pattern}
  SplitBehavior behavior = SplitBehavior::Isolated;  // Split
  bool invert = false;                      // Split
  bool individual_digits = false;           // Digits
  char32_t replacement = U'\u2581';        // Metaspace
  PrependScheme prepend_scheme = PrependScheme::Always;  // Metaspace
  bool split = true;                        // Metaspace
  std::vector<PreTokenizer> sequence;       // Sequence

  // tokenizer.json's "pre_tokenizer" object (throws std::invalid_argument
  // naming the section, an unsupported type, or an unknown Regex quoted).
  static PreTokenizer from_json(const nlohmann::json& j);
  nlohmann::ordered_json to_json() const;
  // Whether a ByteLevel step ends it (the model then works on bytes).
  bool ends_with_byte_level() const;
};

// Applies p to every pre-token of words (in order; empty ones dropped).
// original: the text the ranges of words point into (the bytes of invalid
// UTF-8); segment_start: whether that text starts the user's input (for
// Metaspace's "first" scheme).
void pre_tokenize(const PreTokenizer& p, std::string_view original, bool segment_start,
                  std::vector<NormalizedText>& words);

// UTF-8 of a pre-token (invalid sequences as their original bytes); when
// char_starts is given it receives the byte where each character starts, and
// one more entry, the size.
std::string pre_token_utf8(const NormalizedText& word, std::string_view original,
                           std::vector<std::uint32_t>* char_starts = nullptr);

}  // namespace attnplay
