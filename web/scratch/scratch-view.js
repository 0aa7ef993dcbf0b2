// <scratch-view>: the from-scratch mode. Walks step by step through what the
// seed tutorials teach, every number computed by the C++ core (through the
// engine worker): static embeddings, dot-product similarity, softmax and the
// weighted sum (parameter-free self-attention on "money bank grows" vs
// "river bank"); then W_Q, W_K, W_V, scores, the √d_k scaling and the x100
// saturation experiment (its own step only, undone by a second click), the
// causal mask (its own step's tables), multi-head split and concat,
// sinusoidal positional encoding and permutation equivariance; last,
// cross-attention (queries from a decoder, keys and values from an encoder)
// on the tutorial's alignment example, "European Economic Area" ↔ "zone
// économique européenne".
// Matrices are editable; the NumPy preset reproduces the tutorial's printout,
// and an author's own example (`preset`) replaces it in the projection steps
// (or, with xEncoder and xDecoder, the alignment example of the last step).
// Not here: model attention views (head/matrix/neuron views).
import { h } from '../ui/dom.js';
import { getEngineClient } from '../engine/engine-client.js';
import './heat-map.js';
import './matrix-table.js';
import { multiHeadExample, numpySeedExample, seedAlignmentExample, staticEmbeddings } from './presets.js';
import { checkPreset } from './scratch-examples.js';

const clone = (value) => JSON.parse(JSON.stringify(value));

function initialState() {
  return {
    embeddings: clone(staticEmbeddings.words),
    projection: clone(numpySeedExample),
    scale: true,
    temperature: 1,
    beforeTimes100: null, // { scale, temperature } while "Scores × 100" is on, to undo it
    causal: false,
    focus: 0,
    heads: 2,
    multi: clone(multiHeadExample),
    pePositions: 50,
    peDims: 64,
    permutation: [0, 1, 2, 3],
    withPositions: false,
    cross: clone(seedAlignmentExample),
  };
}

const STEPS = [
  { id: 'embeddings', title: 'Static embeddings' },
  { id: 'similarity', title: 'Similarity by dot product' },
  { id: 'softmax', title: 'Softmax' },
  { id: 'weighted-sum', title: 'Weighted sum: contextual embeddings' },
  { id: 'projections', title: 'Queries, keys and values' },
  { id: 'scores', title: 'Scores Q·Kᵀ' },
  { id: 'scaling', title: 'Scaling by √d_k' },
  { id: 'causal', title: 'The causal mask' },
  { id: 'multi-head', title: 'Multi-head attention' },
  { id: 'positions', title: 'Positional encoding' },
  { id: 'permutation', title: 'Why positions are needed' },
  { id: 'cross-attention', title: 'Cross-attention: the decoder reads the encoder' },
];
// The cross-attention step's editable tables -> the example's matrices.
const CROSS_INPUTS = { 'cross-x-encoder': 'xEncoder', 'cross-x-decoder': 'xDecoder', 'cross-wq': 'wq', 'cross-wk': 'wk', 'cross-wv': 'wv' };

function rowsOf(matrix) {
  const [r, c] = matrix.shape;
  return Array.from({ length: r }, (_, i) => Array.from(matrix.data.subarray(i * c, (i + 1) * c)));
}

function maxAbsDifference(a, b) {
  let worst = 0;
  a.forEach((row, i) => row.forEach((v, j) => { worst = Math.max(worst, Math.abs(v - b[i][j])); }));
  return worst;
}

export class ScratchView extends HTMLElement {
  #state = initialState();
  #client = null;
  #generation = 0;
  #tables = new Map();
  #step = 0;
  #preset = numpySeedExample;
  #crossPreset = seedAlignmentExample;

  connectedCallback() {
    if (this.#client) return;
    this.#client = getEngineClient();
    this.#build();
    this.addEventListener('matrix-input', (event) => this.#onMatrixInput(event));
    this.showStep(0);
    this.update();
  }

  /** Ids of the steps, in order (showStep takes an index into this list). */
  static get stepIds() { return STEPS.map((step) => step.id); }

  /**
   * Replaces the NumPy example of the projection steps (Q, K, V, scores,
   * scaling, causal mask, permutation) with an author's own: { tokens, x, wq,
   * wk, wv, printedOutput? }; or, given { source, target, xEncoder, xDecoder,
   * wq, wk, wv }, the alignment example of the cross-attention step
   * (checkPreset; throws on a bad example).
   */
  set preset(preset) {
    const checked = checkPreset(preset);
    if (checked.xEncoder) {
      this.#crossPreset = checked;
      this.#state.cross = clone(checked);
      if (this.#client) this.update();
      return;
    }
    this.#preset = checked;
    this.#resetProjection();
  }

  get preset() { return clone(this.#preset); }

  /** Index of the step shown (all steps are shown when "show all" is on). */
  get step() { return this.#step; }

  showStep(index) {
    this.#step = Math.max(0, Math.min(STEPS.length - 1, index));
    const all = this.querySelector('#scratch-show-all').checked;
    this.querySelectorAll('section.step').forEach((section, i) => { section.hidden = !all && i !== this.#step; });
    this.querySelectorAll('.step-list button').forEach((button, i) => button.setAttribute('aria-current', i === this.#step ? 'step' : 'false'));
    this.querySelector('#scratch-prev').disabled = this.#step === 0;
    this.querySelector('#scratch-next').disabled = this.#step === STEPS.length - 1;
    this.dispatchEvent(new CustomEvent('step-change', { bubbles: true, detail: { step: this.#step, id: STEPS[this.#step].id } }));
  }

  #table(key, caption, attributes = {}) {
    const table = h('matrix-table', { caption, ...attributes });
    table.dataset.key = key;
    this.#tables.set(key, table);
    return table;
  }

  #build() {
    const nav = h('nav', { class: 'stepper', 'aria-label': 'Steps' },
      h('ol', { class: 'step-list' }, STEPS.map((step, i) => h('li', {}, h('button', { type: 'button', onclick: () => this.showStep(i) }, `${i + 1}. ${step.title}`)))),
      h('div', { class: 'step-buttons' },
        h('button', { type: 'button', id: 'scratch-prev', onclick: () => this.showStep(this.#step - 1) }, '← Previous'),
        h('button', { type: 'button', id: 'scratch-next', onclick: () => this.showStep(this.#step + 1) }, 'Next →'),
        h('label', {}, h('input', { type: 'checkbox', id: 'scratch-show-all', onchange: () => this.showStep(this.#step) }), ' show all steps')));

    const s = this.#state;
    const section = (id, ...content) => h('section', { class: 'step', id: `step-${id}`, 'aria-labelledby': `step-${id}-title` },
      h('h3', { id: `step-${id}-title` }, `${STEPS.findIndex((x) => x.id === id) + 1}. ${STEPS.find((x) => x.id === id).title}`), ...content);

    const steps = [
      section('embeddings',
        h('p', {}, 'A model first turns each word into a vector: a static embedding, learned once and looked up the same way in every sentence. Here each word has four numbers, on axes we can name. Note that "bank" gets the same vector, [0.6, 0.2, 0.1, 0.7], whether it sits next to "money" or next to "river": a static embedding cannot know which bank is meant.'),
        h('p', { class: 'hint' }, 'Edit any number; every later step recomputes.'),
        this.#table('embeddings', 'Static embeddings (one row per word)', { editable: true })),
      section('similarity',
        h('p', {}, 'To let context in, compare every word with every other word. The dot product of two vectors is large when they point the same way, so X·Xᵀ is a table of similarities: row i, column j is the similarity of word i with word j.'),
        this.#table('sim-a', 'X·Xᵀ for "money bank grows"', { heat: 'signed' }),
        this.#table('sim-b', 'X·Xᵀ for "river bank"', { heat: 'signed' })),
      section('softmax',
        h('p', {}, 'Similarities can be any size and even negative. Softmax turns each row into weights that are positive and sum to 1: exp(s) / Σ exp(s). Bigger similarities get most of the weight, but every word keeps some.'),
        this.#table('weights-a', 'softmax(X·Xᵀ), each row sums to 1: "money bank grows"', { heat: 'rows' }),
        this.#table('weights-b', 'softmax(X·Xᵀ): "river bank"', { heat: 'rows' })),
      section('weighted-sum',
        h('p', {}, 'Each word\'s new vector is the weighted sum of all the word vectors in its sentence, with the weights of its row: Y = softmax(X·Xᵀ)·X. This is self-attention with no learned parameters at all, and every row can be computed at the same time. Now the two "bank"s differ: one has moved toward finance, the other toward nature.'),
        this.#table('contextual-a', 'Contextual embeddings Y: "money bank grows"'),
        this.#table('contextual-b', 'Contextual embeddings Y: "river bank"'),
        this.#table('bank-compare', '"bank" before and after attention')),
      section('projections',
        h('p', {}, 'Plain dot products can only measure one kind of similarity. Transformers give each word three learned roles by multiplying its embedding by three matrices: a query Q = X·W_Q (what the word is looking for), a key K = X·W_K (what it offers to be found by) and a value V = X·W_V (what it passes on when attended to). The preset is the NumPy example of the tutorial: four words and weights drawn with seed 42.'),
        h('div', { class: 'controls' }, h('button', { type: 'button', id: 'scratch-reset-numpy', onclick: () => this.#resetProjection() }, 'Reset the example')),
        h('div', { class: 'matrix-row' },
          this.#table('x', 'X (embeddings)', { editable: true }),
          this.#table('wq', 'W_Q', { editable: true }),
          this.#table('wk', 'W_K', { editable: true }),
          this.#table('wv', 'W_V', { editable: true })),
        h('div', { class: 'matrix-row' }, this.#table('q', 'Q = X·W_Q'), this.#table('k', 'K = X·W_K'), this.#table('v', 'V = X·W_V'))),
      section('scores',
        h('p', {}, 'Scores compare every query with every key: Q·Kᵀ. Row i holds how well word i\'s query matches each word\'s key. Unlike X·Xᵀ the table need not be symmetric: word 1 may look for word 3 without word 3 looking back.'),
        this.#table('scores', 'Scores Q·Kᵀ', { heat: 'signed' })),
      section('scaling',
        h('p', {}, 'Scores grow with the length d_k of the vectors: the dot product of random vectors has variance d_k. Fed large numbers, softmax saturates: almost all weight goes to the top score and the rest get nearly nothing (and nearly no gradient in training). Dividing by √d_k keeps the scores in a range where softmax stays soft. Try the tutorial\'s experiment: multiply the scores by 100.'),
        h('div', { class: 'controls' },
          h('label', {}, h('input', { type: 'checkbox', id: 'scratch-scale', checked: s.scale, onchange: (e) => this.#set({ scale: e.target.checked, beforeTimes100: null }) }), ' divide by √d_k'),
          h('label', {}, 'temperature ', h('input', { type: 'number', id: 'scratch-temperature', min: '0.01', step: 'any', value: String(s.temperature), onchange: (e) => this.#set({ temperature: Number(e.target.value) || 1, beforeTimes100: null }) })),
          h('button', { type: 'button', id: 'scratch-times100', 'aria-pressed': 'false', onclick: () => this.#toggleTimes100() }, 'Scores × 100'),
          h('label', {}, 'query ', h('select', { id: 'scratch-focus', onchange: (e) => this.#set({ focus: Number(e.target.value) }) }))),
        h('div', { class: 'bars', id: 'scratch-bars', role: 'img' }),
        this.#table('weights', 'Weights softmax(Q·Kᵀ / divisor)', { heat: 'rows' }),
        this.#table('output', 'Attention output = weights · V'),
        h('p', { class: 'check', id: 'scratch-printed-check', role: 'status' })),
      section('causal',
        h('p', {}, 'A model that writes text one token at a time must not look at tokens that come later. The causal mask sets every score above the diagonal to −∞ before the softmax; exp(−∞) = 0, so those weights are exactly zero and each row still sums to 1 over the words before it. Tick the mask and watch both tables (scaled by √d_k, as in the tutorial).'),
        h('div', { class: 'controls' }, h('label', {}, h('input', { type: 'checkbox', id: 'scratch-causal', checked: s.causal, onchange: (e) => this.#set({ causal: e.target.checked }) }), ' causal mask')),
        this.#table('masked', 'Scaled scores Q·Kᵀ / √d_k (−∞ where the mask forbids a look)', { heat: 'signed' }),
        this.#table('masked-weights', 'Weights softmax(scores)', { heat: 'rows' })),
      section('multi-head',
        h('p', {}, 'Multi-head attention splits Q, K and V by columns into H heads of d_k = d / H, runs attention in each head on its own, concatenates the heads\' outputs side by side and mixes them with one more matrix, W_O. Each head can attend to something different; together they cost about as much as one big head.'),
        h('div', { class: 'controls' }, h('label', {}, 'heads ', h('select', { id: 'scratch-heads', onchange: (e) => this.#set({ heads: Number(e.target.value) }) }, [1, 2, 4].map((n) => h('option', { value: String(n), selected: n === s.heads }, String(n)))))),
        h('div', { class: 'matrix-row', id: 'scratch-head-weights' }),
        h('div', { class: 'matrix-row' }, this.#table('concat', 'Concat of head outputs'), this.#table('mh-output', 'Output = concat · W_O'))),
      section('positions',
        h('p', {}, 'Attention itself has no idea of order. Transformers add a position vector to each word vector. The sinusoidal encoding of "Attention Is All You Need" uses sines and cosines of falling frequencies: PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)). Left columns change fast from one position to the next, right columns slowly, so every position gets a distinct pattern, and nearby positions similar ones.'),
        h('div', { class: 'controls' },
          h('label', {}, 'positions ', h('input', { type: 'range', id: 'scratch-pe-positions', min: '1', max: '128', value: String(s.pePositions), oninput: (e) => this.#set({ pePositions: Number(e.target.value) }) })),
          h('label', {}, 'd ', h('input', { type: 'range', id: 'scratch-pe-dims', min: '2', max: '128', step: '2', value: String(s.peDims), oninput: (e) => this.#set({ peDims: Number(e.target.value) }) }))),
        h('heat-map', { id: 'scratch-pe' })),
      section('permutation',
        h('p', {}, 'Shuffle the words and, without positions, the outputs are the same rows shuffled the same way: self-attention is permutation-equivariant, so "dog bites man" and "man bites dog" would mean the same. Add the positional encoding and the outputs change: order now matters.'),
        h('div', { class: 'controls' },
          h('button', { type: 'button', id: 'scratch-shuffle', onclick: () => this.#shuffle() }, 'Shuffle the words'),
          h('label', {}, h('input', { type: 'checkbox', id: 'scratch-with-pe', checked: s.withPositions, onchange: (e) => this.#set({ withPositions: e.target.checked }) }), ' add positional encoding')),
        h('div', { class: 'matrix-row' }, this.#table('perm-original', 'Output for the original order'), this.#table('perm-shuffled', 'Output for the shuffled order')),
        h('p', { class: 'check', id: 'scratch-perm-check', role: 'status' })),
      section('cross-attention',
        h('p', {}, 'A translation model has two parts. The encoder reads the whole source sentence with self-attention; the decoder writes the translation one word at a time. Between them sits cross-attention: the queries come from the decoder (the French word being written), the keys and values from the encoder (the English words). Q = X_dec·W_Q, K = X_enc·W_K, V = X_enc·W_V, and the weights softmax(Q·Kᵀ / √d_k) form a matrix with one row per target word and one column per source word: the alignment matrix of the tutorial. There is no causal mask here: the whole source sentence is there before the first French word is written.'),
        h('p', {}, 'The tutorial\'s example: "European Economic Area" becomes "zone économique européenne". The order flips, so "zone" reads "Area", jumping over "European" and "Economic", and each later word looks one word back. The decoder\'s states here list their axes in another order (place, economy, Europe) than the encoder\'s (Europe, economy, place): W_Q turns them around so that queries and keys meet. Edit any number and watch the alignment follow.'),
        h('div', { class: 'controls' }, h('button', { type: 'button', id: 'scratch-reset-cross', onclick: () => this.#set({ cross: clone(this.#crossPreset) }) }, 'Reset the example')),
        h('div', { class: 'matrix-row' },
          this.#table('cross-x-encoder', 'X_enc (encoder states, source words)', { editable: true }),
          this.#table('cross-x-decoder', 'X_dec (decoder states, target words)', { editable: true })),
        h('div', { class: 'matrix-row' },
          this.#table('cross-wq', 'W_Q (decoder → query)', { editable: true }),
          this.#table('cross-wk', 'W_K (encoder → key)', { editable: true }),
          this.#table('cross-wv', 'W_V (encoder → value)', { editable: true })),
        h('div', { class: 'matrix-row' },
          this.#table('cross-q', 'Q = X_dec·W_Q (from the decoder)'),
          this.#table('cross-k', 'K = X_enc·W_K (from the encoder)'),
          this.#table('cross-v', 'V = X_enc·W_V (from the encoder)')),
        this.#table('cross-scores', 'Scores Q·Kᵀ: target words (rows) × source words (columns)', { heat: 'signed' }),
        this.#table('cross-weights', 'The alignment matrix softmax(Q·Kᵀ / √d_k): what each target word reads in the source', { heat: 'rows' }),
        this.#table('cross-output', 'Output = weights · V: what each target word takes from the source'),
        h('p', { class: 'check', id: 'scratch-cross-check', role: 'status' })),
    ];
    this.replaceChildren(nav, h('div', { class: 'steps' }, steps));
  }

  #set(patch) {
    Object.assign(this.#state, patch);
    this.update();
  }

  // "Scores × 100": the seed's experiment (raw scores × 100, no √d_k) on this
  // step's tables; a second click restores the settings it replaced.
  #toggleTimes100() {
    const before = this.#state.beforeTimes100;
    if (before) this.#set({ ...before, beforeTimes100: null });
    else this.#set({ beforeTimes100: { scale: this.#state.scale, temperature: this.#state.temperature }, scale: false, temperature: 0.01 });
  }

  #resetProjection() {
    this.#state.projection = clone(this.#preset);
    Object.assign(this.#state, { scale: true, temperature: 1, beforeTimes100: null, causal: false, focus: 0, permutation: this.#preset.tokens.map((_, i) => i) });
    if (this.#client) this.update();
  }

  #shuffle() {
    const p = [...this.#state.permutation];
    if (p.length < 2) return; // one word has no other order
    do {
      for (let i = p.length - 1; i > 0; i -= 1) {
        const j = Math.floor(Math.random() * (i + 1));
        [p[i], p[j]] = [p[j], p[i]];
      }
    } while (p.every((v, i) => v === this.#state.permutation[i]));
    this.#set({ permutation: p });
  }

  #onMatrixInput(event) {
    const key = event.target.dataset.key;
    const rows = rowsOf(event.detail.matrix);
    if (key === 'embeddings') {
      Object.keys(this.#state.embeddings).forEach((word, i) => { this.#state.embeddings[word] = rows[i]; });
    } else if (['x', 'wq', 'wk', 'wv'].includes(key)) {
      this.#state.projection[key] = rows;
    } else if (key in CROSS_INPUTS) {
      this.#state.cross[CROSS_INPUTS[key]] = rows;
    }
    this.update();
  }

  /** Recomputes every step with the engine and redraws; resolves when done. */
  async update() {
    const generation = ++this.#generation;
    const s = this.#state;
    const client = this.#client;
    const words = Object.keys(s.embeddings);
    const [sentenceA, sentenceB] = staticEmbeddings.sentences;
    const embed = (sentence) => sentence.map((w) => s.embeddings[w]);
    const p = s.projection;
    const pe = (t, d) => client.positionalEncoding(t, d);
    const permuted = s.permutation.map((i) => p.x[i]);
    const addPositions = async (x) => {
      if (!s.withPositions) return x;
      const table = rowsOf(await pe(x.length, x[0].length));
      return x.map((row, i) => row.map((v, j) => v + table[i][j]));
    };
    const options = { scale: s.scale, temperature: s.temperature };
    try {
      const [a, b, main, masked, multi, peMatrix, original, shuffled] = await Promise.all([
        client.parameterFreeAttention({ x: embed(sentenceA) }),
        client.parameterFreeAttention({ x: embed(sentenceB) }),
        // Step 7's settings (√d_k, temperature, × 100) act on step 7 only; step 8 adds its mask to the tutorial's settings.
        client.attention({ x: p.x, wq: p.wq, wk: p.wk, wv: p.wv, ...options, causal: false }),
        client.attention({ x: p.x, wq: p.wq, wk: p.wk, wv: p.wv, causal: s.causal }),
        client.attention({ ...s.multi, heads: s.heads }),
        pe(s.pePositions, s.peDims),
        addPositions(p.x).then((x) => client.attention({ x, wq: p.wq, wk: p.wk, wv: p.wv })),
        addPositions(permuted).then((x) => client.attention({ x, wq: p.wq, wk: p.wk, wv: p.wv })),
      ]);
      // The tutorial's experiment: the raw scores multiplied by 100 (no √d_k).
      const times100 = await client.attend({ q: main.q, k: main.k, v: main.v, scale: false, temperature: 0.01 });
      const cross = await this.#crossAttention();
      if (generation !== this.#generation) return;
      this.#render({ words, sentenceA, sentenceB, a, b, main, times100, masked, multi, peMatrix, original, shuffled, cross });
      this.dataset.state = 'ready';
    } catch (error) {
      if (generation !== this.#generation) return;
      this.dataset.state = 'error';
      this.querySelector('#scratch-printed-check').textContent = `Cannot compute: ${error.message}`;
    }
  }

  // Cross-attention in the core: Q from the decoder's states, K and V from the encoder's.
  async #crossAttention() {
    const c = this.#state.cross;
    const client = this.#client;
    const [q, k, v] = await Promise.all([
      client.matmul({ a: c.xDecoder, b: c.wq }),
      client.matmul({ a: c.xEncoder, b: c.wk }),
      client.matmul({ a: c.xEncoder, b: c.wv }),
    ]);
    return client.attend({ q, k, v });
  }

  #render(r) {
    const s = this.#state;
    const p = s.projection;
    const t = (key) => this.#tables.get(key);
    const dims = staticEmbeddings.dimensions;
    const tokens = p.tokens;
    const showIfChanged = (key, matrix, options) => {
      const table = t(key);
      if (table.matches(':focus-within')) return; // keep the reader's cursor in an edited table
      table.show(matrix, options);
    };
    const fromRows = (rows) => ({ data: Float32Array.from(rows.flat()), shape: [rows.length, rows[0].length] });

    showIfChanged('embeddings', fromRows(Object.values(s.embeddings)), { rowLabels: r.words, colLabels: dims });
    t('sim-a').show(r.a.scores, { rowLabels: r.sentenceA, colLabels: r.sentenceA });
    t('sim-b').show(r.b.scores, { rowLabels: r.sentenceB, colLabels: r.sentenceB });
    t('weights-a').show(r.a.weights, { rowLabels: r.sentenceA, colLabels: r.sentenceA });
    t('weights-b').show(r.b.weights, { rowLabels: r.sentenceB, colLabels: r.sentenceB });
    t('contextual-a').show(r.a.output, { rowLabels: r.sentenceA, colLabels: dims });
    t('contextual-b').show(r.b.output, { rowLabels: r.sentenceB, colLabels: dims });
    const bankA = rowsOf(r.a.output)[r.sentenceA.indexOf('bank')];
    const bankB = rowsOf(r.b.output)[r.sentenceB.indexOf('bank')];
    t('bank-compare').show(fromRows([s.embeddings.bank, bankA, bankB]), { rowLabels: ['static "bank"', 'bank in "money bank grows"', 'bank in "river bank"'], colLabels: dims });

    const head = r.main.heads[0];
    const dLabels = Array.from({ length: p.x[0].length }, (_, i) => `d${i}`);
    showIfChanged('x', fromRows(p.x), { rowLabels: tokens, colLabels: dLabels });
    // W_Q and W_K map to the key/query dimensions k0.., W_V to the value dimensions v0..
    for (const [key, prefix] of [['wq', 'k'], ['wk', 'k'], ['wv', 'v']]) showIfChanged(key, fromRows(p[key]), { rowLabels: dLabels, colLabels: Array.from({ length: p[key][0].length }, (_, i) => `${prefix}${i}`) });
    t('q').show(r.main.q, { rowLabels: tokens });
    t('k').show(r.main.k, { rowLabels: tokens });
    t('v').show(r.main.v, { rowLabels: tokens });
    t('scores').show(head.scores, { rowLabels: tokens, colLabels: tokens });
    t('weights').show(head.weights, { rowLabels: tokens, colLabels: tokens });
    t('output').show(r.main.output, { rowLabels: tokens, digits: 8 });
    this.#renderBars(tokens, head, r.times100);
    this.#renderPrintedCheck(r.main);

    this.querySelector('#scratch-causal').checked = s.causal;
    this.querySelector('#scratch-scale').checked = s.scale;
    this.querySelector('#scratch-temperature').value = String(s.temperature);
    const times100 = this.querySelector('#scratch-times100');
    times100.setAttribute('aria-pressed', String(s.beforeTimes100 !== null));
    times100.textContent = s.beforeTimes100 ? 'Undo × 100' : 'Scores × 100';
    const maskedHead = r.masked.heads[0];
    t('masked').show(maskedHead.masked, { rowLabels: tokens, colLabels: tokens });
    t('masked-weights').show(maskedHead.weights, { rowLabels: tokens, colLabels: tokens });

    const holder = this.querySelector('#scratch-head-weights');
    holder.replaceChildren(...r.multi.heads.map((mh, i) => {
      const table = h('matrix-table', { caption: `Head ${i + 1} weights (d_k = ${mh.q.shape[1]})`, heat: 'rows' });
      table.show(mh.weights, { rowLabels: s.multi.tokens, colLabels: s.multi.tokens });
      return table;
    }));
    t('concat').show(r.multi.concat, { rowLabels: s.multi.tokens });
    t('mh-output').show(r.multi.output, { rowLabels: s.multi.tokens });

    this.querySelector('#scratch-pe').show(r.peMatrix, { rowName: 'position', colName: 'dimension', description: `sinusoidal positional encoding, ${s.pePositions} positions by ${s.peDims} dimensions` });

    this.#renderCross(r.cross);

    const permutedTokens = s.permutation.map((i) => tokens[i]);
    t('perm-original').show(r.original.output, { rowLabels: tokens });
    t('perm-shuffled').show(r.shuffled.output, { rowLabels: permutedTokens });
    const originalRows = rowsOf(r.original.output);
    const difference = maxAbsDifference(rowsOf(r.shuffled.output), s.permutation.map((i) => originalRows[i]));
    this.querySelector('#scratch-perm-check').textContent = difference < 1e-5
      ? `Each word's output is the same in both orders (largest difference ${difference.toExponential(1)}): attention alone ignores order.`
      : `With positions, the same word gets a different output in another place (largest difference ${difference.toFixed(4)}).`;
  }

  #renderCross(result) {
    const c = this.#state.cross;
    const t = (key) => this.#tables.get(key);
    const fromRows = (rows) => ({ data: Float32Array.from(rows.flat()), shape: [rows.length, rows[0].length] });
    const axes = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    const edit = (key, rows, options) => { if (!t(key).matches(':focus-within')) t(key).show(fromRows(rows), options); };
    edit('cross-x-encoder', c.xEncoder, { rowLabels: c.source, colLabels: c.sourceAxes });
    edit('cross-x-decoder', c.xDecoder, { rowLabels: c.target, colLabels: c.targetAxes });
    edit('cross-wq', c.wq, { rowLabels: c.targetAxes, colLabels: axes('k', c.wq[0].length) });
    edit('cross-wk', c.wk, { rowLabels: c.sourceAxes, colLabels: axes('k', c.wk[0].length) });
    edit('cross-wv', c.wv, { rowLabels: c.sourceAxes, colLabels: axes('v', c.wv[0].length) });
    t('cross-q').show(result.q, { rowLabels: c.target });
    t('cross-k').show(result.k, { rowLabels: c.source });
    t('cross-v').show(result.v, { rowLabels: c.source });
    t('cross-scores').show(result.scores, { rowLabels: c.target, colLabels: c.source });
    t('cross-weights').show(result.weights, { rowLabels: c.target, colLabels: c.source });
    t('cross-output').show(result.output, { rowLabels: c.target });
    // Which source word each target word reads most, against the tutorial's figure.
    const weights = rowsOf(result.weights);
    const read = c.target.map((word, i) => ({ word, source: c.source[weights[i].indexOf(Math.max(...weights[i]))], weight: Math.max(...weights[i]) }));
    const reads = read.map(({ word, source, weight }) => `"${word}" reads "${source}" (${weight.toFixed(2)})`).join(', ');
    const { aligned } = this.#crossPreset; // the tutorial's alignment, for its own example
    let verdict = 'the source word each target word reads most.';
    if (aligned) {
      verdict = read.every(({ word, source }) => aligned[word] === source)
        ? 'the word order flips, as in the tutorial\'s alignment matrix.'
        : `not the tutorial's alignment (${Object.entries(aligned).map(([word, source]) => `${word} ↔ ${source}`).join(', ')}).`;
    }
    this.querySelector('#scratch-cross-check').textContent = `${reads}: ${verdict}`;
  }

  #renderBars(tokens, head, times100) {
    const s = this.#state;
    const focus = Math.min(s.focus, tokens.length - 1);
    const select = this.querySelector('#scratch-focus');
    if (select.options.length !== tokens.length) {
      select.replaceChildren(...tokens.map((token, i) => h('option', { value: String(i) }, token)));
    }
    select.value = String(focus);
    const n = tokens.length;
    const row = (m) => Array.from(m.data.subarray(focus * n, (focus + 1) * n));
    const series = [
      [`current settings (divisor ${head.divisor.toFixed(3)})`, row(head.weights)],
      ['raw scores × 100', row(times100.weights)],
    ];
    const bars = this.querySelector('#scratch-bars');
    bars.setAttribute('aria-label', `softmax weights of the query ${tokens[focus]}`);
    bars.replaceChildren(...series.map(([label, weights]) => h('figure', {},
      h('figcaption', {}, label),
      ...weights.map((w, j) => h('div', { class: 'bar' },
        h('span', { class: 'bar-label' }, tokens[j]),
        h('span', { class: 'bar-fill', style: `width: ${(w * 100).toFixed(2)}%` }),
        h('span', { class: 'bar-value' }, w.toFixed(4)))))));
  }

  #renderPrintedCheck(result) {
    const s = this.#state;
    const check = this.querySelector('#scratch-printed-check');
    const preset = this.#preset;
    if (!preset.printedOutput) {
      check.textContent = '';
      return;
    }
    const samePreset = ['x', 'wq', 'wk', 'wv'].every((key) => JSON.stringify(s.projection[key]) === JSON.stringify(preset[key]));
    if (!samePreset || !s.scale || s.temperature !== 1) {
      check.textContent = 'Inputs or settings differ from the tutorial\'s, so this output differs from its printout.';
      return;
    }
    const difference = maxAbsDifference(rowsOf(result.output), preset.printedOutput);
    check.textContent = difference < 1e-6
      ? `Matches the tutorial's printed output to within ${difference.toExponential(1)}.`
      : `Differs from the tutorial's printed output by ${difference}.`;
  }
}

customElements.define('scratch-view', ScratchView);
