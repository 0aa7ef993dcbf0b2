// Encoding pipeline (added tokens, normalization, pre-tokenization, model,
// post-processor), offsets and display strings, decoding. GPT-2's shape (no
// normalizer, a lone ByteLevel pre-tokenizer) takes a fast path over the raw
// bytes; every other pipeline works on aligned text (NormalizedText).
#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "tokenizer/byte_level.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

namespace attnplay {
namespace detail {

void TokenizerData::finish() {
  if (bpe.has_value() + wordpiece.has_value() + unigram.has_value() != 1) {
    throw std::invalid_argument("model: exactly one model is needed");
  }
  byte_level_model = pre_tokenizer.ends_with_byte_level();
  plain_byte_level = !normalizer && pre_tokenizer.kind == PreTokenizer::Kind::ByteLevel && bpe;
  if (byte_level_model && !bpe) throw std::invalid_argument("pre_tokenizer: ByteLevel is supported with the BPE model only");
  if (byte_level_model && !bpe->has_byte_alphabet()) {
    throw std::invalid_argument("model: the ByteLevel pre-tokenizer needs the 256 byte-level pieces in the vocabulary");
  }
  if (decoder && decoder->kind == Decoder::Kind::ByteLevel && !byte_level_model) {
    throw std::invalid_argument("decoder: ByteLevel needs the ByteLevel pre-tokenizer");
  }
  const auto vocab = bpe ? bpe->vocab() : wordpiece ? wordpiece->vocab() : unigram->vocab();
  // Ids index the dense tables below (piece, special, added token), so the
  // largest id sets their size: an id of kTokenIdLimit or more is refused rather
  // than allocated (a tokenizer.json with one id of 1.5 billion asked for
  // ~50 GB).
  const auto check_id = [](std::int32_t id, const char* section, const std::string& text) {
    if (id < 0) throw std::invalid_argument(std::string(section) + ": negative id for '" + text + "'");
    if (id >= kTokenIdLimit) {
      throw std::invalid_argument(std::string(section) + ": id " + std::to_string(id) + " of '" + text +
                                  "' is too large (token ids must be below " + std::to_string(kTokenIdLimit) + ")");
    }
  };
  std::int32_t size = 0;
  for (const auto& [piece, id] : vocab) {
    check_id(id, "model.vocab", piece);
    size = std::max(size, id + 1);
  }
  for (const AddedToken& t : added) {
    check_id(t.id, "added_tokens", t.content);
    if (t.content.empty()) throw std::invalid_argument("added_tokens: empty content for id " + std::to_string(t.id));
    if (t.single_word) throw std::invalid_argument("added_tokens: single_word is not supported ('" + t.content + "')");
    size = std::max(size, t.id + 1);
  }
  id_to_piece.assign(static_cast<std::size_t>(size), std::string());
  special.assign(static_cast<std::size_t>(size), 0);
  added_index_of_id.assign(static_cast<std::size_t>(size), -1);
  piece_to_id = vocab;
  for (const auto& [piece, id] : vocab) {
    if (!id_to_piece[id].empty()) {
      throw std::invalid_argument("model.vocab: id " + std::to_string(id) + " is used by '" + id_to_piece[id] +
                                  "' and '" + piece + "'");
    }
    id_to_piece[id] = piece;
  }
  for (const std::int32_t id : control_ids) special.at(static_cast<std::size_t>(id)) = 1;
  added_by_first_byte.assign(256, {});
  for (std::size_t i = 0; i < added.size(); ++i) {
    const AddedToken& t = added[i];
    if (!id_to_piece[t.id].empty() && id_to_piece[t.id] != t.content) {
      throw std::invalid_argument("added_tokens: id " + std::to_string(t.id) + " is '" + id_to_piece[t.id] +
                                  "' in the vocabulary but '" + t.content + "' here");
    }
    id_to_piece[t.id] = t.content;
    special[t.id] = t.special ? 1 : 0;
    added_index_of_id[t.id] = static_cast<std::int32_t>(i);
    piece_to_id[t.content] = t.id;
    if (t.normalized && normalizer) {
      // As Hugging Face: the token's own text goes through the normalizer too.
      std::u32string chars = normalize(*normalizer, NormalizedText::from_utf8(t.content)).chars;
      if (!chars.empty()) normalized_added.emplace_back(i, std::move(chars));
    } else {
      added_by_first_byte[static_cast<unsigned char>(t.content[0])].push_back(i);
    }
  }
  auto check_special = [&](const std::string& name, std::int32_t id, const char* where) {
    if (id < 0 || id >= size) {
      throw std::invalid_argument(std::string("post_processor: ") + where + " '" + name + "' has id " +
                                  std::to_string(id) + " outside the vocabulary");
    }
  };
  for (const auto& [name, entry] : post.special_tokens) {
    for (std::int32_t id : entry.ids) check_special(name, id, "special token");
  }
  for (const auto* items : {&post.single, &post.pair}) {
    for (const TemplateItem& item : *items) {
      if (item.is_special && !post.special_tokens.count(item.special)) {
        throw std::invalid_argument("post_processor: template uses '" + item.special +
                                    "' which is not among its special_tokens");
      }
    }
  }
}

}  // namespace detail

namespace {

using detail::TokenizerData;

// A token before pieces, display strings and UTF-16 offsets are attached.
struct RawToken {
  std::int32_t id;
  std::uint32_t begin, end;  // bytes in the segment
  std::int32_t type_id;
  std::int32_t segment;
};

// Per-call cache of the BPE tokens of words up to kMaxBytes, keyed by views
// into text that lives for the call. Open addressing with stored hashes: it
// is the hottest lookup of encoding ordinary text, and std::unordered_map's
// node chasing cost twice as much (measured with perf on austen.txt).
class WordCache {
 public:
  static constexpr std::size_t kMaxBytes = 64;
  struct Entry {
    std::size_t first = 0, count = 0;  // range in the token buffer
  };

  WordCache() : slots_(1024) {}

  // The entry of word, or nullptr after remembering where to insert it.
  const Entry* find(std::string_view word) {
    hash_ = hash(word);
    for (std::size_t i = hash_ & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& s = slots_[i];
      if (!s.data) {
        pending_ = i;
        return nullptr;
      }
      if (s.hash == hash_ && s.size == word.size() && std::memcmp(s.data, word.data(), word.size()) == 0) {
        return &s.entry;
      }
    }
  }

  // Inserts word (after a find that returned nullptr for it).
  void insert(std::string_view word, Entry entry) {
    slots_[pending_] = {hash_, word.data(), static_cast<std::uint32_t>(word.size()), entry};
    if (++used_ * 2 > slots_.size()) grow();
  }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    const char* data = nullptr;
    std::uint32_t size = 0;
    Entry entry;
  };
  static std::uint64_t hash(std::string_view w) {  // FNV-1a, then mixed
    std::uint64_t h = 1469598103934665603ull;
    for (const char c : w) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h ^ (h >> 29);
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old) {
      if (!s.data) continue;
      std::size_t i = s.hash & (slots_.size() - 1);
      while (slots_[i].data) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::size_t used_ = 0;
  std::size_t pending_ = 0;
  std::uint64_t hash_ = 0;
};

// Where the white space (Unicode White_Space, Rust's char::is_whitespace, as
// Hugging Face strips around an lstrip/rstrip added token) ending at byte
// `end` begins, no further back than `floor`.
std::uint32_t white_space_begin(std::string_view text, std::uint32_t end, std::uint32_t floor) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  while (end > floor) {
    std::uint32_t begin = end - 1;  // back over continuation bytes to the character's first byte
    while (begin > floor && end - begin < 4 && (bytes[begin] & 0xC0) == 0x80) --begin;
    const unicode::Decoded c = unicode::decode_utf8(bytes + begin, bytes + end);
    if (!c.valid || begin + c.length != end || !unicode::is_white_space(c.code_point)) break;
    end = begin;
  }
  return end;
}

// Where the white space starting at byte `begin` ends.
std::uint32_t white_space_end(std::string_view text, std::uint32_t begin) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  while (begin < text.size()) {
    const unicode::Decoded c = unicode::decode_utf8(bytes + begin, bytes + text.size());
    if (!c.valid || !unicode::is_white_space(c.code_point)) break;
    begin += c.length;
  }
  return begin;
}

class SegmentEncoder {
 public:
  SegmentEncoder(const TokenizerData& data, bool match_special) : data_(data), match_special_(match_special) {}

  void encode(std::string_view text, std::vector<RawToken>& out, std::int32_t type_id, std::int32_t segment) {
    type_id_ = type_id;
    segment_ = segment;
    std::uint32_t text_start = 0;
    std::uint32_t pos = 0;
    const auto n = static_cast<std::uint32_t>(text.size());
    if (match_special_ && !data_.added.empty()) {
      while (pos < n) {
        const detail::AddedToken* best = nullptr;
        for (std::size_t i : data_.added_by_first_byte[static_cast<unsigned char>(text[pos])]) {
          const detail::AddedToken& t = data_.added[i];
          if (text.compare(pos, t.content.size(), t.content) == 0 && (!best || t.content.size() > best->content.size())) {
            best = &t;
          }
        }
        if (!best) {
          ++pos;
          continue;
        }
        std::uint32_t begin = pos;
        std::uint32_t end = pos + static_cast<std::uint32_t>(best->content.size());
        if (best->lstrip) begin = white_space_begin(text, begin, text_start);
        if (best->rstrip) end = white_space_end(text, end);
        encode_text(text.substr(text_start, begin - text_start), text_start, out);
        out.push_back({best->id, begin, end, type_id_, segment_});
        text_start = pos = end;
      }
    }
    encode_text(text.substr(text_start), text_start, out);
  }

 private:
  void encode_text(std::string_view text, std::uint32_t offset, std::vector<RawToken>& out) {
    if (text.empty()) return;
    if (data_.language_code_unk_id && text.substr(0, 2) == ">>") {
      const std::size_t close = text.find("<<");
      if (close != std::string_view::npos) {
        const auto end = static_cast<std::uint32_t>(close + 2);
        const auto it = data_.piece_to_id.find(std::string(text.substr(0, end)));
        out.push_back({it != data_.piece_to_id.end() ? it->second : *data_.language_code_unk_id, offset, offset + end,
                       type_id_, segment_});
        text.remove_prefix(end);
        offset += end;
        if (text.empty()) return;
      }
    }
    if (data_.plain_byte_level) {
      encode_byte_level(text, offset, out);
    } else {
      encode_normalized(text, offset, out);
    }
  }

  void encode_byte_level(std::string_view text, std::uint32_t offset, std::vector<RawToken>& out) {
    std::uint32_t shift = 0;  // 1 when a space was prepended (it maps to offset 0)
    const ByteLevelOptions& options = data_.pre_tokenizer.byte_level;
    if (options.add_prefix_space && text[0] != ' ') {
      owned_words_.push_back(" " + std::string(text));  // outlives the cache keys that view it
      text = owned_words_.back();
      shift = 1;
    }
    words_.clear();
    if (options.use_regex) {
      split_gpt2(text, words_);
    } else {
      words_.push_back({0, static_cast<std::uint32_t>(text.size())});
    }
    for (const Span& w : words_) {
      const std::string_view word = text.substr(w.begin, w.end - w.begin);
      const auto [first, count] = cached_word(word);
      for (std::size_t k = first; k < first + count; ++k) {
        const PieceToken& p = cache_tokens_[k];
        const std::uint32_t b = w.begin + p.begin;
        const std::uint32_t e = w.begin + p.end;
        out.push_back({p.id, offset + (b > shift ? b - shift : 0), offset + (e > shift ? e - shift : 0), type_id_,
                       segment_});
      }
    }
  }

  // Tokens of a word, from the per-call cache: (index into cache_tokens_, count), offsets relative to the word.
  std::pair<std::size_t, std::size_t> cached_word(std::string_view word) {
    const bool cacheable = word.size() <= WordCache::kMaxBytes;
    if (cacheable) {
      if (const WordCache::Entry* e = cache_.find(word)) return {e->first, e->count};
    }
    const std::size_t first = cache_tokens_.size();
    data_.bpe->encode_word(word, 0, cache_tokens_);
    const WordCache::Entry entry{first, cache_tokens_.size() - first};
    if (cacheable) cache_.insert(word, entry);  // keys view text alive for the call
    return {entry.first, entry.count};
  }

  // Normalizer, pre-tokenizer, then the model on each word; token offsets go
  // back to the original bytes through the words' character alignment.
  void encode_normalized(std::string_view text, std::uint32_t offset, std::vector<RawToken>& out) {
    NormalizedText normalized = NormalizedText::from_utf8(text);
    if (data_.normalizer) normalized = normalize(*data_.normalizer, std::move(normalized));
    if (!match_special_ || data_.normalized_added.empty()) {
      encode_pre_tokens(std::move(normalized), text, offset, out);
      return;
    }
    // Added tokens matched in the normalized text: leftmost, longest.
    const auto n = static_cast<std::uint32_t>(normalized.chars.size());
    auto space = [&](std::uint32_t i) {
      return normalized.chars[i] != kInvalidUtf8 && unicode::is_white_space(normalized.chars[i]);
    };
    std::uint32_t start = 0;
    for (std::uint32_t pos = 0; pos < n;) {
      const std::pair<std::size_t, std::u32string>* best = nullptr;
      for (const auto& entry : data_.normalized_added) {
        if (normalized.chars.compare(pos, entry.second.size(), entry.second) == 0 &&
            (!best || entry.second.size() > best->second.size())) {
          best = &entry;
        }
      }
      if (!best) {
        ++pos;
        continue;
      }
      const detail::AddedToken& t = data_.added[best->first];
      std::uint32_t b = pos, e = pos + static_cast<std::uint32_t>(best->second.size());
      if (t.lstrip) {
        while (b > start && space(b - 1)) --b;
      }
      if (t.rstrip) {
        while (e < n && space(e)) ++e;
      }
      encode_pre_tokens(slice_of(normalized, start, b), text, offset, out);
      out.push_back({t.id, offset + normalized.begin[b], offset + normalized.end[e - 1], type_id_, segment_});
      start = pos = e;
    }
    encode_pre_tokens(slice_of(normalized, start, n), text, offset, out);
  }

  static NormalizedText slice_of(const NormalizedText& t, std::uint32_t b, std::uint32_t e) {
    NormalizedText out;
    for (std::uint32_t i = b; i < e; ++i) out.push(t.chars[i], t.begin[i], t.end[i]);
    return out;
  }

  // Pre-tokenizer, then the model on each word.
  void encode_pre_tokens(NormalizedText normalized, std::string_view text, std::uint32_t offset,
                         std::vector<RawToken>& out) {
    if (normalized.chars.empty()) return;
    std::vector<NormalizedText> words;
    words.push_back(std::move(normalized));
    pre_tokenize(data_.pre_tokenizer, text, offset == 0, words);
    std::vector<std::uint32_t> starts;
    std::vector<PieceToken> pieces;
    for (const NormalizedText& w : words) {
      const std::string word = pre_token_utf8(w, text, &starts);
      pieces.clear();
      if (data_.wordpiece) {
        encode_wordpiece_word(w, word, starts, pieces);
      } else if (data_.byte_level_model) {
        owned_words_.push_back(word);  // outlives the cache keys that view it
        const auto [first, count] = cached_word(owned_words_.back());
        pieces.assign(cache_tokens_.begin() + static_cast<std::ptrdiff_t>(first),
                      cache_tokens_.begin() + static_cast<std::ptrdiff_t>(first + count));
      } else if (data_.unigram) {
        data_.unigram->encode_word(word, 0, pieces);
      } else {
        data_.bpe->encode_chars(word, 0, pieces);
      }
      // Byte offsets in word -> original bytes: exact inside a character kept
      // at its length, its whole original range otherwise; widened to every
      // character the token covers (canonical reordering may swap marks).
      auto char_at = [&](std::uint32_t byte) {
        return static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), byte) - starts.begin() - 1);
      };
      auto kept = [&](std::size_t c) { return w.end[c] - w.begin[c] == starts[c + 1] - starts[c]; };
      for (const PieceToken& p : pieces) {
        const std::size_t c0 = char_at(p.begin), c1 = p.end > p.begin ? char_at(p.end - 1) : c0;
        std::uint32_t b = kept(c0) ? w.begin[c0] + (p.begin - starts[c0]) : w.begin[c0];
        std::uint32_t e = p.end <= p.begin ? b : kept(c1) ? w.begin[c1] + (p.end - starts[c1]) : w.end[c1];
        for (std::size_t c = c0; c <= c1; ++c) {
          if (c != c0) b = std::min(b, w.begin[c]);
          if (c != c1) e = std::max(e, w.end[c]);
        }
        out.push_back({p.id, offset + b, offset + std::max(b, e), type_id_, segment_});
      }
    }
  }

  // WordPiece on one word; piece offsets in bytes of word.
  void encode_wordpiece_word(const NormalizedText& w, const std::string& word, const std::vector<std::uint32_t>& starts,
                             std::vector<PieceToken>& out) {
    bool valid = true;
    for (char32_t ch : w.chars) valid = valid && ch != kInvalidUtf8;
    std::vector<std::uint32_t> char_starts(starts.begin(), starts.end() - 1);
    std::vector<WordPieceModel::Piece> pieces;
    data_.wordpiece->encode_word(valid ? word : std::string(), char_starts, valid, pieces);
    for (const WordPieceModel::Piece& p : pieces) out.push_back({p.id, starts[p.first_char], starts[p.last_char]});
  }

  const TokenizerData& data_;
  const bool match_special_;
  std::int32_t type_id_ = 0;
  std::int32_t segment_ = 0;
  std::vector<Span> words_;
  WordCache cache_;
  std::vector<PieceToken> cache_tokens_;
  std::deque<std::string> owned_words_;  // texts made during the call that cache keys view
};

std::vector<RawToken> encode_raw(const TokenizerData& data, std::string_view text,
                                 std::optional<std::string_view> text_b, const EncodeOptions& options) {
  std::vector<RawToken> a, b;
  a.reserve(text.size() / 3 + 4);
  SegmentEncoder(data, options.match_special_tokens).encode(text, a, 0, 0);
  if (text_b) SegmentEncoder(data, options.match_special_tokens).encode(*text_b, b, 1, 1);
  const auto& items = text_b ? data.post.pair : data.post.single;
  if (!options.add_special_tokens || items.empty()) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  std::vector<RawToken> out;
  out.reserve(a.size() + b.size() + 4);
  for (const detail::TemplateItem& item : items) {
    if (item.is_special) {
      for (std::int32_t id : data.post.special_tokens.at(item.special).ids) out.push_back({id, 0, 0, item.type_id, -1});
    } else {
      for (RawToken t : item.sequence == 0 ? a : b) {
        t.type_id = item.type_id;
        out.push_back(t);
      }
    }
  }
  return out;
}

// UTF-16 offsets of byte offsets: char_u16[i] is where the character holding
// byte i starts, char_u16_end[i] where it ends (in UTF-16 code units).
struct Utf16Map {
  std::vector<std::uint32_t> start, end;
  explicit Utf16Map(std::string_view text) : start(text.size() + 1), end(text.size() + 1) {
    const auto* base = reinterpret_cast<const unsigned char*>(text.data());
    const auto* p = base;
    const auto* stop = base + text.size();
    std::uint32_t u = 0;
    while (p < stop) {
      const unicode::Decoded d = unicode::decode_utf8(p, stop);
      const std::uint32_t w = d.valid ? unicode::utf16_length(d.code_point) : 1;
      const auto at = static_cast<std::size_t>(p - base);
      for (std::uint32_t k = 0; k < d.length; ++k) {
        start[at + k] = u;
        end[at + k] = u + w;
      }
      u += w;
      p += d.length;
    }
    start[text.size()] = end[text.size()] = u;
  }
  std::uint32_t begin_of(std::uint32_t byte) const { return start[byte]; }
  std::uint32_t end_of(std::uint32_t begin_byte, std::uint32_t end_byte) const {
    return end_byte > begin_byte ? end[end_byte - 1] : start[end_byte];
  }
};

}  // namespace

std::vector<std::int32_t> Encoding::ids() const {
  std::vector<std::int32_t> out;
  out.reserve(tokens.size());
  for (const Token& t : tokens) out.push_back(t.id);
  return out;
}

std::vector<std::int32_t> Encoding::type_ids() const {
  std::vector<std::int32_t> out;
  out.reserve(tokens.size());
  for (const Token& t : tokens) out.push_back(t.type_id);
  return out;
}

Tokenizer::Tokenizer(std::shared_ptr<const detail::TokenizerData> data) : data_(std::move(data)) {}

Encoding Tokenizer::encode(std::string_view text, std::optional<std::string_view> text_b,
                           bool add_special_tokens) const {
  EncodeOptions options;
  options.add_special_tokens = add_special_tokens;
  return encode(text, text_b, options);
}

Encoding Tokenizer::encode(std::string_view text, std::optional<std::string_view> text_b,
                           const EncodeOptions& options) const {
  const std::vector<RawToken> raw = encode_raw(*data_, text, text_b, options);
  const Utf16Map map_a(text);
  const std::optional<Utf16Map> map_b = text_b ? std::optional<Utf16Map>(Utf16Map(*text_b)) : std::nullopt;
  Encoding out;
  out.tokens.reserve(raw.size());
  for (const RawToken& r : raw) {
    Token t;
    t.id = r.id;
    t.piece = data_->id_to_piece[r.id];
    t.display = display(r.id);
    t.byte_begin = r.begin;
    t.byte_end = r.end;
    if (r.segment >= 0) {
      const Utf16Map& m = r.segment == 0 ? map_a : *map_b;
      t.utf16_begin = m.begin_of(r.begin);
      t.utf16_end = m.end_of(r.begin, r.end);
    }
    t.type_id = r.type_id;
    t.special = data_->special[r.id] != 0 || r.segment < 0;
    t.segment = r.segment;
    out.tokens.push_back(std::move(t));
  }
  return out;
}

std::vector<std::int32_t> Tokenizer::encode_ids(std::string_view text, const EncodeOptions& options) const {
  const std::vector<RawToken> raw = encode_raw(*data_, text, std::nullopt, options);
  std::vector<std::int32_t> ids;
  ids.reserve(raw.size());
  for (const RawToken& r : raw) ids.push_back(r.id);
  return ids;
}

std::string Tokenizer::decode(const std::vector<std::int32_t>& ids, bool skip_special_tokens) const {
  const TokenizerData& d = *data_;
  std::vector<std::string_view> pieces;
  pieces.reserve(ids.size());
  for (std::int32_t id : ids) {
    if (id < 0 || id >= static_cast<std::int32_t>(d.id_to_piece.size()) || d.id_to_piece[id].empty()) {
      throw std::invalid_argument("decode: id " + std::to_string(id) + " is not in the vocabulary");
    }
    if (skip_special_tokens && d.special[id]) continue;
    pieces.push_back(d.id_to_piece[id]);
  }
  std::vector<std::string> tokens(pieces.begin(), pieces.end());
  std::string out;
  if (!d.decoder) {  // no decoder: pieces joined by spaces
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (i) out += ' ';
      out += tokens[i];
    }
    return out;
  }
  d.decoder->decode_chain(tokens);
  for (const std::string& t : tokens) out += t;
  return out;
}

std::string Tokenizer::display(std::int32_t id) const {
  const TokenizerData& d = *data_;
  if (id < 0 || id >= static_cast<std::int32_t>(d.id_to_piece.size())) {
    throw std::invalid_argument("display: id " + std::to_string(id) + " is not in the vocabulary");
  }
  const std::string& piece = d.id_to_piece[id];
  if (d.added_index_of_id[id] >= 0 || d.wordpiece) return display_bytes(piece);
  if (!d.byte_level_model) {  // SentencePiece-style pieces: "▁" is a space, "<0xNN>" one byte
    std::vector<std::string> pieces{piece};
    Decoder fallback;
    fallback.kind = Decoder::Kind::ByteFallback;
    fallback.decode_chain(pieces);  // a lone byte that is not a character comes back as U+FFFD
    if (pieces[0] != piece) return piece.size() == 6 && pieces[0] == "\uFFFD" ? piece : display_bytes(pieces[0]);
    std::string text = piece;
    for (std::size_t at = text.find("\u2581"); at != std::string::npos; at = text.find("\u2581", at + 1)) {
      text.replace(at, 3, " ");
    }
    return display_bytes(text);
  }
  std::string bytes;
  if (!byte_level_to_bytes(piece, bytes)) return display_bytes(piece);
  return display_bytes(bytes);
}

std::optional<std::int32_t> Tokenizer::token_to_id(std::string_view piece) const {
  const auto it = data_->piece_to_id.find(std::string(piece));
  if (it == data_->piece_to_id.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Tokenizer::id_to_token(std::int32_t id) const {
  if (id < 0 || id >= vocab_size() || data_->id_to_piece[id].empty()) return std::nullopt;
  return data_->id_to_piece[id];
}

std::int32_t Tokenizer::vocab_size() const { return static_cast<std::int32_t>(data_->id_to_piece.size()); }

bool Tokenizer::is_special(std::int32_t id) const {
  return id >= 0 && id < vocab_size() && data_->special[id] != 0;
}

std::string Tokenizer::model_type() const { return data_->bpe ? "BPE" : data_->wordpiece ? "WordPiece" : "Unigram"; }

}  // namespace attnplay
