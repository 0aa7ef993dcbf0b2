// Pre-tokenizers: split text into the words that the model then splits into
// tokens. GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// is implemented as a hand-written scanner (no regex engine), linear in the
// input; \s is White_Space. Invalid UTF-8 sequences count as "other" characters.
// BertPreTokenizer: split on whitespace (dropped) and punctuation (kept alone).
// Not here: the models, normalization.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

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

}  // namespace attnplay
