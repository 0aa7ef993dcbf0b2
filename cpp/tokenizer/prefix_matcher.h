// The longest of a set of literal strings that starts a text (SentencePiece's
// PrefixMatcher of user-defined symbols, which its normalizer passes through
// unchanged and its BPE keeps whole). Few, short strings: a hash set probed
// from the longest possible length down.
// Not here: normalization rules (sentencepiece_normalizer.h), models.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace attnplay {

class PrefixMatcher {
 public:
  PrefixMatcher() = default;
  explicit PrefixMatcher(const std::vector<std::string>& literals) : literals_(literals.begin(), literals.end()) {
    for (const std::string& s : literals_) {
      max_length_ = std::max(max_length_, s.size());
      if (!s.empty()) first_byte_[static_cast<unsigned char>(s[0])] = true;
    }
  }

  bool empty() const { return literals_.empty(); }

  // Length in bytes of the longest literal that starts text, or 0.
  std::size_t longest_prefix(std::string_view text) const {
    if (literals_.empty() || text.empty() || !first_byte_[static_cast<unsigned char>(text[0])]) return 0;
    for (std::size_t n = std::min(max_length_, text.size()); n > 0; --n) {
      if (literals_.count(std::string(text.substr(0, n)))) return n;
    }
    return 0;
  }

 private:
  std::unordered_set<std::string> literals_;
  std::size_t max_length_ = 0;
  bool first_byte_[256] = {};
};

}  // namespace attnplay
