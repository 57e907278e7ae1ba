// @ts-check
import { badge, fill, h } from './dom.js';
import { policyTypeLabel } from './format.js';
import { renderError } from './page.js';

/** one request per cluster each time (up to 100, Senlin's clusters per project): not too often */
const REFRESH_MS = 30_000;

/**
 * The project's clusters: name, status, size and attached policies, refreshed every 30 s.
 * @param {import('./app.js').PageContext} page
 */
export function clustersPage(page) {
  const body = h('div', { 'aria-busy': 'true' }, h('p', { class: 'quiet' }, 'Loading clusters…'));
  fill(page.main, h('h1', { tabindex: -1 }, 'Clusters'), body);
  /** @type {HTMLElement} */ (page.main.querySelector('h1')).focus();

  const load = async () => {
    try {
      const { clusters } = await page.api.get('/v1/clusters?limit=100');
      // one after the other: a burst of a hundred would spend the project's request rate at once
      const bindings = [];
      for (const c of clusters) bindings.push(await page.api.get(`/v1/clusters/${c.id}/policies`));
      if (!page.alive()) return;
      body.removeAttribute('aria-busy');
      fill(body, clusters.length ? clusterTable(clusters, bindings.map((b) => b.cluster_policies)) : h('p', { class: 'empty' }, 'This project has no clusters yet.'));
    } catch (e) {
      if (page.alive()) renderError(body, e);
    }
    page.later(REFRESH_MS, load);
  };
  void load();
}

/** @param {any[]} clusters @param {any[][]} bindings */
function clusterTable(clusters, bindings) {
  const size = (/** @type {any} */ c) => `${c.nodes.length} node${c.nodes.length === 1 ? '' : 's'} (desired ${c.desired_capacity}, min ${c.min_size}, max ${c.max_size === -1 ? 'unlimited' : c.max_size})`;
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { class: 'list' },
      h('caption', {}, 'Clusters of this project'),
      h('thead', {}, h('tr', {}, ['Name', 'Status', 'Size', 'Policies'].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        {},
        clusters.map((c, i) =>
          h(
            'tr',
            { 'data-cluster': c.name },
            h('th', { scope: 'row' }, h('a', { href: `#/clusters/${c.id}` }, c.name)),
            h('td', {}, badge(c.status)),
            h('td', {}, size(c)),
            h('td', {}, bindings[i].length ? bindings[i].map((b) => `${b.policy_name} (${policyTypeLabel(b.policy_type)}${b.enabled ? '' : ', disabled'})`).join(', ') : 'none'),
          ),
        ),
      ),
    ),
  );
}
