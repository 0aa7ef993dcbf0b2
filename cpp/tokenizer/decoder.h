// Decoders: turn the pieces of ids back into text, as Hugging Face
// `tokenizers` does (same tokenizer.json form): each decoder maps the list of
// pieces to a new list (decode_chain), the results are concatenated.
// ByteLevel (byte-level characters back to bytes, kept exactly even when not
// UTF-8), WordPiece (## joins, optional cleanup), ByteFallback (<0xNN> pieces
// to bytes, U+FFFD per byte when they are not UTF-8), Fuse, Strip, Replace
// (String pattern), Metaspace and Sequence; and SentencePiece, the decoder
// of a SentencePiece .model as its library runs it, which has no
// tokenizer.json form.
// Not here: which pieces are skipped (tokenizer.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tokenizer/pre_tokenizer.h"

namespace attnplay {

// SentencePiece's Decode (google/sentencepiece 0.1.97): control pieces give
// nothing, the unknown piece its surface (" ⁇ "), runs of byte pieces their
// characters (U+FFFD for each byte that is not part of one), "▁" a space,
// less the first piece's leading "▁" (with remove_extra_whitespaces: every
// piece's until some text came out).
struct SentencePieceDecoding {
  std::unordered_set<std::string> control;
  std::string unk_piece = "<unk>";
  std::string unk_surface = " \u2047 ";
  bool byte_pieces = false;        // byte_fallback: "<0xNN>" pieces are bytes
  bool strip_first_space = true;   // add_dummy_prefix or remove_extra_whitespaces
  bool strip_until_text = true;    // remove_extra_whitespaces
  bool strip_white_space = false;  // MarianTokenizer: leading and trailing white space of the text removed
};

struct Decoder {
  enum class Kind { ByteLevel, WordPiece, ByteFallback, Fuse, Strip, Replace, Metaspace, Sequence, SentencePiece } kind = Kind::ByteLevel;
  std::string prefix = "##";  // WordPiece
  bool cleanup = true;        // WordPiece
  std::string content;        // Strip: the character removed; Replace: the replacement
  std::size_t start = 0, stop = 0;  // Strip: at most this many from each end
  std::string pattern;        // Replace
  std::string replacement = "\u2581";                    // Metaspace
  PrependScheme prepend_scheme = PrependScheme::Always;  // Metaspace
  bool split = true;                                     // Metaspace (kept for writing)
  std::vector<Decoder> sequence;                         // Sequence
  std::shared_ptr<const SentencePieceDecoding> sentencepiece;  // SentencePiece

  static Decoder from_json(const nlohmann::json& j);
  // Throws std::invalid_argument for SentencePiece.
  nlohmann::ordered_json to_json() const;
  // Maps pieces as this decoder does.
  void decode_chain(std::vector<std::string>& pieces) const;
};

}  // namespace attnplay
