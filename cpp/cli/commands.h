// Sub-commands of the `attnplay` command-line tool, one file each.
// Each takes the arguments after its name and returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace attnplay::cli {

using Args = std::vector<std::string>;

// attnplay scratch [--spec FILE]   (JSON spec on stdin when FILE is omitted or "-")
int run_scratch(const Args& args);

// attnplay tokenize --tokenizer PATH (--text TEXT | --file PATH) [--pair TEXT] [--no-special]
int run_tokenize(const Args& args);

// attnplay train-tokenizer --corpus PATH --vocab-size N --out tokenizer.json [--model bpe|wordpiece]
int run_train_tokenizer(const Args& args);

// attnplay info --model DIR
int run_info(const Args& args);

// attnplay attention --model DIR --ids 1,2,3 [--type-ids ...] [--format json|npy|html] [--view V] [--out FILE]
int run_attention(const Args& args);

// attnplay generate --model DIR (--text TEXT | --ids 1,2,3) [--max-new-tokens N]
//                   [--greedy | --temperature T --top-k K --top-p P --seed S]
int run_generate(const Args& args);

// attnplay translate --model DIR (--text TEXT | --file PATH) [--beams N] [--max-new-tokens N] [--all-layers]
int run_translate(const Args& args);

// attnplay heads --model DIR [--sequences N] [--seed S]
int run_heads(const Args& args);

// attnplay rollout --model DIR (--text TEXT | --ids 1,2,3) [--method rollout|flow]
int run_rollout(const Args& args);

// attnplay lens --model DIR (--text TEXT | --ids 1,2,3) [--top-k K]
int run_lens(const Args& args);

}  // namespace attnplay::cli
