// Base class of the elements bound to the page's Store (web/run/state.js): holds
// the store, subscribes while the element is connected (again after it is
// moved in the DOM), and hands every change to the subclass.
// Subclasses implement storeChanged(state, changed): `changed` lists the keys
// that changed, or is null when a store was just attached (redraw everything).
// Views that are not rendered (another tab, a closed <details>) defer their
// rebuilds: deferWhileHidden() in a rebuild marks the view stale, and it
// redraws everything when it is shown again (or when flushDeferred() asks,
// before reading what it draws), so a change costs only the visible view.
// With the theme 'auto', a change of the system's colour scheme reaches the
// views as a change of 'theme' (the weight scales follow it: view-support.js).
// Not here: what any view draws.

import { systemDarkScheme } from '../attention/view-support.js';

export class StoreBound extends HTMLElement {
  #store = null;
  #unsubscribe = null;
  #stale = false; // a rebuild was skipped while hidden
  #flushing = false;
  #shownObserver = new ResizeObserver(() => {
    if (this.#stale && this.checkVisibility()) this.flushDeferred();
  });
  #schemeChanged = () => {
    if (this.#store?.state.theme === 'auto') this.storeChanged(this.#store.state, ['theme']);
  };

  get store() { return this.#store; }

  set store(store) {
    this.#store = store;
    this.#subscribe();
    this.storeChanged(store.state, null);
  }

  connectedCallback() {
    if (this.#store && !this.#unsubscribe) this.#subscribe();
    this.#shownObserver.observe(this);
    systemDarkScheme?.addEventListener('change', this.#schemeChanged);
  }

  disconnectedCallback() {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    this.#shownObserver.disconnect();
    systemDarkScheme?.removeEventListener('change', this.#schemeChanged);
  }

  /** In a rebuild: true (and the view marked stale) when the element is not rendered now. */
  deferWhileHidden() {
    if (this.#flushing || this.checkVisibility()) return false;
    this.#stale = true;
    return true;
  }

  /** Runs a rebuild deferred while hidden, now (before reading what the view draws). */
  flushDeferred() {
    if (!this.#stale || !this.#store) return;
    this.#stale = false;
    this.#flushing = true;
    try {
      this.storeChanged(this.#store.state, null);
    } finally {
      this.#flushing = false;
    }
  }

  #subscribe() {
    this.#unsubscribe?.();
    this.#unsubscribe = this.isConnected ? this.#store.subscribe((state, changed) => this.storeChanged(state, changed)) : null;
  }

  /** Override: react to a state change (changed = null: everything). */
  storeChanged() {}
}
