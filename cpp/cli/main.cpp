// `attnplay`: the native command-line tool. Dispatches to the sub-commands in
// commands.h and turns any error into a message on stderr and exit code 1.
#include <exception>
#include <iostream>

#include "cli/commands.h"

namespace {

void print_usage(std::ostream& out) {
  out << "attnplay " << ATTNPLAY_VERSION << " - attention playground core\n"
      << "usage:\n"
      << "  attnplay --version\n"
      << "  attnplay scratch [--spec FILE]   from-scratch attention of a JSON spec (stdin by default)\n"
      << "  attnplay tokenize --tokenizer PATH (--text TEXT | --file PATH) [--pair TEXT] [--no-special]\n"
      << "                                   ids, pieces, byte offsets and type ids as JSON\n"
      << "  attnplay train-tokenizer --corpus PATH --vocab-size N --out tokenizer.json [--model bpe|wordpiece]\n"
      << "  attnplay info --model DIR        architecture, parameter count and tensors of a model folder\n"
      << "  attnplay attention --model DIR (--text TEXT | --file PATH) [--pair TEXT] [--format json|npy|html] [--out FILE]\n"
      << "  attnplay attention --model DIR --ids 1,2,3 [--type-ids 0,0,1] [--format json|npy|html] [--out FILE]\n"
      << "                                   attention weights of every layer and head (html: a one-file page\n"
      << "                                   showing them, --view head|model|matrix)\n"
      << "  attnplay attention --model ENCODER_DECODER_DIR (--text TEXT | --ids 1,2,3) [--target TEXT | --decoder-ids 4,5,6]\n"
      << "                                   encoder, decoder and cross attentions (marian, bart) as JSON\n"
      << "  attnplay translate --model DIR (--text TEXT | --file PATH) [--beams N] [--max-new-tokens N] [--all-layers]\n"
      << "                                   translate each line; JSON with tokens and cross-attention\n"
      << "  attnplay heads --model DIR        head-pattern scores and labels of every head\n"
      << "  attnplay generate --model DIR (--text TEXT | --ids 1,2,3) [--max-new-tokens N]\n"
      << "                    [--greedy | --temperature T --top-k K --top-p P --seed S]\n"
      << "                                   continue a prompt (KV cache); JSON ids, text, tokens\n"
      << "  attnplay rollout --model DIR (--text TEXT | --ids 1,2,3) [--method rollout|flow]\n"
      << "                                   attention rollout or flow over all layers; JSON tokens and a T×T map\n"
      << "  attnplay lens --model DIR (--text TEXT | --ids 1,2,3) [--top-k K]\n"
      << "                                   logit lens: top-k tokens of every layer at every position as JSON\n";
}

}  // namespace

int main(int argc, char** argv) {
  const attnplay::cli::Args args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    print_usage(std::cout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "attnplay " << ATTNPLAY_VERSION << "\n";
    return 0;
  }
  const attnplay::cli::Args rest(args.begin() + 1, args.end());
  try {
    if (args[0] == "scratch") return attnplay::cli::run_scratch(rest);
    if (args[0] == "tokenize") return attnplay::cli::run_tokenize(rest);
    if (args[0] == "train-tokenizer") return attnplay::cli::run_train_tokenizer(rest);
    if (args[0] == "info") return attnplay::cli::run_info(rest);
    if (args[0] == "attention") return attnplay::cli::run_attention(rest);
    if (args[0] == "heads") return attnplay::cli::run_heads(rest);
    if (args[0] == "generate") return attnplay::cli::run_generate(rest);
    if (args[0] == "translate") return attnplay::cli::run_translate(rest);
    if (args[0] == "rollout") return attnplay::cli::run_rollout(rest);
    if (args[0] == "lens") return attnplay::cli::run_lens(rest);
  } catch (const std::exception& e) {
    std::cerr << "attnplay " << args[0] << ": " << e.what() << "\n";
    return 1;
  }
  std::cerr << "attnplay: unknown command '" << args[0] << "'\n";
  print_usage(std::cerr);
  return 2;
}
