// An author's own worked example for the from-scratch mode, checked before
// the scratch view uses it: { tokens, x, wq, wk, wv, printedOutput? } for the
// projection steps, or { source, target, xEncoder, xDecoder, wq, wk, wv } for
// the cross-attention step. Every problem is an Error that names the matrix
// and the row. Not here: the tutorials' own examples (presets.js), computing.

// preset[name] as a checked copy: a non-empty array of `rows` rows (any
// number when undefined) of `cols` finite numbers (the first row's length
// when undefined). Throws an Error naming what does not fit.
function checkedMatrix(preset, name, rows, cols) {
  const m = preset[name];
  if (!Array.isArray(m) || m.length === 0 || !m.every((row) => Array.isArray(row))) throw new Error(`${name} must be a non-empty array of rows`);
  const width = cols ?? m[0].length;
  if (width === 0) throw new Error(`${name} has empty rows`);
  if (rows !== undefined && m.length !== rows) throw new Error(`${name} has ${m.length} rows, expected ${rows}`);
  m.forEach((row, i) => {
    if (row.length !== width) throw new Error(`row ${i + 1} of ${name} has ${row.length} numbers, expected ${width}`);
    if (!row.every((v) => typeof v === 'number' && Number.isFinite(v))) throw new Error(`row ${i + 1} of ${name} holds something that is not a finite number`);
  });
  return m.map((row) => row.slice());
}

function checkedLabels(preset, name, count) {
  const labels = preset[name];
  if (count === undefined) {
    if (!Array.isArray(labels) || labels.length === 0 || labels.length > 64) throw new Error(`${name} must be a list of 1 to 64 labels`);
  } else if (labels === undefined) {
    return Array.from({ length: count }, (_, i) => `d${i}`);
  } else if (!Array.isArray(labels) || labels.length !== count) {
    throw new Error(`${name} must be a list of ${count} labels`);
  }
  return labels.map(String);
}

/**
 * Checks an author's cross-attention example { source, target, xEncoder,
 * xDecoder, wq, wk, wv, sourceAxes?, targetAxes? }: X_enc one row of d_enc
 * numbers per source token, X_dec one row of d_dec per target token, W_Q
 * d_dec x d_k, W_K d_enc x d_k, W_V d_enc x d_v.
 */
function checkCrossPreset(preset) {
  const source = checkedLabels(preset, 'source');
  const target = checkedLabels(preset, 'target');
  const xEncoder = checkedMatrix(preset, 'xEncoder', source.length);
  const xDecoder = checkedMatrix(preset, 'xDecoder', target.length);
  const wq = checkedMatrix(preset, 'wq', xDecoder[0].length);
  const wk = checkedMatrix(preset, 'wk', xEncoder[0].length, wq[0].length);
  const wv = checkedMatrix(preset, 'wv', xEncoder[0].length);
  return {
    title: String(preset.title ?? ''), source, target, xEncoder, xDecoder, wq, wk, wv,
    sourceAxes: checkedLabels(preset, 'sourceAxes', xEncoder[0].length), targetAxes: checkedLabels(preset, 'targetAxes', xDecoder[0].length),
  };
}

/**
 * Checks an author's example: { tokens, x, wq, wk, wv, printedOutput? } for
 * the projection steps (token labels, X as one row of d numbers per token,
 * W_Q and W_K as d x d_k, W_V as d x d_v), or one with `xEncoder` for the
 * cross-attention step (checkCrossPreset). Returns a clean copy; throws an
 * Error naming what does not fit.
 */
export function checkPreset(preset) {
  if (!preset || typeof preset !== 'object') throw new Error('the example must be an object { tokens, x, wq, wk, wv } (or { source, target, xEncoder, xDecoder, wq, wk, wv })');
  if (preset.xEncoder !== undefined) return checkCrossPreset(preset);
  const tokens = checkedLabels(preset, 'tokens');
  const x = checkedMatrix(preset, 'x', tokens.length);
  const d = x[0].length;
  const wq = checkedMatrix(preset, 'wq', d);
  const wk = checkedMatrix(preset, 'wk', d, wq[0].length);
  const wv = checkedMatrix(preset, 'wv', d);
  const checked = { title: String(preset.title ?? ''), tokens, x, wq, wk, wv };
  if (preset.printedOutput !== undefined) checked.printedOutput = checkedMatrix(preset, 'printedOutput', tokens.length, wv[0].length);
  return checked;
}
