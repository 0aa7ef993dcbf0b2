// The Split pre-tokenizer's regular expressions that we know, each a
// hand-written scanner (no regex engine, linear in the input) recognised by
// its exact pattern string: GPT-2's, cl100k's (Llama 3's), Qwen2's (cl100k's
// with single digits) and o200k's (GPT-4o's). Each returns the byte ranges of
// the pattern's successive matches; for these patterns the matches partition
// the text. \s is White_Space; letters, numbers and marks are general
// categories; an invalid UTF-8 sequence is an "other" character.
// Not here: what Split does with the matches (pre_tokenizer.cpp).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "tokenizer/pre_tokenizer.h"

namespace attnplay {

enum class SplitRegex { Gpt2, Cl100k, Qwen2, O200k };

// The scanner of an exact pattern string, or nullopt.
std::optional<SplitRegex> split_regex_of(std::string_view pattern);
std::string_view split_regex_pattern(SplitRegex regex);

// Appends the byte ranges of the matches of regex in text.
void split_by_regex(SplitRegex regex, std::string_view text, std::vector<Span>& out);

}  // namespace attnplay
