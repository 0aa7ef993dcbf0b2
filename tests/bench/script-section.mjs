// A `npm run bench` section made of a bench script that also runs on its own
// (tokenizer.bench.mjs, sentencepiece.bench.mjs): run in a child Node
// process, its printed tables captured as the section's Markdown.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** { id, title, run } for the script `file` of this folder; `processes` says what ran it. */
export function scriptSection({ id, title, file, processes = 'one Node process' }) {
  const script = fileURLToPath(new URL(`./${file}`, import.meta.url));
  return {
    id,
    title,
    async run({ log }) {
      const output = execFileSync(process.execPath, [script], { encoding: 'utf8', maxBuffer: 1 << 24 });
      log(`${file} done`);
      return { markdown: `Command: \`node tests/bench/${file}\` (${processes}).\n${output.trimEnd()}` };
    },
  };
}
