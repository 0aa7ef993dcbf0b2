// The SentencePiece benchmark (sentencepiece.bench.mjs) as a `npm run bench` section.
import { scriptSection } from './script-section.mjs';

export const sentencepiece = scriptSection({
  id: 'sentencepiece',
  title: 'SentencePiece encoding MB/s against Hugging Face tokenizers and sentencepiece',
  file: 'sentencepiece.bench.mjs',
  processes: 'one Node process; sentencepiece in a Python one',
});
