import { randomUUID } from 'node:crypto';
import {
  Exchanges,
  RoutingKeys,
  SCHEMA_VERSION,
  type NodeOutcomeDto,
  type WorkOrderMessage,
  type WorkResultMessage,
} from '@trellis/contracts';
import { addAllToOutbox, addToOutbox, hotQuery, type NodeEntity, type WorkOrderEntity } from '@trellis/persistence';
import type { OutgoingMessage } from '@trellis/messaging';
import type { EntityManager } from 'typeorm';

const PENDING = ['CREATING', 'DELETING'];

/** What the result needs of a node: the columns `NODE_STATE` returns. */
export type NodeState = Pick<NodeEntity, 'id' | 'action_id' | 'status' | 'status_reason' | 'physical_id' | 'data'>;
export const NODE_STATE = 'id, action_id, status, status_reason, physical_id, data';

/** What the result needs of a work order row: the columns `ORDER_STATE` returns. */
export type OrderState = Pick<WorkOrderEntity, 'payload' | 'status' | 'groups'>;
export const ORDER_STATE = 'payload, status, groups';

export interface CompleteOptions {
  /** report an order that is DONE once more (its first result was lost or dead-lettered) */
  again?: boolean;
  /** the order's row, already locked by this transaction (read with `ORDER_STATE`); null: looked for, not there */
  order?: OrderState | null;
  /** nodes this transaction has just written (their rows locked): not read again */
  written?: readonly NodeState[];
  /** ids of nodes this transaction has just deleted */
  gone?: ReadonlySet<string>;
}

/**
 * Called in the transaction that moved nodes of an order to a final state: when none of the
 * order's nodes is still being built or deleted, writes the work result to the outbox (once: the
 * order row is locked and marked DONE in the same transaction).
 */
export async function completeOrderIfDone(m: EntityManager, actionId: string, now: Date, options: CompleteOptions = {}): Promise<boolean> {
  const done = await resultIfDone(m, actionId, options);
  if (!done) return false;
  await writeWorkResult(m, actionId, done.payload, now, done.result);
  return true;
}

/** A finished order's result, not written yet (writeWorkResults). */
export interface OrderResult {
  actionId: string;
  payload: WorkOrderMessage;
  result: Pick<WorkResultMessage, 'outcome' | 'reason' | 'nodes' | 'groups'>;
}

/**
 * completeOrderIfDone without the write: the order's result when none of its nodes is still being
 * built or deleted (and the order is not DONE, unless `again`), else null. The caller writes it in
 * the same transaction (writeWorkResults), which holds the order's row lock.
 */
export async function resultIfDone(m: EntityManager, actionId: string, options: CompleteOptions = {}): Promise<OrderResult | null> {
  const order =
    options.order !== undefined
      ? options.order
      : ((await hotQuery(m, `SELECT ${ORDER_STATE} FROM work_orders WHERE action_id = $1 FOR UPDATE`, [actionId])) as OrderState[])[0];
  if (!order || (order.status === 'DONE' && !options.again)) return null;

  const payload = order.payload as unknown as WorkOrderMessage;
  const nodeIds = [...payload.create_servers.map((c) => c.node_id), ...payload.delete_servers.map((d) => d.node_id)];
  const byId = new Map((options.written ?? []).map((n) => [n.id, n]));
  const unread = nodeIds.filter((id) => !byId.has(id) && !options.gone?.has(id));
  if (unread.length) {
    const rows: NodeState[] = await hotQuery(m, `SELECT ${NODE_STATE} FROM nodes WHERE id = ANY($1)`, [unread]);
    for (const n of rows) byId.set(n.id, n);
  }
  if (nodeIds.some((id) => isPendingFor(byId.get(id), actionId))) return null;

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

  return {
    actionId,
    payload,
    result: {
      outcome: failures.length ? 'FAILED' : 'SUCCEEDED',
      reason: failures.length ? summarise(failures) : 'All servers reached their final state.',
      nodes,
      groups: order.groups,
    },
  };
}

const isPendingFor = (n: NodeState | undefined, actionId: string) => n !== undefined && n.action_id === actionId && PENDING.includes(n.status);

/** "<first reason>" or "<first reason> (and N more nodes failed)" — one line a person can act on. */
function summarise(reasons: string[]): string {
  const first = reasons[0];
  return reasons.length === 1 ? first : `${first} (and ${reasons.length - 1} more node(s) failed)`;
}

/**
 * Writes the order's work result to the outbox and marks the order DONE, in the caller's
 * transaction (which holds the order's row lock).
 */
export async function writeWorkResult(
  m: EntityManager,
  actionId: string,
  payload: WorkOrderMessage,
  now: Date,
  result: Pick<WorkResultMessage, 'outcome' | 'reason' | 'nodes' | 'groups'>,
): Promise<void> {
  const message = workResultMessage(actionId, payload, now, result);
  await addToOutbox(m, message, {
    // the order marked DONE in the same statement as its result's outbox row
    with: [{ text: `UPDATE work_orders SET status = 'DONE', result_message_id = $2, updated_at = $3 WHERE action_id = $1`, params: [actionId, message.messageId, now] }],
  });
}

/**
 * writeWorkResult for several orders in one statement: their results' outbox rows, in the order
 * given, and the orders marked DONE. The caller's transaction holds the orders' row locks.
 */
export async function writeWorkResults(m: EntityManager, results: readonly OrderResult[], now: Date): Promise<void> {
  if (results.length === 0) return;
  const messages = results.map((r) => workResultMessage(r.actionId, r.payload, now, r.result));
  await addAllToOutbox(m, messages, {
    with: [
      {
        text: `UPDATE work_orders w SET status = 'DONE', result_message_id = d.message_id, updated_at = $3
                 FROM unnest($1::uuid[], $2::uuid[]) AS d(action_id, message_id) WHERE w.action_id = d.action_id`,
        params: [results.map((r) => r.actionId), messages.map((message) => message.messageId), now],
      },
    ],
  });
}

/** The outbox message of an order's work result, with a new message id. */
function workResultMessage(
  actionId: string,
  payload: WorkOrderMessage,
  now: Date,
  result: Pick<WorkResultMessage, 'outcome' | 'reason' | 'nodes' | 'groups'>,
): OutgoingMessage & { messageId: string } {
  const messageId = randomUUID();
  const body: WorkResultMessage = {
    message_id: messageId,
    schema_version: SCHEMA_VERSION,
    action_id: actionId,
    correlation_id: payload.correlation_id,
    sent_at: now.toISOString(),
    cluster_id: payload.cluster_id,
    ...result,
  };
  return {
    exchange: Exchanges.results,
    routingKey: RoutingKeys.workResult,
    type: RoutingKeys.workResult,
    messageId,
    correlationId: payload.correlation_id,
    body,
  };
}
