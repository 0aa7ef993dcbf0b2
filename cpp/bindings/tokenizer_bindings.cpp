// Embind bindings of the tokenizers (thin: JS <-> C++ conversion only). Text
// crosses as UTF-8 bytes (Uint8Array, made by web/engine/engine.js with TextEncoder),
// results as fresh typed arrays. Every entry point returns its result or
// { error: message } (guarded); web/engine/engine.js raises the errors.
#include <emscripten/bind.h>

#include <memory>
#include <optional>

#include "bindings/encoding_js.h"
#include "bindings/marshal.h"
#include "pipeline/tokens.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/trainer.h"

namespace attnplay::bindings {
namespace {

using TokenizerPtr = std::shared_ptr<Tokenizer>;

std::string string_from_bytes(const val& bytes) {
  const std::vector<std::uint8_t> v = bytes_from_js(bytes);
  return std::string(v.begin(), v.end());
}

val wrap(Tokenizer t) {
  val out = val::object();
  out.set("tokenizer", val(std::make_shared<Tokenizer>(std::move(t))));
  return out;
}

val tokenizer_from_json(const val& json_bytes) {
  return guarded([&] { return wrap(Tokenizer::from_json(string_from_bytes(json_bytes))); });
}

// tokenizer.json or a SentencePiece .model, by content; a .model read as
// model_type's tokenizer class reads it ("": its own ids).
val tokenizer_from_file_bytes(const val& bytes, const std::string& model_type) {
  return guarded([&] { return wrap(model_tokenizer(string_from_bytes(bytes), model_type)); });
}

// GPT-2's vocab.json and merges.txt, read as model_type's tokenizer class reads them ("": GPT2Tokenizer).
val tokenizer_from_gpt2_files(const val& vocab_json, const val& merges_txt, const std::string& model_type) {
  return guarded([&] {
    return wrap(model_tokenizer_from_gpt2_files(string_from_bytes(vocab_json), string_from_bytes(merges_txt), model_type));
  });
}

val tokenizer_from_bert_vocab(const val& vocab_txt, bool lowercase) {
  return guarded([&] { return wrap(Tokenizer::from_bert_vocab(string_from_bytes(vocab_txt), lowercase)); });
}

// spec: { vocabSize, model: "bpe" | "wordpiece", minFrequency? }
val train_tokenizer(const val& corpus, const val& spec) {
  return guarded([&] {
    const std::string text = string_from_bytes(corpus);
    const std::string model = has(spec, "model") ? spec["model"].as<std::string>() : "bpe";
    const auto vocab_size = spec["vocabSize"].as<std::int32_t>();
    if (model == "bpe") {
      BpeTrainerOptions options;
      options.vocab_size = vocab_size;
      if (has(spec, "minFrequency")) options.min_frequency = spec["minFrequency"].as<std::uint32_t>();
      return wrap(train_byte_level_bpe(text, options));
    }
    if (model != "wordpiece") throw std::invalid_argument("trainTokenizer: model must be \"bpe\" or \"wordpiece\"");
    WordPieceTrainerOptions options;
    options.vocab_size = vocab_size;
    if (has(spec, "minFrequency")) options.min_frequency = spec["minFrequency"].as<std::uint32_t>();
    return wrap(train_wordpiece(text, options));
  });
}

EncodeOptions encode_options(bool add_special_tokens, bool match_special_tokens) {
  EncodeOptions o;
  o.add_special_tokens = add_special_tokens;
  o.match_special_tokens = match_special_tokens;
  return o;
}

// -> { ids, typeIds, offsets, utf16Offsets, segments, special, pieces, displays }
val encode(const Tokenizer& t, const val& text, const val& pair, bool add_special_tokens, bool match_special_tokens) {
  return guarded([&] {
    const std::string a = string_from_bytes(text);
    std::optional<std::string> b;
    if (!pair.isNull() && !pair.isUndefined()) b = string_from_bytes(pair);
    const Encoding e = t.encode(a, b ? std::optional<std::string_view>(*b) : std::nullopt,
                                encode_options(add_special_tokens, match_special_tokens));
    return encoding_to_js(e);
  });
}

val encode_ids(const Tokenizer& t, const val& text, bool add_special_tokens, bool match_special_tokens) {
  return guarded([&] {
    return typed_array("Int32Array",
                       t.encode_ids(string_from_bytes(text), encode_options(add_special_tokens, match_special_tokens)));
  });
}

val decode(const Tokenizer& t, const val& ids, bool skip_special_tokens) {
  return guarded([&] {
    return bytes_to_js(t.decode(emscripten::convertJSArrayToNumberVector<std::int32_t>(ids), skip_special_tokens));
  });
}

val display(const Tokenizer& t, std::int32_t id) {
  return guarded([&] { return val(t.display(id)); });
}

val token_to_id(const Tokenizer& t, const std::string& piece) {
  const std::optional<std::int32_t> id = t.token_to_id(piece);
  return id ? val(*id) : val::null();
}

val id_to_token(const Tokenizer& t, std::int32_t id) {
  const std::optional<std::string> piece = t.id_to_token(id);
  return piece ? val(*piece) : val::null();
}

std::int32_t vocab_size(const Tokenizer& t) { return t.vocab_size(); }
std::string model_type(const Tokenizer& t) { return t.model_type(); }
val to_json(const Tokenizer& t) {
  return guarded([&] { return bytes_to_js(t.to_json()); });
}

}  // namespace
}  // namespace attnplay::bindings

EMSCRIPTEN_BINDINGS(attnplay_tokenizer) {
  using namespace attnplay::bindings;
  emscripten::class_<attnplay::Tokenizer>("Tokenizer")
      .smart_ptr<TokenizerPtr>("TokenizerPtr")
      .function("encode", &encode)
      .function("encodeIds", &encode_ids)
      .function("decode", &decode)
      .function("display", &display)
      .function("tokenToId", &token_to_id)
      .function("idToToken", &id_to_token)
      .function("vocabSize", &vocab_size)
      .function("modelType", &model_type)
      .function("toJson", &to_json);
  emscripten::function("tokenizerFromJson", &tokenizer_from_json);
  emscripten::function("tokenizerFromFileBytes", &tokenizer_from_file_bytes);
  emscripten::function("tokenizerFromGpt2Files", &tokenizer_from_gpt2_files);
  emscripten::function("tokenizerFromBertVocab", &tokenizer_from_bert_vocab);
  emscripten::function("trainTokenizer", &train_tokenizer);
}
