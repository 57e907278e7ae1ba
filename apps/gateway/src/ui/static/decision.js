// @ts-check
/**
 * A decision (GET /v1/actions/{id}/decision, or the `decision` of a dry run) as a person reads it:
 * what the plan does (nodes created where, nodes removed, the new size) and what each policy said
 * and changed, with ids replaced by the names the snapshot knows.
 */

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;
/** `{"az1":3,"az2":1}` as the zone policies write counts in their reasons */
const COUNTS = /\{(?:"[^"{}]+":-?\d+,?)+\}/g;

/**
 * @typedef {{name: string, zone: string, group: string}} PlannedNode
 * @typedef {{name: string, type: string, verdict: string, said: string, changes: Array<{key: string, text: string}>}} PolicyStep
 * @typedef {{
 *   status: string, reason: string, error: string | null,
 *   desired: {from: number | null, to: number} | null,
 *   creates: PlannedNode[], deletes: PlannedNode[],
 *   replacements: Array<PlannedNode & {replaces: string, why: string}>,
 *   findings: string[],
 *   policies: PolicyStep[],
 * }} ReadableDecision
 */

/**
 * @param {any} decision
 * @returns {ReadableDecision}
 */
export function readDecision(decision) {
  const input = decision.input ?? {};
  const output = decision.output ?? {};
  const plan = decision.plan ?? {};
  const names = namesIn(decision);
  const say = (/** @type {unknown} */ text) => readable(String(text ?? ''), names);
  const groupName = (/** @type {string | undefined} */ id) => (id ? (names.get(id) ?? id) : '');
  const zoneOf = new Map((input.cluster?.nodes ?? []).map((/** @type {any} */ n) => [n.id, n.data?.placement?.zone ?? '']));
  for (const d of plan.policy_plan?.delete ?? []) zoneOf.set(d.node_id, d.zone ?? zoneOf.get(d.node_id) ?? '');
  const to = plan.cluster_update?.desired_capacity;
  return {
    // the policy chain's own words first: a dry run's top-level reason is what the action would report when it ends
    status: output.status ?? decision.status ?? '',
    reason: say(output.reason ?? decision.reason ?? ''),
    error: plan.policy_plan?.error ? say(plan.policy_plan.error) : null,
    desired: typeof to === 'number' ? { from: input.cluster?.desired_capacity ?? null, to } : null,
    creates: (plan.create_nodes ?? []).map((/** @type {any} */ n) => ({ name: n.name, zone: n.placement?.zone ?? '', group: groupName(n.placement?.servergroup) })),
    deletes: (plan.delete_nodes ?? []).map((/** @type {any} */ n) => ({ name: names.get(n.node_id) ?? n.node_id, zone: String(zoneOf.get(n.node_id) ?? ''), group: '' })),
    replacements: (plan.repair?.replacements ?? []).map((/** @type {any} */ r) => ({
      name: r.name,
      zone: r.placement?.zone ?? '',
      group: groupName(r.placement?.servergroup),
      replaces: r.old_name ?? names.get(r.old_node_id) ?? r.old_node_id,
      why: (r.reasons ?? []).join(', '),
    })),
    findings: (plan.findings ?? output.findings ?? []).map((/** @type {any} */ f) => say(f.message)),
    policies: (decision.trace ?? output.trace ?? []).map((/** @type {any} */ t) => ({
      name: t.policy_name ?? t.policy_id,
      type: t.policy_type ?? '',
      verdict: t.verdict ?? (t.ran ? 'OK' : 'SKIPPED'),
      said: say(t.ran === false ? `skipped: ${t.skipped_reason ?? 'not for this action'}` : t.reason),
      changes: (t.changed_keys ?? []).map((/** @type {string} */ key) => ({ key, text: describeChange(key, output.data?.[key], names) })),
    })),
  };
}

/**
 * Every id the snapshot and plan can name: nodes, new nodes, server groups, policies.
 * @param {any} decision
 * @returns {Map<string, string>}
 */
export function namesIn(decision) {
  const names = new Map();
  const input = decision.input ?? {};
  for (const n of input.cluster?.nodes ?? []) names.set(n.id, n.name);
  for (const n of decision.plan?.create_nodes ?? []) names.set(n.node_id, n.name);
  for (const r of decision.plan?.repair?.replacements ?? []) names.set(r.node_id, r.name).set(r.old_node_id, r.old_name);
  for (const g of input.cloud?.server_groups ?? []) if (g.name) names.set(g.id, g.name);
  for (const p of input.policies ?? []) names.set(p.id, p.name);
  return names;
}

/**
 * Ids become names, and `{"az1":3,"az2":1}` becomes `az1 3, az2 1`.
 * @param {string} text @param {Map<string, string>} names
 */
export function readable(text, names) {
  return text
    .replace(COUNTS, (json) => countsText(JSON.parse(json)))
    .replace(UUID, (id) => names.get(id) ?? id);
}

/** @param {Record<string, number>} counts */
const countsText = (counts) =>
  Object.entries(counts)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

/**
 * What a policy wrote into action.data under `key`, in words.
 * @param {string} key @param {any} value @param {Map<string, string>} names
 */
function describeChange(key, value, names) {
  if (value === undefined || value === null) return 'removed';
  if (key === 'creation' && value.zones) return `${value.count ?? ''} new node(s) by zone: ${countsText(value.zones)}`;
  if (key === 'deletion') {
    const parts = [`remove ${value.count ?? '?'} node(s)`];
    if (value.zones) parts.push(`by zone: ${countsText(value.zones)}`);
    if (Array.isArray(value.candidates) && value.candidates.length) parts.push(`chosen: ${value.candidates.map((/** @type {string} */ id) => names.get(id) ?? id).join(', ')}`);
    return parts.join('; ');
  }
  if (key === 'placement' && Array.isArray(value.placements)) {
    /** @type {Record<string, number>} */
    const tally = {};
    for (const p of value.placements) {
      const where = [p.zone, p.servergroup ? `group ${names.get(p.servergroup) ?? p.servergroup}` : ''].filter(Boolean).join(' in ') || 'anywhere';
      tally[where] = (tally[where] ?? 0) + 1;
    }
    return `${value.placements.length} placement(s): ${Object.entries(tally).map(([where, n]) => `${where} ×${n}`).join(', ')}`;
  }
  const json = readable(JSON.stringify(value), names);
  return json.length > 300 ? `${json.slice(0, 300)}…` : json;
}
