// Worked examples from the tutorials the playground teaches (../shared/seeds),
// as inputs for the from-scratch attention. Data only.

/**
 * Seed 004 (general attention in NumPy): four words as 3-d embeddings, W_Q,
 * W_K, W_V drawn by np.random.randint(3, size=(3, 3)) after np.random.seed(42),
 * scores scaled by √d_k = √3. The tutorial prints the resulting attention.
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
};
