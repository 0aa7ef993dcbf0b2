// Greedy longest-match-first WordPiece.
#include "tokenizer/wordpiece_model.h"

#include <stdexcept>

namespace attnplay {

WordPieceModel::WordPieceModel(std::unordered_map<std::string, std::int32_t> vocab, WordPieceOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  const auto it = vocab_.find(options_.unk_token);
  if (it == vocab_.end()) {
    throw std::invalid_argument("WordPiece model: unk_token '" + options_.unk_token + "' is not in the vocabulary");
  }
  unk_id_ = it->second;
}

void WordPieceModel::encode_word(std::string_view word, const std::vector<std::uint32_t>& char_starts, bool valid,
                                 std::vector<Piece>& out) const {
  const auto n_chars = static_cast<std::uint32_t>(char_starts.size());
  if (!valid || n_chars > options_.max_input_chars_per_word) {
    out.push_back({unk_id_, 0, n_chars});
    return;
  }
  const std::size_t mark = out.size();
  std::string candidate;
  std::uint32_t start = 0;
  while (start < n_chars) {
    std::uint32_t end = n_chars;
    std::int32_t found = -1;
    while (start < end) {
      const std::uint32_t b = char_starts[start];
      const std::uint32_t e = end < n_chars ? char_starts[end] : static_cast<std::uint32_t>(word.size());
      candidate.clear();
      if (start > 0) candidate = options_.continuing_subword_prefix;
      candidate.append(word.substr(b, e - b));
      const auto it = vocab_.find(candidate);
      if (it != vocab_.end()) {
        found = it->second;
        break;
      }
      --end;
    }
    if (found < 0) {
      out.resize(mark);
      out.push_back({unk_id_, 0, n_chars});
      return;
    }
    out.push_back({found, start, end});
    start = end;
  }
}

}  // namespace attnplay
