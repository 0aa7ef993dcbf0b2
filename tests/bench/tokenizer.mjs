// The tokenizer benchmark (tokenizer.bench.mjs) as a `npm run bench` section.
import { scriptSection } from './script-section.mjs';

export const tokenizer = scriptSection({
  id: 'tokenizer',
  title: 'Tokenizers: GPT-2 encoding MB/s against tiktoken, gpt-tokenizer, js-tiktoken',
  file: 'tokenizer.bench.mjs',
});
