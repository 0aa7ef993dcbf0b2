// Head-ablation benchmark (a `npm run bench` section, not a test): on the
// shipped models at 64 tokens in WASM (dist/engine.js, single-threaded), what
// a click on a head costs (one forward pass with the head knocked out:
// attention of every layer, top-5 and the per-token loss; zero and mean
// ablation) next to the intact pass, against the one-frame target (16 ms);
// and "most important heads" (one pass per head, Model.rankHeads) on the 4×4
// austen-gpt at 64 tokens against its 0.5 s target.
import { createEngine } from '../../dist/engine.js';
import { SHIPPED_TOKENS as TOKENS, median, shippedModels } from './forward.mjs';

const REPEATS = 7;
const FRAME_MS = 16;
const RANK_TARGET_MS = 500;
const timed = (fn) => Array.from({ length: REPEATS }, () => { const s = performance.now(); fn(); return performance.now() - s; });

export const ablation = {
  id: 'ablation',
  title: 'Head ablation: a click and "most important heads" at 64 tokens (WASM)',
  async run({ log }) {
    const engine = await createEngine({ threads: false });
    const rows = [];
    let rank = null;
    for await (const { name, model: m, ids } of shippedModels(engine)) {
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
