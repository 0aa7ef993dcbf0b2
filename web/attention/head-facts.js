// Facts the views print beside a head: which key/value head it reads
// (grouped-query attention: in Llama, Mistral and Qwen models a group of
// heads / kvHeads query heads shares one key and value head) and its
// attention-sink score on the text shown (the mean weight the queries after
// the first put on the first token: near 1 when the head "rests" there).
// Not here: drawing, the head-pattern analysis of the core (analyzeHeads).

/** The key/value head (0-based) that query head `head` reads, of `kvHeads` (= heads without GQA). */
export function kvHeadOf(head, heads, kvHeads = heads) {
  return Math.floor(head / (heads / kvHeads));
}

/** Whether a model shares key/value heads among query heads (GQA, or MQA with one). */
export const sharesKeyValues = (heads, kvHeads) => kvHeads != null && kvHeads < heads;

/** The query heads (0-based) that share the key/value head of `head`. */
export function kvGroup(head, heads, kvHeads) {
  const size = heads / kvHeads;
  const first = kvHeadOf(head, heads, kvHeads) * size;
  return Array.from({ length: size }, (_, i) => first + i);
}

/**
 * Attention-sink score of one head: the mean, over queries 1..Tq-1, of the
 * weight on key 0. attentions: { data, shape [L, H, Tq, Tk] }. null with
 * fewer than two queries.
 */
export function sinkScore(attentions, layer, head) {
  const [, H, Tq, Tk] = attentions.shape;
  if (Tq < 2) return null;
  const base = (layer * H + head) * Tq * Tk;
  let sum = 0;
  for (let q = 1; q < Tq; q += 1) sum += attentions.data[base + q * Tk];
  return sum / (Tq - 1);
}

/** "sink 82%" */
export const sinkText = (score) => (score === null ? '' : `sink ${Math.round(score * 100)}%`);
