// Attention rollout and attention flow (Abnar & Zuidema, 2020, "Quantifying
// Attention Flow in Transformers"): where each token's final representation
// draws on the input tokens, across all layers at once.
//   Ā_l = ½·mean_h(A_l) + ½·I, each row renormalised to sum to 1 (the
//         residual connection as an identity "head"), for layers l = 1..L;
//   rollout R = Ā_L · … · Ā_1: R[i][j] is how much output token i draws on
//         input token j;
//   flow    F[i][j] = the maximum flow from node (L, i) to node (0, j) of the
//         layered graph whose edge (l, a) → (l−1, b) has capacity Ā_l[a][b].
// Pure functions on the views' tensor { data: Float32Array, shape: [L, H, T, T] },
// accumulated in float64. This is JavaScript, not the C++ core, because the
// widget's data mode and the one-file HTML page draw it with no WASM at all;
// it is a view-level aggregation of the weights, like the head mean the
// matrix view computes in JS. (The CLI's `attnplay rollout` should follow the
// same definitions.)
// Not here: drawing (rollout-view.js), reading attention data.

/** Attention flow solves T² max-flow problems; above this much work (L·T⁴) it is refused as too slow for a page. */
export const MAX_FLOW_WORK = 2 ** 24;

function checkSelfAttention({ data, shape }) {
  if (shape.length !== 4) throw new RangeError(`rollout needs attention of shape [layers, heads, T, T], not [${shape.join(', ')}]`);
  const [layers, heads, queries, keys] = shape;
  if (queries !== keys) throw new RangeError(`rollout is defined for self-attention (as many keys as queries), not [${shape.join(', ')}]`);
  if (layers === 0 || heads === 0) throw new RangeError(`rollout needs at least one layer and one head, not [${shape.join(', ')}]`);
  if (data.length !== layers * heads * queries * keys) throw new RangeError(`attention has ${data.length} values, shape [${shape.join(', ')}] needs ${layers * heads * queries * keys}`);
}

/**
 * Ā of every layer: attentions [L, H, T, T] -> { data: Float64Array [L, T, T], shape }.
 * Ā_l = ½·mean_h(A_l) + ½·I, each row divided by its sum.
 */
export function residualAttention(attentions) {
  checkSelfAttention(attentions);
  const [layers, heads, t] = attentions.shape;
  const plane = t * t;
  const out = new Float64Array(layers * plane); // [L, T, T]
  for (let l = 0; l < layers; l += 1) {
    const bar = out.subarray(l * plane, (l + 1) * plane);
    for (let h = 0; h < heads; h += 1) {
      const start = (l * heads + h) * plane;
      for (let i = 0; i < plane; i += 1) bar[i] += attentions.data[start + i];
    }
    for (let r = 0; r < t; r += 1) {
      let sum = 0;
      for (let c = 0; c < t; c += 1) {
        const value = 0.5 * (bar[r * t + c] / heads) + (r === c ? 0.5 : 0);
        bar[r * t + c] = value;
        sum += value;
      }
      for (let c = 0; c < t; c += 1) bar[r * t + c] /= sum;
    }
  }
  return { data: out, shape: [layers, t, t] };
}

/** Attention rollout: attentions [L, H, T, T] -> { data: Float64Array [T, T], shape } = Ā_L · … · Ā_1. */
export function attentionRollout(attentions) {
  const { data: bars, shape: [layers, t] } = residualAttention(attentions);
  const plane = t * t;
  let rolled = bars.slice(0, plane); // Ā_1
  for (let l = 1; l < layers; l += 1) {
    const bar = bars.subarray(l * plane, (l + 1) * plane);
    const next = new Float64Array(plane); // Ā_l · rolled
    for (let i = 0; i < t; i += 1) {
      for (let k = 0; k < t; k += 1) {
        const a = bar[i * t + k];
        if (a === 0) continue;
        for (let j = 0; j < t; j += 1) next[i * t + j] += a * rolled[k * t + j];
      }
    }
    rolled = next;
  }
  return { data: rolled, shape: [t, t] };
}

// Residual capacities below this count as none (float round-off of the weights).
const EPSILON = 1e-12;

/**
 * The layered graph of attention flow and its max-flow solver: attentions
 * [L, H, T, T] -> { layers, t, maxFlow(i, j) }, maxFlow(i, j) = the maximum
 * flow from (L, i) to (0, j), by Dinic's algorithm (nodes (l, t) for
 * l = 0..L; edges only between neighbouring layers, so a node's residual
 * neighbours are the T nodes below and above). One problem costs about
 * L·T² per phase.
 */
function flowNetwork(attentions) {
  const { data: capacity, shape: [layers, t] } = residualAttention(attentions); // capacity of (l+1, a) → (l, b) at (l·T + a)·T + b
  const nodes = (layers + 1) * t; // node l·T + a is token a at layer l (0 = input)
  const flow = new Float64Array(layers * t * t); // same layout as capacity
  const level = new Int32Array(nodes);
  const next = new Int32Array(nodes); // per node: the next neighbour to try, 0..2T−1 (below, then above)
  const queue = new Int32Array(nodes);
  // Residual capacity from node u to its k-th neighbour (k < T: token k one layer down; else token k−T one layer up), and that neighbour.
  const residual = (u, k) => {
    const l = Math.floor(u / t);
    const a = u - l * t;
    if (k < t) return l > 0 ? capacity[((l - 1) * t + a) * t + k] - flow[((l - 1) * t + a) * t + k] : 0;
    return l < layers ? flow[(l * t + (k - t)) * t + a] : 0;
  };
  const neighbour = (u, k) => Math.floor(u / t) * t + k - (k < t ? t : 0);
  const push = (u, k, amount) => {
    const l = Math.floor(u / t);
    const a = u - l * t;
    if (k < t) flow[((l - 1) * t + a) * t + k] += amount;
    else flow[(l * t + (k - t)) * t + a] -= amount;
  };
  const augment = (u, sink, limit) => {
    if (u === sink) return limit;
    for (; next[u] < 2 * t; next[u] += 1) {
      const k = next[u];
      const room = residual(u, k);
      if (room <= EPSILON) continue;
      const v = neighbour(u, k);
      if (level[v] !== level[u] + 1) continue;
      const pushed = augment(v, sink, Math.min(limit, room));
      if (pushed > 0) {
        push(u, k, pushed);
        return pushed;
      }
    }
    return 0;
  };
  const maxFlow = (i, j) => {
    const source = layers * t + i;
    const sink = j;
    flow.fill(0);
    let total = 0;
    for (;;) {
      level.fill(-1);
      level[source] = 0;
      let head = 0;
      let tail = 0;
      queue[tail++] = source;
      while (head < tail) {
        const u = queue[head++];
        for (let k = 0; k < 2 * t; k += 1) {
          if (residual(u, k) <= EPSILON) continue;
          const v = neighbour(u, k);
          if (level[v] >= 0) continue;
          level[v] = level[u] + 1;
          queue[tail++] = v;
        }
      }
      if (level[sink] < 0) return total;
      next.fill(0);
      for (let pushed = augment(source, sink, Infinity); pushed > 0; pushed = augment(source, sink, Infinity)) total += pushed;
    }
  };
  return { layers, t, maxFlow };
}

/**
 * Attention flow: attentions [L, H, T, T] -> { data: Float64Array [T, T], shape },
 * F[i][j] = max flow from (L, i) to (0, j) (flowNetwork).
 * Throws a RangeError when L·T⁴ exceeds MAX_FLOW_WORK.
 */
export function attentionFlow(attentions) {
  checkSelfAttention(attentions);
  const [layers, , t] = attentions.shape;
  if (layers * t ** 4 > MAX_FLOW_WORK) {
    throw new RangeError(`attention flow over ${layers} layers of ${t} tokens is too much to compute in a page (${t}² max-flow problems); use rollout, or fewer tokens or layers`);
  }
  const { maxFlow } = flowNetwork(attentions);
  const out = new Float64Array(t * t);
  for (let i = 0; i < t; i += 1) for (let j = 0; j < t; j += 1) out[i * t + j] = maxFlow(i, j);
  return { data: out, shape: [t, t] };
}

/**
 * One row of attention flow, F[query][j] for j = 0..T−1, one value per step:
 * a generator, so that a view can spread the T max-flow problems over
 * several frames (a vision transformer's 197 tokens take seconds). Each
 * value equals attentionFlow's, which refuses what this computes.
 */
export function* attentionFlowRow(attentions, query) {
  checkSelfAttention(attentions);
  const t = attentions.shape[2];
  if (!Number.isInteger(query) || query < 0 || query >= t) throw new RangeError(`token ${query} is not one of the ${t} tokens`);
  const { maxFlow } = flowNetwork(attentions);
  for (let j = 0; j < t; j += 1) yield maxFlow(query, j);
}

export const ROLLOUT_METHODS = ['rollout', 'flow'];
/** How the playground shows a rolled-out map: a heatmap, or the head view's lines. */
export const ROLLOUT_DISPLAYS = ['matrix', 'lines'];

/** The map of a method ('rollout' or 'flow'): attentions [L, H, T, T] -> { data: Float64Array [T, T], shape }. */
export function rolledOut(attentions, method) {
  if (method === 'rollout') return attentionRollout(attentions);
  if (method === 'flow') return attentionFlow(attentions);
  throw new RangeError(`unknown rollout method "${method}" (use ${ROLLOUT_METHODS.join(' or ')})`);
}
