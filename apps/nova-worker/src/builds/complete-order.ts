import { randomUUID } from 'node:crypto';
import {
  Exchanges,
  RoutingKeys,
  SCHEMA_VERSION,
  type NodeOutcomeDto,
  type WorkOrderMessage,
  type WorkResultMessage,
} from '@trellis/contracts';
import { NodeEntity, WorkOrderEntity, addToOutbox } from '@trellis/persistence';
import { In, type EntityManager } from 'typeorm';

const PENDING = ['CREATING', 'DELETING'];

/**
 * Called in the transaction that moved nodes of an order to a final state: when none of the
 * order's nodes is still being built or deleted, writes the work result to the outbox (once: the
 * order row is locked and marked DONE in the same transaction).
 */
export async function completeOrderIfDone(
  m: EntityManager,
  actionId: string,
  now: Date,
  /** report an order that is DONE once more (its first result was lost or dead-lettered) */
  again = false,
): Promise<boolean> {
  const orders = m.getRepository(WorkOrderEntity);
  const order = await orders
    .createQueryBuilder('o')
    .setLock('pessimistic_write')
    .where('o.action_id = :actionId', { actionId })
    .getOne();
  if (!order || (order.status === 'DONE' && !again)) return false;

  const payload = order.payload as unknown as WorkOrderMessage;
  const nodeIds = [...payload.create_servers.map((c) => c.node_id), ...payload.delete_servers.map((d) => d.node_id)];
  const rows = nodeIds.length ? await m.getRepository(NodeEntity).findBy({ id: In(nodeIds) }) : [];
  if (rows.some((n) => n.action_id === actionId && PENDING.includes(n.status))) return false;

  const byId = new Map(rows.map((n) => [n.id, n]));
  const nodes: NodeOutcomeDto[] = [];
  const failures: string[] = [];
  for (const c of payload.create_servers) {
    const n = byId.get(c.node_id);
    const placement = (n?.data.placement as Record<string, string | undefined>) ?? {};
    const status = n?.status === 'ACTIVE' ? 'ACTIVE' : 'ERROR';
    const reason = n ? n.status_reason : 'node record vanished while its server was being built';
    if (status === 'ERROR') failures.push(reason);
    nodes.push({
      node_id: c.node_id,
      status,
      physical_id: n?.physical_id ?? null,
      zone: placement.zone ?? null,
      host: placement.host ?? null,
      reason: status === 'ERROR' ? reason : null,
    });
  }
  for (const d of payload.delete_servers) {
    const n = byId.get(d.node_id);
    if (n && n.status === 'ERROR') failures.push(n.status_reason);
    nodes.push({
      node_id: d.node_id,
      status: !n ? 'DELETED' : n.status === 'ERROR' ? 'ERROR' : 'LEFT',
      physical_id: n?.physical_id ?? d.physical_id ?? null,
      reason: n?.status === 'ERROR' ? n.status_reason : null,
    });
  }

  const messageId = randomUUID();
  const outcome = failures.length ? 'FAILED' : 'SUCCEEDED';
  const result: WorkResultMessage = {
    message_id: messageId,
    schema_version: SCHEMA_VERSION,
    action_id: actionId,
    correlation_id: payload.correlation_id,
    sent_at: now.toISOString(),
    cluster_id: payload.cluster_id,
    outcome,
    reason: failures.length ? summarise(failures) : 'All servers reached their final state.',
    nodes,
    groups: order.groups,
  };
  await addToOutbox(m, {
    exchange: Exchanges.results,
    routingKey: RoutingKeys.workResult,
    type: RoutingKeys.workResult,
    messageId,
    correlationId: payload.correlation_id,
    body: result,
  });
  await orders.update({ action_id: actionId }, { status: 'DONE', result_message_id: messageId, updated_at: now });
  return true;
}

/** "<first reason>" or "<first reason> (and N more nodes failed)" — one line a person can act on. */
function summarise(reasons: string[]): string {
  const first = reasons[0];
  return reasons.length === 1 ? first : `${first} (and ${reasons.length - 1} more node(s) failed)`;
}
