// Page state: URL round trip (a shared link restores the state exactly),
// defaults for missing or hostile values, links with deflated text (checked
// with zlib), and store notifications.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { inflateRawSync } from 'node:zlib';

import { DEFAULT_STATE, Store, decodeLink, decodeState, encodeLink, encodeState } from '../../web/run/state.js';

test('every field survives the URL round trip', () => {
  const state = {
    model: 'hf:EleutherAI/pythia-160m@step1000', hub: 'http://mirror.test/hf', text: 'Emma was handsome, clever & rich? #1 100%', textB: 'She was <b>not</b> amused.',
    target: 'la zone économique <b>européenne</b> & 100%', view: 'neuron', part: 'decoder', layer: 3, heads: [0, 5, 7], token: 12, threshold: 0.05, prune: 0.9,
    filter: 'a-b', hideSpecial: true, words: true, theme: 'dark', step: 6, ablate: [[0, 3], [2, 1]], ablation: 'mean',
    gen: '12:t0.8:k40:p0.9:s7', genStep: 3, compareText: "The animal didn't cross the street because it was too <b>wide</b>",
    rolloutMethod: 'flow', rolloutDisplay: 'lines', picture: `local:${'0a'.repeat(32)}`, overlay: 'flow',
  };
  assert.deepEqual(decodeState(`#${encodeState(state)}`), state);
  assert.equal(encodeState(DEFAULT_STATE), '');
  assert.deepEqual(decodeState(''), { ...DEFAULT_STATE });
  assert.deepEqual(decodeState(encodeState({ ...DEFAULT_STATE, heads: [] })).heads, []);
  assert.equal(encodeState({ ...DEFAULT_STATE, ablate: [[1, 0], [0, 3]] }), 'ablate=1%3A0%2C0%3A3');
  // Another model's link names its text even when it is the default one (a link without text opens on the model's example).
  assert.match(encodeState({ ...DEFAULT_STATE, model: 'austen-bert' }), /^model=austen-bert&text=It\+is\+a\+truth/);
  assert.equal(decodeState(encodeState({ ...DEFAULT_STATE, model: 'austen-bert' })).text, DEFAULT_STATE.text);
});

test('invalid values fall back to defaults', () => {
  const s = decodeState('view=<script>&layer=-2&threshold=7&filter=x&heads=1,a,,3&token=abc&theme=neon&hub=javascript:alert(1)');
  assert.equal(s.hub, DEFAULT_STATE.hub);
  assert.equal(s.view, DEFAULT_STATE.view);
  assert.equal(s.layer, DEFAULT_STATE.layer);
  assert.equal(s.threshold, DEFAULT_STATE.threshold);
  assert.equal(s.filter, 'all');
  assert.deepEqual(s.heads, [1, 3]);
  assert.equal(s.token, null);
  assert.equal(s.theme, 'auto');
  const g = decodeState('genStep=0&gen=');
  assert.equal(g.genStep, null);
  assert.equal(g.gen, null);
  for (const bad of ['0:a', '1', '-1:2', '0:1;1:2', 'self:0:1', 'cross:0', 'cross:0:1:2']) assert.deepEqual(decodeState(`ablate=${encodeURIComponent(bad)}&ablation=max`).ablate, []);
  // An encoder–decoder's heads name their part; sorted by part (encoder, decoder, cross), then layer and head.
  const parts = decodeState(`ablate=${encodeURIComponent('cross:1:2,encoder:0:3,decoder:2:0,cross:0:1')}`).ablate;
  assert.deepEqual(parts, [[0, 3, 'encoder'], [2, 0, 'decoder'], [0, 1, 'cross'], [1, 2, 'cross']]);
  assert.equal(encodeState({ ...DEFAULT_STATE, ablate: parts }), `ablate=${encodeURIComponent('encoder:0:3,decoder:2:0,cross:0:1,cross:1:2')}`);
  assert.equal(decodeState('ablation=max').ablation, 'zero');
  const r = decodeState('rolloutMethod=max-flow&rolloutDisplay=<svg>&overlay=heat');
  assert.deepEqual([r.rolloutMethod, r.rolloutDisplay, r.overlay], ['rollout', 'matrix', 'attention']);
  // A picture is named as picture-link.js writes it, or not at all: no paths out of models/, no URLs, no short hashes.
  for (const good of ['sample:shapes-vit/samples/circle.png', 'sample:sample-pictures/cat.jpg', `local:${'f'.repeat(64)}`, 'inline:_-AZaz09']) {
    assert.equal(decodeState(`picture=${encodeURIComponent(good)}`).picture, good);
  }
  for (const bad of ['sample:../secret.png', 'sample:a/../../b.png', 'sample:./a.png', 'sample:https://evil.test/x.png', 'sample://evil.test/x.png', 'sample:/etc/x.png', 'sample:a//b.png', 'local:abc', `local:${'G'.repeat(64)}`, 'inline:a+b/c=', 'https://x.test/a.png', 'cat.jpg']) {
    assert.equal(decodeState(`picture=${encodeURIComponent(bad)}`).picture, '', bad);
  }
});

test('the store notifies with the keys that changed', () => {
  const store = new Store();
  const calls = [];
  store.subscribe((state, changed) => calls.push(changed));
  store.set({ layer: 2, view: 'head' });
  store.set({ layer: 2 });
  store.set({ heads: [1] });
  assert.deepEqual(calls, [['layer'], ['heads']]);
  assert.equal(store.state.layer, 2);
});

test('links: long texts travel deflated (zlib reads them back), short ones and old links stay plain', async () => {
  const corpus = readFileSync(new URL('../../../shared/corpus/austen-paragraphs.txt', import.meta.url), 'utf8');
  const text = corpus.split(/\s+/).slice(0, 5000).join(' ');
  const state = { ...DEFAULT_STATE, text, textB: 'Short & plain.', view: 'matrix', token: 7 };
  const hash = await encodeLink(state);
  const params = new URLSearchParams(hash);
  assert.equal(params.get('text'), null);
  assert.equal(params.get('textB'), 'Short & plain.');
  assert.equal(params.get('view'), 'matrix');
  const packed = params.get('ztext');
  assert.match(packed, /^[A-Za-z0-9_-]+$/, 'base64url');
  assert.equal(inflateRawSync(Buffer.from(packed, 'base64url')).toString('utf8'), text);
  assert.ok(hash.length < encodeState(state).length / 1.8, `${hash.length} vs ${encodeState(state).length}`);
  assert.deepEqual(await decodeLink(`#${hash}`), state);
  // A link made before compression, and the short default, are unchanged.
  assert.deepEqual(await decodeLink(`#${encodeState(state)}`), state);
  assert.equal(await encodeLink(DEFAULT_STATE), '');
  await assert.rejects(decodeLink(`#${hash.replace(/ztext=[^&]{40}/, 'ztext=')}`), /the link's text is damaged/);
  // An encoder–decoder model's long target text travels deflated too.
  const translated = { ...DEFAULT_STATE, model: 'gettext-en-fr', view: 'cross', text: 'Short.', target: text };
  const targetHash = await encodeLink(translated);
  assert.equal(inflateRawSync(Buffer.from(new URLSearchParams(targetHash).get('ztarget'), 'base64url')).toString('utf8'), text);
  assert.deepEqual(await decodeLink(`#${targetHash}`), translated);
  await assert.rejects(decodeLink(`#${targetHash.replace(/ztarget=[^&]{40}/, 'ztarget=')}`), /the link's target text is damaged/);
});

test('a link leaves out an undefined text (a vision model reads none); another model names its default text', async () => {
  assert.equal(await encodeLink({ ...DEFAULT_STATE, model: 'shapes-vit', text: undefined, textB: undefined, view: 'image' }), 'model=shapes-vit&view=image');
  assert.match(await encodeLink({ ...DEFAULT_STATE, model: 'austen-bert' }), /^model=austen-bert&text=It\+is\+a\+truth/);
});
