import { errorMessage, type Logger } from '@trellis/common';
import { hotQuery } from '@trellis/persistence';
import type { DataSource, EntityManager } from 'typeorm';
import type { OpOutcome } from '../ops/server-ops';

/**
 * What an earlier try left of a node's operation: its outcome (Nova completed it), or that Nova
 * accepted its request and the server had not settled yet (`requested`, written as `{"requested":
 * true}`): the operation is then waited for, not asked for again.
 */
export type OpRecord = { outcome: OpOutcome } | { requested: true };

const REQUESTED = JSON.stringify({ requested: true });

/**
 * The records of an ops order's node operations (`work_order_ops`, one row per node), by node id:
 * what a try that takes the order over must not ask Nova for again. Also the outcomes an earlier
 * release kept in `work_orders.ops_done` (migration 1796010000000) when a try stopped on a
 * transient error. One statement.
 */
export async function opsDone(dataSource: DataSource, actionId: string): Promise<Map<string, OpRecord>> {
  const rows: Array<{ node_id: string; outcome: OpOutcome | { requested: true } }> = await hotQuery(dataSource.manager,
    `SELECT node_id::text, outcome FROM work_order_ops WHERE action_id = $1
     UNION ALL
     SELECT e.key, e.value FROM work_orders w, jsonb_each(COALESCE(w.ops_done, '{}'::jsonb)) e WHERE w.action_id = $1`,
    [actionId],
  );
  // the table's row first: it is this release's record of the node
  const done = new Map<string, OpRecord>();
  for (const r of rows) {
    if (done.has(r.node_id)) continue;
    done.set(r.node_id, 'requested' in r.outcome && r.outcome.requested === true ? { requested: true } : { outcome: r.outcome as OpOutcome });
  }
  return done;
}

/** Forgets an order's operation records, in the transaction that finishes the order. */
export async function forgetOpsDone(m: EntityManager, actionId: string): Promise<void> {
  await hotQuery(m, 'DELETE FROM work_order_ops WHERE action_id = $1', [actionId]);
}

/**
 * Writes, while the order is applied, that Nova accepted each operation's request and then its
 * outcome, so that a worker dying part way through a cluster reboot (killed, or replaced in a
 * rolling upgrade) leaves behind what it did: the next holder waits for the reboots Nova accepted
 * and asks only for the rest. Records made while a write is in flight go together in the next one
 * (one INSERT per record when they come slowly, one per batch when many servers settle at once;
 * never a rewrite of the others). A write that fails is logged and its records go with the next:
 * they only spare Nova a repeat, the order's own result is written by its final transaction either
 * way.
 *
 * Not fenced by the claim's token: a record is what Nova did for this order, true whoever writes
 * it. An outcome replaces a `requested` record, never the other way round.
 */
export class OpsRecorder {
  /** node id → its newest record not yet written (an outcome wins over `requested`) */
  private pending = new Map<string, string>();
  private writing: Promise<void> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly actionId: string,
    private readonly logger: Logger,
  ) {}

  /** Nova accepted the request of the operation on `nodeId`'s server; it has not settled yet */
  requested(nodeId: string): void {
    if (!this.pending.has(nodeId)) this.pending.set(nodeId, REQUESTED);
    this.writing ??= this.drain();
  }

  /** an operation Nova completed for `nodeId` */
  add(nodeId: string, outcome: OpOutcome): void {
    this.pending.set(nodeId, JSON.stringify(outcome));
    this.writing ??= this.drain();
  }

  /** resolves once every record added so far has been written (or its write failed and was logged) */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
    // a write that failed left its records pending: one more try, now that nothing else is coming
    if (this.pending.size) await this.write();
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.size) {
        if (!(await this.write())) return;
      }
    } finally {
      this.writing = null;
    }
  }

  /** writes what is pending; false when the write failed (its records stay pending unless newer ones came) */
  private async write(): Promise<boolean> {
    const batch = this.pending;
    this.pending = new Map();
    try {
      await hotQuery(this.dataSource.manager,
        `INSERT INTO work_order_ops AS o (action_id, node_id, outcome, done_at)
         SELECT $1, r.node_id, r.outcome, clock_timestamp() FROM unnest($2::uuid[], $3::jsonb[]) AS r(node_id, outcome)
         ON CONFLICT (action_id, node_id) DO UPDATE SET outcome = EXCLUDED.outcome, done_at = EXCLUDED.done_at
           WHERE o.outcome ? 'requested' AND NOT EXCLUDED.outcome ? 'requested'`,
        [this.actionId, [...batch.keys()], [...batch.values()]],
      );
      return true;
    } catch (e) {
      // back into pending, unless a record made meanwhile says more (an outcome wins over `requested`)
      for (const [node, record] of batch) {
        const newer = this.pending.get(node);
        if (newer === undefined || (newer === REQUESTED && record !== REQUESTED)) this.pending.set(node, record);
      }
      this.logger.warn('records of server operations not written; a take-over may repeat them', {
        action_id: this.actionId,
        operations: batch.size,
        error: errorMessage(e),
      });
      return false;
    }
  }
}
