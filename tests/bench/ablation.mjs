// Head-ablation benchmark (a `npm run bench` section, not a test): on the
// shipped models at 64 tokens in WASM (dist/engine.js, single-threaded), what
// a click on a head costs (one forward pass with the head knocked out:
// attention of every layer, top-5 and the per-token loss; zero and mean
// ablation) next to the intact pass, against the one-frame target (16 ms);
// and "most important heads" (one pass per head, Model.rankHeads) on the 4×4
// austen-gpt at 64 tokens against its 0.5 s target.
import { existsSync, readFileSync } from 'node:fs';

import { createEngine } from '../../dist/engine.js';

const TOKENS = 64;
const REPEATS = 7;
const FRAME_MS = 16;
const RANK_TARGET_MS = 500;
const TEXT = 'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want '
  + 'of a wife. However little known the feelings or views of such a man may be on his first entering a neighbourhood, '
  + 'this truth is so well fixed in the minds of the surrounding families, that he is considered as the rightful '
  + 'property of some one or other of their daughters.';
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const timed = (fn) => Array.from({ length: REPEATS }, () => { const s = performance.now(); fn(); return performance.now() - s; });

export const ablation = {
  id: 'ablation',
  title: 'Head ablation: a click and "most important heads" at 64 tokens (WASM)',
  async run({ log }) {
    const engine = await createEngine({ threads: false });
    const rows = [];
    let rank = null;
    for (const name of ['austen-gpt', 'austen-bert']) {
      const folder = new URL(`../../models/${name}/`, import.meta.url);
      if (!existsSync(new URL('model.safetensors', folder))) continue;
      const m = await engine.loadModel({ config: readFileSync(new URL('config.json', folder), 'utf8'), weights: readFileSync(new URL('model.safetensors', folder)), tokenizer: readFileSync(new URL('tokenizer.json', folder), 'utf8') });
      const ids = m.run(TEXT).tokens.map((t) => t.id).slice(0, TOKENS);
      if (ids.length !== TOKENS) throw new Error(`${name}: the benchmark text gives only ${ids.length} tokens`);
      const { causal, layers, heads } = m.config;
      const text = causal ? { tokenLoss: true } : { typeIds: ids.map(() => 0), maskPositions: [5, 20], maskLabels: [ids[5], ids[20]], tokenLoss: true };
      const head = [{ layer: layers - 1, head: 0 }];
      const intact = median(timed(() => m.forward(ids, { topK: 5, ...text })));
      const zero = median(timed(() => m.forward(ids, { topK: 5, ...text, ablate: head, ablation: 'zero' })));
      const mean = median(timed(() => m.forward(ids, { topK: 5, ...text, ablate: head, ablation: 'mean' })));
      rows.push({ name, shape: `${layers}×${heads}`, intact, zero, mean });
      log(`${name}: intact ${intact.toFixed(1)} ms, zero ablation ${zero.toFixed(1)} ms, mean ${mean.toFixed(1)} ms`);
      if (name === 'austen-gpt' && layers === 4 && heads === 4) {
        const ms = median(Array.from({ length: 3 }, () => { const s = performance.now(); m.rankHeads(ids); return performance.now() - s; }));
        rank = { name, ms, passes: layers * heads + 1 };
        log(`${name}: most important heads ${ms.toFixed(0)} ms`);
      }
      m.dispose();
    }
    const slow = rows.filter((r) => Math.max(r.zero, r.mean) > FRAME_MS).map((r) => r.name);
    return {
      failed: slow.length || (rank && rank.ms > RANK_TARGET_MS) ? `over target: ${[...slow, ...(rank && rank.ms > RANK_TARGET_MS ? ['ranking'] : [])].join(', ')}` : undefined,
      markdown: [
        'Command: `node tests/bench/run.mjs ablation` (Node, one thread).',
        '',
        `| shipped model (layers × heads) | intact pass | one head ablated, zero | one head ablated, mean | target |`,
        '|---|---:|---:|---:|---:|',
        ...rows.map((r) => `| ${r.name} (${r.shape}) | ${r.intact.toFixed(1)} ms | ${r.zero.toFixed(1)} ms | ${r.mean.toFixed(1)} ms | ${FRAME_MS} ms |`),
        '',
        `Each pass: attention of every layer and head read back to JS, top-5 and the per-token loss at every position (BERT: two mask positions), ${TOKENS} tokens, median of ${REPEATS}.`,
        ...(rank ? ['', '| most important heads | forward passes | time | target |', '|---|---:|---:|---:|',
          `| ${rank.name}, ${TOKENS} tokens | ${rank.passes} | ${rank.ms.toFixed(0)} ms | ${RANK_TARGET_MS} ms |`] : []),
      ].join('\n'),
    };
  },
};
