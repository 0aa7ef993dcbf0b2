// Colour difference under normal and simulated colour-vision deficiency, for
// choosing and checking the head palette: sRGB -> linear RGB, Machado, Oliveira
// & Fernandes (2009) simulation matrices at full severity, CIELAB, CIE76 ΔE.
// Used by scripts/make-palette.mjs and tests/node/palette.test.mjs.

const MACHADO = {
  protan: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
  deutan: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]],
  tritan: [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.3039]],
};
export const VISIONS = ['normal', ...Object.keys(MACHADO)];

const toLinear = (c) => { const v = c / 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };

export function hexToRgb(hex) {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** CIELAB (D65) of an sRGB colour [0..255]^3 as seen with the given vision. */
export function lab(rgb, vision = 'normal') {
  let lin = rgb.map(toLinear);
  if (vision !== 'normal') {
    const m = MACHADO[vision];
    lin = m.map((row) => Math.min(1, Math.max(0, row[0] * lin[0] + row[1] * lin[1] + row[2] * lin[2])));
  }
  const [r, g, b] = lin;
  const x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const f = (t) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}

const deltaE = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

/** Smallest ΔE between two colours over all visions. */
export function worstCaseDifference(rgbA, rgbB) {
  return Math.min(...VISIONS.map((v) => deltaE(lab(rgbA, v), lab(rgbB, v))));
}

/** Smallest worst-case ΔE over all pairs of a palette of hex colours. */
export function paletteSeparation(hexes) {
  const rgbs = hexes.map(hexToRgb);
  let worst = Infinity;
  for (let i = 0; i < rgbs.length; i += 1) {
    for (let j = i + 1; j < rgbs.length; j += 1) worst = Math.min(worst, worstCaseDifference(rgbs[i], rgbs[j]));
  }
  return worst;
}
