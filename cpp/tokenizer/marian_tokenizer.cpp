// Implementation of tokenizer/marian_tokenizer.h: vocab.json read and checked,
// then each side's pipeline is its .spm's (sentencepiece_pipeline) with
// vocab.json's ids, </s>, <unk>, <pad> as added tokens, a leading language
// code read as MarianTokenizer reads it, and "$A </s>" as the source's post-processor.
#include "tokenizer/marian_tokenizer.h"

#include <stdexcept>
#include <string>
#include <unordered_map>

#include "json/json_text.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/sentencepiece_model.h"

namespace attnplay {
namespace {

using Vocabulary = std::unordered_map<std::string, std::int32_t>;

[[noreturn]] void fail_vocab(const std::string& message) { throw std::invalid_argument("vocab.json: " + message); }

Vocabulary read_vocabulary(std::string_view vocab_json) {
  nlohmann::json j;
  try {
    j = json_text::parse(vocab_json);
  } catch (const nlohmann::json::parse_error& e) {
    fail_vocab(std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) fail_vocab("expected an object of piece -> id");
  if (j.empty()) fail_vocab("the vocabulary is empty");
  Vocabulary vocabulary;
  std::unordered_map<std::int32_t, std::string> piece_of;
  for (const auto& [piece, id] : j.items()) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > INT32_MAX) {
      fail_vocab("the id of '" + piece + "' is not a non-negative integer");
    }
    const auto value = id.get<std::int32_t>();
    if (piece.empty()) fail_vocab("an empty piece (id " + std::to_string(value) + ")");
    const auto [it, fresh] = piece_of.emplace(value, piece);
    if (!fresh) fail_vocab("id " + std::to_string(value) + " is used by '" + it->second + "' and '" + piece + "'");
    vocabulary.emplace(piece, value);
  }
  for (const char* needed : {"<unk>", "</s>"}) {
    if (!vocabulary.count(needed)) fail_vocab(std::string("no '") + needed + "' entry (MarianTokenizer needs it)");
  }
  return vocabulary;
}

Tokenizer side(std::string_view spm, const char* file, const Vocabulary& vocabulary, bool append_eos) {
  try {
    const SentencePieceModelProto proto = SentencePieceModelProto::parse(spm);
    std::shared_ptr<detail::TokenizerData> d = detail::sentencepiece_pipeline(proto, &vocabulary, vocabulary.at("<unk>"));
    for (const char* special : {"</s>", "<unk>", "<pad>"}) {
      const auto it = vocabulary.find(special);
      if (it != vocabulary.end()) d->added.push_back({it->second, special, true, false, false, false, false});
    }
    d->language_code_unk_id = vocabulary.at("<unk>");
    auto decoding = std::make_shared<SentencePieceDecoding>(*d->decoder->sentencepiece);
    decoding->strip_white_space = true;  // convert_tokens_to_string's strip()
    d->decoder->sentencepiece = std::move(decoding);
    if (append_eos) {
      auto& post = d->post;
      post.kind = detail::PostProcessor::Kind::Template;
      post.special_tokens["</s>"] = {{vocabulary.at("</s>")}, {"</s>"}};
      post.single = {{false, "", 0, 0}, {true, "</s>", 0, 0}};
      post.pair = {{false, "", 0, 0}, {false, "", 1, 0}, {true, "</s>", 0, 0}};
    }
    d->finish();
    return Tokenizer(std::move(d));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(file) + ": " + e.what());
  }
}

}  // namespace

MarianTokenizers read_marian_tokenizers(std::string_view source_spm, std::string_view target_spm,
                                        std::string_view vocab_json) {
  const Vocabulary vocabulary = read_vocabulary(vocab_json);
  return {side(source_spm, "source.spm", vocabulary, true), side(target_spm, "target.spm", vocabulary, false)};
}

MarianTokenizers read_marian_tokenizers(const MarianTokenizerFiles& files) {
  return read_marian_tokenizers(files.source_spm, files.target_spm, files.vocab_json);
}

}  // namespace attnplay
