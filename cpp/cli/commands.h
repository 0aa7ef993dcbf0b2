// Sub-commands of the `attnplay` command-line tool, one file each. Each
// takes the arguments after its name (read with cli/flags.h's table) and
// returns the process exit code; main.cpp's command table holds each one's
// name and usage.
#pragma once

#include <string>
#include <vector>

namespace attnplay::cli {

using Args = std::vector<std::string>;

int run_scratch(const Args& args);          // attnplay scratch
int run_tokenize(const Args& args);         // attnplay tokenize
int run_train_tokenizer(const Args& args);  // attnplay train-tokenizer
int run_info(const Args& args);             // attnplay info
int run_attention(const Args& args);        // attnplay attention
int run_generate(const Args& args);         // attnplay generate
int run_translate(const Args& args);        // attnplay translate
int run_heads(const Args& args);            // attnplay heads
int run_rollout(const Args& args);          // attnplay rollout
int run_lens(const Args& args);             // attnplay lens

}  // namespace attnplay::cli
