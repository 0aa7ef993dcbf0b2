// Helpers shared by the benchmark sections: timing, number formatting and
// Markdown tables (printed to the console and written to RESULTS.md).

/**
 * Seconds per call of each function of `runs` (name -> sync or async
 * function): a warm-up batch each, then `rounds` rounds in which every
 * function runs one batch of at least minSeconds in turn; best batch wins.
 * Interleaving spreads the load of a shared machine over all contenders;
 * best-of, because slower batches measure other processes.
 */
export async function secondsPerCall(runs, { rounds = 7, minSeconds = 0.05 } = {}) {
  const best = Object.fromEntries(Object.keys(runs).map((name) => [name, Infinity]));
  for (let round = 0; round <= rounds; round += 1) {
    for (const [name, run] of Object.entries(runs)) {
      let calls = 0;
      const start = performance.now();
      let elapsed = 0;
      do {
        await run();
        calls += 1;
        elapsed = (performance.now() - start) / 1000;
      } while (elapsed < minSeconds);
      if (round > 0) best[name] = Math.min(best[name], elapsed / calls);
    }
  }
  return best;
}

export const fixed = (digits) => (v) => (Number.isFinite(v) ? v.toFixed(digits) : '–');
export const ratio = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '–');
export const percent = (v) => (Number.isFinite(v) ? `${Math.round(v * 100)}%` : '–');

/** A Markdown table: columns [{ title, format? }], rows: arrays of cells. */
export function markdownTable(columns, rows) {
  const cells = rows.map((row) => row.map((v, i) => (columns[i].format ? columns[i].format(v) : String(v))));
  const header = `| ${columns.map((c) => c.title).join(' | ')} |`;
  const rule = `|${columns.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`;
  return [header, rule, ...cells.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}
