// Decoders: turn the pieces of ids back into text, as Hugging Face
// `tokenizers` does (same tokenizer.json form): each decoder maps the list of
// pieces to a new list (decode_chain), the results are concatenated.
// ByteLevel (byte-level characters back to bytes, kept exactly even when not
// UTF-8), WordPiece (## joins, optional cleanup), ByteFallback (<0xNN> pieces
// to bytes, U+FFFD per byte when they are not UTF-8), Fuse, Strip, Replace
// (String pattern), Metaspace and Sequence.
// Not here: which pieces are skipped (tokenizer.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tokenizer/pre_tokenizer.h"

namespace attnplay {

struct Decoder {
  enum class Kind { ByteLevel, WordPiece, ByteFallback, Fuse, Strip, Replace, Metaspace, Sequence } kind = Kind::ByteLevel;
  std::string prefix = "##";  // WordPiece
  bool cleanup = true;        // WordPiece
  std::string content;        // Strip: the character removed; Replace: the replacement
  std::size_t start = 0, stop = 0;  // Strip: at most this many from each end
  std::string pattern;        // Replace
  std::string replacement = "\u2581";                    // Metaspace
  PrependScheme prepend_scheme = PrependScheme::Always;  // Metaspace
  bool split = true;                                     // Metaspace (kept for writing)
  std::vector<Decoder> sequence;                         // Sequence

  static Decoder from_json(const nlohmann::json& j);
  nlohmann::ordered_json to_json() const;
  // Maps pieces as this decoder does.
  void decode_chain(std::vector<std::string>& pieces) const;
};

}  // namespace attnplay
