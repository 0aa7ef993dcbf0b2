// <heat-map>: draws a matrix as a canvas heat map (blue positive, orange
// negative, grey hatching for -Infinity) with the exact value of the cell
// under the pointer shown in a readout line. For matrices too large for a
// table (e.g. positional encodings of 100 positions x 128 dimensions).
// Not here: token labels or attention-specific interaction (matrix view).

export class HeatMap extends HTMLElement {
  #matrix = null;
  #canvas = document.createElement('canvas');
  #readout = document.createElement('p');
  #labels = { rows: 'row', cols: 'column' };

  constructor() {
    super();
    this.#readout.className = 'readout';
    this.#readout.setAttribute('aria-live', 'polite');
    this.#canvas.addEventListener('pointermove', (event) => this.#hover(event));
  }

  connectedCallback() {
    if (!this.#canvas.isConnected) this.append(this.#canvas, this.#readout);
  }

  /** matrix: { data, shape }; labels: names of the row and column axes. */
  show(matrix, { rowName = 'row', colName = 'column', description = '' } = {}) {
    this.#matrix = matrix;
    this.#labels = { rows: rowName, cols: colName };
    this.#canvas.setAttribute('role', 'img');
    this.#canvas.setAttribute('aria-label', description || `heat map, ${matrix.shape[0]} ${rowName}s by ${matrix.shape[1]} ${colName}s`);
    this.#draw();
  }

  #draw() {
    const [rows, cols] = this.#matrix.shape;
    const cell = Math.max(2, Math.min(12, Math.floor(640 / Math.max(cols, 1))));
    this.#canvas.width = cols * cell;
    this.#canvas.height = rows * cell;
    const ctx = this.#canvas.getContext('2d');
    const finite = this.#matrix.data.filter(Number.isFinite);
    const scale = finite.reduce((m, v) => Math.max(m, Math.abs(v)), 0) || 1;
    for (let r = 0; r < rows; r += 1) {
      for (let c = 0; c < cols; c += 1) {
        const v = this.#matrix.data[r * cols + c];
        if (!Number.isFinite(v)) {
          ctx.fillStyle = '#999';
        } else {
          const t = Math.min(1, Math.abs(v) / scale);
          ctx.fillStyle = v >= 0 ? `rgba(40, 110, 200, ${t})` : `rgba(230, 120, 30, ${t})`;
        }
        ctx.fillRect(c * cell, r * cell, cell, cell);
      }
    }
    this.cellSize = cell;
    this.#readout.textContent = `${rows} ${this.#labels.rows}s × ${cols} ${this.#labels.cols}s; point at a cell for its value.`;
  }

  #hover(event) {
    if (!this.#matrix) return;
    const rect = this.#canvas.getBoundingClientRect();
    const [rows, cols] = this.#matrix.shape;
    const c = Math.floor(((event.clientX - rect.left) / rect.width) * cols);
    const r = Math.floor(((event.clientY - rect.top) / rect.height) * rows);
    if (r < 0 || c < 0 || r >= rows || c >= cols) return;
    this.#readout.textContent = `${this.#labels.rows} ${r}, ${this.#labels.cols} ${c}: ${this.#matrix.data[r * cols + c].toFixed(6)}`;
  }
}

customElements.define('heat-map', HeatMap);
