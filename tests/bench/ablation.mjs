// Head-ablation benchmark (a `npm run bench` section, not a test): on the
// shipped models at 64 tokens in WASM (dist/engine.js, single-threaded), what
// a click on a head costs (one forward pass with the head knocked out:
// attention of every layer, top-5 and the per-token loss; zero and mean
// ablation) next to the intact pass, against the one-frame target (16 ms);
// and "most important heads" (one pass per head, Model.rankHeads) on the 4×4
// austen-gpt at 64 tokens against its 0.5 s target. Each figure is the
// median wall time and, beside it, the median CPU time of this process
// (process.cpuUsage: what the pass costs when it has a core to itself,
// which the wall time on a shared, loaded machine is not), after a few
// warm-up passes (V8 compiles hot WebAssembly functions a second time,
// optimized, while they first run; a reader clicks a head after the page
// has run the model). The head knocked out is the first layer's, so no part
// of the pass could be skipped: the slowest click.
import { createEngine } from '../../dist/engine.js';
import { SHIPPED_TOKENS as TOKENS, median, shippedModels } from './forward.mjs';

const REPEATS = 21;
const WARM_UP = 10;
const FRAME_MS = 16;
const RANK_TARGET_MS = 500;
// -> { wall, cpu }: medians of `repeats` runs, ms.
function timed(fn, repeats = REPEATS) {
  for (let r = 0; r < WARM_UP; r += 1) fn();
  const wall = [];
  const cpu = [];
  for (let r = 0; r < repeats; r += 1) {
    const start = performance.now();
    const used = process.cpuUsage();
    fn();
    const { user, system } = process.cpuUsage(used);
    wall.push(performance.now() - start);
    cpu.push((user + system) / 1000);
  }
  return { wall: median(wall), cpu: median(cpu) };
}
const both = (t) => `${t.wall.toFixed(1)} ms (CPU ${t.cpu.toFixed(1)} ms)`;

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
      const head = [{ layer: 0, head: 0 }];
      const intact = timed(() => m.forward(ids, { topK: 5, ...text }));
      const zero = timed(() => m.forward(ids, { topK: 5, ...text, ablate: head, ablation: 'zero' }));
      const mean = timed(() => m.forward(ids, { topK: 5, ...text, ablate: head, ablation: 'mean' }));
      rows.push({ name, shape: `${layers}×${heads}`, intact, zero, mean });
      log(`${name}: intact ${both(intact)}, zero ablation ${both(zero)}, mean ${both(mean)}`);
      if (name === 'austen-gpt' && layers === 4 && heads === 4) {
        rank = { name, passes: layers * heads + 1, ...timed(() => m.rankHeads(ids), 5) };
        log(`${name}: most important heads ${both(rank)}`);
      }
      m.dispose();
    }
    // Targets are judged on CPU time: the wall time measures the machine's other work as well.
    const slow = rows.filter((r) => Math.max(r.zero.cpu, r.mean.cpu) > FRAME_MS).map((r) => r.name);
    if (rank && rank.cpu > RANK_TARGET_MS) slow.push('most important heads');
    return {
      failed: slow.length ? `over target (CPU time): ${slow.join(', ')}` : undefined,
      markdown: [
        'Command: `node tests/bench/run.mjs ablation` (Node, one thread).',
        '',
        `| shipped model (layers × heads) | intact pass | one head ablated, zero | one head ablated, mean | target |`,
        '|---|---:|---:|---:|---:|',
        ...rows.map((r) => `| ${r.name} (${r.shape}) | ${both(r.intact)} | ${both(r.zero)} | ${both(r.mean)} | ${FRAME_MS} ms |`),
        '',
        `Each pass: attention of every layer and head read back to JS, top-5 and the per-token loss at every position (BERT: two mask positions), ${TOKENS} tokens, head 0 of layer 0 knocked out; median wall time of ${REPEATS} after ${WARM_UP} warm-up passes and, in brackets, median CPU time of the process (the targets are judged on it).`,
        ...(rank ? ['', '| most important heads | forward passes | time | target |', '|---|---:|---:|---:|',
          `| ${rank.name}, ${TOKENS} tokens | ${rank.passes} | ${both(rank)} | ${RANK_TARGET_MS} ms |`] : []),
      ].join('\n'),
    };
  },
};
