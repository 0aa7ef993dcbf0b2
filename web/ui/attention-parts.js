// The parts of an encoder–decoder model's attention (encoder self-attention,
// decoder self-attention, cross-attention), their names, and the picker that
// chooses the part the views show, shared by the playground page and the
// widget's data mode. Not here: building the parts' results
// (encoder-decoder.js, attention-data-source.js) or drawing them.
import { h } from './dom.js';

export const PART_LABELS = { self: 'Self-attention', encoder: 'Encoder self-attention', decoder: 'Decoder self-attention', cross: 'Cross-attention (decoder → encoder)' };

/**
 * A labelled <select name="attention"> of attention parts. onChange(name)
 * runs when the reader picks one; show(order, chosen) lists the parts in
 * `order` with `chosen` selected.
 */
export class PartPicker {
  element;
  #select;

  constructor(onChange) {
    this.#select = h('select', { name: 'attention', onchange: (event) => onChange(event.target.value) });
    this.element = h('label', { class: 'attention-part' }, 'Attention ', this.#select);
  }

  show(order, chosen) {
    const names = [...this.#select.options].map((option) => option.value);
    if (names.join() !== order.join()) this.#select.replaceChildren(...order.map((name) => h('option', { value: name }, PART_LABELS[name])));
    this.#select.value = chosen;
  }
}
