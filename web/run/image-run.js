// How the page runs a vision transformer on the reader's picture: reading a
// picture file (or a pasted or dropped one, or a camera frame) into RGBA
// pixels, refusing one too large or not a picture with a message that says
// so, running it (with the state's knocked-out heads, keeping the intact
// labels to compare with), and the result the views take: the token names
// as tokens, every layer's attention, and the picture itself with its patch
// grid, labels and the norms of each token's hidden states.
// Not here: preprocessing (the engine: the core's image processor), drawing
// (views/image-view.js).
import { ablatedHeads } from './run-loop.js';

/** The most pixels a picture may have (the core's kMaxPicturePixels, cpp/image/picture.h). */
export const MAX_PICTURE_PIXELS = 64 * 2 ** 20;

/**
 * The RGBA pixels of a picture file or Blob (PNG, JPEG, GIF's first frame,
 * WebP, ... whatever the browser decodes) -> { data, width, height } (an
 * ImageData). Throws an Error that says what is wrong.
 */
export async function pictureOfFile(file) {
  let bitmap;
  try {
    bitmap = await createImageBitmap(file, { colorSpaceConversion: 'none', premultiplyAlpha: 'none' });
  } catch {
    throw new Error(`${file.name ?? 'The file'} is not a picture this browser can read (PNG, JPEG, GIF, WebP, ...).`);
  }
  try {
    return pixelsOf(bitmap, bitmap.width, bitmap.height);
  } finally {
    bitmap.close();
  }
}

/** The RGBA pixels of anything a canvas draws (an ImageBitmap, a video frame) of width × height. */
export function pixelsOf(source, width, height) {
  if (width < 1 || height < 1) throw new Error(`The picture is ${width}×${height} pixels: there is nothing to look at.`);
  if (width * height > MAX_PICTURE_PIXELS) {
    throw new Error(`The picture is ${width}×${height} pixels; at most ${MAX_PICTURE_PIXELS / 2 ** 20} megapixels are taken: scale it down first.`);
  }
  const canvas = new OffscreenCanvas(width, height);
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.drawImage(source, 0, 0);
  return ctx.getImageData(0, 0, width, height, { colorSpace: 'srgb' });
}

/** Pixels ({ data, width, height }, an ImageData) drawn on an OffscreenCanvas of their size. */
export function pixelsCanvas({ data, width, height }) {
  const canvas = new OffscreenCanvas(width, height);
  canvas.getContext('2d').putImageData(new ImageData(new Uint8ClampedArray(data), width, height), 0, 0);
  return canvas;
}

/** Pixels as a PNG Blob: a camera frame to keep, the seen picture to export. */
export async function pixelsAsPng(pixels) {
  return pixelsCanvas(pixels).convertToBlob({ type: 'image/png' });
}

// The L2 norm of every token's hidden state after each layer: [L + 1][T].
function hiddenNorms({ data, shape: [states, T, width] }) {
  return Array.from({ length: states }, (_, s) => Float32Array.from({ length: T }, (_, t) => {
    let sum = 0;
    for (let i = (s * T + t) * width, end = i + width; i < end; i += 1) sum += data[i] * data[i];
    return Math.sqrt(sum);
  }));
}

/**
 * Runs the model held in the worker under `key` on `picture` (ImageData)
 * with the state's knocked-out heads; `intact`: the labels of the same
 * picture without them (a previous run's raw.topK), or null to run it too.
 * Returns { raw (the engine's answer), result (what the views take: tokens,
 * attentions, causal false, modelType, kvHeads, picture: { seen, grid, patch,
 * prefixTokens, topK, topKBefore, norms }), intactTopK }. Throws an Error that
 * says what went wrong.
 */
export async function runPicture(client, key, config, picture, { ablate = [], ablation = 'zero' }, intact = null) {
  const heads = ablatedHeads(config, ablate);
  let raw;
  let intactTopK = intact;
  try {
    raw = await client.runImage(key, { picture, hiddenStates: true, ...(heads.length ? { ablate: heads, ablation } : {}) });
    if (heads.length && !intactTopK && raw.topK) intactTopK = (await client.runImage(key, { picture })).topK;
  } catch (error) {
    throw new Error(`Cannot run the model on this picture: ${error.message}`);
  }
  const { vision } = config;
  const tokens = raw.tokens.map((display, i) => ({ id: i, piece: display, display, special: i < vision.prefixTokens, segment: 0, start: 0, end: 0 }));
  const result = {
    tokens, attentions: raw.attentions, texts: [], causal: false, modelType: config.modelType, kvHeads: config.kvHeads,
    slidingWindow: 0, slidingLayers: null, lens: null,
    picture: {
      seen: raw.seen, grid: raw.grid, patch: { height: vision.patchHeight, width: vision.patchWidth }, prefixTokens: vision.prefixTokens,
      topK: raw.topK ?? null, topKBefore: heads.length ? intactTopK : null, norms: raw.hiddenStates ? hiddenNorms(raw.hiddenStates) : null,
    },
  };
  return { raw, result, intactTopK: heads.length ? intactTopK : raw.topK ?? null };
}
