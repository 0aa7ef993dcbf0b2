// A title and a legend around an exported picture (a view's PNG canvas or its
// SVG text): what it shows (model, layer, heads, the text) above, what its
// lines or colours mean below (with a swatch per head where colours are
// heads), in the page's theme colours, so a picture pasted into slides says
// what it is. Not here: the pictures themselves (each view's exportCanvas()
// and svg()), file downloads (export.js).
import { SvgWriter } from './svg-writer.js';

const FONT = 'system-ui, sans-serif';
const SIZES = { title: 15, subtitle: 12, legend: 12 }; // CSS pixels
const LINE = 1.35; // line height, in font sizes
const PAD = 10;
const SWATCH = 12;
const TEXT_CHARS = 110; // the text is shortened to this many characters

/**
 * The caption of a picture: { title: 'austen-gpt · layer 2 · heads 1, 3 of 4',
 * subtitle: '“the text…”' }. heads: the heads shown (null: all headCount).
 */
export function exportCaption({ modelName, layer, heads, headCount, texts }) {
  const which = heads === null || heads.length === headCount
    ? `all ${headCount} heads`
    : `${heads.length === 1 ? 'head' : 'heads'} ${heads.map((head) => head + 1).join(', ')} of ${headCount}`;
  return { title: `${modelName} · layer ${layer + 1} · ${which}`, subtitle: quotedText(texts) };
}

/** The texts run (A / B), in quotes, on one line, shortened with … past TEXT_CHARS characters. */
export function quotedText(texts) {
  const text = texts.join(' / ').replace(/\s+/g, ' ').trim();
  return `“${text.length > TEXT_CHARS ? `${text.slice(0, TEXT_CHARS - 1)}…` : text}”`;
}

// Splits text into lines of at most `chars` characters at spaces.
function wrap(text, chars) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > chars) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

// Where each part of the frame goes for a picture `width` wide: { top, bottom,
// texts: [{ text, x, y, size, bold, below }], swatches: [{ colour, x, y, label }] }
// (y of texts below the picture and of swatches counted from the picture's bottom edge).
function frameLayout(width, { title, subtitle, legend = '', swatches = [] }) {
  const texts = [];
  let y = PAD;
  const line = (text, size, bold, below) => {
    texts.push({ text, x: PAD, y: y + (size * LINE) / 2, size, bold, below });
    y += size * LINE;
  };
  const chars = (size) => Math.max(20, Math.floor((width - 2 * PAD) / (size * 0.55)));
  for (const part of wrap(title, chars(SIZES.title))) line(part, SIZES.title, true, false);
  for (const part of wrap(subtitle, chars(SIZES.subtitle))) line(part, SIZES.subtitle, false, false);
  const top = y + PAD / 2;
  y = PAD / 2;
  const placed = [];
  let x = PAD;
  for (const { colour, label } of swatches) {
    const labelWidth = label.length * SIZES.legend * 0.6 + 10;
    if (x + SWATCH + labelWidth > width - PAD && x > PAD) {
      x = PAD;
      y += SIZES.legend * LINE;
    }
    placed.push({ colour, label, x, y, labelX: x + SWATCH + 4 });
    x += SWATCH + 4 + labelWidth;
  }
  if (placed.length) y += SIZES.legend * LINE;
  for (const part of wrap(legend, chars(SIZES.legend))) line(part, SIZES.legend, false, true);
  return { top, bottom: y + PAD, texts, swatches: placed };
}

/**
 * A new canvas: the picture with the title above and the legend (and head
 * swatches) below. frame: { title, subtitle, legend?, swatches?: [{ colour,
 * label }], colours: { text, background } }. The picture's pixels are kept
 * 1:1; the frame is drawn at the picture's pixel ratio (`ratio`).
 */
export function framedCanvas(picture, frame, ratio = 1) {
  const width = picture.width / ratio;
  const layout = frameLayout(width, frame);
  const canvas = document.createElement('canvas');
  canvas.width = picture.width;
  canvas.height = picture.height + Math.ceil((layout.top + layout.bottom) * ratio);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = frame.colours.background;
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(picture, 0, Math.ceil(layout.top * ratio));
  ctx.scale(ratio, ratio);
  const bottomEdge = Math.ceil(layout.top * ratio) / ratio + picture.height / ratio;
  ctx.textBaseline = 'middle';
  ctx.fillStyle = frame.colours.text;
  for (const text of layout.texts) {
    ctx.font = `${text.bold ? 'bold ' : ''}${text.size}px ${FONT}`;
    ctx.fillText(text.text, text.x, text.below ? bottomEdge + text.y : text.y);
  }
  ctx.font = `${SIZES.legend}px ${FONT}`;
  for (const s of layout.swatches) {
    ctx.fillStyle = s.colour;
    ctx.fillRect(s.x, bottomEdge + s.y, SWATCH, SWATCH);
    ctx.fillStyle = frame.colours.text;
    ctx.fillText(s.label, s.labelX, bottomEdge + s.y + SWATCH / 2);
  }
  return canvas;
}

/** SVG text: the view's SVG (kept whole, moved down) with the title above and the legend below (as framedCanvas). */
export function framedSvg(svgText, frame) {
  const inner = new DOMParser().parseFromString(svgText, 'image/svg+xml').documentElement;
  const width = Number(inner.getAttribute('width'));
  const height = Number(inner.getAttribute('height'));
  const layout = frameLayout(width, frame);
  const svg = new SvgWriter(width, layout.top + height + layout.bottom, { background: frame.colours.background, title: `${frame.title} ${frame.subtitle}` });
  const bottomEdge = layout.top + height;
  const texts = svg.group({ fill: frame.colours.text });
  for (const text of layout.texts) {
    svg.text(text.text, text.x, text.below ? bottomEdge + text.y : text.y, { size: text.size, 'font-weight': text.bold ? 'bold' : undefined }, texts);
  }
  for (const s of layout.swatches) {
    svg.rect(s.x, bottomEdge + s.y, SWATCH, SWATCH, { fill: s.colour });
    svg.text(s.label, s.labelX, bottomEdge + s.y + SWATCH / 2, { size: SIZES.legend }, texts);
  }
  svg.group({ transform: `translate(0 ${layout.top})` }).appendChild(document.importNode(inner, true));
  return svg.toString();
}
