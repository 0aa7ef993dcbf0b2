// Base class of the elements bound to the page's Store (web/state.js): holds
// the store, subscribes while the element is connected (again after it is
// moved in the DOM), and hands every change to the subclass.
// Subclasses implement storeChanged(state, changed): `changed` lists the keys
// that changed, or is null when a store was just attached (redraw everything).
// Not here: what any view draws.

export class StoreBound extends HTMLElement {
  #store = null;
  #unsubscribe = null;

  get store() { return this.#store; }

  set store(store) {
    this.#store = store;
    this.#subscribe();
    this.storeChanged(store.state, null);
  }

  connectedCallback() {
    if (this.#store && !this.#unsubscribe) this.#subscribe();
  }

  disconnectedCallback() {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
  }

  #subscribe() {
    this.#unsubscribe?.();
    this.#unsubscribe = this.isConnected ? this.#store.subscribe((state, changed) => this.storeChanged(state, changed)) : null;
  }

  /** Override: react to a state change (changed = null: everything). */
  storeChanged() {}
}
