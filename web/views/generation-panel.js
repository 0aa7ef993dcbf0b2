// <generation-panel>: the generation timeline of a causal model, bound to the
// page's (or the widget's) Store. The reader picks the settings (new tokens;
// greedy, or sampling with temperature, top-k, top-p and a seed) and presses
// Generate; the tokens appear one at a time as the engine worker writes them
// (Stop ends it after the current token). The timeline (a slider and the
// strip of generated tokens, both keyboard accessible: arrows, Home, End)
// steps back to any token; at that step the panel shows the token's
// probability and its rivals', and fires `generation-step` with the views'
// result there (the text up to the position that predicted the token, that
// position being the query), so the host shows it in every view.
// State: `gen` (the settings of the generation shown, generation-run.js's link
// form; null when none) and `genStep` (1-based, null = the last); a link with
// `gen` generates again when the model is there, and gives the same tokens.
// The host sets `engine` = { client, key, config } once a model is loaded.
// Events: generation-step { result, query, index, step }, generation-clear.
// Not here: the views, running the plain text (run-loop.js), the engine.
import { h, replaceKeepingFocus } from '../ui/dom.js';
import { StoreBound } from '../ui/store-bound.js';
import { DEFAULT_SETTINGS, MAX_NEW_TOKENS, checkSettings, formatSettings, parseSettings, runGeneration, stepIds, stepResult, stepToken } from '../run/generation-run.js';

const percent = (p) => `${(p * 100).toFixed(1)}%`;

export class GenerationPanel extends StoreBound {
  #engine = null;
  #run = null; // { prompt, steps, running, stopped, controller, error } of the generation shown
  #form;
  #note;
  #timeline;
  #slider;
  #strip;
  #probabilities;
  #frame = null; // a render requested for the next animation frame

  constructor() {
    super();
    const number = (name, label, attrs, title) => h('label', { title }, `${label} `, h('input', { type: 'number', name, required: true, ...attrs }));
    // noValidate: the browser's own checks would block Generate without a word (a step rule once made the
    // default temperature invalid); checkSettings checks every field and the note says what is wrong.
    this.#form = h('form', { class: 'generation-settings', noValidate: true, onsubmit: (event) => { event.preventDefault(); this.generate(); } },
      number('maxNewTokens', 'New tokens', { min: '1', max: String(MAX_NEW_TOKENS), step: '1' }, 'How many tokens to write at most (fewer at an end-of-text token or the model\'s last position)'),
      h('label', {}, 'Decoding ', h('select', { name: 'decoding', onchange: () => this.#syncDisabled() },
        h('option', { value: 'greedy' }, 'greedy (most probable)'), h('option', { value: 'sample' }, 'sampling'))),
      number('temperature', 'temperature', { min: '0', step: '0.05' }, 'Logits are divided by it (above 0): below 1 sharpens, above 1 flattens'),
      number('topK', 'top-k', { min: '0', step: '1' }, 'Draw only among the k most probable tokens (0: all)'),
      number('topP', 'top-p', { min: '0', max: '1', step: '0.01' }, 'Then only among the most probable tokens whose probabilities add up to p (nucleus)'),
      number('seed', 'seed', { min: '0', step: '1' }, 'The same seed and settings give the same tokens'),
      h('button', { type: 'submit', name: 'generate' }, 'Generate'),
      h('button', { type: 'button', name: 'stop', disabled: true, onclick: () => this.stop() }, 'Stop'));
    this.#note = h('p', { class: 'generation-note hint', role: 'status' });
    this.#slider = h('input', { type: 'range', name: 'step', min: '1', max: '1', step: '1', 'aria-label': 'Generation step',
      oninput: (event) => this.#select(Number(event.target.value)) });
    this.#strip = h('p', { class: 'generation-tokens', role: 'group', 'aria-label': 'Generated tokens: choose one to see its step',
      onkeydown: (event) => this.#stripKey(event), onclick: (event) => {
        const button = event.target.closest('button[data-step]');
        if (button) this.#select(Number(button.dataset.step));
      } });
    this.#timeline = h('div', { class: 'generation-timeline', hidden: true },
      h('label', { class: 'generation-step' }, 'Step ', this.#slider, h('output', { name: 'step-value' })), this.#strip);
    this.#probabilities = h('figure', { class: 'generation-probabilities prediction', hidden: true });
  }

  connectedCallback() {
    super.connectedCallback();
    if (!this.#form.isConnected) this.append(this.#form, this.#note, this.#timeline, this.#probabilities);
  }

  /** The loaded model: { client, key (the worker's name for it), config }, or null. A new one ends the generation shown. */
  get engine() { return this.#engine; }
  set engine(engine) {
    this.#clear();
    this.#engine = engine;
    this.#syncDisabled();
    if (engine && !engine.config.causal) this.#note.textContent = engine.config.encoderDecoder
      ? 'A translation model writes its translation token by token: see the Decoding view.'
      : `This model reads the whole text at once (it fills in ${engine.config.maskToken ?? 'mask'} tokens) and cannot continue a text: generation needs a causal (GPT-style) model.`;
    else if (this.store?.state.gen) this.#start();
  }

  /** The generation shown: { prompt, steps, running, stopped }, or null. */
  get generation() { return this.#run; }

  /** The token ids of the text the views show at the current step, or null without a generation. */
  get stepIds() {
    if (!this.#run?.prompt || this.#run.steps.length === 0) return null;
    return stepIds(this.#run.prompt, this.#run.steps, this.#index());
  }

  storeChanged(state, changed) {
    if (changed === null || changed.includes('gen')) this.#fillForm(state.gen);
    if (changed === null) {
      this.#render();
      return;
    }
    if (changed.includes('text') && this.#run) {
      this.#clear();
      queueMicrotask(() => this.store.set({ gen: null, genStep: null }));
    }
    if (changed.includes('genStep')) this.#render();
  }

  /** Generates with the form's settings (what the Generate button does). */
  generate() {
    let settings;
    try {
      settings = this.#formSettings();
    } catch (error) {
      this.#note.textContent = `Cannot generate: ${error.message}.`;
      return;
    }
    this.store.set({ gen: formatSettings(settings), genStep: null });
    this.#start();
  }

  /** Generates with the state's settings (`gen`), as a link does once the model is there. */
  run() {
    this.#start();
  }

  /** Stops the generation after its current token. */
  stop() {
    this.#run?.controller.abort();
  }

  #formSettings() {
    const value = (name) => Number(this.#form.elements[name].value);
    return checkSettings({
      maxNewTokens: value('maxNewTokens'), greedy: this.#form.elements.decoding.value === 'greedy',
      temperature: value('temperature'), topK: value('topK'), topP: value('topP'), seed: value('seed'),
    });
  }

  #fillForm(gen) {
    let settings = DEFAULT_SETTINGS;
    try {
      if (gen) settings = parseSettings(gen);
    } catch (error) {
      this.#note.textContent = `The link's generation settings cannot be read: ${error.message}.`;
    }
    const fields = this.#form.elements;
    for (const name of ['maxNewTokens', 'temperature', 'topK', 'topP', 'seed']) fields[name].value = String(settings[name]);
    fields.decoding.value = settings.greedy ? 'greedy' : 'sample';
    this.#syncDisabled();
  }

  #syncDisabled() {
    const fields = this.#form.elements;
    const sampling = fields.decoding.value === 'sample';
    for (const name of ['temperature', 'topK', 'topP', 'seed']) { // shown for sampling only: greedy settings fit one line
      fields[name].disabled = !sampling;
      fields[name].closest('label').hidden = !sampling;
    }
    const usable = Boolean(this.#engine?.config.causal);
    fields.generate.disabled = !usable || Boolean(this.#run?.running);
    fields.stop.disabled = !this.#run?.running;
  }

  async #start() {
    const { gen, text } = this.store.state;
    if (!this.#engine?.config.causal || !gen) return;
    let settings;
    try {
      settings = parseSettings(gen);
    } catch (error) {
      this.#note.textContent = `Cannot generate: ${error.message}.`;
      return;
    }
    this.#clear();
    const run = { prompt: null, steps: [], running: true, stopped: false, controller: new AbortController() };
    this.#run = run;
    this.dataset.state = 'running';
    this.#note.textContent = 'Generating…';
    this.#syncDisabled();
    const { client, key, config } = this.#engine;
    try {
      const done = await runGeneration(client, key, config, text, settings, {
        signal: run.controller.signal,
        onPrompt: (prompt) => { run.prompt = prompt; },
        onStep: (step, steps) => {
          run.steps = steps;
          if (this.#run === run) this.#renderSoon();
        },
      });
      if (this.#run !== run) return;
      run.stopped = done.stopped;
      // A stopped generation's link names the tokens it wrote, so it reproduces what is shown.
      if (done.stopped && run.steps.length) this.store.set({ gen: formatSettings({ ...settings, maxNewTokens: run.steps.length }) });
      this.#note.textContent = [done.note, this.#summary(run, done.ms)].filter(Boolean).join(' ');
    } catch (error) {
      if (this.#run !== run) return;
      this.#note.textContent = error.message;
    } finally {
      if (this.#run === run) {
        run.running = false;
        this.dataset.state = 'done';
        this.#syncDisabled();
        this.#render();
      }
    }
  }

  #summary(run, ms) {
    const n = run.steps.length;
    const why = run.stopped ? 'stopped' : n < parseSettings(this.store.state.gen).maxNewTokens ? 'ended at an end-of-text token or the last position' : 'done';
    return `${n} token${n === 1 ? '' : 's'} written in ${ms.toFixed(0)} ms (${why}).`;
  }

  #clear() {
    if (!this.#run) return;
    this.#run.controller.abort();
    this.#run = null;
    delete this.dataset.state;
    this.#note.textContent = '';
    this.#render();
    this.#syncDisabled();
    this.dispatchEvent(new CustomEvent('generation-clear', { bubbles: true }));
  }

  /** The step shown, 0-based: genStep (1-based) within the steps so far, the last when null. */
  #index() {
    const n = this.#run?.steps.length ?? 0;
    const asked = this.store?.state.genStep;
    return asked === null || asked === undefined ? n - 1 : Math.min(Math.max(asked, 1), n) - 1;
  }

  #select(step) {
    const n = this.#run?.steps.length ?? 0;
    if (n === 0) return;
    const clamped = Math.min(Math.max(step, 1), n);
    this.store.set({ genStep: clamped === n && !this.#run.running ? null : clamped });
  }

  #stripKey(event) {
    const move = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
    const n = this.#run?.steps.length ?? 0;
    let step = null;
    if (move) step = this.#index() + 1 + move;
    else if (event.key === 'Home') step = 1;
    else if (event.key === 'End') step = n;
    if (step === null || n === 0) return;
    event.preventDefault();
    this.#select(step);
    this.#strip.querySelector(`button[data-step="${Math.min(Math.max(step, 1), n)}"]`)?.focus();
  }

  // Tokens may arrive faster than frames: one render per frame keeps the page (and Stop) responsive.
  #renderSoon() {
    if (this.#frame !== null) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = null;
      this.#render();
    });
  }

  #render() {
    cancelAnimationFrame(this.#frame);
    this.#frame = null;
    const run = this.#run;
    const steps = run?.steps ?? [];
    this.#timeline.hidden = steps.length === 0;
    this.#probabilities.hidden = steps.length === 0;
    if (steps.length === 0 || !run.prompt) {
      this.#strip.replaceChildren();
      return;
    }
    const index = this.#index();
    this.#slider.max = String(steps.length);
    this.#slider.value = String(index + 1);
    this.#timeline.querySelector('output').textContent = `${index + 1} of ${steps.length}`;
    replaceKeepingFocus(this.#strip,
      h('span', { class: 'generation-prompt' }, run.prompt.tokens.map((token) => token.display).join('')),
      ...steps.map((step, i) => h('button', {
        type: 'button', class: 'generation-token', 'data-step': String(i + 1), 'data-focus-key': `step ${i + 1}`, 'aria-pressed': String(i === index),
        tabindex: i === index ? '0' : '-1', title: `step ${i + 1}: ${percent(step.probability)}`,
      }, stepToken(step).display)));
    this.#showProbabilities(steps[index], index);
    const { result, query } = stepResult(run.prompt, steps, index, this.#engine.config);
    this.dispatchEvent(new CustomEvent('generation-step', { bubbles: true, detail: { result, query, index, step: steps[index] } }));
  }

  #showProbabilities(step, index) {
    const chosen = stepToken(step).display;
    const sampled = parseSettings(this.store.state.gen).greedy ? '' : `; the sampler gave it ${percent(step.samplingProbability)}`;
    const { ids, probabilities, displays } = step.top;
    const rows = Array.from(ids, (id, j) => ({ id, display: displays[j] ?? `#${id}`, probability: probabilities[j] }));
    if (!rows.some((row) => row.id === step.token)) rows.push({ id: step.token, display: chosen, probability: step.probability });
    this.#probabilities.replaceChildren(
      h('figcaption', {}, `Step ${index + 1}: “${chosen}” had probability ${percent(step.probability)}${sampled}. The model's most probable tokens there:`),
      h('ol', {}, rows.map((row) => h('li', { class: row.id === step.token ? 'chosen' : null, 'data-id': String(row.id) },
        h('span', { class: 'prediction-token' }, row.display),
        h('span', { class: 'prediction-bar', style: `width: ${(row.probability * 100).toFixed(1)}%` }),
        h('span', { class: 'prediction-value' }, percent(row.probability))))));
  }
}

customElements.define('generation-panel', GenerationPanel);
