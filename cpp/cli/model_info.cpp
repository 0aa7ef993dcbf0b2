// `attnplay info --model DIR`: the architecture of a Hugging Face model folder
// (from config.json), its parameter count and every tensor of its checkpoint
// (model.safetensors or the shards of a sharded one, each tensor's file named).
// The model is fully loaded, so anything wrong with the folder is reported.
// Encoder-decoders (marian, bart, t5, mt5) list both sides; vision
// transformers their picture, patches, learned tokens, labels and image processor.
#include <iomanip>
#include <iostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "model/directory.h"
#include "model/model.h"
#include "model/seq2seq.h"
#include "pipeline/image_model.h"

namespace attnplay::cli {
namespace {

void print_image_model(const ImageModel& model) {
  const ModelConfig& c = model.model().config();
  const VisionConfig& v = c.vision;
  const ImageProcessorConfig& p = model.processor();
  std::cout << "model_type: " << c.model_type << " (vision, bidirectional)\n"
            << "layers: " << c.layers << "\nheads: " << c.heads << "\nwidth: " << c.width
            << "\nhead width: " << c.head_width() << "\nMLP width: " << c.inner << "\nimage size: " << v.image_width << "×"
            << v.image_height << "\npatch: " << v.patch_width << "×" << v.patch_height << "\nlearned tokens: "
            << v.prefix_tokens() << " (CLS" << (v.distillation_token ? ", distillation" : "")
            << (v.registers ? ", " + std::to_string(v.registers) + " registers" : "") << ")\nlabels: "
            << (model.model().weights().vision.classifier.empty() ? std::string("none (no classifier)") : std::to_string(v.labels.size()))
            << "\nimage processor: " << p.processor_type << ", " << resampling_name(p.resample) << "\nparameters: "
            << model.model().parameter_count() << "\n";
}

void print_model(const Model& model) {
  const ModelConfig& c = model.config();
  std::cout << "model_type: " << c.model_type << (c.causal() ? " (causal)" : " (bidirectional)") << "\n"
            << "layers: " << c.layers << "\nheads: " << c.heads << "\nwidth: " << c.width
            << "\nhead width: " << c.head_width() << "\nMLP width: " << c.inner << "\npositions: " << c.positions
            << "\nvocabulary: " << c.vocab_size << "\n";
  if (!c.causal()) {
    std::cout << "token types: " << c.type_vocab_size << "\nmasked-LM head: " << (model.has_mlm_head() ? "yes" : "no")
              << "\n";
  }
  std::cout << "parameters: " << model.parameter_count() << "\n";
}

void print_seq2seq(const Seq2SeqModel& model) {
  const Seq2SeqConfig& c = model.config();
  std::cout << "model_type: " << c.model_type << " (encoder-decoder)\n"
            << "encoder layers: " << c.encoder_layers << "\nencoder heads: " << c.encoder_heads
            << "\ndecoder layers: " << c.decoder_layers << "\ndecoder heads: " << c.decoder_heads
            << "\nwidth: " << c.width << "\nfeed-forward width: " << c.encoder_inner << " (encoder), " << c.decoder_inner
            << " (decoder)\npositions: " << c.positions << "\nvocabulary: " << c.vocab_size
            << "\ndecoder start token: " << c.decoder_start_token_id << "\nparameters: " << model.parameter_count() << "\n";
}

}  // namespace

int run_info(const Args& args) {
  std::string dir;
  parse_flags(args, {text_flag("--model", dir)});
  if (dir.empty()) throw UsageError("--model is required");
  const ModelFiles files = read_model_directory(dir);
  if (!is_encoder_decoder_config(files.config_json) && parse_config(files.config_json).is_vision()) {
    print_image_model(ImageModel::from_checkpoint(files.config_json, files.checkpoint, files.preprocessor_config.value_or("")));
  } else {
    if (is_encoder_decoder_config(files.config_json)) {
      print_seq2seq(Seq2SeqModel::from_checkpoint(files.config_json, files.checkpoint));
    } else {
      print_model(Model::from_checkpoint(files.config_json, files.checkpoint));
    }
    std::cout << "tokenizer: "
              << (files.tokenizer           ? files.tokenizer_file
                  : files.marian_tokenizer ? "source.spm, target.spm, vocab.json (Marian)"
                  : files.gpt2_tokenizer   ? "vocab.json, merges.txt (GPT-2's files)"
                                           : "absent")
              << "\n";
  }
  const Checkpoint& checkpoint = files.checkpoint;
  std::cout << "tensors: " << checkpoint.tensors().size();
  if (checkpoint.file_count() > 1) std::cout << " in " << checkpoint.file_count() << " shards";
  std::cout << "\n";
  for (const auto& [name, info] : checkpoint.tensors()) {
    std::cout << "  " << std::left << std::setw(56) << name << " " << std::setw(5) << info.dtype << " [";
    for (std::size_t i = 0; i < info.shape.size(); ++i) std::cout << (i ? ", " : "") << info.shape[i];
    std::cout << "]";
    if (checkpoint.file_count() > 1) std::cout << " " << checkpoint.file_of(name);
    std::cout << "\n";
  }
  return 0;
}

}  // namespace attnplay::cli
