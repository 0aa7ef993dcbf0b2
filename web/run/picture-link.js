// Which picture a vision model reads, as the link names it (state.picture):
//   sample:PATH     a picture the page ships, by its path under models/ (a
//                   shipped model's samples/, or sample-pictures/ for the
//                   hub's models);
//   local:HASH      the reader's own picture, kept in this browser's Cache
//                   Storage under the SHA-256 of its bytes: never uploaded,
//                   never in the link, so the link finds it only here;
//   inline:DATA     the reader's picture in the link itself, when the reader
//                   asks: scaled to at most INLINE_SIDE pixels on its longer
//                   side, a PNG or a JPEG (whichever is shorter: a drawing's
//                   PNG keeps it exact), base64url.
// keepPicture / inlinePicture make the names, openPicture reads them back.
// Not here: decoding files (image-run.js), the state (state.js), the page's
// picture input (page/app.js).
import { base64url, fromBase64url, isPictureName } from './state.js';
import { pictureOfFile, pixelsCanvas } from './image-run.js';

const CACHE = 'attnplay-pictures';
/** The most pictures a browser keeps; the oldest go first. */
export const KEPT_PICTURES = 16;
/** The longer side of a picture put in the link, in pixels. */
export const INLINE_SIDE = 512;
const INLINE_QUALITY = 0.9;

// The Cache Storage key of a kept picture (a URL of this origin that is never fetched).
const keyOf = (hash) => new URL(`/.attnplay-picture/${hash}`, location.origin).href;

/**
 * Keeps a picture file (a Blob) in this browser; returns its name ('local:HASH').
 * Without Cache Storage (a page not served over HTTPS or localhost) the picture
 * is still shown, and its name opens nothing after a reload: returns null.
 */
export async function keepPicture(blob) {
  if (!globalThis.caches) return null;
  const hash = [...new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer()))]
    .map((b) => b.toString(16).padStart(2, '0')).join('');
  try {
    const cache = await caches.open(CACHE);
    await cache.delete(keyOf(hash)); // put again: the newest last in keys()
    await cache.put(keyOf(hash), new Response(blob, { headers: { 'content-type': blob.type || 'application/octet-stream' } }));
    const kept = await cache.keys();
    for (const old of kept.slice(0, Math.max(0, kept.length - KEPT_PICTURES))) await cache.delete(old);
  } catch {
    return null; // storage full or refused: shown, not kept
  }
  return `local:${hash}`;
}

/** The picture's name for the link itself ('inline:DATA'): pixels scaled to at most INLINE_SIDE, as a PNG or a JPEG, the shorter. */
export async function inlinePicture(pixels) {
  const { width, height } = pixels;
  const scale = Math.min(1, INLINE_SIDE / Math.max(width, height));
  const source = pixelsCanvas(pixels);
  const canvas = new OffscreenCanvas(Math.max(1, Math.round(width * scale)), Math.max(1, Math.round(height * scale)));
  const ctx = canvas.getContext('2d');
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(source, 0, 0, canvas.width, canvas.height);
  const [png, jpeg] = await Promise.all([canvas.convertToBlob({ type: 'image/png' }), canvas.convertToBlob({ type: 'image/jpeg', quality: INLINE_QUALITY })]);
  return `inline:${base64url(new Uint8Array(await (png.size <= jpeg.size ? png : jpeg).arrayBuffer()))}`;
}

/**
 * The picture a name stands for -> { pixels (ImageData), name (for people), blob }.
 * `modelsUrl`: the URL of the page's models/ folder. Throws an Error that says
 * what is missing (a kept picture asked for in another browser, a damaged link).
 */
export async function openPicture(value, modelsUrl) {
  if (!isPictureName(value)) throw new Error('the link names its picture in a way this page does not read');
  const [kind, rest] = [value.slice(0, value.indexOf(':')), value.slice(value.indexOf(':') + 1)];
  let blob;
  let name;
  if (kind === 'sample') {
    const response = await fetch(new URL(rest, modelsUrl));
    if (!response.ok) throw new Error(`the sample picture ${rest} is not here (HTTP ${response.status})`);
    blob = await response.blob();
    name = rest.split('/').pop();
  } else if (kind === 'local') {
    const kept = globalThis.caches ? await (await caches.open(CACHE)).match(keyOf(rest)) : undefined;
    if (!kept) throw new Error("the link's picture was kept in the browser where the link was made, and is not in this one: choose a picture (the link carries a picture only when its maker puts it in)");
    blob = await kept.blob();
    name = 'your picture (kept in this browser)';
  } else {
    try {
      blob = new Blob([fromBase64url(rest)]); // PNG or JPEG: the browser reads its signature
    } catch {
      throw new Error("the link's picture is damaged (cut short or edited?)");
    }
    name = 'the picture in the link';
  }
  try {
    return { pixels: await pictureOfFile(blob), name, blob };
  } catch {
    throw new Error(kind === 'inline' ? "the link's picture is damaged (cut short or edited?)" : `${name} is not a picture this browser can read`);
  }
}
