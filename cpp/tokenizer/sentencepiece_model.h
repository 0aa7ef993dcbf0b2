// SentencePiece's .model file: a ModelProto protobuf (sentencepiece_model.proto
// of google/sentencepiece) read by a minimal hand-written wire-format parser
// (no protobuf library): the pieces with scores and types, the trainer_spec
// fields that change encoding (model_type, byte_fallback, the special pieces,
// unk_surface, treat_whitespace_as_suffix) and the normalizer_spec (name,
// precompiled_charsmap, add_dummy_prefix, remove_extra_whitespaces,
// escape_whitespaces). Other fields are skipped. Tokenizer::from_sentencepiece
// (sentencepiece_model.cpp) turns it into the usual pipeline.
// Not here: normalization (sentencepiece_normalizer.h), the models.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnplay {

struct SentencePieceModelProto {
  enum class PieceType { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };
  enum class ModelType { Unigram = 1, Bpe = 2, Word = 3, Char = 4 };
  struct Piece {
    std::string piece;
    float score = 0;
    PieceType type = PieceType::Normal;
  };

  std::vector<Piece> pieces;
  // trainer_spec
  ModelType model_type = ModelType::Unigram;
  bool byte_fallback = false;
  bool treat_whitespace_as_suffix = false;
  std::string bos_piece = "<s>", eos_piece = "</s>";
  std::string unk_surface = " \u2047 ";
  // normalizer_spec
  std::string normalizer_name;
  std::string precompiled_charsmap;  // empty: no rules (identity)
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
  // denormalizer_spec: rules applied after decoding (not supported when present)
  std::string denormalizer_charsmap;

  // Throws std::invalid_argument naming the byte and field of malformed or
  // truncated input.
  static SentencePieceModelProto parse(std::string_view bytes);
};

namespace detail {
struct TokenizerData;
// The pipeline of a .model, not finished and without a post-processor:
// normalizer, model, decoder, control pieces. With a vocabulary (Marian's
// vocab.json; Unigram models only) the model's tokens take their ids there
// (UnigramModel::sentencepiece) and the control pieces are left out (their
// ids are the model's). Throws std::invalid_argument as from_sentencepiece.
std::shared_ptr<TokenizerData> sentencepiece_pipeline(const SentencePieceModelProto& m,
                                                      const std::unordered_map<std::string, std::int32_t>* vocabulary,
                                                      std::int32_t vocabulary_unk_id);
}  // namespace detail

}  // namespace attnplay
