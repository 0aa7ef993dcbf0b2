// SvgWriter: builds an SVG document element by element for the views' SVG
// exports (each view's svg() method says what to draw). Text always goes in
// as a text node, so a token like <img src=x onerror=...> stays literal;
// coordinates are rounded to 2 decimals; CSS colours with alpha (rgba(...))
// become fill/stroke plus an opacity attribute, which every SVG editor reads.
// Not here: what a view looks like (the views), file downloads (export.js).

const SVG_NS = 'http://www.w3.org/2000/svg';
const SVG_FONT = 'system-ui, sans-serif';

const round = (v) => (typeof v === 'number' ? String(Math.round(v * 100) / 100) : String(v));

/** { colour, opacity } of a CSS colour; opacity null when it has no alpha. */
function splitAlpha(colour) {
  const match = /^rgba\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*\)$/.exec(colour);
  return match ? { colour: `rgb(${match[1]}, ${match[2]}, ${match[3]})`, opacity: match[4] } : { colour, opacity: null };
}

export class SvgWriter {
  #doc;
  #defs = null;
  #hatched = false;

  /** A width x height (CSS pixels) document, with a background rectangle unless background is null. */
  constructor(width, height, { background = null, title = '', document: doc = globalThis.document } = {}) {
    this.#doc = doc;
    this.root = doc.createElementNS(SVG_NS, 'svg');
    this.width = Math.ceil(width);
    this.height = Math.ceil(height);
    this.#set(this.root, { xmlns: SVG_NS, width: this.width, height: this.height, viewBox: `0 0 ${this.width} ${this.height}` });
    if (title) this.add('title', {}).textContent = title;
    if (background) this.rect(0, 0, this.width, this.height, { fill: background });
  }

  /** Appends <tag attributes> to parent (default: the root) and returns it. */
  add(tag, attributes = {}, parent = this.root) {
    const element = this.#doc.createElementNS(SVG_NS, tag);
    this.#set(element, attributes);
    parent.appendChild(element);
    return element;
  }

  /** A group, for elements that share attributes (e.g. a font or a transform). */
  group(attributes = {}, parent = this.root) {
    return this.add('g', attributes, parent);
  }

  rect(x, y, width, height, attributes = {}, parent = this.root) {
    return this.add('rect', { x, y, width, height, ...attributes }, parent);
  }

  line(x1, y1, x2, y2, attributes = {}, parent = this.root) {
    return this.add('line', { x1, y1, x2, y2, ...attributes }, parent);
  }

  /** Text centred vertically on y; anchor: start | middle | end. */
  text(content, x, y, { anchor = 'start', size = 12, ...attributes } = {}, parent = this.root) {
    const element = this.add('text', {
      x, y, 'text-anchor': anchor, 'dominant-baseline': 'middle', 'font-family': SVG_FONT, 'font-size': size, ...attributes,
    }, parent);
    element.textContent = String(content); // a text node: never parsed as markup
    return element;
  }

  /** A raster image (data: URL), scaled without smoothing so that cells stay crisp. */
  image(href, x, y, width, height, parent = this.root) {
    return this.add('image', { href, x, y, width, height, preserveAspectRatio: 'none', style: 'image-rendering: pixelated; image-rendering: crisp-edges' }, parent);
  }

  /** fill value of a diagonal hatch (lines in `colour` over `background`; the first call's colours), defined once per document. */
  hatch(colour = '#888', background = '#d6d6d6') {
    if (!this.#hatched) {
      this.#defs ??= this.add('defs', {}, this.root);
      const pattern = this.add('pattern', { id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' }, this.#defs);
      this.rect(0, 0, 6, 6, { fill: background }, pattern);
      this.line(0, 0, 0, 6, { stroke: colour, 'stroke-width': 2 }, pattern);
      this.#hatched = true;
    }
    return 'url(#hatch)';
  }

  toString() {
    return new XMLSerializer().serializeToString(this.root);
  }

  #set(element, attributes) {
    for (const [key, value] of Object.entries(attributes)) {
      if (value === undefined || value === null) continue;
      if ((key === 'fill' || key === 'stroke') && typeof value === 'string') {
        const { colour, opacity } = splitAlpha(value);
        element.setAttribute(key, colour);
        if (opacity !== null) element.setAttribute(`${key}-opacity`, opacity);
      } else {
        element.setAttribute(key, round(value));
      }
    }
  }
}
