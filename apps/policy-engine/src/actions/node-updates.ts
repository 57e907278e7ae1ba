import type { EnginePlan } from '@trellis/decisions';
import type { EntityManager } from 'typeorm';

/**
 * NODE_UPDATE and CLUSTER_UPDATE with a new profile, on the engine's side: the nodes whose servers
 * the worker updates carry the action (the worker turns each UPDATING when it starts on it, as
 * Senlin's node.do_update does, and the deadline supervisor fails those an overdue action left
 * UPDATING); what each node stores is written once its update succeeded.
 */

export async function tagUpdatedNodes(m: EntityManager, action: { id: string }, plan: EnginePlan, now: Date): Promise<void> {
  const ids = (plan.server_ops ?? []).filter((o) => o.op === 'update').map((o) => o.node_id);
  if (!ids.length) return;
  await m.query('UPDATE nodes SET action_id = $2, updated_at = $3 WHERE id = ANY($1)', [ids, action.id, now]);
}

/**
 * The plan's node updates of the nodes in `succeeded` (or all of them): the new name, role,
 * metadata, tainted flag and profile, and ACTIVE 'Update succeeded'.
 */
export async function applyNodeUpdates(m: EntityManager, plan: EnginePlan, succeeded: ReadonlySet<string> | 'all', now: Date): Promise<void> {
  for (const u of plan.node_updates ?? []) {
    if (succeeded !== 'all' && !succeeded.has(u.node_id)) continue;
    await m.query(
      `UPDATE nodes
          SET name = COALESCE($2, name), role = COALESCE($3, role), metadata = COALESCE($4::jsonb, metadata),
              tainted = COALESCE($5, tainted), profile_id = COALESCE($6, profile_id),
              status = 'ACTIVE', status_reason = 'Update succeeded', updated_at = $7
        WHERE id = $1`,
      [u.node_id, u.name ?? null, u.role ?? null, u.metadata === undefined ? null : JSON.stringify(u.metadata), u.tainted ?? null, u.profile_id ?? null, now],
    );
  }
}
