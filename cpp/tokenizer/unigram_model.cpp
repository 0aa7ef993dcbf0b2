// Unigram: the piece trie and Viterbi (Hugging Face's encode_optimized and
// tokenize, step for step).
#include "tokenizer/unigram_model.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "tokenizer/unicode.h"

namespace attnplay {

UnigramModel::UnigramModel(std::vector<std::pair<std::string, double>> pieces, std::int32_t unk_id, bool byte_fallback)
    : UnigramModel(std::move(pieces), unk_id, byte_fallback, nullptr) {}

UnigramModel UnigramModel::sentencepiece(std::vector<std::pair<std::string, double>> pieces, std::int32_t unk_id,
                                         bool byte_fallback, const std::vector<Match>& match) {
  if (match.size() != pieces.size()) throw std::invalid_argument("Unigram model: one match kind per piece is needed");
  return UnigramModel(std::move(pieces), unk_id, byte_fallback, &match);
}

UnigramModel UnigramModel::sentencepiece(std::vector<std::pair<std::string, double>> pieces, std::int32_t unk_id,
                                         bool byte_fallback, const std::vector<Match>& match,
                                         std::unordered_map<std::string, std::int32_t> vocabulary,
                                         std::int32_t vocabulary_unk_id) {
  UnigramModel model = sentencepiece(std::move(pieces), unk_id, byte_fallback, match);
  model.output_id_.reserve(model.pieces_.size());
  for (const auto& [piece, score] : model.pieces_) {
    const auto it = vocabulary.find(piece);
    model.output_id_.push_back(it != vocabulary.end() ? it->second : vocabulary_unk_id);
  }
  model.vocabulary_ = std::move(vocabulary);
  model.vocabulary_unk_id_ = vocabulary_unk_id;
  return model;
}

UnigramModel::UnigramModel(std::vector<std::pair<std::string, double>> pieces, std::int32_t unk_id, bool byte_fallback,
                           const std::vector<Match>* match)
    : pieces_(std::move(pieces)), unk_id_(unk_id), byte_fallback_(byte_fallback), sentencepiece_(match != nullptr) {
  if (pieces_.empty()) throw std::invalid_argument("Unigram model: the vocabulary is empty");
  if (unk_id_ < 0 || unk_id_ >= static_cast<std::int32_t>(pieces_.size())) {
    throw std::invalid_argument("Unigram model: unk_id " + std::to_string(unk_id_) + " is outside the vocabulary");
  }
  double min_score = std::numeric_limits<double>::max();
  trie_.emplace_back();
  for (std::size_t id = 0; id < pieces_.size(); ++id) {
    const std::string& piece = pieces_[id].first;
    id_of_[piece] = static_cast<std::int32_t>(id);  // a repeated piece: the last id, as Hugging Face
    if (match && (*match)[id] == Match::Never) continue;
    if (!match || (*match)[id] == Match::Normal) min_score = std::min(min_score, pieces_[id].second);
    std::int32_t node = 0;
    for (const unsigned char b : piece) {
      std::int32_t next = child(node, b);
      if (next < 0) {
        next = static_cast<std::int32_t>(trie_.size());
        auto& children = trie_[node].children;
        children.insert(std::lower_bound(children.begin(), children.end(), std::make_pair(b, std::int32_t{0})),
                        {b, next});
        trie_.emplace_back();
      }
      node = next;
    }
    if (!piece.empty()) trie_[node].piece = static_cast<std::int32_t>(id);
  }
  unk_score_ = sentencepiece_ ? static_cast<float>(static_cast<float>(min_score) - 10.0f) : min_score - 10.0;
}

std::int32_t UnigramModel::child(std::int32_t node, unsigned char byte) const {
  const auto& children = trie_[node].children;
  const auto it = std::lower_bound(children.begin(), children.end(), std::make_pair(byte, std::int32_t{0}));
  return it != children.end() && it->first == byte ? it->second : -1;
}

std::unordered_map<std::string, std::int32_t> UnigramModel::vocab() const {
  return output_id_.empty() ? id_of_ : vocabulary_;
}

void UnigramModel::encode_word(std::string_view word, std::uint32_t offset, std::vector<PieceToken>& out) const {
  const std::size_t n = word.size();
  if (n == 0) return;
  struct Best {
    double score = 0;
    std::int64_t start = -1;  // -1: not reached
    std::int32_t id = 0;
  };
  std::vector<Best> best(n + 1);
  // SentencePiece keeps path scores as floats; it adds a piece's score in
  // double (its score expression is a double) and the unknown score in float
  // (a double sum rounded once to float is the float sum).
  auto kept = [this](double score) { return sentencepiece_ ? static_cast<double>(static_cast<float>(score)) : score; };
  const auto* base = reinterpret_cast<const unsigned char*>(word.data());
  for (std::size_t start = 0; start < n;) {
    const double here = best[start].score;
    const std::size_t char_length = unicode::decode_utf8(base + start, base + n).length;
    bool single = false;
    std::int32_t node = 0;
    for (std::size_t end = start; end < n;) {
      node = child(node, base[end]);
      if (node < 0) break;
      ++end;
      const std::int32_t id = trie_[node].piece;
      if (id < 0) continue;
      Best& target = best[end];
      const double candidate = here + pieces_[id].second;
      if (target.start < 0 || candidate > target.score) target = {kept(candidate), static_cast<std::int64_t>(start), id};
      if (end - start == char_length) single = true;
    }
    if (!single) {
      Best& target = best[start + char_length];
      const double candidate = kept(here + unk_score_);
      if (target.start < 0 || candidate > target.score) target = {candidate, static_cast<std::int64_t>(start), unk_id_};
    }
    start += char_length;
  }
  // Back from the end; consecutive unknowns become one piece.
  std::vector<PieceToken> pieces;
  for (std::size_t end = n; end > 0;) {
    const Best& b = best[end];
    const auto start = static_cast<std::uint32_t>(b.start);
    if (b.id == unk_id_ && !pieces.empty() && pieces.back().id == unk_id_) {
      pieces.back().begin = start;
    } else {
      pieces.push_back({b.id, start, static_cast<std::uint32_t>(end)});
    }
    end = start;
  }
  std::reverse(pieces.begin(), pieces.end());
  static const char* const kHex = "0123456789ABCDEF";
  const bool outside = !output_id_.empty();
  for (const PieceToken& p : pieces) {
    if (p.id == unk_id_ && !sentencepiece_) {  // the text itself may be a piece ("<unk>" written out)
      const auto it = id_of_.find(std::string(word.substr(p.begin, p.end - p.begin)));
      if (it != id_of_.end()) {
        out.push_back({it->second, offset + p.begin, offset + p.end});
        continue;
      }
    }
    if (p.id == unk_id_ && byte_fallback_) {
      // The text of an unknown piece as <0xNN> pieces, when all exist.
      std::vector<std::int32_t> ids;
      for (std::uint32_t i = p.begin; i < p.end; ++i) {
        const auto it = id_of_.find(std::string("<0x") + kHex[base[i] >> 4] + kHex[base[i] & 15] + ">");
        if (it == id_of_.end()) break;
        ids.push_back(it->second);
      }
      if (ids.size() == p.end - p.begin) {
        for (const std::int32_t id : ids) out.push_back({outside ? output_id_[id] : id, offset + p.begin, offset + p.end});
        continue;
      }
    }
    if (outside && p.id == unk_id_) {  // the unknown text itself, looked up in the outside vocabulary
      const auto it = vocabulary_.find(std::string(word.substr(p.begin, p.end - p.begin)));
      out.push_back({it != vocabulary_.end() ? it->second : vocabulary_unk_id_, offset + p.begin, offset + p.end});
      continue;
    }
    out.push_back({outside ? output_id_[p.id] : p.id, offset + p.begin, offset + p.end});
  }
}

}  // namespace attnplay
