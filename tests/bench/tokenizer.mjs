// The tokenizer benchmark (tokenizer.bench.mjs, which also runs on its own) as
// a `npm run bench` section: run in a child process, its tables captured.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./tokenizer.bench.mjs', import.meta.url));

export const tokenizer = {
  id: 'tokenizer',
  title: 'Tokenizers: GPT-2 encoding MB/s against tiktoken, gpt-tokenizer, js-tiktoken',
  async run({ log }) {
    const output = execFileSync(process.execPath, [script], { encoding: 'utf8', maxBuffer: 1 << 24 });
    log('tokenizer benchmark done');
    return { markdown: `Command: \`node tests/bench/tokenizer.bench.mjs\` (one Node process).\n${output.trimEnd()}` };
  },
};
