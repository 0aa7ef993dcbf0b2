// `npm run bench`: runs the benchmark sections in one process, prints each
// as a Markdown table and rewrites that section of RESULTS.md (the repository's root)
// (between its <!-- bench:ID --> markers), with the machine and the command.
//   node tests/bench/run.mjs            all sections
//   node tests/bench/run.mjs gemm       only the named sections
// A section is { id, title, run({ log }) -> { markdown, failed? } }; add new
// ones (forward pass, tokenizer, page) to SECTIONS.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

import { ablation } from './ablation.mjs';
import { analysis } from './analysis.mjs';
import { decode } from './decode.mjs';
import { gemm } from './gemm.mjs';
import { gemma } from './gemma.mjs';
import { house } from './house.mjs';
import { hubPage } from './hub-page.mjs';
import { llama, qwenMemory } from './llama.mjs';
import { notebook } from './notebook.mjs';
import { forward } from './forward.mjs';
import { page } from './page.mjs';
import { pageLoad } from './page-load.mjs';
import { payload } from './payload.mjs';
import { sentencepiece } from './sentencepiece.mjs';
import { tokenizer } from './tokenizer.mjs';
import { translation } from './translation.mjs';
import { vision } from './vision.mjs';
import { weightsGemm } from './weights-gemm.mjs';

const SECTIONS = [gemm, weightsGemm, payload, house, forward, ablation, translation, llama, qwenMemory, gemma, decode, tokenizer, sentencepiece, page, pageLoad, hubPage, analysis, notebook, vision];

const resultsPath = fileURLToPath(new URL('../../RESULTS.md', import.meta.url));
const wanted = process.argv.slice(2);
const unknown = wanted.filter((id) => !SECTIONS.some((s) => s.id === id));
if (unknown.length > 0) {
  console.error(`bench: unknown section(s) ${unknown.join(', ')}; known: ${SECTIONS.map((s) => s.id).join(', ')}`);
  process.exit(2);
}

function machine() {
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(2)).join(', ');
  return `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} logical cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
    `${os.type()} ${os.release()}, Node ${process.version}; load average at the end: ${load}`;
}

function replaceSection(text, id, body) {
  const start = `<!-- bench:${id} -->`;
  const end = `<!-- /bench:${id} -->`;
  const block = `${start}\n${body}\n${end}`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from >= 0 && to > from) return text.slice(0, from) + block + text.slice(to + end.length);
  return `${text.trimEnd()}\n\n${block}\n`;
}

let results = existsSync(resultsPath)
  ? readFileSync(resultsPath, 'utf8')
  : '# Benchmark results\n\nWritten by `npm run bench` (tests/bench/run.mjs); each section is replaced when it is run again.\n';
const failures = [];
for (const section of SECTIONS.filter((s) => wanted.length === 0 || wanted.includes(s.id))) {
  console.log(`\n## ${section.title}\n`);
  const started = new Date();
  const { markdown, failed } = await section.run({ log: (line) => console.log(line) });
  console.log(`\n${markdown}`);
  if (failed) failures.push(`${section.id}: ${failed}`);
  const command = `\`node tests/bench/run.mjs ${section.id}\`` + (wanted.length === 0 ? ' (part of `npm run bench`)' : '');
  results = replaceSection(results, section.id, [
    `## ${section.title}`,
    '',
    `Measured ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC with ${command} on: ${machine()}.`,
    '',
    markdown,
  ].join('\n'));
}
writeFileSync(resultsPath, results);
console.log(`\nbench: wrote ${resultsPath}`);
if (failures.length > 0) {
  console.error(`bench: ${failures.join('; ')}`);
  process.exit(1);
}
