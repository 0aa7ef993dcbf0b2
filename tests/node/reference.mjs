// Naive double-precision reference for the Node tests: plain JS loops over
// nested arrays, written from the formulas, sharing no code with the core.

export function matmul(a, b) {
  return a.map((row) => b[0].map((_, j) => row.reduce((s, v, p) => s + v * b[p][j], 0)));
}

export function transpose(a) {
  return a[0].map((_, j) => a.map((row) => row[j]));
}

/** softmax((q·kᵀ)/divisor, causal) · v -> { scores, weights, output } */
export function attention(q, k, v, { scale = true, temperature = 1, causal = false } = {}) {
  const scores = matmul(q, transpose(k));
  const divisor = temperature * (scale ? Math.sqrt(q[0].length) : 1);
  const weights = scores.map((row, i) => {
    const visible = row.map((s, j) => (causal && j > i ? -Infinity : s / divisor));
    const max = Math.max(...visible);
    const e = visible.map((s) => (s === -Infinity ? 0 : Math.exp(s - max)));
    const sum = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / sum);
  });
  return { scores, weights, output: matmul(weights, v) };
}

/** Deterministic normal(0, sd) samples (mulberry32 + Box-Muller). */
export function randomSource(seed) {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  // Rounded to float32 so that core and reference see the same inputs.
  const matrix = (rows, cols, sd = 1) =>
    Array.from({ length: rows }, () => Array.from({ length: cols }, () => Math.fround(normal() * sd)));
  return { uniform, normal, matrix };
}

/** Largest |a - b| between a { data, shape } matrix and nested rows. */
export function maxAbsDiff(matrix, rows) {
  const [r, c] = matrix.shape;
  if (r !== rows.length || c !== rows[0].length) return Infinity;
  let worst = 0;
  for (let i = 0; i < r; i += 1) {
    for (let j = 0; j < c; j += 1) worst = Math.max(worst, Math.abs(matrix.data[i * c + j] - rows[i][j]));
  }
  return worst;
}

export function maxAbs(rows) {
  return rows.reduce((m, row) => Math.max(m, ...row.map(Math.abs)), 0);
}
