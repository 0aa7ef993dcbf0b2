// <matrix-table>: shows a small matrix as an accessible HTML table with
// optional row and column labels. Values are written with textContent (token
// labels are never parsed as HTML); -Infinity is shown as −∞.
// Not here: heatmaps of attention (a later view), any computation.

export function formatValue(v, digits = 4) {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  return Number.isInteger(v) ? String(v) : v.toFixed(digits);
}

export class MatrixTable extends HTMLElement {
  #matrix = null;
  #rowLabels = null;
  #colLabels = null;

  /** matrix: { data, shape }; rowLabels / colLabels: arrays of strings. */
  show(matrix, { rowLabels = null, colLabels = null, digits = 4 } = {}) {
    this.#matrix = matrix;
    this.#rowLabels = rowLabels;
    this.#colLabels = colLabels;
    this.digits = digits;
    this.render();
  }

  render() {
    const table = document.createElement('table');
    const caption = this.getAttribute('caption');
    if (caption) table.createCaption().textContent = caption;
    const [rows, cols] = this.#matrix.shape;
    if (this.#colLabels) {
      const head = table.createTHead().insertRow();
      if (this.#rowLabels) head.appendChild(document.createElement('th'));
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
        const value = this.#matrix.data[r * cols + c];
        const td = tr.insertCell();
        td.textContent = formatValue(value, this.digits);
        td.dataset.value = String(value);
      }
    }
    this.replaceChildren(table);
  }
}

customElements.define('matrix-table', MatrixTable);
