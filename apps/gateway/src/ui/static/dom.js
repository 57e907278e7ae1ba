// @ts-check
/**
 * A tiny element builder. Text is always set as text, never parsed as HTML: whatever the API
 * returns (names, reasons, messages) cannot become markup or script in the page.
 */

/**
 * @typedef {string | number | Node | null | undefined | false} Leaf
 * @typedef {Leaf | Leaf[] | Array<Leaf | Leaf[]> | Array<Leaf | Leaf[] | Array<Leaf | Leaf[]>>} Child
 * @typedef {Record<string, string | number | boolean | null | undefined | EventListener>} Props
 */

/**
 * `h('a', {href: '#/x', class: 'link'}, 'text', child)`. Props starting with `on` are listeners
 * (`onclick`), `true`/`false` toggles a boolean attribute, null/undefined leaves it out.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

/**
 * @param {Element} el
 * @param {Child[]} children
 */
function append(el, children) {
  for (const child of /** @type {Leaf[]} */ (children.flat(3))) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'object' ? child : String(child));
  }
}

/**
 * Replaces an element's content.
 * @param {Element} el
 * @param {...Child} children
 */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/**
 * A status as text with a colour class (the colour only repeats what the text says).
 * @param {string} status
 */
export function badge(status) {
  return h('span', { class: `badge ${statusTone(status)}` }, status);
}

/** @param {string} status */
export function statusTone(status) {
  if (['ACTIVE', 'SUCCEEDED', 'OK', 'RESOLVED'].includes(status)) return 'good';
  if (['ERROR', 'FAILED', 'CRITICAL', 'WARNING', 'OPEN', 'CANCELLED'].includes(status)) return 'bad';
  if (['SKIPPED', 'INIT'].includes(status)) return 'quiet';
  return 'busy';
}

/**
 * A section with a heading, for the parts of a page.
 * @param {string} id
 * @param {string} title
 * @param {...Child} children
 */
export function section(id, title, ...children) {
  return h('section', { id, 'aria-labelledby': `${id}-title` }, h('h2', { id: `${id}-title` }, title), ...children);
}
