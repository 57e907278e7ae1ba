// @ts-check
import { badge, h } from './dom.js';
import { policyTypeLabel } from './format.js';

/**
 * A decision for a person: the outcome, the plan (nodes created where, nodes removed, the new size)
 * and what each policy said and changed, in the order they ran.
 * @param {import('./decision.js').ReadableDecision} d
 */
export function decisionView(d) {
  const nodeTable = (/** @type {string} */ caption, /** @type {import('./decision.js').PlannedNode[]} */ nodes, /** @type {boolean} */ withGroup) =>
    nodes.length
      ? h(
          'div',
          { class: 'scroll' },
          h(
            'table',
            { class: 'plan' },
            h('caption', {}, caption),
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Node'), h('th', { scope: 'col' }, 'Zone'), withGroup ? h('th', { scope: 'col' }, 'Server group') : null)),
            h('tbody', {}, nodes.map((n) => h('tr', {}, h('td', {}, n.name), h('td', {}, n.zone || 'any'), withGroup ? h('td', {}, n.group || 'none') : null))),
          ),
        )
      : null;
  return h(
    'div',
    { class: 'decision' },
    h('p', { class: 'outcome' }, badge(d.status || '?'), ' ', d.reason),
    d.error ? h('p', { class: 'error', role: 'alert' }, d.error) : null,
    d.desired ? h('p', {}, `Desired capacity: ${d.desired.from ?? '?'} → ${d.desired.to}`) : null,
    nodeTable(`New nodes (${d.creates.length})`, d.creates, true),
    nodeTable(`Nodes removed (${d.deletes.length})`, d.deletes, false),
    d.replacements.length
      ? h(
          'ul',
          { class: 'replacements', 'aria-label': 'Replacements' },
          d.replacements.map((r) => h('li', {}, `${r.name} replaces ${r.replaces} (${r.why}) in ${r.zone || 'any zone'}${r.group ? `, group ${r.group}` : ''}`)),
        )
      : null,
    d.findings.length ? h('ul', { class: 'findings', 'aria-label': 'What was wrong' }, d.findings.map((f) => h('li', {}, f))) : null,
    h('h3', {}, 'What each policy said'),
    d.policies.length
      ? h(
          'ol',
          { class: 'trace' },
          d.policies.map((p) =>
            h(
              'li',
              { 'data-policy': p.name },
              h('p', {}, h('strong', {}, p.name), ` (${policyTypeLabel(p.type)}) `, badge(p.verdict)),
              h('p', {}, p.said),
              p.changes.length ? h('ul', { class: 'changes' }, p.changes.map((c) => h('li', {}, h('code', {}, c.key), `: ${c.text}`))) : null,
            ),
          ),
        )
      : h('p', { class: 'quiet' }, 'No policy took part.'),
  );
}
