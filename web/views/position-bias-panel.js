// The neuron view's position-bias panel (T5, mT5, flan-T5): T5 has no
// position embeddings; each head of a side adds to every score a learned
// bias that depends only on the distance key − query, read from a table of
// buckets (one distance per bucket near the query, logarithmically wider
// ones further out, one shared bucket beyond the max distance). The panel
// draws, over the distances, every head's bias (the chosen head bold, the
// others faint), the buckets as alternating bands, and the chosen key's
// distance; a table lists the chosen head's bias per bucket. The numbers are
// the core's (TranslationModel.positionBias); this module only draws them.
// Not here: the rest of the neuron view (neuron-view.js), the bias itself
// (cpp/attention/positional.h, cpp/model/seq2seq.h).
import { h } from '../ui/dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 640;
const HEIGHT = 200;
const MARGIN = { left: 44, right: 12, top: 12, bottom: 30 };

const svg = (tag, attributes, ...children) => {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
};
const fixed = (v, digits = 3) => v.toFixed(digits);

/**
 * The distances a side's panel shows and each one's bucket and bias of head
 * `head`: byDistance = TranslationModel.positionBias's { span, bias: [H, 2·span
 * + 1], buckets }; the decoder (causal) only keys up to the query (distances
 * ≤ 0). Returns { distances, buckets, values: [H][n] } over the shown range.
 */
export function biasByDistance(byDistance, part) {
  const { span, bias, buckets } = byDistance;
  const [heads, columns] = bias.shape;
  const last = part === 'decoder' ? span : columns - 1;  // column span is distance 0
  const distances = [];
  const shownBuckets = [];
  for (let c = 0; c <= last; c += 1) {
    distances.push(c - span);
    shownBuckets.push(buckets[c]);
  }
  const values = Array.from({ length: heads }, (_, head) => Array.from(bias.data.subarray(head * columns, head * columns + last + 1)));
  return { distances, buckets: shownBuckets, values };
}

/**
 * The panel. byDistance: TranslationModel.positionBias's result; part:
 * 'encoder' | 'decoder'; head: the neuron view's head; query, key:
 * { label, position } (labels are token text, rendered as text); bias: the
 * bias the chosen key's score got (the trace's). maxDistance: the config's.
 */
export function positionBiasPanel(byDistance, part, head, query, key, bias, maxDistance) {
  const { distances, buckets, values } = biasByDistance(byDistance, part);
  const distance = key.position - query.position;
  const all = values.flat();
  const low = Math.min(0, ...all);
  const high = Math.max(0, ...all);
  const x = (d) => MARGIN.left + ((d - distances[0]) / Math.max(1, distances[distances.length - 1] - distances[0])) * (WIDTH - MARGIN.left - MARGIN.right);
  const y = (v) => MARGIN.top + ((high - v) / Math.max(1e-9, high - low)) * (HEIGHT - MARGIN.top - MARGIN.bottom);
  const step = (x(distances[0] + 1) - x(distances[0])) / 2;
  const drawing = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'bias-chart', role: 'img',
    'aria-label': `Position bias of every head of the ${part} by distance key − query; head ${head + 1} bold` });
  // Buckets as alternating bands: a run of distances sharing one bucket is one band.
  for (let i = 0, band = 0; i < distances.length; band += 1) {
    let j = i;
    while (j + 1 < distances.length && buckets[j + 1] === buckets[i]) j += 1;
    if (band % 2 === 0) drawing.append(svg('rect', { class: 'bias-band', x: x(distances[i]) - step, y: MARGIN.top, width: x(distances[j]) - x(distances[i]) + 2 * step, height: HEIGHT - MARGIN.top - MARGIN.bottom }));
    i = j + 1;
  }
  drawing.append(svg('line', { class: 'bias-axis', x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(0), y2: y(0) }));
  const line = (series) => series.map((v, i) => `${i === 0 ? 'M' : 'L'}${fixed(x(distances[i]) - step, 1)},${fixed(y(v), 1)}H${fixed(x(distances[i]) + step, 1)}`).join('');
  values.forEach((series, h_) => {
    if (h_ !== head) drawing.append(svg('path', { class: 'bias-other', d: line(series) }));
  });
  drawing.append(svg('path', { class: 'bias-head', d: line(values[head]), 'data-head': head }));
  if (distance >= distances[0] && distance <= distances[distances.length - 1]) {
    drawing.append(svg('line', { class: 'bias-key', x1: x(distance), x2: x(distance), y1: MARGIN.top, y2: HEIGHT - MARGIN.bottom }));
  }
  for (const d of [distances[0], 0, distances[distances.length - 1]]) {
    drawing.append(svg('text', { class: 'bias-tick', x: x(d), y: HEIGHT - MARGIN.bottom + 14, 'text-anchor': 'middle' }, String(d)));
  }
  drawing.append(svg('text', { class: 'bias-tick', x: (MARGIN.left + WIDTH - MARGIN.right) / 2, y: HEIGHT - 2, 'text-anchor': 'middle' }, 'distance key − query (tokens)'));
  for (const v of [high, 0, low]) drawing.append(svg('text', { class: 'bias-tick', x: MARGIN.left - 4, y: y(v) + 4, 'text-anchor': 'end' }, fixed(v, 2)));
  // The chosen head's bias per bucket: the distances each bucket covers and its value.
  const rows = [];
  for (let i = 0; i < distances.length;) {
    let j = i;
    while (j + 1 < distances.length && buckets[j + 1] === buckets[i]) j += 1;
    const covers = i === j ? String(distances[i]) : `${distances[i]} … ${distances[j]}`;
    const chosen = distance >= distances[i] && distance <= distances[j];
    rows.push(h('tr', { class: chosen ? 'bias-chosen' : '', dataset: { bucket: String(buckets[i]) } },
      h('td', {}, String(buckets[i])), h('td', {}, covers), h('td', {}, fixed(values[head][i], 4))));
    i = j + 1;
  }
  const far = part === 'decoder' ? `, all keys ${maxDistance} or more tokens back share the last bucket` : `, keys ${maxDistance} or more tokens away share the last bucket on each side`;
  return h('section', { class: 'bias-panel', 'aria-label': 'Relative position bias of this head' },
    h('p', { class: 'rope-summary' },
      `Relative position bias (T5): no position is added to the tokens; instead head ${head + 1} adds a learned number to each score, chosen by the distance key − query. `,
      `Key “${key.label}” (position ${key.position + 1}) is ${Math.abs(distance)} token${Math.abs(distance) === 1 ? '' : 's'} ${distance < 0 ? 'before' : distance > 0 ? 'after' : 'at'} query “${query.label}” (position ${query.position + 1}): `,
      `bucket ${byDistance.buckets[distance + byDistance.span]}, bias ${fixed(bias, 4)}. `,
      `Near distances have a bucket each; further ones share logarithmically wider buckets${far}. Every layer of the ${part} adds this same table (layer 1's).`),
    h('p', { class: 'hint' }, `Bold: head ${head + 1}; faint: the other heads; bands: buckets; vertical line: the key shown.`),
    drawing,
    h('div', { class: 'rope-table-scroller' },
      h('table', { class: 'rope-table bias-table' },
        h('thead', {}, h('tr', {}, ...['bucket', 'distances', `bias (head ${head + 1})`].map((title) => h('th', { scope: 'col' }, title)))),
        h('tbody', {}, ...rows))));
}
