// @ts-check
import { badge, h } from './dom.js';
import { hostLabel, isHostId, plural } from './format.js';

/**
 * The placement map as a table: a column per availability zone (with its node count, and the zone
 * placement policy's weight and the count it asks for), a row per host, each node a cell entry with
 * its name, status, role and server group.
 * @param {import('./placement.js').PlacementMap} map
 */
export function mapView(map) {
  if (map.total === 0) return h('p', { class: 'empty' }, 'No nodes yet: scale the cluster out to see where they land.');
  const percent = (/** @type {number} */ x) => `${Math.round(x * 100)}%`;
  const zoneHead = (/** @type {import('./placement.js').MapZone} */ z) =>
    h(
      'th',
      { scope: 'col', 'data-zone': z.name },
      h('span', { class: 'zone-name' }, z.name || 'no zone yet'),
      h('span', { class: 'zone-count' }, `${plural(z.count, 'node')}${map.total ? ` (${percent(z.count / map.total)})` : ''}`),
      z.weight !== null && z.share !== null && z.expected !== null
        ? h('span', { class: 'zone-weight' }, `weight ${z.weight} (${percent(z.share)}): ${formatExpected(z.expected)} expected`)
        : null,
    );
  const nodeItem = (/** @type {import('./placement.js').MapNode} */ n) =>
    h(
      'li',
      { class: 'node', 'data-node': n.name, 'data-status': n.status },
      h('span', { class: 'node-name' }, n.name),
      ' ',
      badge(n.status),
      n.role ? h('span', { class: 'node-role' }, `role ${n.role}`) : null,
      n.group ? h('span', { class: 'node-group' }, `group ${n.group}`) : null,
    );
  const table = h(
    'table',
    { class: 'map' },
    h(
      'caption',
      {},
      `Nodes by availability zone (columns) and host (rows)`,
      map.rows.some((r) => isHostId(r.host)) ? `; hosts as Nova shows them to project members (hostId)` : '',
      map.weighted ? `; weights of the zone placement policy '${map.weighted}'` : '',
    ),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Host'), map.zones.map(zoneHead))),
    h(
      'tbody',
      {},
      map.rows.map((row) =>
        h(
          'tr',
          { 'data-host': row.host },
          h('th', { scope: 'row', title: row.host || undefined }, hostLabel(row.host)),
          map.zones.map((z) => h('td', {}, row.cells[z.name]?.length ? h('ul', {}, row.cells[z.name].map(nodeItem)) : null)),
        ),
      ),
    ),
  );
  return h(
    'div',
    {},
    h('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'Placement map' }, table),
    map.groups.length
      ? h(
          'p',
          { class: 'groups' },
          'Server groups: ',
          map.groups.map((g, i) => [i ? '; ' : '', h('strong', {}, g.name), ` (${g.policy || 'policy unknown'}, ${plural(g.members, 'node')} of this cluster)`]),
        )
      : null,
    map.otherHosts.length ? h('p', { class: 'quiet' }, `Other hosts Nova reports, without a node of this cluster: ${map.otherHosts.join(', ')}`) : null,
  );
}

/** @param {number} x */
function formatExpected(x) {
  return Number.isInteger(x) ? String(x) : x.toFixed(1);
}
