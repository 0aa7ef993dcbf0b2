// Writes tests/golden/rollout.json: random row-stochastic attention stacks
// [L, H, T, T] (float32 values, causal and not) with their attention rollout
// and attention flow computed by tests/node/rollout-reference.mjs (a direct
// float64 implementation of Abnar & Zuidema's definitions: plain matrix
// products, Edmonds–Karp max flow on an explicit edge list), for the native
// tests of cpp/analysis/rollout.*. CI only reads the committed output.
// Run: node tests/golden/make_rollout_goldens.mjs
import { writeFileSync } from 'node:fs';

import { randomAttention } from '../node/reference.mjs';
import { refFlow, refRollout } from '../node/rollout-reference.mjs';

const CASES = [
  { shape: [1, 1, 1], seed: 1, causal: false },
  { shape: [1, 3, 5], seed: 2, causal: false },
  { shape: [2, 4, 7], seed: 3, causal: true },
  { shape: [3, 2, 9], seed: 4, causal: false },
  { shape: [4, 4, 12], seed: 5, causal: true },
  { shape: [6, 3, 8], seed: 6, causal: false },
];

const cases = CASES.map(({ shape: [layers, heads, t], seed, causal }) => {
  const shape = [layers, heads, t, t];
  const attentions = { data: randomAttention(shape, seed, causal), shape };
  return { shape, causal, attentions: Array.from(attentions.data), rollout: refRollout(attentions), flow: refFlow(attentions) };
});
const out = new URL('./rollout.json', import.meta.url);
writeFileSync(out, `${JSON.stringify({ cases })}\n`);
console.log(`${out.pathname}: ${cases.length} cases`);
