// The tokens of a model run, between the tokenizer and the model: a text's
// tokens truncated to the model's positions, the names of ids past a
// tokenizer's entries, and ids decoded with the part of the text each wrote
// (an encoder-decoder's translation). Used by text_model.h and
// translation_model.h, and which tokenizer a model's file makes.
// Not here: tokenizing or decoding itself (tokenizer/tokenizer.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/directory.h"
#include "tokenizer/tokenizer.h"

namespace attnplay {

// The tokenizer of a model folder's tokenizer file: tokenizer.json as it is,
// a SentencePiece .model (tokenizer.model, spiece.model,
// sentencepiece.bpe.model) read as the model_type's transformers tokenizer
// class reads it: T5Tokenizer for t5 and mt5, XLMRobertaTokenizer for
// xlm-roberta, the model's own ids (LlamaTokenizer, GemmaTokenizer) for the
// rest. Refused: a CamemBERT .model (CamembertTokenizer's ids are its own).
Tokenizer model_tokenizer(std::string_view tokenizer_file, const std::string& model_type);

// GPT-2's vocab.json and merges.txt as the model_type's tokenizer class
// reads them: OPT's GPT2Tokenizer with </s> first, RobertaTokenizer (roberta,
// bart: <s> ... </s>), GPT2Tokenizer's plain ids for the rest.
Tokenizer model_tokenizer_from_gpt2_files(std::string_view vocab_json, std::string_view merges_txt,
                                          const std::string& model_type);

// The tokenizer of a model folder's files (model/directory.h): its tokenizer
// file (model_tokenizer), else GPT-2's files (model_tokenizer_from_gpt2_files);
// none without either (Marian's files make a pair: tokenizer/marian_tokenizer.h).
std::optional<Tokenizer> folder_tokenizer(const ModelFiles& files, const std::string& model_type);

// Keeps the first max_tokens tokens of `encoding`, the last of them its
// closing special token when keep_closing_special (BERT's [SEP], Marian's
// </s>) and it has one; returns whether any token was dropped.
bool truncate_encoding(Encoding& encoding, std::size_t max_tokens, bool keep_closing_special);

// The display string of vocabulary id `id`, as tokens are named; an id past
// the tokenizer's entries (an embedding may have more rows: Qwen2.5 pads
// 151,665 tokens to 151,936) is named "<no token: id N>".
std::string display_of(const Tokenizer& tokenizer, std::int32_t id);

// tokenizer.decode(ids, skip_special_tokens) with one Token per id: its
// piece, display string and the bytes (and UTF-16 units) of the decoded text
// that it wrote, as encode() gives a text's tokens (segment 0). A token that
// adds nothing (a skipped special token; with byte fallback, the first bytes
// of a character that a later token completes) has an empty span where the
// text stands after it. Decodes each prefix of the ids: O(n²) in their number.
struct Decoding {
  std::string text;
  Encoding encoding;
};
Decoding decode_with_offsets(const Tokenizer& tokenizer, const std::vector<std::int32_t>& ids, bool skip_special_tokens);

}  // namespace attnplay
