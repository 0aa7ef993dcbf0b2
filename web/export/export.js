// Exports of what the page shows: the attention tensor as .npy (NumPy's
// format, version 1.0, little-endian float32) and as JSON (with a vision
// transformer's picture in the widget's data-mode form), and a download
// helper. Not here: the PNG and SVG pictures (each view's exportCanvas() and
// svg(), SVG through svg-writer.js).
import { pixelsAsPng } from '../run/image-run.js';

/** .npy bytes of a float32 tensor { data, shape }. */
export function toNpy({ data, shape }) {
  const dict = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  // Magic (6) + version (2) + header length (2) + header, padded with spaces
  // and ending in \n so that the data starts at a multiple of 64 bytes.
  const unpadded = 10 + dict.length + 1;
  const header = dict + ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const bytes = new Uint8Array(10 + header.length + data.length * 4);
  bytes.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0], 0); // \x93NUMPY v1.0
  new DataView(bytes.buffer).setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i += 1) bytes[10 + i] = header.charCodeAt(i);
  const body = new DataView(bytes.buffer, 10 + header.length);
  for (let i = 0; i < data.length; i += 1) body.setFloat32(i * 4, data[i], true);
  return bytes;
}

/** Bytes as base64 (standard alphabet, padded). */
export function base64OfBytes(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * A vision transformer's picture (a result's `picture`, image-run.js) in the
 * widget's data-mode form (attention-data-source.js): { image: { seen:
 * { width, height, png (base64) }, grid, patch }, top_k, top_k_before, norms }
 * (the last three when the run has them).
 */
export async function pictureData({ seen, grid, patch, topK, topKBefore, norms }) {
  const png = new Uint8Array(await (await pixelsAsPng(seen)).arrayBuffer());
  const labels = (top) => (top ? [{ ids: Array.from(top.ids ?? []), labels: top.labels, probabilities: Array.from(top.probabilities) }] : undefined);
  return {
    image: { seen: { width: seen.width, height: seen.height, png: base64OfBytes(png) }, grid, patch },
    top_k: labels(topK), top_k_before: labels(topKBefore), norms: norms?.map((row) => Array.from(row)),
  };
}

/**
 * JSON text: { model, model_type, texts, tokens (display forms: ␣ for a
 * space, ...), token_text (the characters of the text each token covers;
 * '' for tokens the tokenizer added, such as [CLS]), ids, attentions nested
 * [layer][head][query][key] }. texts: the text (and B) that was run.
 * `picture`: a vision transformer's (pictureData), written beside them.
 */
export function attentionJson({ modelName, modelType, tokens, texts, attentions, picture = null }) {
  return JSON.stringify({
    model: modelName,
    model_type: modelType,
    texts,
    tokens: tokens.map((token) => token.display),
    token_text: tokens.map((token) => texts?.[token.segment]?.slice(token.start, token.end) ?? ''), // none for a picture's tokens
    ids: tokens.map((token) => token.id),
    attentions: nestedTensor(attentions),
    ...picture,
  });
}

/** A [L, H, R, C] tensor as nested lists [layer][head][row][column]. */
function nestedTensor({ data, shape: [layers, heads, rows, cols] }) {
  return Array.from({ length: layers }, (_, l) => Array.from({ length: heads }, (__, h) =>
    Array.from({ length: rows }, (___, r) => Array.from(data.subarray(((l * heads + h) * rows + r) * cols, ((l * heads + h) * rows + r + 1) * cols)))));
}

/**
 * An encoder–decoder run (translation-run.js) as JSON data, in the widget's
 * data-mode form with Hugging Face's names: { model, model_type, source,
 * translation, encoder_tokens, decoder_tokens (the decoder's inputs, the
 * start token first), target_tokens (the token each decoder row wrote),
 * encoder_attentions, decoder_attentions, cross_attentions } (nested
 * [layer][head][query][key]; tensor(a) may give each another form).
 */
export function encoderDecoderJson({ modelName, modelType, run }, tensor = nestedTensor) {
  const displays = (tokens) => tokens.map((token) => token.display);
  const { raw, parts } = run;
  return {
    model: modelName,
    model_type: modelType,
    source: run.source.text,
    translation: run.translation,
    encoder_tokens: displays(raw.sourceTokens),
    decoder_tokens: displays(raw.decoderTokens.slice(0, -1)),
    target_tokens: displays(raw.decoderTokens.slice(1)),
    encoder_attentions: tensor(parts.encoder.result.attentions),
    decoder_attentions: tensor(parts.decoder.result.attentions),
    cross_attentions: tensor(parts.cross.result.cross.attentions),
  };
}

/** Offers `data` (Blob, string or bytes) as a file download. */
export function download(data, filename, type = 'application/octet-stream') {
  const blob = data instanceof Blob ? data : new Blob([data], { type });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
