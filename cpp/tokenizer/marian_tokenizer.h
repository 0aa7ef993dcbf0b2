// Marian's tokenizer files, as Helsinki-NLP opus-mt folders ship them without
// a tokenizer.json: source.spm and target.spm (SentencePiece Unigram models,
// one per language) and vocab.json (the joint vocabulary: piece -> id, the
// ids the model's embeddings use, not the .spm files' own ids). Read as
// Hugging Face's MarianTokenizer reads them:
//   source text -> source.spm's normalization and search -> each piece's id in
//   vocab.json (a piece absent there, and an unknown run whose text is absent
//   there, -> <unk>'s id) -> </s> appended;
//   target text -> the same through target.spm, nothing appended;
//   ids -> pieces through vocab.json -> text as SentencePiece decodes ("▁" a space).
// </s>, <unk> and <pad> written in the text are those special tokens; a
// language code (">>fr<<", multilingual models) at the start of the text, or
// of a part between special tokens, is one token: its vocab.json id, else <unk>.
// Not supported, refused by name: separate source and target vocabularies
// (target_vocab.json), BPE .spm files.
// Not here: SentencePiece itself (sentencepiece_model.h), the folder (model/directory.h).
#pragma once

#include <string>
#include <string_view>

#include "tokenizer/tokenizer.h"

namespace attnplay {

// The bytes of the three files.
struct MarianTokenizerFiles {
  std::string source_spm, target_spm, vocab_json;
};

struct MarianTokenizers {
  Tokenizer source;  // source.spm + vocab.json; encode appends </s>
  Tokenizer target;  // target.spm + vocab.json; decode gives the translation's text
};

// Throws std::invalid_argument naming the file (source.spm, target.spm,
// vocab.json) that is malformed or lacks what is needed (<unk>, </s>).
MarianTokenizers read_marian_tokenizers(std::string_view source_spm, std::string_view target_spm,
                                        std::string_view vocab_json);
MarianTokenizers read_marian_tokenizers(const MarianTokenizerFiles& files);

}  // namespace attnplay
