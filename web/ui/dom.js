// Tiny helper to build DOM safely: h('p', { class: 'note' }, 'text', child).
// Strings become text nodes (never HTML), so token text can't inject markup.
// A style string is set through the CSSOM (style.cssText), which a Content
// Security Policy without 'unsafe-inline' styles still allows.
// replaceKeepingFocus re-renders a panel without dropping the keyboard focus.
// Not here: templating, diffing or state.

export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') element.className = value;
    else if (key === 'dataset') Object.assign(element.dataset, value);
    else if (key === 'style') element.style.cssText = value;
    else if (key.startsWith('on') && typeof value === 'function') element.addEventListener(key.slice(2), value);
    else if (key in element && typeof value !== 'string') element[key] = value;
    else element.setAttribute(key, value === true ? '' : value);
  }
  element.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false).map((c) => (c instanceof Node ? c : document.createTextNode(String(c)))));
  return element;
}

/**
 * container.replaceChildren(...children), keeping the keyboard focus: when an
 * element inside the container had it, the new element with the same
 * data-focus-key gets it, so a control that re-renders its panel (a head
 * chip, an ablation button) stays focused instead of dropping focus to <body>.
 */
export function replaceKeepingFocus(container, ...children) {
  const focused = container.getRootNode().activeElement;
  const key = focused && container.contains(focused) ? focused.dataset?.focusKey : undefined;
  container.replaceChildren(...children);
  if (key !== undefined) container.querySelector(`[data-focus-key="${CSS.escape(key)}"]`)?.focus();
}
