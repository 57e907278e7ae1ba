// @ts-check
import { ApiError } from './api.js';
import { fill, h } from './dom.js';

/**
 * An error where the content would be: the API's own message (Senlin's error body), e.g. a 403 for
 * a reader who asked to scale.
 * @param {HTMLElement} el @param {unknown} e
 */
export function renderError(el, e) {
  el.removeAttribute('aria-busy');
  fill(el, h('p', { class: 'error', role: 'alert' }, e instanceof ApiError ? e.message : `Something went wrong: ${String(e)}`));
}

/**
 * A cluster's nodes now; none once the cluster is gone (deleted), which the API answers with a 400.
 * @param {import('./api.js').Api} api @param {string} clusterId
 * @returns {Promise<any[]>}
 */
export async function clusterNodes(api, clusterId) {
  try {
    return (await api.get(`/v1/nodes?cluster_id=${clusterId}&limit=1000`)).nodes;
  } catch (e) {
    if (e instanceof ApiError && e.status === 400) return [];
    throw e;
  }
}

/** @type {WeakMap<HTMLElement, string>} */
const rendered = new WeakMap();

/**
 * Re-renders a part of a page only when its data changed, so that polling does not move the
 * focus or the scroll position of a part that stayed the same.
 * @template T
 * @param {HTMLElement} el @param {T} data @param {(data: T) => Node} render
 */
export function update(el, data, render) {
  const key = JSON.stringify(data);
  if (rendered.get(el) === key) return;
  rendered.set(el, key);
  el.removeAttribute('aria-busy');
  fill(el, render(data));
}
