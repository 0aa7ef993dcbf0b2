// Reading a SentencePiece ModelProto (protobuf wire format: varints, 32- and
// 64-bit fixed fields, length-delimited fields; groups refused) and building
// the tokenizer pipeline from it:
//   normalizer     SentencePiece (user-defined symbols, charsmap, extra spaces, dummy prefix, "▁")
//   pre-tokenizer  none: the model sees the whole normalized text, as in SentencePiece
//   model          Unigram (SentencePiece's search) or BPE (ranks from the merged piece's score, user-defined symbols whole)
//   post-processor by the SentencePieceConvention (tokenizer.h): "<s> $A" when the model has a <s>
//                  control piece (Llama), "$A </s>" and the sentinels (T5), fairseq's ids and
//                  "<s> $A </s>" (XLM-R)
//   decoder        SentencePiece
#include "tokenizer/sentencepiece_model.h"

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "tokenizer/pipeline.h"
#include "tokenizer/sentencepiece_normalizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace attnplay {
namespace {

using PieceType = SentencePieceModelProto::PieceType;
using ModelType = SentencePieceModelProto::ModelType;

[[noreturn]] void bad_model_proto(const std::string& message) { throw std::invalid_argument("SentencePiece model: " + message); }

// One protobuf message: fields read in order, each with its number and wire type.
class WireReader {
 public:
  WireReader(std::string_view bytes, std::size_t base, std::string where)
      : bytes_(bytes), base_(base), where_(std::move(where)) {}

  bool done() const { return pos_ >= bytes_.size(); }

  // The next field's number and wire type.
  std::pair<std::uint32_t, int> field() {
    const std::uint64_t key = varint();
    const auto number = static_cast<std::uint32_t>(key >> 3);
    const int wire = static_cast<int>(key & 7);
    if (number == 0 || key >> 32) error("field number " + std::to_string(key >> 3) + " is invalid");
    if (wire == 3 || wire == 4) error("field " + std::to_string(number) + " is a group, which is not supported");
    if (wire > 5) error("field " + std::to_string(number) + " has wire type " + std::to_string(wire));
    field_ = number;
    wire_ = wire;
    return {number, wire};
  }

  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) error("truncated varint");
      const auto b = static_cast<unsigned char>(bytes_[pos_++]);
      value |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return value;
    }
    error("varint longer than 10 bytes");
  }

  // Typed reads of the current field's value, checking its wire type.
  std::uint64_t read_varint() {
    expect(0, "a varint");
    return varint();
  }
  bool read_bool() { return read_varint() != 0; }
  float read_float() {
    expect(5, "a 32-bit float");
    const std::string_view b = take(4);
    std::uint32_t bits = 0;
    for (int i = 3; i >= 0; --i) bits = (bits << 8) | static_cast<unsigned char>(b[i]);
    float f;
    static_assert(sizeof f == sizeof bits);
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  // A length-delimited value (string, bytes or message) and its offset in the file.
  std::pair<std::string_view, std::size_t> read_bytes() {
    expect(2, "length-delimited");
    const std::uint64_t length = varint();
    if (length > bytes_.size() - pos_) {
      error("field " + std::to_string(field_) + " claims " + std::to_string(length) + " bytes, " +
            std::to_string(bytes_.size() - pos_) + " remain");
    }
    const std::size_t at = base_ + pos_;
    return {take(static_cast<std::size_t>(length)), at};
  }
  void skip() {
    switch (wire_) {
      case 0:
        varint();
        return;
      case 1:
        take(8);
        return;
      case 2:
        read_bytes();
        return;
      default:
        take(4);
    }
  }

  [[noreturn]] void error(const std::string& message) const {
    bad_model_proto(where_ + " at byte " + std::to_string(base_ + pos_) + ": " + message);
  }

 private:
  void expect(int wire, const char* what) const {
    if (wire_ != wire) error("field " + std::to_string(field_) + " should be " + what + " (wire type " + std::to_string(wire_) + ")");
  }
  std::string_view take(std::size_t n) {
    if (n > bytes_.size() - pos_) error("truncated field " + std::to_string(field_));
    const std::string_view out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }

  std::string_view bytes_;
  std::size_t base_;
  std::string where_;
  std::size_t pos_ = 0;
  std::uint32_t field_ = 0;
  int wire_ = 0;
};

std::string utf8_string(std::string_view bytes, const char* field) {
  if (!unicode::is_valid_utf8(bytes)) bad_model_proto(std::string(field) + " is not valid UTF-8");
  return std::string(bytes);
}

SentencePieceModelProto::Piece read_piece(std::string_view bytes, std::size_t at, std::size_t index) {
  WireReader r(bytes, at, "pieces[" + std::to_string(index) + "]");
  SentencePieceModelProto::Piece p;
  while (!r.done()) {
    const auto [number, wire] = r.field();
    if (number == 1) {
      p.piece = utf8_string(r.read_bytes().first, "a piece");
    } else if (number == 2) {
      p.score = r.read_float();
    } else if (number == 3) {
      const std::uint64_t type = r.read_varint();
      if (type < 1 || type > 6) r.error("piece type " + std::to_string(type) + " is unknown (1 to 6)");
      p.type = static_cast<PieceType>(type);
    } else {
      r.skip();
    }
  }
  return p;
}

void read_trainer_spec(std::string_view bytes, std::size_t at, SentencePieceModelProto& m) {
  WireReader r(bytes, at, "trainer_spec");
  while (!r.done()) {
    const auto [number, wire] = r.field();
    switch (number) {
      case 3: {
        const std::uint64_t type = r.read_varint();
        if (type < 1 || type > 4) r.error("model_type " + std::to_string(type) + " is unknown (1 to 4)");
        m.model_type = static_cast<ModelType>(type);
        break;
      }
      case 24:
        m.treat_whitespace_as_suffix = r.read_bool();
        break;
      case 35:
        m.byte_fallback = r.read_bool();
        break;
      case 44:
        m.unk_surface = utf8_string(r.read_bytes().first, "trainer_spec.unk_surface");
        break;
      case 46:
        m.bos_piece = utf8_string(r.read_bytes().first, "trainer_spec.bos_piece");
        break;
      case 47:
        m.eos_piece = utf8_string(r.read_bytes().first, "trainer_spec.eos_piece");
        break;
      default:
        r.skip();
    }
  }
}

void read_normalizer_spec(std::string_view bytes, std::size_t at, SentencePieceModelProto& m, bool denormalizer) {
  WireReader r(bytes, at, denormalizer ? "denormalizer_spec" : "normalizer_spec");
  while (!r.done()) {
    const auto [number, wire] = r.field();
    if (denormalizer) {
      if (number == 2) {
        m.denormalizer_charsmap = std::string(r.read_bytes().first);
      } else {
        r.skip();
      }
      continue;
    }
    switch (number) {
      case 1:
        m.normalizer_name = utf8_string(r.read_bytes().first, "normalizer_spec.name");
        break;
      case 2:
        m.precompiled_charsmap = std::string(r.read_bytes().first);
        break;
      case 3:
        m.add_dummy_prefix = r.read_bool();
        break;
      case 4:
        m.remove_extra_whitespaces = r.read_bool();
        break;
      case 5:
        m.escape_whitespaces = r.read_bool();
        break;
      default:
        r.skip();
    }
  }
}

// The byte of a "<0xNN>" piece (SentencePiece writes two upper-case hex digits), or -1.
int byte_of_piece(const std::string& piece) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
  int value = 0;
  for (std::size_t i = 3; i < 5; ++i) {
    const char c = piece[i];
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// SentencePiece's BPE merges the adjacent pair whose concatenation is a piece
// of the highest score, leftmost on ties. As ranked merges: every split of a
// normal or user-defined piece into two normal pieces (user-defined symbols
// are never parts: they stay whole), ranked by the merged piece's score (equal
// scores, equal ranks).
void sentencepiece_merges(const SentencePieceModelProto& m, const std::unordered_map<std::string, std::int32_t>& mergeable,
                          std::vector<std::pair<std::string, std::string>>& merges, std::vector<std::int32_t>& ranks) {
  auto merged = [](const SentencePieceModelProto::Piece& p) {
    return p.type == PieceType::Normal || p.type == PieceType::UserDefined;
  };
  std::vector<float> scores;
  for (const auto& p : m.pieces) {
    if (merged(p)) scores.push_back(p.score);
  }
  std::sort(scores.begin(), scores.end(), std::greater<float>());
  scores.erase(std::unique(scores.begin(), scores.end()), scores.end());
  for (const auto& p : m.pieces) {
    if (!merged(p)) continue;
    const std::int32_t rank = static_cast<std::int32_t>(
        std::lower_bound(scores.begin(), scores.end(), p.score, std::greater<float>()) - scores.begin());
    const auto* base = reinterpret_cast<const unsigned char*>(p.piece.data());
    const auto* end = base + p.piece.size();
    for (std::size_t split = unicode::decode_utf8(base, end).length; split < p.piece.size();
         split += unicode::decode_utf8(base + split, end).length) {
      std::string left = p.piece.substr(0, split), right = p.piece.substr(split);
      if (mergeable.count(left) && mergeable.count(right)) {
        merges.emplace_back(std::move(left), std::move(right));
        ranks.push_back(rank);
      }
    }
  }
}

}  // namespace

SentencePieceModelProto SentencePieceModelProto::parse(std::string_view bytes) {
  SentencePieceModelProto m;
  WireReader r(bytes, 0, "ModelProto");
  while (!r.done()) {
    const auto [number, wire] = r.field();
    if (number == 1) {
      const auto [piece, at] = r.read_bytes();
      m.pieces.push_back(read_piece(piece, at, m.pieces.size()));
    } else if (number == 2) {
      const auto [spec, at] = r.read_bytes();
      read_trainer_spec(spec, at, m);
    } else if (number == 3 || number == 5) {
      const auto [spec, at] = r.read_bytes();
      read_normalizer_spec(spec, at, m, number == 5);
    } else {
      r.skip();
    }
  }
  return m;
}

namespace detail {

std::shared_ptr<TokenizerData> sentencepiece_pipeline(const SentencePieceModelProto& m,
                                                      const std::unordered_map<std::string, std::int32_t>* vocabulary,
                                                      std::int32_t vocabulary_unk_id) {
  if (m.pieces.empty()) bad_model_proto("no pieces (is this a SentencePiece .model file?)");
  if (m.model_type == ModelType::Word || m.model_type == ModelType::Char) {
    bad_model_proto(std::string("model_type ") + (m.model_type == ModelType::Word ? "WORD" : "CHAR") +
                    " is not supported (UNIGRAM and BPE are)");
  }
  if (m.treat_whitespace_as_suffix) bad_model_proto("trainer_spec.treat_whitespace_as_suffix is not supported");
  if (!m.denormalizer_charsmap.empty()) bad_model_proto("denormalizer_spec rules are not supported");

  // As SentencePiece's InitializePieces: pieces unique and non-empty, one
  // unknown piece, byte pieces only with byte_fallback and then all 256.
  std::unordered_map<std::string, std::int32_t> vocab, mergeable;
  std::int32_t unk_id = -1;
  std::vector<bool> bytes_found(256, false);
  std::vector<UnigramModel::Match> match(m.pieces.size(), UnigramModel::Match::Never);
  std::vector<std::string> user_defined;
  float max_score = FLT_MIN;  // as sentencepiece (so at least FLT_MIN)
  auto d = std::make_shared<detail::TokenizerData>();
  for (std::size_t i = 0; i < m.pieces.size(); ++i) {
    const auto& p = m.pieces[i];
    const auto id = static_cast<std::int32_t>(i);
    if (p.piece.empty()) bad_model_proto("piece " + std::to_string(i) + " is empty");
    if (!vocab.emplace(p.piece, id).second) bad_model_proto("piece '" + p.piece + "' is defined twice");
    switch (p.type) {
      case PieceType::Normal:
        match[i] = UnigramModel::Match::Normal;
        mergeable.emplace(p.piece, id);
        max_score = std::max(max_score, p.score);
        break;
      case PieceType::Unknown:
        if (unk_id >= 0) bad_model_proto("two unknown pieces ('" + m.pieces[unk_id].piece + "' and '" + p.piece + "')");
        unk_id = id;
        break;
      case PieceType::Control:
        d->control_ids.push_back(id);
        break;
      case PieceType::UserDefined:
        match[i] = UnigramModel::Match::UserDefined;
        user_defined.push_back(p.piece);
        break;
      case PieceType::Unused:
        if (m.model_type == ModelType::Bpe) {
          bad_model_proto("UNUSED piece '" + p.piece + "' (id " + std::to_string(i) + "): unused pieces are not supported in BPE models");
        }
        break;
      case PieceType::Byte: {
        if (!m.byte_fallback) bad_model_proto("byte piece '" + p.piece + "' but trainer_spec.byte_fallback is false");
        const int b = byte_of_piece(p.piece);
        if (b < 0) bad_model_proto("byte piece '" + p.piece + "' is not <0xNN>");
        bytes_found[b] = true;
        break;
      }
    }
  }
  if (unk_id < 0) bad_model_proto("no UNKNOWN piece");
  if (m.byte_fallback && std::count(bytes_found.begin(), bytes_found.end(), false) > 0) {
    bad_model_proto("trainer_spec.byte_fallback is true but not all 256 byte pieces <0x00>..<0xFF> are there");
  }
  if (mergeable.empty()) bad_model_proto("no NORMAL pieces");

  auto normalization = std::make_shared<SentencePieceNormalization>();
  if (!m.precompiled_charsmap.empty()) normalization->charsmap.emplace(m.precompiled_charsmap);
  normalization->user_defined = PrefixMatcher(user_defined);
  normalization->add_dummy_prefix = m.add_dummy_prefix;
  normalization->remove_extra_whitespaces = m.remove_extra_whitespaces;
  normalization->escape_whitespaces = m.escape_whitespaces;
  d->normalizer.emplace();
  d->normalizer->kind = Normalizer::Kind::SentencePiece;
  d->normalizer->sentencepiece = std::move(normalization);
  d->pre_tokenizer.kind = PreTokenizer::Kind::Sequence;  // empty: the whole text is one word

  if (m.model_type == ModelType::Unigram) {
    std::vector<std::pair<std::string, double>> pieces;
    pieces.reserve(m.pieces.size());
    for (const auto& p : m.pieces) {
      // A user-defined piece scores its length in bytes times the highest
      // normal score, minus 0.1 (float product, double difference, as sentencepiece).
      const bool user = p.type == PieceType::UserDefined;
      pieces.emplace_back(p.piece, user ? static_cast<double>(static_cast<float>(p.piece.size()) * max_score) - 0.1 : p.score);
    }
    if (vocabulary) {
      d->unigram.emplace(UnigramModel::sentencepiece(std::move(pieces), unk_id, m.byte_fallback, match, *vocabulary,
                                                     vocabulary_unk_id));
    } else {
      d->unigram.emplace(UnigramModel::sentencepiece(std::move(pieces), unk_id, m.byte_fallback, match));
    }
  } else {
    if (vocabulary) bad_model_proto("model_type BPE with an outside vocabulary (vocab.json) is not supported (UNIGRAM is)");
    std::vector<std::pair<std::string, std::string>> merges;
    std::vector<std::int32_t> ranks;
    sentencepiece_merges(m, mergeable, merges, ranks);
    BpeOptions options;
    options.byte_fallback = m.byte_fallback;
    options.fuse_unk = true;
    options.unk_token = m.pieces[unk_id].piece;
    options.whole_pieces = std::move(user_defined);
    d->bpe.emplace(std::move(vocab), std::move(merges), ranks, std::move(options));
  }

  auto decoding = std::make_shared<SentencePieceDecoding>();
  for (const std::int32_t id : d->control_ids) decoding->control.insert(m.pieces[id].piece);
  decoding->unk_piece = m.pieces[unk_id].piece;
  decoding->unk_surface = m.unk_surface;
  decoding->byte_pieces = m.byte_fallback;
  decoding->strip_first_space = m.add_dummy_prefix || m.remove_extra_whitespaces;
  decoding->strip_until_text = m.remove_extra_whitespaces;
  d->decoder.emplace();
  d->decoder->kind = Decoder::Kind::SentencePiece;
  d->decoder->sentencepiece = std::move(decoding);
  if (vocabulary) d->control_ids.clear();  // the model's ids: the outside vocabulary's specials replace them
  d->from_sentencepiece = true;
  return d;
}

}  // namespace detail

namespace {

using detail::AddedToken;
using detail::PostProcessor;
using detail::TemplateItem;
using detail::TokenizerData;

// A special token of the text's own ids: matched in the text, never normalized.
AddedToken special_token(std::int32_t id, const std::string& content) { return {id, content, true, false, false, false, false}; }

// "<s> $A" (and "<s> $A <s> $B") when the model has a <s> control piece.
void add_leading_bos(const SentencePieceModelProto& m, TokenizerData& d) {
  const auto bos = std::find_if(d.control_ids.begin(), d.control_ids.end(),
                                [&](std::int32_t id) { return m.pieces[id].piece == m.bos_piece; });
  if (bos == d.control_ids.end()) return;
  PostProcessor& post = d.post;
  post.kind = PostProcessor::Kind::Template;
  post.special_tokens[m.bos_piece] = {{*bos}, {m.bos_piece}};
  post.single = {{true, m.bos_piece, 0, 0}, {false, "", 0, 0}};
  post.pair = {{true, m.bos_piece, 0, 0}, {false, "", 0, 0}, {true, m.bos_piece, 0, 1}, {false, "", 1, 1}};
}

// T5Tokenizer: its special tokens (</s>, <unk>, <pad>) matched in the text,
// the sentinels, "$A </s>" (pair "$A </s> $B </s>").
void add_t5_tokens(const SentencePieceModelProto& m, TokenizerData& d) {
  constexpr int kExtraIds = 100;  // T5Tokenizer's default extra_ids
  std::int32_t eos = -1;
  bool has_sentinels = false;
  for (std::size_t i = 0; i < m.pieces.size(); ++i) {
    const auto& p = m.pieces[i];
    const auto id = static_cast<std::int32_t>(i);
    if (p.piece == m.eos_piece) eos = id;
    if (p.piece == "<extra_id_0>") has_sentinels = true;
    if (p.piece == m.eos_piece || p.piece == "<pad>" || p.type == SentencePieceModelProto::PieceType::Unknown) {
      d.added.push_back(special_token(id, p.piece));
    }
  }
  if (eos < 0) bad_model_proto("T5's tokenizer ends every text with '" + m.eos_piece + "', which is not a piece");
  if (!has_sentinels) {
    const auto pieces = static_cast<std::int32_t>(m.pieces.size());
    for (int i = kExtraIds - 1; i >= 0; --i) {
      AddedToken sentinel = special_token(pieces + kExtraIds - 1 - i, "<extra_id_" + std::to_string(i) + ">");
      sentinel.lstrip = sentinel.rstrip = true;  // as T5Tokenizer's AddedToken
      d.added.push_back(std::move(sentinel));
    }
  }
  PostProcessor& post = d.post;
  post.kind = PostProcessor::Kind::Template;
  post.special_tokens[m.eos_piece] = {{eos}, {m.eos_piece}};
  post.single = {{false, "", 0, 0}, {true, m.eos_piece, 0, 0}};
  post.pair = {{false, "", 0, 0}, {true, m.eos_piece, 0, 0}, {false, "", 1, 0}, {true, m.eos_piece, 0, 0}};
}

// XLMRobertaTokenizer's ids: fairseq's four specials first, every other piece
// one place later than in the model, <mask> last.
std::unordered_map<std::string, std::int32_t> fairseq_vocabulary(const SentencePieceModelProto& m) {
  std::unordered_map<std::string, std::int32_t> vocabulary;
  for (std::size_t i = 0; i < m.pieces.size(); ++i) vocabulary.emplace(m.pieces[i].piece, static_cast<std::int32_t>(i) + 1);
  std::int32_t id = 0;
  for (const char* special : {"<s>", "<pad>", "</s>", "<unk>"}) vocabulary[special] = id++;
  vocabulary["<mask>"] = static_cast<std::int32_t>(m.pieces.size()) + 1;
  return vocabulary;
}

// XLMRobertaTokenizer: the specials as added tokens (<mask> taking the space
// before it), "<s> $A </s>" (pair "<s> $A </s> </s> $B </s>").
void add_xlm_roberta_tokens(const std::unordered_map<std::string, std::int32_t>& vocabulary, TokenizerData& d) {
  for (const char* special : {"<s>", "<pad>", "</s>", "<unk>", "<mask>"}) d.added.push_back(special_token(vocabulary.at(special), special));
  d.added.back().lstrip = true;  // <mask>
  PostProcessor& post = d.post;
  post.kind = PostProcessor::Kind::Template;
  post.special_tokens["<s>"] = {{0}, {"<s>"}};
  post.special_tokens["</s>"] = {{2}, {"</s>"}};
  const TemplateItem bos{true, "<s>", 0, 0}, eos{true, "</s>", 0, 0};
  post.single = {bos, {false, "", 0, 0}, eos};
  post.pair = {bos, {false, "", 0, 0}, eos, eos, {false, "", 1, 0}, eos};
}

}  // namespace

Tokenizer Tokenizer::from_sentencepiece(std::string_view model_proto, SentencePieceConvention convention) {
  const SentencePieceModelProto m = SentencePieceModelProto::parse(model_proto);
  std::shared_ptr<TokenizerData> d;
  switch (convention) {
    case SentencePieceConvention::plain:
      d = detail::sentencepiece_pipeline(m, nullptr, -1);
      add_leading_bos(m, *d);
      break;
    case SentencePieceConvention::t5:
      d = detail::sentencepiece_pipeline(m, nullptr, -1);
      add_t5_tokens(m, *d);
      break;
    case SentencePieceConvention::xlm_roberta: {
      if (m.model_type != SentencePieceModelProto::ModelType::Unigram) {
        bad_model_proto("XLM-RoBERTa's ids are read from a Unigram model; this one is BPE");
      }
      const auto vocabulary = fairseq_vocabulary(m);
      d = detail::sentencepiece_pipeline(m, &vocabulary, vocabulary.at("<unk>"));
      add_xlm_roberta_tokens(vocabulary, *d);
      break;
    }
  }
  d->finish();
  return Tokenizer(std::move(d));
}

bool Tokenizer::is_tokenizer_json(std::string_view bytes) {
  const std::size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && bytes[first] == '{';
}

Tokenizer Tokenizer::from_file_bytes(std::string_view bytes, SentencePieceConvention convention) {
  return is_tokenizer_json(bytes) ? from_json(bytes) : from_sentencepiece(bytes, convention);
}

}  // namespace attnplay
