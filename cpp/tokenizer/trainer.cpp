// Pair-counting BPE trainer: word counts, pair counts with the words that
// hold each pair, and a max-heap with lazy updates, so each merge touches only
// the words that contain its pair.
#include "tokenizer/trainer.h"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "tokenizer/byte_level.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

namespace attnplay {
namespace {

struct Word {
  std::vector<std::int32_t> symbols;
  std::uint64_t count;
};

std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

// Symbol strings; `joined(a, b)` is the string of the merge of a and b.
class SymbolTable {
 public:
  explicit SymbolTable(std::string prefix) : prefix_(std::move(prefix)) {}
  std::int32_t intern(const std::string& s) {
    const auto [it, inserted] = ids_.emplace(s, static_cast<std::int32_t>(strings_.size()));
    if (inserted) strings_.push_back(s);
    return it->second;
  }
  std::string joined(std::int32_t a, std::int32_t b) const {
    const std::string& right = strings_[b];
    if (!prefix_.empty() && right.compare(0, prefix_.size(), prefix_) == 0) return strings_[a] + right.substr(prefix_.size());
    return strings_[a] + right;
  }
  const std::string& str(std::int32_t id) const { return strings_[id]; }
  std::size_t size() const { return strings_.size(); }

 private:
  std::string prefix_;  // continuation prefix dropped from the right part ("" for byte-level)
  std::unordered_map<std::string, std::int32_t> ids_;
  std::vector<std::string> strings_;
};

// Learns merges until the table holds `target` symbols or no pair is frequent enough.
std::vector<std::pair<std::int32_t, std::int32_t>> learn_merges(std::vector<Word>& words, SymbolTable& table,
                                                                std::size_t target, std::uint64_t min_frequency) {
  std::unordered_map<std::uint64_t, std::int64_t> counts;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> where;
  for (std::uint32_t w = 0; w < words.size(); ++w) {
    const auto& s = words[w].symbols;
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      const std::uint64_t k = pair_key(s[i], s[i + 1]);
      counts[k] += static_cast<std::int64_t>(words[w].count);
      auto& list = where[k];
      if (list.empty() || list.back() != w) list.push_back(w);
    }
  }
  struct Entry {
    std::int64_t count;
    std::uint64_t key;
    bool operator<(const Entry& o) const { return count != o.count ? count < o.count : key > o.key; }
  };
  std::priority_queue<Entry> heap;
  for (const auto& [k, c] : counts) heap.push({c, k});

  std::vector<std::pair<std::int32_t, std::int32_t>> merges;
  std::vector<std::uint64_t> touched;
  std::unordered_set<std::uint32_t> seen_words;
  while (table.size() < target && !heap.empty()) {
    const Entry top = heap.top();
    heap.pop();
    const auto it = counts.find(top.key);
    const std::int64_t current = it == counts.end() ? 0 : it->second;
    if (current != top.count) {  // stale entry: requeue with the current count
      if (current > 0) heap.push({current, top.key});
      continue;
    }
    if (current < static_cast<std::int64_t>(min_frequency) || current <= 0) break;
    const auto a = static_cast<std::int32_t>(top.key >> 32);
    const auto b = static_cast<std::int32_t>(top.key & 0xFFFFFFFFu);
    const std::int32_t merged = table.intern(table.joined(a, b));
    merges.emplace_back(a, b);
    touched.clear();
    seen_words.clear();
    const std::vector<std::uint32_t> holders = std::move(where[top.key]);
    where.erase(top.key);
    for (std::uint32_t w : holders) {
      if (!seen_words.insert(w).second) continue;
      auto& s = words[w].symbols;
      const auto c = static_cast<std::int64_t>(words[w].count);
      bool has = false;
      for (std::size_t i = 0; i + 1 < s.size() && !has; ++i) has = s[i] == a && s[i + 1] == b;
      if (!has) continue;
      for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        const std::uint64_t k = pair_key(s[i], s[i + 1]);
        counts[k] -= c;
        touched.push_back(k);
      }
      std::size_t out = 0;
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          s[out++] = merged;
          ++i;
        } else {
          s[out++] = s[i];
        }
      }
      s.resize(out);
      for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        const std::uint64_t k = pair_key(s[i], s[i + 1]);
        counts[k] += c;
        touched.push_back(k);
        if (s[i] == merged || s[i + 1] == merged) {
          auto& list = where[k];
          if (list.empty() || list.back() != w) list.push_back(w);
        }
      }
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (std::uint64_t k : touched) {
      const auto ct = counts.find(k);
      if (ct == counts.end()) continue;
      if (ct->second <= 0) {
        counts.erase(ct);
      } else if (k != top.key) {
        heap.push({ct->second, k});
      }
    }
    counts.erase(top.key);
  }
  return merges;
}

void check_vocab_size(std::int32_t vocab_size, std::size_t minimum, const char* what) {
  if (vocab_size < 0 || static_cast<std::size_t>(vocab_size) < minimum) {
    throw std::invalid_argument(std::string("train: vocab_size must be at least ") + std::to_string(minimum) + " (" +
                                what + ")");
  }
  if (vocab_size > 1000000) throw std::invalid_argument("train: vocab_size must be at most 1000000");
}

}  // namespace

Tokenizer train_byte_level_bpe(std::string_view corpus, const BpeTrainerOptions& options) {
  check_vocab_size(options.vocab_size, options.special_tokens.size() + 256, "special tokens + 256 bytes");
  std::unordered_map<std::string_view, std::uint64_t> word_counts;
  std::vector<Span> spans;
  split_gpt2(corpus, spans);
  for (const Span& s : spans) ++word_counts[corpus.substr(s.begin, s.end - s.begin)];

  SymbolTable table("");
  auto d = std::make_shared<detail::TokenizerData>();
  for (const std::string& special : options.special_tokens) {
    const auto id = static_cast<std::int32_t>(table.size());
    if (table.intern(special) != id) throw std::invalid_argument("train: special token '" + special + "' repeats");
    d->added.push_back({id, special, true, false, false, false, false});
  }
  std::int32_t byte_symbol[256];
  const auto& alphabet = byte_level_alphabet();
  for (int b = 0; b < 256; ++b) {
    std::string piece;
    unicode::append_utf8(piece, alphabet[b]);
    byte_symbol[b] = table.intern(piece);
  }
  std::vector<Word> words;
  words.reserve(word_counts.size());
  for (const auto& [word, count] : word_counts) {
    Word w{{}, count};
    for (const char c : word) w.symbols.push_back(byte_symbol[static_cast<unsigned char>(c)]);
    words.push_back(std::move(w));
  }
  // Deterministic regardless of hash order.
  std::sort(words.begin(), words.end(), [](const Word& x, const Word& y) { return x.symbols < y.symbols; });
  const auto merges = learn_merges(words, table, static_cast<std::size_t>(options.vocab_size), options.min_frequency);

  std::unordered_map<std::string, std::int32_t> vocab;
  for (std::size_t id = options.special_tokens.size(); id < table.size(); ++id) {
    vocab.emplace(table.str(static_cast<std::int32_t>(id)), static_cast<std::int32_t>(id));
  }
  std::vector<std::pair<std::string, std::string>> merge_strings;
  merge_strings.reserve(merges.size());
  for (const auto& [a, b] : merges) merge_strings.emplace_back(table.str(a), table.str(b));
  for (const detail::AddedToken& t : d->added) vocab.emplace(t.content, t.id);
  d->bpe.emplace(std::move(vocab), std::move(merge_strings));
  d->pre_tokenizer.kind = PreTokenizer::Kind::ByteLevel;
  d->post.kind = detail::PostProcessor::Kind::ByteLevel;
  d->post.byte_level.trim_offsets = false;
  d->decoder.emplace().kind = Decoder::Kind::ByteLevel;
  d->finish();
  return Tokenizer(std::move(d));
}

Tokenizer train_wordpiece(std::string_view corpus, const WordPieceTrainerOptions& options) {
  if (std::find(options.special_tokens.begin(), options.special_tokens.end(), "[UNK]") == options.special_tokens.end()) {
    throw std::invalid_argument("train: WordPiece needs [UNK] among the special tokens");
  }
  BertNormalizerOptions normalizer;
  normalizer.lowercase = options.lowercase;
  const NormalizedText text = bert_normalize(NormalizedText::from_utf8(corpus), normalizer);
  std::unordered_map<std::u32string, std::uint64_t> word_counts;
  for (const Span& s : split_bert(text)) ++word_counts[text.chars.substr(s.begin, s.end - s.begin)];

  SymbolTable table(options.continuing_subword_prefix);
  auto d = std::make_shared<detail::TokenizerData>();
  for (const std::string& special : options.special_tokens) {
    const auto id = static_cast<std::int32_t>(table.size());
    if (table.intern(special) != id) throw std::invalid_argument("train: special token '" + special + "' repeats");
    d->added.push_back({id, special, true, false, false, false, false});
  }
  // Alphabet in a stable order: each character as a word start and as a continuation.
  std::vector<std::pair<std::u32string, std::uint64_t>> sorted(word_counts.begin(), word_counts.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<char32_t> chars;
  for (const auto& [word, count] : sorted) chars.insert(chars.end(), word.begin(), word.end());
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  chars.erase(std::remove(chars.begin(), chars.end(), kInvalidUtf8), chars.end());
  check_vocab_size(options.vocab_size, options.special_tokens.size() + chars.size(), "special tokens + alphabet");
  for (char32_t c : chars) {
    std::string s;
    unicode::append_utf8(s, c);
    table.intern(s);
  }
  std::vector<Word> words;
  words.reserve(sorted.size());
  for (const auto& [word, count] : sorted) {
    if (word.find(kInvalidUtf8) != std::u32string::npos) continue;
    Word w{{}, count};
    for (std::size_t i = 0; i < word.size(); ++i) {
      std::string s = i ? options.continuing_subword_prefix : std::string();
      unicode::append_utf8(s, word[i]);
      w.symbols.push_back(table.intern(s));
    }
    words.push_back(std::move(w));
  }
  if (table.size() > static_cast<std::size_t>(options.vocab_size)) {
    throw std::invalid_argument("train: vocab_size " + std::to_string(options.vocab_size) +
                                " is smaller than the special tokens and alphabet (" + std::to_string(table.size()) +
                                " symbols)");
  }
  learn_merges(words, table, static_cast<std::size_t>(options.vocab_size), options.min_frequency);

  std::unordered_map<std::string, std::int32_t> vocab;
  for (std::size_t id = 0; id < table.size(); ++id) {
    vocab.emplace(table.str(static_cast<std::int32_t>(id)), static_cast<std::int32_t>(id));
  }
  WordPieceOptions wp;
  wp.continuing_subword_prefix = options.continuing_subword_prefix;
  d->wordpiece.emplace(std::move(vocab), wp);
  d->normalizer.emplace().kind = Normalizer::Kind::Bert;
  d->normalizer->bert = normalizer;
  d->pre_tokenizer.kind = PreTokenizer::Kind::Bert;
  d->decoder.emplace().kind = Decoder::Kind::WordPiece;
  d->decoder->prefix = options.continuing_subword_prefix;
  const auto cls = std::find(options.special_tokens.begin(), options.special_tokens.end(), "[CLS]");
  const auto sep = std::find(options.special_tokens.begin(), options.special_tokens.end(), "[SEP]");
  if (cls != options.special_tokens.end() && sep != options.special_tokens.end()) {
    d->post.kind = detail::PostProcessor::Kind::Bert;
    d->post.cls = {"[CLS]", static_cast<std::int32_t>(cls - options.special_tokens.begin())};
    d->post.sep = {"[SEP]", static_cast<std::int32_t>(sep - options.special_tokens.begin())};
    detail::set_special_pair_template(d->post);
  }
  d->finish();
  return Tokenizer(std::move(d));
}

}  // namespace attnplay
