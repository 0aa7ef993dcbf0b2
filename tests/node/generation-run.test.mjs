// The generation settings' link form (web/run/generation-run.js): greedy and
// sampled settings survive the round trip exactly, the form web/README.md
// documents reads as documented, and settings out of range or malformed
// links get errors that name the field.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DEFAULT_SETTINGS, engineOptions, formatSettings, parseSettings } from '../../web/run/generation-run.js';

test('settings survive the link round trip; greedy links carry no sampling fields', () => {
  const sampled = { maxNewTokens: 12, greedy: false, temperature: 0.8, topK: 0, topP: 0.9, seed: 4294967297 };
  assert.equal(formatSettings(sampled), '12:t0.8:k0:p0.9:s4294967297');
  assert.deepEqual(parseSettings(formatSettings(sampled)), sampled);
  assert.equal(formatSettings({ maxNewTokens: 20, greedy: true, seed: 99 }), '20');
  assert.deepEqual(parseSettings('20'), { ...DEFAULT_SETTINGS, maxNewTokens: 20, greedy: true });
  assert.deepEqual(engineOptions(parseSettings('20')), { maxNewTokens: 20, greedy: true });
  assert.deepEqual(engineOptions(sampled), { maxNewTokens: 12, greedy: false, temperature: 0.8, topK: 0, topP: 0.9, seed: 4294967297 });
  // web/README.md's example: sampling fields may come in any order, missing ones take the defaults.
  assert.deepEqual(parseSettings('30:s7:t1.2'), { ...DEFAULT_SETTINGS, maxNewTokens: 30, greedy: false, temperature: 1.2, seed: 7 });
});

test('bad settings and malformed links are errors that name the field', () => {
  assert.throws(() => parseSettings('many'), /does not start with the number of new tokens/);
  assert.throws(() => parseSettings('0'), /maxNewTokens must be a whole number from 1 to 512/);
  assert.throws(() => parseSettings('9999'), /maxNewTokens/);
  assert.throws(() => parseSettings('5:x3'), /"x3" in "5:x3" is not t<temperature>/);
  assert.throws(() => parseSettings('5:t'), /is not t<temperature>/);
  assert.throws(() => parseSettings('5:t0'), /temperature must be a positive number/);
  assert.throws(() => parseSettings('5:p1.5'), /topP must be in \(0, 1\]/);
  assert.throws(() => parseSettings('5:k2.5'), /topK must be a whole number/);
  assert.throws(() => formatSettings({ maxNewTokens: 5, greedy: false, seed: -1 }), /seed must be a whole number from 0/);
});
