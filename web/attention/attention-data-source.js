// Attention computed anywhere, read for the widget's data mode: turns what an
// author gives <attention-view> (a JSON file by `src`, a child <script
// type="application/json">, or the `data` property) into the results the
// views draw, and says clearly what is wrong with data it cannot draw.
//
// Accepted (all keys optional except one attention tensor and its tokens):
//   tokens                    strings, or objects { token | display | text | piece, id, special, type_id }
//   ids                       optional token ids beside string tokens (the playground's JSON export)
//   attentions                [layer][head][query][key] (our exports), PyTorch's
//                             output_attentions: [layer][batch = 1][head][query][key],
//                             or one map [query][key] (a hand-made example: one layer, one head)
//   encoder_attentions, decoder_attentions, cross_attentions (encoder–decoder models;
//                             cross: [layer][1][head][decoder token][encoder token])
//   encoder_tokens, decoder_tokens, target_tokens (optional: cross-attention rows
//                             labelled by the token each wrote, as the playground exports)
//   head_labels               [layer][head] of a label or a list of labels
//                             (for encoder–decoder: { encoder, decoder, cross } of those)
//   queries, keys            optional, beside attentions: each head's query and key vectors
//                             [layer][head][token][d] (or [layer][1][head][token][d]), for
//                             the neuron view (q·k ÷ √d, then the softmax)
//   causal, model, model_type
//   image                     a vision transformer's picture, beside attentions (what
//                             `attnplay attention --image` writes and the playground
//                             exports): { seen: { width, height, png (base64 of the
//                             picture as the model saw it, resized and cropped) },
//                             grid: { rows, columns }, patch: { height, width }, width,
//                             height (the picture's own size) }; the tokens are CLS
//                             (and DeiT's distillation token, DINOv2's registers)
//                             first, then the patches row by row
//   top_k, top_k_before       a classifier's labels: [{ ids, labels, probabilities }]
//                             (before: without the knocked-out heads of `ablate`)
//   norms                     [layer + 1][token]: the norm of each token's hidden state
// A tensor is nested arrays, { data: Float32Array, shape }, the bytes of a .npy
// file (float32/float64, [L, H, T, T] or [L, 1, H, T, T]), or base64 of its
// little-endian values (BASE64_DTYPES): { dtype: 'float32', shape, base64 } (the
// one-file export and the notebook recipe), { dtype: 'float16', shape, base64 }
// or { dtype: 'uint8', shape, base64, scales } (each value is its byte times
// its row's scale, scales being base64 float32, one per row of the last
// dimension), the compact forms that the Python package writes; any of them
// may say precision: 'bfloat16' | 'float16' (the model computed the weights
// in it, so their rows' sums get PRECISION_ROW_SLACK more room), and
// triangle: 'lower' (causal attention: the bytes hold each matrix's lower
// triangle, row by row up to the diagonal; the rest is 0).
// Not here: DOM, drawing, the engine (data mode needs no model and no WASM).
import { crossResult } from './encoder-decoder.js';

/** Most values one attention tensor may hold: 2^26 float32 (256 MB), e.g. 12 layers × 12 heads × 682². */
export const MAX_VALUES = 2 ** 26;
/** A row whose weights add up to more than this away from 1 gets a warning. */
export const ROW_SUM_TOLERANCE = 1e-3;
const PART_KEYS = { self: 'attentions', encoder: 'encoder_attentions', decoder: 'decoder_attentions', cross: 'cross_attentions' };
/** Views that need the model itself (queries and keys, logits), not only its weights. */
export const MODEL_VIEWS = {
  neuron: 'The neuron view needs the model’s queries and keys, which attention weights alone do not contain.',
  predictions: 'Predictions need the model’s output layer, which attention weights alone do not contain.',
  lens: 'The logit lens reads the model’s hidden states through its output layer, which attention weights alone do not contain.',
  ablation: 'Ablation needs the model itself to run again with heads switched off.',
  generate: 'Generation needs the model itself to write each next token.',
  compare: 'Comparing two texts needs the model itself to run on the second text.',
};

/** An error in the author's data, with a message that says where and what. */
export class AttentionDataError extends Error {
  name = 'AttentionDataError';
}

/** True when a parsed JSON object is attention data (rather than the scratch view's matrices). */
export function isAttentionData(value) {
  return value !== null && typeof value === 'object' && Object.values(PART_KEYS).some((key) => key in value);
}

/** Parses JSON text, explaining Python's NaN/Infinity (which json.dumps writes but JSON does not allow). */
export function parseJsonText(text, where) {
  try {
    return JSON.parse(text);
  } catch (error) {
    if (/(^|[^\w"])(NaN|-?Infinity)([^\w"]|$)/.test(text)) {
      throw new AttentionDataError(`${where} contains NaN or Infinity, which JSON does not allow (Python's json.dumps writes them): the attention has values that are not numbers`);
    }
    throw new AttentionDataError(`${where} is not valid JSON (${error.message})`);
  }
}

/** .npy bytes -> { data: Float32Array, shape }. Little-endian float32 or float64, C order. */
export function parseNpy(bytes, where = 'the .npy file') {
  const view = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
  if (view.length < 10 || magic.some((b, i) => view[i] !== b)) throw new AttentionDataError(`${where} is not a .npy file (no \\x93NUMPY magic)`);
  const major = view[6];
  const lengthBytes = major === 1 ? 2 : 4;
  const dv = new DataView(view.buffer, view.byteOffset, view.byteLength);
  const headerLength = lengthBytes === 2 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  const start = 8 + lengthBytes;
  if (start + headerLength > view.length) throw new AttentionDataError(`${where} is truncated (its header is longer than the file)`);
  const header = new TextDecoder().decode(view.subarray(start, start + headerLength));
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) throw new AttentionDataError(`${where} has a header this reader does not understand: ${header.trim().slice(0, 80)}`);
  if (fortran === 'True') throw new AttentionDataError(`${where} is in Fortran order; save it with numpy.ascontiguousarray first`);
  const shape = shapeText.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const width = { '<f4': 4, '<f8': 8 }[descr];
  if (!width) throw new AttentionDataError(`${where} holds ${descr} values; only little-endian float32 (<f4) or float64 (<f8) are read`);
  const count = shape.reduce((a, b) => a * b, 1);
  checkSize(count, shape, where);
  const offset = start + headerLength;
  if (view.length - offset !== count * width) throw new AttentionDataError(`${where} should hold ${count} values of shape [${shape.join(', ')}] (${count * width} bytes) but has ${view.length - offset} bytes of data`);
  let data;
  if (width === 4 && (view.byteOffset + offset) % 4 === 0) data = new Float32Array(view.buffer, view.byteOffset + offset, count);
  else {
    data = new Float32Array(count);
    for (let i = 0; i < count; i += 1) data[i] = width === 4 ? dv.getFloat32(offset + 4 * i, true) : dv.getFloat64(offset + 8 * i, true);
  }
  return { data, shape };
}

function checkSize(count, shape, where) {
  if (count > MAX_VALUES) {
    throw new AttentionDataError(`${where} is too large to draw: shape [${shape.join(', ')}] is ${count.toLocaleString('en')} values; the widget draws at most ${MAX_VALUES.toLocaleString('en')} (256 MB of float32). Keep fewer layers or tokens.`);
  }
}

/** The bytes of base64 `text` (a fresh Uint8Array); invalid base64 is an AttentionDataError naming `where`. */
export function base64Bytes(text, where) {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    throw new AttentionDataError(`${where} is not valid base64`);
  }
}

/**
 * The base64 tensors' element types: bytes per value, and decode(bytes,
 * tensor, where, rows) -> { data: Float32Array of the full shape (rows.count
 * rows of rows.width; a row's values past rows.length(row) stay 0) (,
 * rowSumSlack) }. Written straight into place: no packed copy to expand.
 */
const BASE64_DTYPES = {
  float32: { width: 4, decode: (bytes, tensor, where, rows) => ({ data: placeRows(new Float32Array(bytes.buffer), rows) }) },
  float16: { width: 2, decode: (bytes, tensor, where, rows) => ({ data: placeRows(new Uint16Array(bytes.buffer), rows, halfValue()) }) },
  uint8: { width: 1, decode: (bytes, tensor, where, rows) => scaledBytes(bytes, tensor, where, rows) }, // also sets rowSumSlack
};

/** The rows of the last axis of `shape`: { count, width, length(row) }, whole, or (triangle) each up to the diagonal. */
function rowLengths(shape, triangle) {
  const width = shape.length ? shape[shape.length - 1] : 1;
  const count = width ? shape.reduce((a, b) => a * b, 1) / width : 0;
  return { count, width, length: triangle ? (row) => (row % width) + 1 : () => width };
}

/** The written values (rows of rows.length(row), one after another) as float32 in their places: value(written) each (null: as they are). */
function placeRows(written, rows, value = null) {
  if (value === null && written.length === rows.count * rows.width) return written; // whole rows of float32: already in place
  const out = new Float32Array(rows.count * rows.width);
  for (let row = 0, next = 0; row < rows.count; row += 1) {
    const base = row * rows.width;
    const length = rows.length(row);
    if (value === null) out.set(written.subarray(next, next + length), base);
    else for (let i = 0; i < length; i += 1) out[base + i] = value(written[next + i]);
    next += length;
  }
  return out;
}

let halfTable = null; // [65536] float32: every IEEE half's value
/** bits -> the IEEE half's value (by a table built once). */
function halfValue() {
  if (!halfTable) {
    halfTable = new Float32Array(65536);
    for (let bits = 0; bits < 65536; bits += 1) {
      const exponent = (bits >> 10) & 31;
      const mantissa = bits & 1023;
      const magnitude = exponent === 0 ? mantissa * 2 ** -24 : exponent === 31 ? (mantissa ? NaN : Infinity) : (1024 + mantissa) * 2 ** (exponent - 25);
      halfTable[bits] = bits & 0x8000 ? -magnitude : magnitude;
    }
  }
  const table = halfTable;
  return (bits) => table[bits];
}

/**
 * uint8 values times their row's scale (tensor.scales: base64 float32, one per
 * row of the last dimension; `rows` from rowLengths), in their places.
 * Rounding moves each value by up to half its row's scale, so a row's sum may
 * be off by length · scale / 2: that slack (Float32Array, per row) is
 * returned beside the values for checkWeights.
 */
function scaledBytes(bytes, tensor, where, rows) {
  if (typeof tensor.scales !== 'string') throw new AttentionDataError(`${where}.scales is missing: a uint8 tensor needs one float32 scale per row (base64)`);
  const scaleBytes = base64Bytes(tensor.scales, `${where}.scales`);
  if (scaleBytes.length !== rows.count * 4) throw new AttentionDataError(`${where}.scales has ${scaleBytes.length} bytes; ${rows.count} rows need ${rows.count * 4}`);
  const scales = new Float32Array(scaleBytes.buffer);
  const out = new Float32Array(rows.count * rows.width);
  const rowSumSlack = new Float32Array(rows.count);
  for (let row = 0, next = 0; row < rows.count; row += 1) {
    const base = row * rows.width;
    const length = rows.length(row);
    const scale = scales[row];
    for (let i = 0; i < length; i += 1) out[base + i] = bytes[next + i] * scale;
    rowSumSlack[row] = (length * scale) / 2;
    next += length;
  }
  return { data: out, rowSumSlack };
}

/** How far from 1 a row of weights computed in this precision may sum (about twice its unit roundoff). */
const PRECISION_ROW_SLACK = { bfloat16: 2 ** -8, float16: 2 ** -10 };

/** { dtype, shape, base64 (, scales, precision) } -> { data: Float32Array, shape (, rowSumSlack) }. */
function readBase64Tensor(tensor, where) {
  const type = Object.hasOwn(BASE64_DTYPES, tensor.dtype) ? BASE64_DTYPES[tensor.dtype] : null;
  if (!type) throw new AttentionDataError(`${where}.dtype is ${JSON.stringify(tensor.dtype)}; base64 tensors must be ${Object.keys(BASE64_DTYPES).map((d) => `"${d}"`).join(', ')} (little-endian)`);
  const { shape } = tensor;
  if (!Array.isArray(shape) || !shape.every((n) => Number.isInteger(n) && n >= 0)) throw new AttentionDataError(`${where}.shape must be a list of sizes`);
  const count = shape.reduce((a, b) => a * b, 1);
  checkSize(count, shape, where);
  const triangle = tensor.triangle !== undefined;
  if (triangle && (tensor.triangle !== 'lower' || shape.length < 2 || shape[shape.length - 1] !== shape[shape.length - 2])) {
    throw new AttentionDataError(`${where}.triangle may only be "lower", for a tensor whose last two sizes are equal (shape [${shape.join(', ')}])`);
  }
  const rows = rowLengths(shape, triangle);
  const written = triangle ? (count / shape[shape.length - 1]) * ((shape[shape.length - 1] + 1) / 2) : count;
  const bytes = base64Bytes(tensor.base64, `${where}.base64`);
  if (bytes.length !== written * type.width) throw new AttentionDataError(`${where} has ${bytes.length} bytes; shape [${shape.join(', ')}]${triangle ? ' (lower triangles)' : ''} of ${tensor.dtype} needs ${written * type.width}`);
  const decoded = { ...type.decode(bytes, tensor, where, rows), shape };
  if (tensor.precision !== undefined) {
    if (!Object.hasOwn(PRECISION_ROW_SLACK, tensor.precision)) throw new AttentionDataError(`${where}.precision is ${JSON.stringify(tensor.precision)}; it may be "bfloat16" or "float16"`);
    decoded.rowSumSlack = (decoded.rowSumSlack ?? new Float32Array(rows.count)).map((slack) => slack + PRECISION_ROW_SLACK[tensor.precision]);
  }
  return decoded;
}

/** Nested arrays: their shape (following first elements) and the values, checked to be a full grid of numbers. */
function flattenNested(value, where) {
  const shape = [];
  for (let probe = value; Array.isArray(probe); probe = probe[0]) shape.push(probe.length);
  const count = shape.reduce((a, b) => a * b, 1);
  checkSize(count, shape, where);
  const data = new Float32Array(count);
  let next = 0;
  const walk = (node, depth, path) => {
    if (depth === shape.length) {
      if (typeof node !== 'number') throw new AttentionDataError(`${where}${path} is ${node === null ? 'null' : JSON.stringify(node)?.slice(0, 20)}, not a number`);
      data[next++] = node;
      return;
    }
    if (!Array.isArray(node) || node.length !== shape[depth]) {
      throw new AttentionDataError(`shapes disagree: ${where}${path} has ${Array.isArray(node) ? `${node.length} entries` : 'a single value'} where ${where}${'[0]'.repeat(depth)} has ${shape[depth]}`);
    }
    for (let i = 0; i < node.length; i += 1) walk(node[i], depth + 1, `${path}[${i}]`);
  };
  walk(value, 0, '');
  return { data, shape };
}

/** Any accepted tensor form -> { data: Float32Array, shape }. */
export function readTensor(value, where) {
  if (value instanceof ArrayBuffer || value instanceof Uint8Array) return parseNpy(value, where);
  if (Array.isArray(value)) {
    // PyTorch's tuple per layer of tensors, each given as nested lists, arrives here too.
    return flattenNested(value, where);
  }
  if (value && typeof value === 'object' && typeof value.base64 === 'string') return readBase64Tensor(value, where);
  if (value && typeof value === 'object' && ArrayBuffer.isView(value.data) && Array.isArray(value.shape)) {
    const count = value.shape.reduce((a, b) => a * b, 1);
    checkSize(count, value.shape, where);
    if (value.data.length !== count) throw new AttentionDataError(`${where}.data has ${value.data.length} values; shape [${value.shape.join(', ')}] needs ${count}`);
    return { data: value.data instanceof Float32Array ? value.data : Float32Array.from(value.data), shape: [...value.shape] };
  }
  throw new AttentionDataError(`${where} must be nested lists, { data, shape }, { dtype, shape, base64 } or .npy bytes`);
}

/** [L, H, T, K], PyTorch's [L, 1, H, T, K], or one map [T, K] (a hand-made example) -> [L, H, T, K]. */
function layerHeadShape(tensor, where) {
  const { shape } = tensor;
  if (shape.length === 2) return layerHeadShape({ ...tensor, shape: [1, 1, ...shape] }, where);
  if (shape.length === 5) {
    if (shape[1] !== 1) throw new AttentionDataError(`${where} has a batch of ${shape[1]} (shape [${shape.join(', ')}]); give one example, e.g. [a[i:i+1] for a in outputs.attentions]`);
    return { ...tensor, shape: [shape[0], shape[2], shape[3], shape[4]] };
  }
  if (shape.length !== 4) {
    throw new AttentionDataError(`${where} has ${shape.length} dimensions (shape [${shape.join(', ')}]); expected [layer][head][query][key], PyTorch's [layer][batch][head][query][key], or one map [query][key]`);
  }
  if (shape.some((n) => n === 0)) throw new AttentionDataError(`${where} is empty (shape [${shape.join(', ')}])`);
  return tensor;
}

/**
 * Checks every weight: NaN, infinities and negative values are errors (with
 * where the first one is); rows that do not sum to 1 (within
 * ROW_SUM_TOLERANCE, plus rowSumSlack: an 8-bit tensor's rounding and the
 * precision the weights were computed in) are counted for a warning.
 * Returns the warning text or null.
 */
export function checkWeights({ data, shape, rowSumSlack = null }, where) {
  const [layers, heads, queries, keys] = shape;
  let badRows = 0;
  let example = null;
  for (let row = 0; row < layers * heads * queries; row += 1) {
    let sum = 0;
    const base = row * keys;
    for (let k = 0; k < keys; k += 1) {
      const w = data[base + k];
      if (!(w >= 0) || w === Infinity) {
        const q = row % queries;
        const h = Math.floor(row / queries) % heads;
        const l = Math.floor(row / (queries * heads));
        const what = Number.isNaN(w) ? 'NaN' : w === Infinity ? 'Infinity' : `negative (${w})`;
        throw new AttentionDataError(`${where} has a value that is ${what} at layer ${l}, head ${h}, query ${q}, key ${k} (counting from 0): attention weights are probabilities`);
      }
      sum += w;
    }
    if (Math.abs(sum - 1) > ROW_SUM_TOLERANCE + (rowSumSlack ? rowSumSlack[row] : 0)) {
      badRows += 1;
      if (!example) example = { l: Math.floor(row / (queries * heads)), h: Math.floor(row / queries) % heads, q: row % queries, sum };
    }
  }
  if (!badRows) return null;
  return `Warning: ${badRows} of ${layers * heads * queries} rows of ${where} do not sum to 1 (e.g. layer ${example.l}, head ${example.h}, query ${example.q} sums to ${example.sum.toFixed(4)}); they are drawn as given.`;
}

const SPECIAL = /^(\[[A-Z]+\]|<\|[^|]*\|>|<\/?s>|<pad>|<unk>|<mask>)$/;

/**
 * Token list -> the views' tokens. Word structure (for "words, not sub-word
 * tokens") follows the pieces: "##x" continues a word (WordPiece); with
 * byte-level or SentencePiece pieces ("Ġx", "▁x") only those start one.
 */
export function readTokens(list, where, segment = 0) {
  if (!Array.isArray(list)) throw new AttentionDataError(`${where} must be a list of tokens (strings or { token } objects)`);
  const raw = list.map((item, i) => {
    if (typeof item === 'string') return { display: item };
    if (item && typeof item === 'object') {
      const display = item.display ?? item.token ?? item.text ?? item.piece;
      if (typeof display === 'string') return { display, id: item.id, special: item.special, typeId: item.type_id ?? item.typeId };
    }
    throw new AttentionDataError(`${where}[${i}] is not a token: give a string or an object with "token"`);
  });
  const wordPiece = raw.some((t) => t.display.startsWith('##'));
  const marked = !wordPiece && raw.some((t) => /^[Ġ▁␣ ]/.test(t.display));
  let text = '';
  const tokens = raw.map((t, i) => {
    const special = t.special ?? SPECIAL.test(t.display);
    let piece = t.display;
    let gap = i > 0;
    if (wordPiece && piece.startsWith('##')) { piece = piece.slice(2); gap = false; }
    else if (marked) { gap = i > 0 && /^[Ġ▁␣ ]/.test(piece); if (gap) piece = piece.slice(1); }
    if (gap || special) text += ' ';
    const start = text.length;
    text += piece;
    return { id: t.id ?? -1, display: t.display, piece: t.display, start, end: text.length, special, typeId: t.typeId ?? segment, segment };
  });
  return { tokens, text };
}

/** True when every weight above the diagonal is 0 (a causal model). */
function looksCausal({ data, shape }) {
  const [layers, heads, t] = shape;
  for (let m = 0; m < layers * heads; m += 1) {
    for (let q = 0; q < t; q += 1) for (let k = q + 1; k < t; k += 1) if (data[(m * t + q) * t + k] !== 0) return false;
  }
  return true;
}

function headScores(labels, layers, heads, where) {
  if (labels === undefined || labels === null) return null;
  if (!Array.isArray(labels)) throw new AttentionDataError(`${where} must be a list per layer of a label per head`);
  const scores = [];
  labels.forEach((row, l) => {
    if (!Array.isArray(row) || row.length !== heads || l >= layers) {
      throw new AttentionDataError(`shapes disagree: ${where} must have ${layers} layers of ${heads} labels; ${where}[${l}] has ${Array.isArray(row) ? row.length : 'no list'}`);
    }
    row.forEach((label, h) => {
      const list = (Array.isArray(label) ? label : [label]).filter((s) => s !== null && s !== '').map(String);
      scores.push({ layer: l, head: h, labels: list });
    });
  });
  if (labels.length !== layers) throw new AttentionDataError(`shapes disagree: ${where} has ${labels.length} layers, the attention ${layers}`);
  return scores;
}

function selfPart(raw, key, tokensKey, modelType) {
  const where = key;
  const tensor = layerHeadShape(readTensor(raw[key], where), where);
  const [layers, heads, queries, keys] = tensor.shape;
  if (queries !== keys) throw new AttentionDataError(`shapes disagree: ${where} is [${tensor.shape.join(', ')}], but self-attention has as many keys as queries`);
  if (raw[tokensKey] === undefined) throw new AttentionDataError(`${tokensKey} is missing: the ${queries} tokens that ${where} is about`);
  const { tokens, text } = readTokens(raw[tokensKey], tokensKey);
  if (tokensKey === 'tokens' && Array.isArray(raw.ids) && raw.ids.length === tokens.length) raw.ids.forEach((id, i) => { tokens[i].id = id; });
  if (tokens.length !== queries) throw new AttentionDataError(`shapes disagree: ${tokensKey} has ${tokens.length} tokens, ${where} is [${tensor.shape.join(', ')}] (${queries} tokens)`);
  const warning = checkWeights(tensor, where);
  const causal = typeof raw.causal === 'boolean' && key !== 'encoder_attentions' ? raw.causal : looksCausal(tensor);
  const vectors = key === 'attentions' ? headVectors(raw, tensor.shape) : null;
  const result = { tokens, attentions: tensor, texts: [text], causal, modelType };
  if (key === 'attentions' && raw.image !== undefined) {
    result.picture = readPicture(raw, tokens.length, layers);
    tokens.forEach((token, i) => { token.special = i < result.picture.prefixTokens; });
  }
  return { result, layers, heads, warning, vectors };
}

const positiveInt = (value, where) => {
  if (!Number.isInteger(value) || value < 1) throw new AttentionDataError(`${where} must be a whole number of at least 1, not ${JSON.stringify(value)}`);
  return value;
};

/**
 * A vision transformer's picture beside `count` tokens of `layers` layers:
 * raw.image, top_k, top_k_before and norms (see the header) -> the picture
 * the image view draws: { seen: { width, height, png: Uint8Array }, grid,
 * patch, prefixTokens, topK, topKBefore, norms } (seen's PNG is decoded by
 * the DOM side, attention-data-mode.js).
 */
function readPicture(raw, count, layers) {
  const { image } = raw;
  if (!image || typeof image !== 'object') throw new AttentionDataError('image must be an object: { seen: { width, height, png }, grid: { rows, columns }, patch: { height, width } }');
  const seen = image.seen ?? {};
  const width = positiveInt(seen.width, 'image.seen.width');
  const height = positiveInt(seen.height, 'image.seen.height');
  if (typeof seen.png !== 'string') throw new AttentionDataError('image.seen.png is missing: the picture as the model saw it, a PNG in base64');
  const png = base64Bytes(seen.png, 'image.seen.png');
  const grid = { rows: positiveInt(image.grid?.rows, 'image.grid.rows'), columns: positiveInt(image.grid?.columns, 'image.grid.columns') };
  const patch = { height: positiveInt(image.patch?.height, 'image.patch.height'), width: positiveInt(image.patch?.width, 'image.patch.width') };
  const prefixTokens = count - grid.rows * grid.columns;
  if (prefixTokens < 0) throw new AttentionDataError(`shapes disagree: a ${grid.rows} × ${grid.columns} grid of patches needs at least ${grid.rows * grid.columns} tokens; the attention has ${count}`);
  if (grid.rows * patch.height > height || grid.columns * patch.width > width) {
    throw new AttentionDataError(`shapes disagree: ${grid.rows} × ${grid.columns} patches of ${patch.height} × ${patch.width} pixels do not fit in the ${width} × ${height} picture`);
  }
  const labels = (value, where) => {
    if (value === undefined || value === null) return null;
    const top = Array.isArray(value) ? value[0] : value;
    if (!top || !Array.isArray(top.labels) || !Array.isArray(top.probabilities) || top.labels.length !== top.probabilities.length
      || !top.probabilities.every((p) => typeof p === 'number' && p >= 0 && p <= 1)) {
      throw new AttentionDataError(`${where} must be [{ labels, probabilities }]: as many labels as probabilities, each between 0 and 1`);
    }
    return { ids: top.ids ?? [], labels: top.labels.map(String), probabilities: top.probabilities };
  };
  let norms = null;
  if (raw.norms !== undefined) {
    if (!Array.isArray(raw.norms) || raw.norms.length !== layers + 1 || !raw.norms.every((row) => Array.isArray(row) && row.length === count && row.every(Number.isFinite))) {
      throw new AttentionDataError(`norms must be [${layers + 1}][${count}]: each token's norm before the first layer and after each of the ${layers}`);
    }
    norms = raw.norms.map((row) => Float32Array.from(row));
  }
  return {
    seen: { width, height, png }, grid, patch, prefixTokens,
    topK: labels(raw.top_k, 'top_k'), topKBefore: labels(raw.top_k_before, 'top_k_before'), norms,
  };
}

/** The optional queries and keys beside `attentions` [L, H, T, T]: { queries, keys } each [L, H, T, d], or null. */
function headVectors(raw, [layers, heads, t]) {
  if (raw.queries === undefined && raw.keys === undefined) return null;
  const read = (name) => {
    if (raw[name] === undefined) throw new AttentionDataError(`${name === 'keys' ? 'queries' : 'keys'} is given without ${name}: the neuron view needs both`);
    let tensor = readTensor(raw[name], name);
    if (tensor.shape.length === 5 && tensor.shape[1] === 1) tensor = { data: tensor.data, shape: [tensor.shape[0], ...tensor.shape.slice(2)] };
    const [l, h, n, d] = tensor.shape;
    if (tensor.shape.length !== 4 || l !== layers || h !== heads || n !== t || !(d > 0)) {
      throw new AttentionDataError(`shapes disagree: ${name} is [${tensor.shape.join(', ')}]; with attentions of ${layers} layers, ${heads} heads and ${t} tokens it must be [${layers}, ${heads}, ${t}, d]`);
    }
    return tensor;
  };
  const vectors = { queries: read('queries'), keys: read('keys') };
  if (vectors.queries.shape[3] !== vectors.keys.shape[3]) throw new AttentionDataError(`shapes disagree: queries have ${vectors.queries.shape[3]} dimensions per head, keys ${vectors.keys.shape[3]}`);
  return vectors;
}

/** The neuron view's trace of one head from data's { queries, keys } (the model's trace without rotary or bias). */
export function vectorTrace({ queries, keys }, { layer, head }) {
  const [, heads, t, d] = queries.shape;
  const block = (tensor) => ({ data: tensor.data.subarray(((layer * heads + head) * t) * d, ((layer * heads + head + 1) * t) * d), shape: [t, d] });
  return { layer, head, q: block(queries), k: block(keys), divisor: Math.sqrt(d), softcap: 0, rotary: null };
}

/** Cross-attention drawn as the decoder → encoder block of a map over [encoder tokens, decoder tokens] (encoder-decoder.js). */
function crossPart(raw, modelType) {
  const where = 'cross_attentions';
  const tensor = layerHeadShape(readTensor(raw.cross_attentions, where), where);
  const [layers, heads, queries, keys] = tensor.shape;
  for (const name of ['encoder_tokens', 'decoder_tokens']) if (raw[name] === undefined) throw new AttentionDataError(`${name} is missing: cross_attentions needs both token lists`);
  const encoder = readTokens(raw.encoder_tokens, 'encoder_tokens', 0);
  // Rows labelled by the token each one wrote (target_tokens), when given, else by the decoder's input tokens.
  const rowsKey = raw.target_tokens !== undefined ? 'target_tokens' : 'decoder_tokens';
  const decoder = readTokens(raw[rowsKey], rowsKey, 1);
  if (decoder.tokens.length !== queries || encoder.tokens.length !== keys) {
    throw new AttentionDataError(`shapes disagree: cross_attentions is [${tensor.shape.join(', ')}] but there are ${decoder.tokens.length} ${rowsKey === 'decoder_tokens' ? 'decoder' : 'target'} tokens (queries) and ${encoder.tokens.length} encoder tokens (keys)`);
  }
  const warning = checkWeights(tensor, where);
  const t = keys + queries;
  checkSize(layers * heads * t * t, [layers, heads, t, t], where);
  return { result: crossResult(encoder, decoder, tensor, modelType), layers, heads, warning };
}

/**
 * Author's data (a parsed object) -> { parts: { self | encoder | decoder | cross:
 * { result, layers, heads, warning, headScores } }, order: [part names] }.
 * result is what the views take ({ tokens, attentions [L, H, T, T], texts,
 * causal, modelType }, plus filter 'b-a' and cross: { attentions [L, H, T, S] } for cross-attention).
 */
export function readAttentionData(raw) {
  if (!isAttentionData(raw)) {
    throw new AttentionDataError('no attention found: give "attentions" (or "encoder_attentions", "decoder_attentions", "cross_attentions") with "tokens"');
  }
  const modelType = String(raw.model_type ?? raw.model ?? 'data');
  const parts = {};
  if (raw.attentions !== undefined) parts.self = selfPart(raw, 'attentions', 'tokens', modelType);
  if (raw.encoder_attentions !== undefined) parts.encoder = selfPart(raw, 'encoder_attentions', raw.tokens !== undefined && raw.encoder_tokens === undefined ? 'tokens' : 'encoder_tokens', modelType);
  if (raw.decoder_attentions !== undefined) parts.decoder = selfPart(raw, 'decoder_attentions', 'decoder_tokens', modelType);
  if (raw.cross_attentions !== undefined) parts.cross = crossPart(raw, modelType);
  const labels = raw.head_labels;
  const byPart = labels && !Array.isArray(labels) && typeof labels === 'object' ? labels : { self: labels };
  for (const [name, part] of Object.entries(parts)) {
    part.headScores = headScores(byPart[name], part.layers, part.heads, name === 'self' ? 'head_labels' : `head_labels.${name}`);
  }
  return { parts, order: Object.keys(parts) };
}

/** Fetches `src` (JSON, or .npy with tokens from `tokensSrc` or `tokens`) and reads it. */
export async function fetchAttentionData(src, { tokensSrc = null, tokens = null, base = globalThis.location?.href } = {}) {
  const get = async (url, what) => {
    let response;
    try {
      response = await fetch(new URL(url, base));
    } catch (error) {
      throw new AttentionDataError(`could not fetch ${what} ${url}: ${error.message}`);
    }
    if (!response.ok) throw new AttentionDataError(`could not fetch ${what} ${url}: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  };
  const bytes = await get(src, 'the attention data');
  if (bytes[0] === 0x93 && bytes[1] === 0x4e) {
    let tokenList = tokens;
    if (tokensSrc) {
      const parsed = parseJsonText(new TextDecoder().decode(await get(tokensSrc, 'the tokens')), tokensSrc);
      tokenList = Array.isArray(parsed) ? parsed : parsed?.tokens;
    }
    if (!tokenList) throw new AttentionDataError(`${src} is a .npy file: give its tokens too (tokens-src="tokens.json" or the tokens attribute)`);
    return readAttentionData({ attentions: bytes, tokens: tokenList });
  }
  return readAttentionData(parseJsonText(new TextDecoder().decode(bytes), src));
}
