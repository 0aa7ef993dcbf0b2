// Worked examples from the tutorials the playground teaches (../shared/seeds),
// as inputs for the from-scratch lessons and the embeddable widget. Data only.

/**
 * Seed 003 (self-attention from first principles): static word embeddings
 * give "bank" the same vector, [0.6, 0.2, 0.1, 0.7], in "money bank grows"
 * and in "river bank"; a weighted sum over the sentence makes it contextual.
 * The other vectors are ours, on four readable axes.
 */
export const staticEmbeddings = {
  dimensions: ['finance', 'nature', 'growth', 'place'],
  words: {
    money: [0.9, 0.0, 0.3, 0.1],
    bank: [0.6, 0.2, 0.1, 0.7],
    grows: [0.3, 0.5, 0.9, 0.0],
    river: [0.0, 0.9, 0.1, 0.6],
  },
  sentences: [['money', 'bank', 'grows'], ['river', 'bank']],
};

/**
 * Seed 004 (general attention in NumPy): four words as 3-d embeddings, W_Q,
 * W_K, W_V drawn by np.random.randint(3, size=(3, 3)) after np.random.seed(42),
 * scores scaled by √d_k = √3. `printedOutput` is what the tutorial prints.
 */
export const numpySeedExample = {
  title: 'The NumPy example: four words, seed 42',
  tokens: ['word_1', 'word_2', 'word_3', 'word_4'],
  x: [[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]],
  wq: [[2, 0, 2], [2, 0, 0], [2, 1, 2]],
  wk: [[2, 2, 2], [0, 2, 1], [0, 1, 1]],
  wv: [[1, 1, 0], [0, 1, 1], [0, 0, 0]],
  heads: 1,
  scale: true,
  printedOutput: [
    [0.98522025, 1.74174051, 0.75652026],
    [0.90965265, 1.40965265, 0.5],
    [0.99851226, 1.75849334, 0.75998108],
    [0.99560386, 1.90407309, 0.90846923],
  ],
};

/**
 * Multi-head example on seed 000's sentence "She bears the pain": d = 4 so it
 * splits into 1, 2 or 4 heads; W_O mixes the concatenated heads back.
 */
export const multiHeadExample = {
  tokens: ['She', 'bears', 'the', 'pain'],
  x: [[1.0, 0.2, 0.0, 0.5], [0.1, 1.0, 0.6, 0.0], [0.0, 0.1, 0.2, 0.1], [0.3, 0.0, 1.0, 0.8]],
  wq: [[1, 0, 0.5, 0], [0, 1, 0, 0.5], [0.5, 0, 1, 0], [0, 0.5, 0, 1]],
  wk: [[0, 1, 0, 0.5], [1, 0, 0.5, 0], [0, 0.5, 0, 1], [0.5, 0, 1, 0]],
  wv: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
  wo: [[0.5, 0.5, 0, 0], [0, 0.5, 0.5, 0], [0, 0, 0.5, 0.5], [0.5, 0, 0, 0.5]],
};

/**
 * Seed 004's alignment matrix of a translation model: "European Economic
 * Area" becomes "zone économique européenne", so the word order flips and
 * the cross-attention runs against the diagonal ("zone" reads "Area",
 * jumping over "European" and "Economic", then each word looks one word
 * back). Queries come from the decoder's states (one per French word, on the
 * axes place, economy, Europe), keys and values from the encoder's (one per
 * English word, on the axes Europe, economy, place); W_Q turns the decoder's
 * axes into the encoder's. The vectors are ours; `aligned` is what the
 * tutorial's figure shows: the source word each target word reads most.
 */
export const seedAlignmentExample = {
  source: ['European', 'Economic', 'Area'],
  target: ['zone', 'économique', 'européenne'],
  sourceAxes: ['Europe', 'economy', 'place'],
  targetAxes: ['place', 'economy', 'Europe'],
  xEncoder: [[1, 0, 0.2], [0.1, 1, 0], [0, 0.3, 1]],
  xDecoder: [[1, 0.2, 0], [0, 1, 0.1], [0.2, 0.1, 1]],
  wq: [[0, 0, 2], [0, 2, 0], [2, 0, 0]],
  wk: [[2, 0, 0], [0, 2, 0], [0, 0, 2]],
  wv: [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
  aligned: { zone: 'Area', économique: 'Economic', européenne: 'European' },
};
