// The neuron view's rotary panel (RoPE models: Llama, Mistral, Qwen, Pythia):
// for one query and one key, each pair of dimensions of q and k before the
// rotary position embedding, the angle it turns by (position × θ), after,
// and what the pair adds to q·k before and after; a small drawing of the four
// 2D vectors per pair. The numbers are the core's (q and k before and after
// the rotation, θ per pair); this module only computes the angles and sums.
// Not here: the rest of the neuron view (neuron-view.js), the rotation itself
// (the model runtime, cpp/attention/positional.h).
import { h } from '../ui/dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const ARROW = 44; // px, side of one pair's drawing

/**
 * Per-pair numbers of one query/key pair. qBefore, kBefore, qAfter, kAfter:
 * [d_k] vectors (before and after RoPE), inverseFrequencies: [r/2] θ_i,
 * positions of the query and the key. Pair i holds dims (i, i + r/2) (the
 * half-split form); dims r..d_k are not rotated. Returns { rotated: r,
 * pairs: [{ index, dims, theta, qBefore: [x, y], qAngle, qAfter, kBefore,
 * kAngle, kAfter, before, after }], unrotatedDims, unrotatedDot,
 * dotBefore, dotAfter } with before/after = the pair's part of q·k, computed
 * in double.
 */
export function rotaryPairs({ qBefore, kBefore, qAfter, kAfter, inverseFrequencies, queryPosition, keyPosition }) {
  const half = inverseFrequencies.length;
  const dk = qBefore.length;
  const pairs = [];
  let dotBefore = 0;
  let dotAfter = 0;
  for (let i = 0; i < half; i += 1) {
    const j = i + half;
    const theta = inverseFrequencies[i];
    const pair = {
      index: i, dims: [i, j], theta,
      qBefore: [qBefore[i], qBefore[j]], qAngle: queryPosition * theta, qAfter: [qAfter[i], qAfter[j]],
      kBefore: [kBefore[i], kBefore[j]], kAngle: keyPosition * theta, kAfter: [kAfter[i], kAfter[j]],
    };
    pair.before = pair.qBefore[0] * pair.kBefore[0] + pair.qBefore[1] * pair.kBefore[1];
    pair.after = pair.qAfter[0] * pair.kAfter[0] + pair.qAfter[1] * pair.kAfter[1];
    dotBefore += pair.before;
    dotAfter += pair.after;
    pairs.push(pair);
  }
  let unrotatedDot = 0;
  for (let d = 2 * half; d < dk; d += 1) unrotatedDot += qAfter[d] * kAfter[d];
  return { rotated: 2 * half, pairs, unrotatedDims: dk - 2 * half, unrotatedDot, dotBefore: dotBefore + unrotatedDot, dotAfter: dotAfter + unrotatedDot };
}

const fixed = (v, digits = 3) => (Math.abs(v) >= 1000 ? v.toExponential(2) : v.toFixed(digits));
const vector = ([x, y]) => `(${fixed(x)}, ${fixed(y)})`;

/** A pair's four vectors as arrows from the centre: q (blue) and k (orange), dashed before, solid after. */
function pairDrawing(pair) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('width', String(ARROW));
  svg.setAttribute('height', String(ARROW));
  svg.setAttribute('viewBox', `${-ARROW / 2} ${-ARROW / 2} ${ARROW} ${ARROW}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `Pair ${pair.index + 1}: q turns by ${fixed(pair.qAngle)} rad, k by ${fixed(pair.kAngle)} rad`);
  const vectors = [pair.qBefore, pair.qAfter, pair.kBefore, pair.kAfter];
  const scale = (ARROW / 2 - 3) / Math.max(1e-12, ...vectors.map(([x, y]) => Math.hypot(x, y)));
  const circle = document.createElementNS(SVG, 'circle');
  circle.setAttribute('r', String(ARROW / 2 - 2));
  circle.setAttribute('class', 'rope-circle');
  svg.append(circle);
  [['q', pair.qBefore, true], ['k', pair.kBefore, true], ['q', pair.qAfter, false], ['k', pair.kAfter, false]].forEach(([which, [x, y], before]) => {
    const line = document.createElementNS(SVG, 'line');
    line.setAttribute('x1', '0');
    line.setAttribute('y1', '0');
    line.setAttribute('x2', (x * scale).toFixed(2));
    line.setAttribute('y2', (-y * scale).toFixed(2)); // y up
    line.setAttribute('class', `rope-${which} ${before ? 'rope-before' : 'rope-after'}`);
    svg.append(line);
  });
  return svg;
}

/**
 * The panel for one query/key pair: rotary = rotaryPairs(...), query and key:
 * { label, position } (labels are token text, rendered as text), dot: the
 * q·k the neuron view shows for this key.
 */
export function ropePanel(rotary, query, key, dot, dk) {
  const { rotated, pairs, unrotatedDims, unrotatedDot, dotBefore, dotAfter } = rotary;
  const head = ['pair (dims)', '', 'θ', 'q before', 'angle q = pos × θ', 'q after', 'k before', 'angle k = pos × θ', 'k after', 'q·k part before', 'q·k part after'];
  const rows = pairs.map((p) => h('tr', { dataset: { pair: String(p.index) } },
    h('td', {}, `${p.index + 1} (${p.dims[0] + 1}, ${p.dims[1] + 1})`),
    h('td', {}, pairDrawing(p)),
    h('td', {}, p.theta.toExponential(3)),
    h('td', {}, vector(p.qBefore)),
    h('td', {}, `${fixed(p.qAngle)} rad`),
    h('td', {}, vector(p.qAfter)),
    h('td', {}, vector(p.kBefore)),
    h('td', {}, `${fixed(p.kAngle)} rad`),
    h('td', {}, vector(p.kAfter)),
    h('td', {}, fixed(p.before, 4)),
    h('td', {}, fixed(p.after, 4)),
  ));
  const partial = unrotatedDims > 0
    ? ` Dimensions ${rotated + 1}–${dk} are not rotated (partial rotary): they add ${fixed(unrotatedDot, 4)} to both sums.`
    : '';
  const factor = rotary.attentionFactor ?? 1;
  const scaled = factor !== 1
    ? ` The rotation is scaled too (yarn / longrope): cos and sin are multiplied by ${fixed(factor, 4)}, so each rotated pair's part of q·k by ${fixed(factor * factor, 4)}.`
    : '';
  return h('section', { class: 'rope-panel', 'aria-label': 'Rotary position embedding of the query and the key' },
    h('p', { class: 'rope-summary' },
      `Rotary position embedding (RoPE): before the dot product, q of “${query.label}” (position ${query.position}) and k of “${key.label}” (position ${key.position}) are turned, each pair of dimensions (i, i + ${rotated / 2}) by the angle position × θ_i. `,
      `The q·k above uses the rotated vectors: the “after” parts sum to ${fixed(dotAfter, 4)} (q·k shown: ${fixed(dot, 4)}); before the rotation they would sum to ${fixed(dotBefore, 4)}. `,
      `After the rotation a pair's part depends on the distance: it is |q|·|k|·cos(angle between them before + (${query.position} − ${key.position}) × θ_i).${partial}${scaled}`),
    h('p', { class: 'hint' }, 'Drawings: q blue, k orange; dashed before the rotation, solid after.'),
    h('div', { class: 'rope-table-scroller' },
      h('table', { class: 'rope-table' },
        h('thead', {}, h('tr', {}, ...head.map((title) => h('th', { scope: 'col' }, title)))),
        h('tbody', {}, ...rows))));
}
