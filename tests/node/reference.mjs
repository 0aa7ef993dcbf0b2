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

/**
 * The value of a binary floating-point bit pattern with `exponentBits` and
 * `mantissaBits` (IEEE half: 5, 10; bfloat16: 8, 7), from the formula
 * (-1)^s · 2^(e - bias) · (1 + m / 2^M); subnormals 2^(1 - bias) · m / 2^M.
 */
export function decodeFloatBits(bits, exponentBits, mantissaBits) {
  const m = bits & ((1 << mantissaBits) - 1);
  const e = (bits >>> mantissaBits) & ((1 << exponentBits) - 1);
  const sign = (bits >>> (exponentBits + mantissaBits)) & 1 ? -1 : 1;
  const bias = (1 << (exponentBits - 1)) - 1;
  if (e === (1 << exponentBits) - 1) return m ? NaN : sign * Infinity;
  if (e === 0) return sign * m * 2 ** (1 - bias - mantissaBits);
  return sign * (1 + m / 2 ** mantissaBits) * 2 ** (e - bias);
}
export const halfValue = (bits) => decodeFloatBits(bits, 5, 10);
export const bfloat16Value = (bits) => decodeFloatBits(bits, 8, 7);

/**
 * A random rows × cols weight stored as `dtype` ('f16' or 'bf16'): { dtype,
 * bits: Uint16Array, shape } and its values as rows. Exponents around 1, a few
 * subnormals.
 */
export function randomHalfWeight(rand, dtype, rows, cols) {
  const [mantissaBits, bias] = dtype === 'f16' ? [10, 15] : [7, 127];
  const bits = new Uint16Array(rows * cols);
  for (let i = 0; i < bits.length; i++) {
    const e = rand.uniform() < 1 / 16 ? 0 : bias - 3 + Math.floor(rand.uniform() * 5);
    const m = Math.floor(rand.uniform() * (1 << mantissaBits));
    bits[i] = ((rand.uniform() < 0.5 ? 1 : 0) << 15) | (e << mantissaBits) | m;
  }
  const value = dtype === 'f16' ? halfValue : bfloat16Value;
  const values = Array.from({ length: rows }, (_, r) => Array.from(bits.subarray(r * cols, (r + 1) * cols), value));
  return { weight: { dtype, bits, shape: [rows, cols] }, values };
}

/**
 * Row-stochastic attention [L, H, T, K] as a Float32Array, from a small seeded
 * generator (no model needed); with `causal`, key j > query i is 0.
 */
export function randomAttention([layers, heads, t, k], seed, causal = false) {
  const data = new Float32Array(layers * heads * t * k);
  let s = seed >>> 0;
  for (let row = 0; row < layers * heads * t; row += 1) {
    const q = row % t;
    let sum = 0;
    for (let j = 0; j < k; j += 1) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      const u = s / 2 ** 32;
      const v = causal && j > q ? 0 : u * u * (u * u); // u⁴ (a third of Math.pow's time at 512 × 512 × 144 rows)
      data[row * k + j] = v;
      sum += v;
    }
    for (let j = 0; j < k; j += 1) data[row * k + j] /= sum;
  }
  return data;
}
