import type { WorkOrderMessage } from '@trellis/contracts';
import { errorMessage } from '@trellis/common';
import { changedRows } from '@trellis/persistence/sql';
import type { DataSource, EntityManager } from 'typeorm';
import { NODE_STATE, completeOrderIfDone, writeWorkResult, type NodeState } from '../builds/complete-order';

/**
 * How a work order that met a transient cloud error (Nova or Keystone unreachable, 5xx, 429, 409
 * while a server is busy) is tried again: the order stays APPLYING in the database with
 * `next_attempt_at`, its message is acked, and the worker's order poller applies it when it is due.
 * Exponential with full jitter and a cap, so an outage of minutes costs a few tries, not a burst of
 * redeliveries that dead-letters the order in seconds. After `giveUpAfterSeconds` of trying, the
 * order's nodes fail with the last error and its result goes to the engine like any other.
 */
export interface RetrySchedule {
  /** pause before the second attempt (before jitter); doubles per attempt */
  baseMs: number;
  /** longest pause between attempts */
  maxMs: number;
  /** time since the order was first taken after which it is failed rather than tried again */
  giveUpAfterSeconds: number;
}

export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = { baseMs: 5_000, maxMs: 300_000, giveUpAfterSeconds: 3_600 };

/** The pause after `attempts` failed tries: random in [ceiling/2, ceiling], ceiling = min(max, base·2^(attempts-1)). */
export function retryDelayMs(attempts: number, schedule: RetrySchedule, random: () => number = Math.random): number {
  const ceiling = Math.min(schedule.maxMs, schedule.baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30));
  // half fixed, half jitter: spreads the retries of many orders without ever retrying at once
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export type Deferral = { kind: 'deferred'; attempts: number; retryInMs: number } | { kind: 'gave-up'; attempts: number } | { kind: 'fenced' };

/**
 * Called by the holder (`token`) of an order whose Nova calls failed transiently: records the error
 * and when to try again, and releases the lease; or, once the order has been tried for longer than
 * the schedule allows, fails its nodes with the error and completes it. Writes nothing when the
 * order was taken over meanwhile.
 */
export async function deferOrder(
  dataSource: DataSource,
  order: WorkOrderMessage,
  token: string,
  error: unknown,
  schedule: RetrySchedule,
): Promise<Deferral> {
  const reason = errorMessage(error).slice(0, 2000);
  return dataSource.transaction(async (m) => {
    const [row]: Array<{ attempts: number; age_s: number }> = await m.query(
      `SELECT attempts, extract(epoch FROM clock_timestamp() - created_at)::float8 AS age_s
         FROM work_orders WHERE action_id = $1 AND lease_token = $2 AND status = 'APPLYING' FOR UPDATE`,
      [order.action_id, token],
    );
    if (!row) return { kind: 'fenced' } as const;
    const attempts = row.attempts + 1;
    if (row.age_s >= schedule.giveUpAfterSeconds) {
      await failOrderNodes(m, order, `Nova could not be reached for ${Math.round(row.age_s)} s (${attempts} attempts): ${reason}`);
      return { kind: 'gave-up', attempts } as const;
    }
    const retryInMs = retryDelayMs(attempts, schedule);
    await m.query(
      `UPDATE work_orders SET attempts = $2, last_error = $3, next_attempt_at = clock_timestamp() + make_interval(secs => $4),
              lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, updated_at = $5
        WHERE action_id = $1`,
      [order.action_id, attempts, reason, retryInMs / 1000, new Date()],
    );
    return { kind: 'deferred', attempts, retryInMs } as const;
  });
}

/**
 * Ends an order its worker cannot apply: every node it creates that is not ACTIVE yet, and every
 * node it deletes, becomes ERROR with `reason`, the order's lease is released and its result (FAILED) is written.
 * The caller's transaction holds the order's row lock.
 */
export async function failOrderNodes(m: EntityManager, order: WorkOrderMessage, reason: string): Promise<void> {
  const now = new Date();
  if (order.server_ops?.length) {
    // an operation that never reached Nova leaves its node as it was; the action fails with the
    // reason; a node an update left UPDATING (a try that met a transient error) fails with it
    await m.query(
      `UPDATE nodes SET status = 'ERROR', status_reason = $2, updated_at = $3 WHERE id = ANY($1) AND status = 'UPDATING'`,
      [order.server_ops.map((o) => o.node_id), reason, now],
    );
    await m.query(
      `UPDATE work_orders SET last_error = $2, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, next_attempt_at = NULL
        WHERE action_id = $1`,
      [order.action_id, reason],
    );
    await writeWorkResult(m, order.action_id, order, now, { outcome: 'FAILED', reason, nodes: [], groups: {} });
    return;
  }
  const ids = [...order.create_servers.map((c) => c.node_id), ...order.delete_servers.map((d) => d.node_id)];
  const written = changedRows<NodeState>(
    await m.query(
      `UPDATE nodes SET status = 'ERROR', status_reason = $2, updated_at = $3, lease_owner = NULL, lease_expires_at = NULL
        WHERE id = ANY($1) AND action_id = $4 AND status <> 'ERROR' AND (status <> 'ACTIVE' OR id = ANY($5)) RETURNING ${NODE_STATE}`,
      [ids, reason, now, order.action_id, order.delete_servers.map((d) => d.node_id)],
    ),
  );
  await m.query(
    `UPDATE work_orders SET status = 'BUILDING', last_error = $2, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
            next_attempt_at = NULL, updated_at = $3
      WHERE action_id = $1`,
    [order.action_id, reason, now],
  );
  await completeOrderIfDone(m, order.action_id, now, { written });
}
