// Naive float64 reference of attention rollout and attention flow (Abnar &
// Zuidema, 2020), written from the definitions and sharing no code with
// web/attention/rollout.js: Ā_l = ½·mean_h(A_l) + ½·I with rows renormalised, rollout =
// Ā_L · … · Ā_1 by plain matrix products, flow = Edmonds–Karp max flow from
// (L, i) to (0, j) on an explicit edge list of the layered graph.
// Attentions are { data, shape: [L, H, T, T] }; results are T×T nested arrays.
import { matmul } from './reference.mjs';

const weight = ({ data, shape: [, H, T] }, l, h, i, j) => data[((l * H + h) * T + i) * T + j];

/** Ā of layer l as a T×T array of rows. */
function refBar(attentions, l) {
  const [, H, T] = attentions.shape;
  const bar = [];
  for (let i = 0; i < T; i += 1) {
    const row = [];
    for (let j = 0; j < T; j += 1) {
      let mean = 0;
      for (let h = 0; h < H; h += 1) mean += weight(attentions, l, h, i, j);
      row.push(0.5 * (mean / H) + 0.5 * (i === j ? 1 : 0));
    }
    const sum = row.reduce((a, b) => a + b, 0);
    bar.push(row.map((v) => v / sum));
  }
  return bar;
}

export function refRollout(attentions) {
  const L = attentions.shape[0];
  let rolled = refBar(attentions, 0);
  for (let l = 1; l < L; l += 1) rolled = matmul(refBar(attentions, l), rolled);
  return rolled;
}

/** Edmonds–Karp max flow (shortest augmenting paths by BFS) on an edge list. */
function maxFlow(nodeCount, edges, source, sink) {
  const adjacency = Array.from({ length: nodeCount }, () => []);
  const to = [];
  const cap = [];
  for (const [u, v, c] of edges) {
    adjacency[u].push(to.length); to.push(v); cap.push(c);
    adjacency[v].push(to.length); to.push(u); cap.push(0);
  }
  let total = 0;
  for (;;) {
    const via = new Array(nodeCount).fill(-1);
    const seen = new Array(nodeCount).fill(false);
    seen[source] = true;
    const queue = [source];
    while (queue.length && !seen[sink]) {
      const u = queue.shift();
      for (const e of adjacency[u]) {
        if (cap[e] > 1e-12 && !seen[to[e]]) { seen[to[e]] = true; via[to[e]] = e; queue.push(to[e]); }
      }
    }
    if (!seen[sink]) return total;
    let bottleneck = Infinity;
    for (let v = sink; v !== source; v = to[via[v] ^ 1]) bottleneck = Math.min(bottleneck, cap[via[v]]);
    for (let v = sink; v !== source; v = to[via[v] ^ 1]) { cap[via[v]] -= bottleneck; cap[via[v] ^ 1] += bottleneck; }
    total += bottleneck;
  }
}

export function refFlow(attentions) {
  const [L, , T] = attentions.shape;
  const node = (l, t) => l * T + t; // layer 0 = the input tokens
  const edges = [];
  for (let l = 1; l <= L; l += 1) {
    const bar = refBar(attentions, l - 1);
    for (let a = 0; a < T; a += 1) for (let b = 0; b < T; b += 1) if (bar[a][b] > 0) edges.push([node(l, a), node(l - 1, b), bar[a][b]]);
  }
  return Array.from({ length: T }, (_, i) => Array.from({ length: T }, (__, j) => maxFlow((L + 1) * T, edges, node(L, i), node(0, j))));
}
