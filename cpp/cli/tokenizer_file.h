// Loading a tokenizer from a path for the CLI: tokenizer.json, a SentencePiece
// .model (told apart by content), BERT's vocab.txt, or GPT-2's vocab.json /
// encoder.json with merges.txt / vocab.bpe beside it. Also reading whole files.
#pragma once

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "tokenizer/tokenizer.h"

namespace attnplay::cli {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

inline Tokenizer load_tokenizer_file(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name == "vocab.txt") return Tokenizer::from_bert_vocab(read_file(path));
  if (name == "vocab.json" || name == "encoder.json") {
    for (const char* merges : {"merges.txt", "vocab.bpe"}) {
      if (file_exists(dir + merges)) return Tokenizer::from_gpt2_files(read_file(path), read_file(dir + merges));
    }
    throw std::runtime_error("no merges.txt or vocab.bpe beside " + path);
  }
  return Tokenizer::from_file_bytes(read_file(path));
}

}  // namespace attnplay::cli
