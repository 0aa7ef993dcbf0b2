// Encoder–decoder attention in the form the views draw. Cross-attention
// [L, H, T, S] (T decoder tokens reading S encoder tokens) becomes a result
// over the S source tokens followed by the T target tokens, whose B → A block
// (target rows, source columns; the pair filter 'b-a') holds the weights, so
// the head, matrix and model views draw it as they draw sentence pairs; the
// tensor itself stays in result.cross for the decoding view (crossMap).
// Used by the widget's data mode (attention-data-source.js) and by the
// page's translations. Not here: reading or validating data, drawing.
import { activeHeads, headMean } from './view-support.js';

/**
 * Views' result of cross-attention.
 * source, target: { tokens, text } (tokens as the views take them);
 * attentions: { data, shape: [L, H, T, S] }.
 * Returns { tokens (source then target; typeId 0 / 1), attentions [L, H, S + T, S + T],
 * texts, causal: false, modelType, filter: 'b-a', cross: { attentions } }.
 */
export function crossResult(source, target, attentions, modelType) {
  const [layers, heads, queries, keys] = attentions.shape;
  if (queries !== target.tokens.length || keys !== source.tokens.length) {
    throw new RangeError(`cross-attention of shape [${attentions.shape.join(', ')}] does not join ${target.tokens.length} target and ${source.tokens.length} source tokens`);
  }
  const t = keys + queries;
  const data = new Float32Array(layers * heads * t * t); // [L, H, S + T, S + T], only rows S.. × cols ..S set
  for (let m = 0; m < layers * heads; m += 1) {
    for (let q = 0; q < queries; q += 1) data.set(attentions.data.subarray((m * queries + q) * keys, (m * queries + q + 1) * keys), (m * t + keys + q) * t);
  }
  const tokens = [
    ...source.tokens.map((token) => ({ ...token, typeId: 0, segment: 0 })),
    ...target.tokens.map((token) => ({ ...token, typeId: 1, segment: 1 })),
  ];
  return {
    tokens, attentions: { data, shape: [layers, heads, t, t] }, texts: [source.text, target.text],
    causal: false, modelType, filter: 'b-a', cross: { attentions },
  };
}

/**
 * The cross-attention of the heads the state selects in state.layer (one
 * head's weights, or their mean): { data: Float32Array [T * S], shape: [T, S],
 * heads }, or null when no head is selected or the layer is out of range.
 */
export function crossMap(result, state) {
  const { attentions } = result.cross;
  const [layers, , queries, keys] = attentions.shape;
  if (state.layer < 0 || state.layer >= layers) return null;
  const heads = activeHeads(result, state);
  if (heads.length === 0) return null;
  return { data: headMean(attentions, state.layer, heads), shape: [queries, keys], heads };
}
