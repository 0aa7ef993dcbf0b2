// JS values -> the typed arrays and row-major { data, shape } matrices the
// WASM bindings take (with readable errors for bad input), and matrices back
// to rows. Pure functions: nothing here calls the WASM module (engine.js does).
// Not here: tokenization, model files.
import { AttnplayError } from './errors.js';

/** The attention parts of an encoder–decoder, as the core names them. */
export const SEQ2SEQ_PARTS = ['encoder', 'decoder', 'cross'];

/**
 * A row-major float32 matrix as the core takes and returns it.
 * @typedef {{ data: Float32Array, shape: [number, number] }} Matrix
 */

/** Accepts a Matrix or nested number arrays (rows) and returns a Matrix. */
export function toMatrix(value, name = 'matrix') {
  if (value && value.data && value.shape) {
    return { data: value.data instanceof Float32Array ? value.data : Float32Array.from(value.data), shape: value.shape };
  }
  if (!Array.isArray(value) || value.length === 0 || !Array.isArray(value[0])) {
    throw new AttnplayError(`${name}: expected { data, shape } or a non-empty array of rows`);
  }
  const rows = value.length;
  const cols = value[0].length;
  const data = new Float32Array(rows * cols);
  value.forEach((row, r) => {
    if (!Array.isArray(row) || row.length !== cols) {
      throw new AttnplayError(`${name}: row ${r} does not have ${cols} numbers`);
    }
    data.set(row, r * cols);
  });
  return { data, shape: [rows, cols] };
}

/** Rows of a Matrix as plain arrays (for display and tests). */
export function toRows(matrix) {
  const [rows, cols] = matrix.shape;
  return Array.from({ length: rows }, (_, r) => Array.from(matrix.data.subarray(r * cols, (r + 1) * cols)));
}

/** A matmul's right-hand operand: a float32 matrix, or half-precision bit patterns { dtype, bits, shape } passed as they are. */
export function rightOperand(b) {
  if (b && b.dtype !== undefined) return { dtype: b.dtype, bits: b.bits instanceof Uint16Array ? b.bits : Uint16Array.from(b.bits), shape: b.shape };
  return toMatrix(b, 'b');
}

const MATRIX_KEYS = ['x', 'q', 'k', 'v', 'wq', 'wk', 'wv', 'wo'];

/** An attention spec with its matrices as Matrix and keyMask as a Uint8Array of 0/1. */
export function attentionSpec(spec) {
  const out = { ...spec };
  for (const key of MATRIX_KEYS) {
    if (spec[key] !== undefined) out[key] = toMatrix(spec[key], key);
  }
  if (spec.keyMask !== undefined) out.keyMask = Uint8Array.from(spec.keyMask, (v) => (v ? 1 : 0));
  return out;
}

const utf8Encoder = new TextEncoder();

/** Text as UTF-8 bytes; a Uint8Array passes as it is (any bytes, even invalid UTF-8). */
export function utf8(text, name) {
  if (text instanceof Uint8Array) return text;
  if (typeof text !== 'string') throw new AttnplayError(`${name}: expected a string or a Uint8Array`);
  return utf8Encoder.encode(text);
}

/** An array of 32-bit integers as an Int32Array (an error names the first bad value). */
export function int32Array(values, name) {
  if (values == null || typeof values.length !== 'number') throw new AttnplayError(`${name}: expected an array of integers`);
  const out = new Int32Array(values.length);
  for (let i = 0; i < values.length; i += 1) {
    const v = values[i];
    if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) {
      throw new AttnplayError(`${name}: ${String(v)} at index ${i} is not a 32-bit integer`);
    }
    out[i] = v;
  }
  return out;
}

/**
 * A traced head, checked: { layer, head } integers, and its part when it names
 * one (an encoder–decoder's: whether the model has that part is the core's
 * check, with its message).
 */
export function traceSpec(trace) {
  const { layer, head, part } = trace;
  if (!Number.isInteger(layer) || !Number.isInteger(head)) throw new AttnplayError('trace: expected { layer, head } integers');
  return part == null ? { layer, head } : { part: String(part), layer, head };
}

// The logit lens's k (options.lens), checked: a positive integer.
function lensK(k) {
  if (!Number.isInteger(k) || k < 1) throw new AttnplayError(`lens: expected the number of predictions per cell (an integer ≥ 1), not ${k}`);
  return k;
}

/**
 * The one request of every model's forward, run and rankHeads (engine.js:
 * TextModel's and TranslationModel's) as the bindings read it
 * (cpp/bindings/request_js.h, request_from_js, into the core's
 * ForwardRequest): every option checked and converted here and only here.
 * { ids, pixels (vision: pixelsSpec), sourceIds, typeIds, attentionMask, maskPositions, trace: { layer, head },
 * hiddenStates, logits, topK, lens, ablate, ablation, tokenLoss, maskLabels };
 * other keys are left out. An encoder–decoder's request (withPart) has
 * sourceIds, its ids are the decoder's, and its heads name their part
 * ({ part, layer, head }). A run on text leaves ids, typeIds, attentionMask
 * and maskPositions to the text.
 */
export function forwardRequestSpec(options, { withPart = false } = {}) {
  const spec = {};
  for (const key of ['ids', 'sourceIds', 'typeIds', 'maskPositions', 'maskLabels', 'predictionPositions']) {
    if (options[key] != null) spec[key] = int32Array(options[key], key);
  }
  if (options.attentionMask != null) spec.attentionMask = Uint8Array.from(options.attentionMask, (v) => (v ? 1 : 0));
  if (options.pixels != null) spec.pixels = pixelsSpec(options.pixels);
  if (options.trace != null) spec.trace = traceSpec(options.trace);
  if (options.topK != null) {
    if (!Number.isInteger(options.topK)) throw new AttnplayError('topK: expected an integer');
    spec.topK = options.topK;
  }
  if (options.lens != null) spec.lens = lensK(options.lens);
  spec.hiddenStates = Boolean(options.hiddenStates);
  spec.logits = Boolean(options.logits);
  Object.assign(spec, ablationSpec(options, { withPart }));
  spec.tokenLoss = Boolean(options.tokenLoss);
  return spec;
}

/**
 * A vision model's preprocessed pixels { data, shape: [channels, height, width] }
 * (numbers, channels first) -> { data: Float32Array, shape }.
 */
export function pixelsSpec(pixels) {
  const shape = pixels?.shape;
  if (!Array.isArray(shape) || shape.length !== 3 || !shape.every((n) => Number.isInteger(n) && n > 0)) {
    throw new AttnplayError('pixels: expected { data, shape: [channels, height, width] }');
  }
  const data = pixels.data instanceof Float32Array ? pixels.data : Float32Array.from(pixels.data ?? []);
  if (data.length !== shape[0] * shape[1] * shape[2]) {
    throw new AttnplayError(`pixels: ${data.length} values for the shape [${shape.join(', ')}]`);
  }
  return { data, shape: [...shape] };
}

/**
 * A picture to run: an ImageData or { data: RGBA bytes (Uint8ClampedArray or
 * Uint8Array, 4 per pixel, row by row), width, height } -> { data: Uint8Array, width, height }.
 */
export function pictureSpec(picture) {
  const { width, height } = picture ?? {};
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new AttnplayError('picture: expected an ImageData or { data (RGBA bytes), width, height } of at least 1×1 pixels');
  }
  const data = picture.data;
  if (!ArrayBuffer.isView(data) || data.length !== width * height * 4) {
    throw new AttnplayError(`picture: ${data?.length ?? 0} bytes of RGBA for ${width}×${height} pixels (${width * height * 4} expected)`);
  }
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width, height };
}

/**
 * options.ablate [{ layer, head }] and options.ablation ('zero' | 'mean') ->
 * { ablate: [{ layer, head }], ablation } (empty object when nothing is
 * ablated and no mode is named). Whether a head exists is the core's check.
 * withPart (encoder–decoders): each entry is { part: 'encoder' | 'decoder' | 'cross',
 * layer, head }.
 */
export function ablationSpec({ ablate, ablation } = {}, { withPart = false } = {}) {
  const spec = {};
  if (ablate != null) {
    const form = withPart ? '{ part, layer, head }' : '{ layer, head }';
    if (!Array.isArray(ablate)) throw new AttnplayError(`ablate: expected an array of ${form}`);
    const heads = ablate.map((h, i) => {
      if (h == null || !Number.isInteger(h.layer) || !Number.isInteger(h.head) || (withPart && !SEQ2SEQ_PARTS.includes(h.part))) {
        throw new AttnplayError(`ablate: entry ${i} is not ${form}${withPart ? ` (part: ${SEQ2SEQ_PARTS.join(', ')}; layer and head integers)` : ' integers'}`);
      }
      return h.part == null ? { layer: h.layer, head: h.head } : { part: String(h.part), layer: h.layer, head: h.head };
    });
    spec.ablate = heads;
  }
  if (ablation != null) {
    if (ablation !== 'zero' && ablation !== 'mean') throw new AttnplayError(`ablation: 'zero' or 'mean', not '${String(ablation)}'`);
    spec.ablation = ablation;
  }
  return spec;
}
