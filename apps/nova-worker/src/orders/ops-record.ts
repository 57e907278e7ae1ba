import { errorMessage, type Logger } from '@trellis/common';
import { hotQuery } from '@trellis/persistence';
import type { DataSource, EntityManager } from 'typeorm';
import type { OpOutcome } from '../ops/server-ops';

/**
 * The outcomes of an ops order's node operations that Nova completed (`work_order_ops`, one row per
 * node), by node id: what a try that takes the order over must not ask Nova for again. Also those an
 * earlier release kept in `work_orders.ops_done` (migration 1796010000000) when a try stopped on a
 * transient error. One statement.
 */
export async function opsDone(dataSource: DataSource, actionId: string): Promise<Map<string, OpOutcome>> {
  const rows: Array<{ node_id: string; outcome: OpOutcome }> = await hotQuery(dataSource.manager,
    `SELECT node_id::text, outcome FROM work_order_ops WHERE action_id = $1
     UNION ALL
     SELECT e.key, e.value FROM work_orders w, jsonb_each(COALESCE(w.ops_done, '{}'::jsonb)) e WHERE w.action_id = $1`,
    [actionId],
  );
  // the table's row first: it is this release's record of the node
  const done = new Map<string, OpOutcome>();
  for (const r of rows) if (!done.has(r.node_id)) done.set(r.node_id, r.outcome);
  return done;
}

/** Forgets an order's operation outcomes, in the transaction that finishes the order. */
export async function forgetOpsDone(m: EntityManager, actionId: string): Promise<void> {
  await hotQuery(m, 'DELETE FROM work_order_ops WHERE action_id = $1', [actionId]);
}

/**
 * Writes each completed operation's outcome while the order is applied, so that a worker dying part
 * way through a cluster reboot (killed, or replaced in a rolling upgrade) leaves behind what it
 * did: the next holder reboots only the rest. Outcomes completed while a write is in flight go
 * together in the next one (one INSERT per completion when they come slowly, one per batch when
 * many servers settle at once; never a rewrite of what is there). A write that fails is logged and
 * its outcomes go with the next: the record only spares Nova a repeat, the order's own result is
 * written by its final transaction either way.
 *
 * Not fenced by the claim's token: an outcome is what Nova did for this order, true whoever writes
 * it, and the first one written for a node stays (ON CONFLICT DO NOTHING).
 */
export class OpsRecorder {
  private pending: Array<[string, OpOutcome]> = [];
  private writing: Promise<void> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly actionId: string,
    private readonly logger: Logger,
  ) {}

  /** an operation Nova completed for `nodeId` */
  add(nodeId: string, outcome: OpOutcome): void {
    this.pending.push([nodeId, outcome]);
    this.writing ??= this.drain();
  }

  /** resolves once every outcome added so far has been written (or its write failed and was logged) */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
    // a write that failed left its outcomes pending: one more try, now that nothing else is coming
    if (this.pending.length) await this.write();
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length) {
        if (!(await this.write())) return;
      }
    } finally {
      this.writing = null;
    }
  }

  /** writes what is pending; false when the write failed (its outcomes stay pending) */
  private async write(): Promise<boolean> {
    const batch = this.pending;
    this.pending = [];
    try {
      await hotQuery(this.dataSource.manager,
        `INSERT INTO work_order_ops (action_id, node_id, outcome, done_at)
         SELECT $1, o.node_id, o.outcome, clock_timestamp() FROM unnest($2::uuid[], $3::jsonb[]) AS o(node_id, outcome)
         ON CONFLICT (action_id, node_id) DO NOTHING`,
        [this.actionId, batch.map(([id]) => id), batch.map(([, outcome]) => JSON.stringify(outcome))],
      );
      return true;
    } catch (e) {
      this.pending = [...batch, ...this.pending];
      this.logger.warn('outcomes of completed server operations not recorded; a take-over may repeat them', {
        action_id: this.actionId,
        operations: batch.length,
        error: errorMessage(e),
      });
      return false;
    }
  }
}
