// @ts-check
/**
 * How far a running action has come, from what the API shows: the nodes its decision planned to
 * create and delete (GET /v1/actions/{id}/decision) and those nodes' statuses now (GET /v1/nodes).
 */

/**
 * @typedef {{id: string, status: string}} NodeLike
 * @typedef {{
 *   create: number, active: number, error: number,
 *   delete: number, deleted: number,
 *   decided: boolean
 * }} Progress
 */

/**
 * The node ids a stored decision plans to create and to delete (a repair's replacements count as both).
 * @param {any} decision the `decision` of GET /v1/actions/{id}/decision, or null before there is one
 * @returns {{create: string[], delete: string[]}}
 */
export function plannedNodes(decision) {
  const plan = decision?.plan ?? {};
  const replacements = plan.repair?.replacements ?? [];
  return {
    create: [...(plan.create_nodes ?? []), ...replacements].map((n) => n.node_id),
    delete: [...(plan.delete_nodes ?? []).map((/** @type {any} */ n) => n.node_id), ...replacements.map((/** @type {any} */ r) => r.old_node_id)],
  };
}

/**
 * @param {any} decision
 * @param {NodeLike[]} nodes the cluster's nodes now
 * @returns {Progress}
 */
export function actionProgress(decision, nodes) {
  const planned = plannedNodes(decision);
  const status = new Map(nodes.map((n) => [n.id, n.status]));
  const created = planned.create.map((id) => status.get(id));
  return {
    create: planned.create.length,
    active: created.filter((s) => s === 'ACTIVE').length,
    error: created.filter((s) => s === 'ERROR').length,
    delete: planned.delete.length,
    deleted: planned.delete.filter((id) => !status.has(id)).length,
    decided: decision !== null && decision !== undefined,
  };
}

/**
 * One sentence for a person: `2 of 4 new nodes ACTIVE, 1 ERROR; 1 of 2 nodes removed`.
 * @param {Progress} p
 */
export function progressText(p) {
  if (!p.decided) return 'waiting for the policy engine to decide';
  const parts = [];
  if (p.create) parts.push(`${p.active} of ${p.create} new node${p.create === 1 ? '' : 's'} ACTIVE${p.error ? `, ${p.error} ERROR` : ''}`);
  if (p.delete) parts.push(`${p.deleted} of ${p.delete} node${p.delete === 1 ? '' : 's'} removed`);
  return parts.length ? parts.join('; ') : 'no nodes to create or remove';
}
