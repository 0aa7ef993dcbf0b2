// <matrix-table>: a small matrix as an accessible HTML table, with row and
// column labels, optional heat colouring and optional editing.
// Attributes: caption, editable (cells become number inputs and a
// `matrix-input` event carries the new matrix), heat ("rows" colours each row
// 0..1 as weights, "signed" colours by sign and magnitude). Labels and values
// are written with textContent, never parsed as HTML; -Infinity shows as −∞.
// Values are float32: inputs, hover titles and data-value show the shortest
// decimal that reads back as the same float32 (0.9, not 0.8999999761581421).
// Not here: large attention heatmaps (canvas views) or any computation.

export function formatValue(v, digits = 4) {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  if (Number.isNaN(v)) return 'NaN';
  return Number.isInteger(v) ? String(v) : v.toFixed(digits);
}

/** Shortest decimal text of a float32 value that reads back as the same float32. */
export function float32Text(v) {
  if (!Number.isFinite(v) || Number.isInteger(v)) return String(v);
  for (let digits = 1; digits < 9; digits += 1) {
    const shorter = Number(v.toPrecision(digits));
    if (Math.fround(shorter) === Math.fround(v)) return String(shorter);
  }
  return String(Math.fround(v));
}

function heatColour(value, scale, mode) {
  if (!Number.isFinite(value) || scale === 0) return '';
  const strength = Math.min(1, Math.abs(value) / scale);
  const hue = mode === 'signed' && value < 0 ? '230, 120, 30' : '40, 110, 200';
  return `rgba(${hue}, ${(0.08 + 0.72 * strength).toFixed(3)})`;
}

export class MatrixTable extends HTMLElement {
  #matrix = null;
  #rowLabels = null;
  #colLabels = null;
  #digits = 4;

  get matrix() { return this.#matrix; }

  /** matrix: { data, shape }; rowLabels / colLabels: arrays of strings. */
  show(matrix, { rowLabels = null, colLabels = null, digits = 4 } = {}) {
    this.#matrix = { data: Float32Array.from(matrix.data), shape: [...matrix.shape] };
    this.#rowLabels = rowLabels;
    this.#colLabels = colLabels;
    this.#digits = digits;
    this.#render();
  }

  #render() {
    const [rows, cols] = this.#matrix.shape;
    const editable = this.hasAttribute('editable');
    const heat = this.getAttribute('heat');
    const finite = [...this.#matrix.data].filter(Number.isFinite);
    const scale = heat === 'rows' ? 1 : Math.max(0, ...finite.map(Math.abs));

    const table = document.createElement('table');
    const caption = this.getAttribute('caption');
    if (caption) table.createCaption().textContent = caption;
    if (this.#colLabels) {
      const head = table.createTHead().insertRow();
      if (this.#rowLabels) head.appendChild(document.createElement('td'));
      for (let c = 0; c < cols; c += 1) {
        const th = document.createElement('th');
        th.scope = 'col';
        th.textContent = this.#colLabels[c] ?? String(c);
        head.appendChild(th);
      }
    }
    const body = table.createTBody();
    for (let r = 0; r < rows; r += 1) {
      const tr = body.insertRow();
      if (this.#rowLabels) {
        const th = document.createElement('th');
        th.scope = 'row';
        th.textContent = this.#rowLabels[r] ?? String(r);
        tr.appendChild(th);
      }
      for (let c = 0; c < cols; c += 1) {
        const index = r * cols + c;
        const value = this.#matrix.data[index];
        const td = tr.insertCell();
        td.dataset.value = float32Text(value);
        td.title = `${this.#rowLabels?.[r] ?? r}, ${this.#colLabels?.[c] ?? c}: ${float32Text(value)}`;
        if (value === -Infinity) td.classList.add('masked');
        if (heat) td.style.backgroundColor = heatColour(value, scale, heat);
        if (editable) {
          const input = document.createElement('input');
          input.type = 'number';
          input.step = 'any';
          input.value = float32Text(value);
          input.setAttribute('aria-label', td.title.split(':')[0]);
          input.addEventListener('change', () => this.#edit(index, input));
          td.appendChild(input);
        } else {
          td.textContent = formatValue(value, this.#digits);
        }
      }
    }
    this.replaceChildren(table);
  }

  #edit(index, input) {
    const value = Number(input.value);
    if (input.value.trim() === '' || !Number.isFinite(value)) {
      input.value = float32Text(this.#matrix.data[index]);
      return;
    }
    this.#matrix.data[index] = value;
    this.dispatchEvent(new CustomEvent('matrix-input', { bubbles: true, detail: { matrix: this.#matrix } }));
  }
}

customElements.define('matrix-table', MatrixTable);
