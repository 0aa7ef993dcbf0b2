// The head palette stays distinct for 16 heads under normal and simulated
// colour-vision deficiency, better than bertviz's 10 colours (d3 category10)
// do for 10; and it matches what its generator produces.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { paletteSeparation } from '../../scripts/colour-vision.mjs';
import { HEAD_COLOURS, headColour } from '../../web/ui/palette.js';

const D3_CATEGORY10 = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

test('16 head colours, pairwise distinct under protan, deutan and tritan simulation', () => {
  assert.equal(new Set(HEAD_COLOURS).size, 16);
  const ours = paletteSeparation(HEAD_COLOURS);
  const bertviz = paletteSeparation(D3_CATEGORY10);
  assert.ok(ours >= 15, `smallest worst-case ΔE ${ours}`);
  assert.ok(ours > 2 * bertviz, `ours ${ours} vs bertviz ${bertviz}`);
  assert.equal(headColour(17), HEAD_COLOURS[1]);
});
