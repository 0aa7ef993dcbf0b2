// `attnplay train-tokenizer --corpus PATH --vocab-size N --out tokenizer.json [--model bpe|wordpiece]`:
// trains byte-level BPE (default) or WordPiece and writes a Hugging Face tokenizer.json.
#include <chrono>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/tokenizer_file.h"
#include "tokenizer/trainer.h"

namespace attnplay::cli {

int run_train_tokenizer(const Args& args) {
  std::string corpus_path, out_path, model = "bpe";
  int vocab_size = 0;
  parse_flags(args, {text_flag("--corpus", corpus_path), int_flag("--vocab-size", vocab_size), text_flag("--out", out_path),
                     text_flag("--model", model)});
  if (corpus_path.empty() || out_path.empty() || vocab_size <= 0) throw UsageError("--corpus, --vocab-size (> 0) and --out are required");
  if (model != "bpe" && model != "wordpiece") throw std::invalid_argument("--model must be bpe or wordpiece");
  const std::string corpus = read_file(corpus_path);
  const auto start = std::chrono::steady_clock::now();
  Tokenizer tokenizer = [&] {
    if (model == "bpe") {
      BpeTrainerOptions options;
      options.vocab_size = static_cast<std::int32_t>(vocab_size);
      return train_byte_level_bpe(corpus, options);
    }
    WordPieceTrainerOptions options;
    options.vocab_size = static_cast<std::int32_t>(vocab_size);
    return train_wordpiece(corpus, options);
  }();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ofstream out(out_path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + out_path);
  out << tokenizer.to_json();
  std::cerr << "trained " << model << " tokenizer: " << tokenizer.vocab_size() << " tokens from " << corpus.size()
            << " bytes in " << seconds << " s -> " << out_path << "\n";
  return 0;
}

}  // namespace attnplay::cli
