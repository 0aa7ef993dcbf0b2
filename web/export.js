// Exports of what the page shows: the attention tensor as .npy (NumPy's
// format, version 1.0, little-endian float32) and as JSON, the head view as
// SVG (built from its line model, text escaped by the serializer), and a
// download helper. Not here: drawing on screen (the views).

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

/** JSON text: { model, tokens, attentions nested [layer][head][query][key] }. */
export function attentionJson({ modelName, modelType, tokens, attentions }) {
  const [layers, heads, t] = attentions.shape;
  const nested = Array.from({ length: layers }, (_, l) => Array.from({ length: heads }, (__, h) =>
    Array.from({ length: t }, (___, q) => Array.from(attentions.data.subarray(((l * heads + h) * t + q) * t, ((l * heads + h) * t + q + 1) * t)))));
  return JSON.stringify({ model: modelName, model_type: modelType, tokens: tokens.map((token) => token.display), ids: tokens.map((token) => token.id), attentions: nested });
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * SVG of the head view as drawn: lines { from, to, head, opacity } between
 * query labels (left) and key labels (right), locked/hovered token in accent.
 * layout: { width, rowHeight, left, right }; colourOf(head) -> CSS colour.
 */
export function headViewSvg({ lines, rowLabels, colLabels, rowIndex, colIndex, layout, colourOf, focus = null, document: doc = globalThis.document }) {
  const rows = Math.max(rowLabels.length, colLabels.length);
  const height = 16 + rows * layout.rowHeight;
  const svg = doc.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('xmlns', SVG_NS);
  svg.setAttribute('width', String(layout.width));
  svg.setAttribute('height', String(height));
  svg.setAttribute('viewBox', `0 0 ${layout.width} ${height}`);
  const y = (i) => 8 + (i + 0.5) * layout.rowHeight;
  for (const line of lines) {
    const element = doc.createElementNS(SVG_NS, 'line');
    const attributes = { x1: layout.left + 6, y1: y(rowIndex.get(line.from)), x2: layout.right - 6, y2: y(colIndex.get(line.to)), stroke: colourOf(line.head), 'stroke-opacity': Math.min(1, line.opacity).toFixed(4), 'stroke-width': 1.5 };
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
    svg.appendChild(element);
  }
  const label = (text, x, i, anchor, focused) => {
    const element = doc.createElementNS(SVG_NS, 'text');
    element.setAttribute('x', String(x));
    element.setAttribute('y', String(y(i)));
    element.setAttribute('text-anchor', anchor);
    element.setAttribute('dominant-baseline', 'middle');
    element.setAttribute('font-family', 'system-ui, sans-serif');
    element.setAttribute('font-size', layout.rowHeight > 16 ? '13' : '11');
    element.setAttribute('fill', focused ? '#1f5fa8' : '#222');
    if (focused) element.setAttribute('font-weight', 'bold');
    element.textContent = text; // text node: never parsed as markup
    svg.appendChild(element);
  };
  rowLabels.forEach((text, i) => label(text, layout.left - 4, i, 'end', focus?.side === 'query' && focus.index === i));
  colLabels.forEach((text, i) => label(text, layout.right + 4, i, 'start', focus?.side === 'key' && focus.index === i));
  return new XMLSerializer().serializeToString(svg);
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
