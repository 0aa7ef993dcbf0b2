// BPE: initial symbols (bytes or characters) and merging.
#include "tokenizer/bpe_model.h"

#include <queue>
#include <stdexcept>

#include "tokenizer/byte_level.h"
#include "tokenizer/unicode.h"

namespace attnplay {
namespace {

// Words up to this many bytes are merged by rescanning all pairs (fastest for
// the short words of ordinary text); longer ones with a priority queue.
constexpr std::size_t kShortWord = 48;

}  // namespace

namespace {

std::vector<std::int32_t> list_order(std::size_t n) {
  std::vector<std::int32_t> ranks(n);
  for (std::size_t i = 0; i < n; ++i) ranks[i] = static_cast<std::int32_t>(i);
  return ranks;
}

}  // namespace

BpeModel::BpeModel(std::unordered_map<std::string, std::int32_t> vocab,
                   std::vector<std::pair<std::string, std::string>> merges, BpeOptions options)
    : BpeModel(std::move(vocab), merges, list_order(merges.size()), std::move(options)) {}

BpeModel::BpeModel(std::unordered_map<std::string, std::int32_t> vocab,
                   std::vector<std::pair<std::string, std::string>> merges, const std::vector<std::int32_t>& ranks,
                   BpeOptions options)
    : vocab_(std::move(vocab)), merges_(std::move(merges)), options_(std::move(options)) {
  if (ranks.size() != merges_.size()) throw std::invalid_argument("BPE model: one rank per merge is needed");
  const auto& alphabet = byte_level_alphabet();
  static const char* const kHex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    std::string piece;
    unicode::append_utf8(piece, alphabet[b]);
    const auto it = vocab_.find(piece);
    byte_id_[b] = it == vocab_.end() ? -1 : it->second;
    if (it == vocab_.end()) has_byte_alphabet_ = false;
    const auto fb = vocab_.find(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
    fallback_id_[b] = fb == vocab_.end() ? -1 : fb->second;
  }
  for (const std::string& piece : options_.whole_pieces) {
    if (!vocab_.count(piece)) throw std::invalid_argument("BPE model: whole piece '" + piece + "' is not in the vocabulary");
  }
  whole_pieces_ = PrefixMatcher(options_.whole_pieces);
  if (options_.unk_token) {
    const auto it = vocab_.find(*options_.unk_token);
    if (it == vocab_.end()) {
      throw std::invalid_argument("BPE model: unk_token '" + *options_.unk_token + "' is not in the vocabulary");
    }
    unk_id_ = it->second;
  }
  merge_of_.reserve(merges_.size() * 2);
  for (std::size_t rank = 0; rank < merges_.size(); ++rank) {
    const auto& [a, b] = merges_[rank];
    const auto ia = vocab_.find(a);
    const auto ib = vocab_.find(b);
    const auto im = vocab_.find(a + b);
    if (ia == vocab_.end() || ib == vocab_.end() || im == vocab_.end()) {
      throw std::invalid_argument("BPE model: merge " + std::to_string(rank) + " \"" + a + " " + b +
                                  "\" uses a piece that is not in the vocabulary");
    }
    // A pair listed twice keeps its last rank, as Hugging Face's loader does.
    merge_of_.insert_or_assign(key(ia->second, ib->second), Merge{ranks[rank], im->second});
  }
}

void BpeModel::merge_short(std::vector<PieceToken>& s) const {
  while (s.size() > 1) {
    std::int32_t best_rank = INT32_MAX;
    std::size_t best = 0;
    std::int32_t best_id = 0;
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      const Merge* m = find_merge(s[i].id, s[i + 1].id);
      if (m && m->rank < best_rank) {
        best_rank = m->rank;
        best = i;
        best_id = m->id;
      }
    }
    if (best_rank == INT32_MAX) return;
    s[best].id = best_id;
    s[best].end = s[best + 1].end;
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
}

void BpeModel::merge_long(std::vector<PieceToken>& s) const {
  const std::size_t n = s.size();
  std::vector<std::int32_t> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (std::size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<std::int32_t>(i) - 1;
    next[i] = i + 1 < n ? static_cast<std::int32_t>(i + 1) : -1;
  }
  struct Candidate {
    std::int32_t rank, pos, id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  auto consider = [&](std::int32_t i) {
    if (i < 0 || next[i] < 0) return;
    if (const Merge* m = find_merge(s[i].id, s[next[i]].id)) queue.push({m->rank, i, m->id});
  };
  for (std::size_t i = 0; i + 1 < n; ++i) consider(static_cast<std::int32_t>(i));
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    const std::int32_t i = c.pos;
    if (!alive[i] || next[i] < 0) continue;
    const Merge* m = find_merge(s[i].id, s[next[i]].id);
    if (!m || m->rank != c.rank) continue;  // stale: a neighbour changed since it was queued
    const std::int32_t j = next[i];
    s[i].id = m->id;
    s[i].end = s[j].end;
    alive[j] = false;
    next[i] = next[j];
    if (next[j] >= 0) prev[next[j]] = i;
    consider(prev[i]);
    consider(i);
  }
  std::size_t w = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (alive[i]) s[w++] = s[i];
  }
  s.resize(w);
}

void BpeModel::merge(std::vector<PieceToken>& symbols) const {
  if (symbols.size() <= kShortWord) {
    merge_short(symbols);
  } else {
    merge_long(symbols);
  }
}

void BpeModel::encode_word(std::string_view word, std::uint32_t offset, std::vector<PieceToken>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    const auto it = vocab_.find(bytes_to_byte_level(word));
    if (it != vocab_.end()) {
      out.push_back({it->second, offset, offset + static_cast<std::uint32_t>(word.size())});
      return;
    }
  }
  std::vector<PieceToken> symbols;
  symbols.reserve(word.size());
  for (std::uint32_t i = 0; i < word.size(); ++i) {
    symbols.push_back({byte_id_[static_cast<unsigned char>(word[i])], offset + i, offset + i + 1});
  }
  merge(symbols);
  out.insert(out.end(), symbols.begin(), symbols.end());
}

void BpeModel::encode_chars(std::string_view word, std::uint32_t offset, std::vector<PieceToken>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    const auto it = vocab_.find(std::string(word));
    if (it != vocab_.end()) {
      out.push_back({it->second, offset, offset + static_cast<std::uint32_t>(word.size())});
      return;
    }
  }
  // As Hugging Face's BPE::merge_word: a pending unknown run is emitted
  // before the next known character (byte-fallback pieces do not flush it).
  std::vector<PieceToken> symbols;
  symbols.reserve(word.size());
  const auto* base = reinterpret_cast<const unsigned char*>(word.data());
  const auto* end = base + word.size();
  std::optional<PieceToken> unk;
  std::string piece;
  for (std::uint32_t i = 0; i < word.size();) {
    const auto whole = static_cast<std::uint32_t>(whole_pieces_.longest_prefix(word.substr(i)));
    const std::uint32_t len = whole ? whole : unicode::decode_utf8(base + i, end).length;
    piece.assign(word.substr(i, len));
    const std::uint32_t b = offset + i, e = offset + i + len;
    i += len;
    if (const auto it = vocab_.find(piece); it != vocab_.end()) {
      if (unk) symbols.push_back(*unk);
      unk.reset();
      symbols.push_back({it->second, b, e});
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (const unsigned char c : piece) all = all && fallback_id_[c] >= 0;
      if (all) {
        for (std::uint32_t k = 0; k < len; ++k) {
          symbols.push_back({fallback_id_[static_cast<unsigned char>(piece[k])], b + k, b + k + 1});
        }
        continue;
      }
    }
    if (unk_id_ >= 0) {
      if (unk && options_.fuse_unk) {
        unk->end = e;
      } else {
        if (unk) symbols.push_back(*unk);
        unk = PieceToken{unk_id_, b, e};
      }
    }
  }
  if (unk) symbols.push_back(*unk);
  merge(symbols);
  out.insert(out.end(), symbols.begin(), symbols.end());
}

}  // namespace attnplay
