import { randomUUID } from 'node:crypto';
import {
  type ActionMessageCause,
  type ActionRequestedMessage,
  Exchanges,
  RoutingKeys,
  SCHEMA_VERSION,
} from '@trellis/contracts';
import type { DataSource, EntityManager } from 'typeorm';
import { addToOutbox } from '../outbox/outbox';
import { inTransaction } from '../transaction';

export interface StuckAction {
  id: string;
  action: string;
  status: string;
  cluster_id: string | null;
  project: string;
  /** why it counts as stuck */
  why: string;
}

export interface ReplayFilter {
  /** only these actions (any age); otherwise every stuck action older than `olderThanSeconds` */
  actionIds?: string[];
  olderThanSeconds: number;
  now?: Date;
}

/**
 * Actions that will not finish by themselves: READY ones that no engine took up within the lease
 * (their message was lost, dead-lettered or never published), and RUNNING ones whose lease ran out
 * while the nova-worker has no record of their work order, or finished it without the engine
 * hearing back. Builds the worker is still watching are not stuck: its own leases cover them.
 *
 * The rows are locked (FOR UPDATE OF a SKIP LOCKED) until the caller's transaction ends: two engines
 * resuming at once take different actions, and neither waits for the other's (nor for an action a
 * consumer is working on right now: that one is not stuck).
 */
export async function findStuckActions(m: EntityManager, filter: ReplayFilter): Promise<StuckAction[]> {
  const now = filter.now ?? new Date();
  const cutoff = new Date(now.getTime() - filter.olderThanSeconds * 1000);
  const byId = filter.actionIds?.length ? `AND a.id = ANY($1::uuid[])` : `AND COALESCE(a.updated_at, a.created_at) < $1`;
  const rows: Array<StuckAction & { order_status: string | null; lease_expires_at: Date | null }> = await m.query(
    `SELECT a.id, a.action, a.status, a.cluster_id, a.project, a.lease_expires_at, w.status AS order_status
       FROM actions a LEFT JOIN work_orders w ON w.action_id = a.id
      WHERE a.status IN ('READY', 'RUNNING') ${byId}
      ORDER BY a.created_at
      FOR UPDATE OF a SKIP LOCKED`,
    filter.actionIds?.length ? [filter.actionIds] : [cutoff],
  );
  const stuck: StuckAction[] = [];
  for (const r of rows) {
    const base = { id: r.id, action: r.action, status: r.status, cluster_id: r.cluster_id, project: r.project };
    if (r.status === 'READY') {
      stuck.push({ ...base, why: 'READY but not taken up by a policy-engine' });
    } else if (filter.actionIds?.length || !r.lease_expires_at || r.lease_expires_at < now) {
      if (r.order_status === null) stuck.push({ ...base, why: 'RUNNING, lease expired, work order never reached a nova-worker' });
      else if (r.order_status === 'DONE') stuck.push({ ...base, why: 'RUNNING, lease expired, the worker finished but its result was not applied' });
      else if (filter.actionIds?.length) stuck.push({ ...base, why: `RUNNING, work order ${r.order_status} at the nova-worker` });
    }
  }
  return stuck;
}

/** Writes an action.requested message for each action to the outbox (the caller's transaction). */
export async function enqueueActionMessages(m: EntityManager, actions: StuckAction[], cause: ActionMessageCause, now = new Date()) {
  for (const a of actions) {
    const messageId = randomUUID();
    const body: ActionRequestedMessage = {
      message_id: messageId,
      schema_version: SCHEMA_VERSION,
      action_id: a.id,
      correlation_id: `${cause}-${a.id}`,
      sent_at: now.toISOString(),
      cluster_id: a.cluster_id,
      action: a.action,
      project: a.project,
      cause,
    };
    await addToOutbox(m, {
      exchange: Exchanges.actions,
      routingKey: RoutingKeys.actionRequested,
      type: RoutingKeys.actionRequested,
      messageId,
      correlationId: body.correlation_id,
      body,
    });
    // Pushing the lease forward keeps the next resume round from sending the same action again
    // while this message is on its way.
    await m.query(`UPDATE actions SET lease_expires_at = $2, updated_at = $3 WHERE id = $1`, [
      a.id,
      new Date(now.getTime() + 60_000),
      now,
    ]);
  }
}

/** Find the stuck actions and re-publish them in one transaction; returns what was replayed. */
export async function replayStuckActions(
  dataSource: DataSource,
  filter: ReplayFilter,
  cause: ActionMessageCause,
): Promise<StuckAction[]> {
  return inTransaction(dataSource, async (m) => {
    const stuck = await findStuckActions(m, filter);
    await enqueueActionMessages(m, stuck, cause, filter.now);
    return stuck;
  });
}
