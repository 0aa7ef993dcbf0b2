// Implementation of pipeline/tokens.h.
#include "pipeline/tokens.h"

#include <algorithm>
#include <stdexcept>

namespace attnplay {

Tokenizer model_tokenizer(std::string_view tokenizer_file, const std::string& model_type) {
  if (Tokenizer::is_tokenizer_json(tokenizer_file)) return Tokenizer::from_json(tokenizer_file);
  if (model_type == "camembert") {
    throw std::invalid_argument("a CamemBERT model's SentencePiece file is not read (CamembertTokenizer numbers its "
                                "tokens its own way): give the model's tokenizer.json");
  }
  const SentencePieceConvention convention = model_type == "t5" || model_type == "mt5" ? SentencePieceConvention::t5
                                           : model_type == "xlm-roberta"               ? SentencePieceConvention::xlm_roberta
                                                                                       : SentencePieceConvention::plain;
  return Tokenizer::from_sentencepiece(tokenizer_file, convention);
}

Tokenizer model_tokenizer_from_gpt2_files(std::string_view vocab_json, std::string_view merges_txt,
                                          const std::string& model_type) {
  const Gpt2FilesConvention convention = model_type == "opt"                              ? Gpt2FilesConvention::opt
                                       : model_type == "roberta" || model_type == "bart" ? Gpt2FilesConvention::roberta
                                                                                         : Gpt2FilesConvention::gpt2;
  return Tokenizer::from_gpt2_files(vocab_json, merges_txt, convention);
}

std::optional<Tokenizer> folder_tokenizer(const ModelFiles& files, const std::string& model_type) {
  if (files.tokenizer) return model_tokenizer(*files.tokenizer, model_type);
  if (files.gpt2_tokenizer) {
    return model_tokenizer_from_gpt2_files(files.gpt2_tokenizer->vocab_json, files.gpt2_tokenizer->merges_txt, model_type);
  }
  return std::nullopt;
}

bool truncate_encoding(Encoding& encoding, std::size_t max_tokens, bool keep_closing_special) {
  std::vector<Token>& tokens = encoding.tokens;
  if (tokens.size() <= max_tokens) return false;
  const Token last = tokens.back();
  const bool keep_last = keep_closing_special && last.special;
  tokens.resize(keep_last ? max_tokens - 1 : max_tokens);
  if (keep_last) tokens.push_back(last);
  return true;
}

std::string display_of(const Tokenizer& tokenizer, std::int32_t id) {
  return id >= 0 && id < tokenizer.vocab_size() ? tokenizer.display(id) : "<no token: id " + std::to_string(id) + ">";
}

Decoding decode_with_offsets(const Tokenizer& tokenizer, const std::vector<std::int32_t>& ids, bool skip_special_tokens) {
  Decoding out;
  out.text = tokenizer.decode(ids, skip_special_tokens);
  // utf16_before[b]: the UTF-16 units of the text's first b bytes (a
  // character's bytes all count where it starts; 4-byte ones as 2 units).
  std::vector<std::uint32_t> utf16_before(out.text.size() + 1, 0);
  std::uint32_t units = 0;
  for (std::size_t b = 0; b < out.text.size(); ++b) {
    const auto byte = static_cast<unsigned char>(out.text[b]);
    if ((byte & 0xC0) != 0x80) units += byte >= 0xF0 ? 2 : 1;  // a character's first byte
    utf16_before[b + 1] = units;
  }
  std::uint32_t written = 0;  // bytes of the text that the tokens so far wrote
  for (std::size_t i = 0; i < ids.size(); ++i) {
    // Where the decoded prefix stops agreeing with the whole text.
    const std::string prefix = tokenizer.decode(std::vector<std::int32_t>(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(i) + 1), skip_special_tokens);
    const auto agreed = static_cast<std::uint32_t>(std::mismatch(prefix.begin(), prefix.end(), out.text.begin(), out.text.end()).first - prefix.begin());
    Token token;
    token.id = ids[i];
    token.piece = tokenizer.id_to_token(ids[i]).value_or("");
    token.display = display_of(tokenizer, ids[i]);
    token.byte_begin = written;
    written = std::max(written, agreed);
    token.byte_end = written;
    token.utf16_begin = utf16_before[token.byte_begin];
    token.utf16_end = utf16_before[token.byte_end];
    token.special = tokenizer.is_special(ids[i]);
    out.encoding.tokens.push_back(std::move(token));
  }
  return out;
}

}  // namespace attnplay
