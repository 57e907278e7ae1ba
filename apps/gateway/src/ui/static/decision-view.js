// @ts-check
import { badge, h } from './dom.js';
import { policyTypeLabel } from './format.js';

/**
 * A decision for a person: the outcome, the plan (nodes created where, nodes removed, the new size)
 * and what each policy said and changed, in the order they ran.
 * @param {import('./decision.js').ReadableDecision} d
 * @param {3 | 4} [level] the level of its headings: 4 inside a dry run's box, which has a heading of its own
 */
export function decisionView(d, level = 3) {
  const heading = (/** @type {string} */ text) => h(level === 3 ? 'h3' : 'h4', {}, text);
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
    d.findings.length ? [heading('What was wrong'), h('ul', { class: 'findings' }, d.findings.map((f) => h('li', {}, f)))] : null,
    d.replacements.length
      ? [
          heading('Replacements, one at a time'),
          h(
            'ul',
            { class: 'replacements' },
            d.replacements.map((r) => h('li', {}, `${r.name} replaces ${r.replaces} (${r.why}) in ${r.zone || 'any zone'}${r.group ? `, group ${r.group}` : ''}`)),
          ),
        ]
      : null,
    d.policies.length
      ? [
          heading('What each policy said'),
          h(
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
          ),
        ]
      : d.creates.length || d.deletes.length
        ? h('p', { class: 'quiet' }, 'No policy took part: the plan is the engine\'s own.')
        : null,
  );
}
