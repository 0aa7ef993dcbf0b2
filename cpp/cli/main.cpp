// `attnplay`: the native command-line tool. A table of its sub-commands
// (commands.h), each a name, a function and its usage; dispatches to one and
// turns a UsageError (cli/flags.h) into the message and the command's usage
// with exit code 2, and any other error into a message with exit code 1.
#include <exception>
#include <iostream>
#include <string_view>

#include "cli/commands.h"
#include "cli/flags.h"

namespace {

using attnplay::cli::Args;

struct Command {
  std::string_view name;
  int (*run)(const Args&);
  std::string_view usage;  // its lines of `attnplay --help`: the synopsis, then what it does
};

const Command kCommands[] = {
    {"scratch", attnplay::cli::run_scratch,
     "attnplay scratch [--spec FILE]   from-scratch attention of a JSON spec (stdin by default)\n"},
    {"tokenize", attnplay::cli::run_tokenize,
     "attnplay tokenize --tokenizer PATH (--text TEXT | --file PATH) [--pair TEXT] [--no-special]\n"
     "                                   ids, pieces, byte offsets and type ids as JSON\n"},
    {"train-tokenizer", attnplay::cli::run_train_tokenizer,
     "attnplay train-tokenizer --corpus PATH --vocab-size N --out tokenizer.json [--model bpe|wordpiece]\n"},
    {"info", attnplay::cli::run_info,
     "attnplay info --model DIR        architecture, parameter count and tensors of a model folder\n"},
    {"attention", attnplay::cli::run_attention,
     "attnplay attention --model DIR (--text TEXT | --file PATH) [--pair TEXT] [--format json|npy|html] [--view head|model|matrix] [--out FILE]\n"
     "attnplay attention --model DIR --ids 1,2,3 [--type-ids 0,0,1] [--format json|npy|html] [--view head|model|matrix] [--out FILE]\n"
     "                                   attention weights of every layer and head (html: a one-file page\n"
     "                                   showing them in the view --view names)\n"
     "attnplay attention --model ENCODER_DECODER_DIR (--text TEXT | --file PATH | --ids 1,2,3)\n"
     "                   [--target TEXT | --decoder-ids 4,5,6] [--out FILE]\n"
     "                                   encoder, decoder and cross attentions (marian, bart, t5, mt5) as JSON\n"
     "attnplay attention --model VISION_DIR --image PATH [--format json|npy] [--out FILE]\n"
     "                                   a picture (PNG, JPEG, BMP, GIF) through a vision transformer (vit, deit,\n"
     "                                   dinov2, dinov2_with_registers): its patches' attention, the patch grid\n"
     "                                   and a classifier's top 5 labels\n"
     "  options (JSON adds them; 0-based layers and heads):\n"
     "    --ablate L:H[,L:H...]  knock these heads out    --ablation zero|mean  (default zero)\n"
     "                (encoder-decoders: PART:L:H, PART encoder, decoder or cross)\n"
     "    --top-k K   \"top_k\": the K best next tokens per position (BERT: per [MASK]; vision: labels)\n"
     "    --prediction-positions P[,P...]  causal: top-k at these positions only (-1: the last),\n"
     "                \"prediction_positions\" names them\n"
     "    --token-loss  \"token_loss\": -log p(next token) per position (causal models and decoders)\n"
     "    --rank-heads  \"head_ranking\": every head by the loss increase its ablation causes\n"},
    {"translate", attnplay::cli::run_translate,
     "attnplay translate --model DIR (--text TEXT | --file PATH) [--beams N] [--max-new-tokens N] [--all-layers]\n"
     "                   [--ablate PART:L:H[,...]] [--ablation zero|mean]\n"
     "                                   translate each line; JSON with tokens and cross-attention\n"},
    {"heads", attnplay::cli::run_heads,
     "attnplay heads --model DIR [--sequences N] [--seed S]\n"
     "                                   head-pattern scores and labels of every head\n"},
    {"generate", attnplay::cli::run_generate,
     "attnplay generate --model DIR (--text TEXT | --ids 1,2,3) [--max-new-tokens N]\n"
     "                  [--greedy | --temperature T --top-k K --top-p P --seed S]\n"
     "                                   continue a prompt (KV cache); JSON ids, text, tokens\n"},
    {"rollout", attnplay::cli::run_rollout,
     "attnplay rollout --model DIR (--text TEXT | --ids 1,2,3) [--method rollout|flow]\n"
     "                                   attention rollout or flow over all layers; JSON tokens and a T×T map\n"},
    {"lens", attnplay::cli::run_lens,
     "attnplay lens --model DIR (--text TEXT | --ids 1,2,3) [--top-k K]\n"
     "                                   logit lens: top-k tokens of every layer at every position as JSON\n"},
};

void print_usage(std::ostream& out) {
  out << "attnplay " << ATTNPLAY_VERSION << " - attention playground core\n"
      << "usage:\n"
      << "  attnplay --version\n";
  for (const Command& command : kCommands) {
    std::string_view usage = command.usage;
    while (!usage.empty()) {  // each line indented
      const std::size_t end = usage.find('\n');
      out << "  " << usage.substr(0, end) << "\n";
      usage.remove_prefix(end == std::string_view::npos ? usage.size() : end + 1);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    print_usage(std::cout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "attnplay " << ATTNPLAY_VERSION << "\n";
    return 0;
  }
  for (const Command& command : kCommands) {
    if (command.name != args[0]) continue;
    try {
      return command.run(Args(args.begin() + 1, args.end()));
    } catch (const attnplay::cli::UsageError& e) {
      std::cerr << "attnplay " << args[0] << ": " << e.what() << "\nusage: " << command.usage;
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "attnplay " << args[0] << ": " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "attnplay: unknown command '" << args[0] << "'\n";
  print_usage(std::cerr);
  return 2;
}
