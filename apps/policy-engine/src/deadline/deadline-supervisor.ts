import { randomUUID } from 'node:crypto';
import { Exchanges, RoutingKeys, WORK_ORDER_SCHEMA_VERSION, type WorkResultMessage } from '@trellis/contracts';
import { FailureStreak, errorMessage, type Logger } from '@trellis/common';
import { ActionEntity, EventEntity, inTransaction, row } from '@trellis/persistence';
import type { EnginePlan } from '@trellis/decisions';
import type { DataSource, EntityManager } from 'typeorm';
import { finishAction } from '../results/finish-action';

/** The plan of an action that timed out before it was decided (a drift survey was still running). */
const NOTHING_PLANNED: EnginePlan = {
  create_nodes: [],
  delete_nodes: [],
  create_groups: [],
  delete_groups: [],
  cluster_update: null,
  binding: null,
  delete_cluster: false,
  success_reason: '',
} as unknown as EnginePlan;

/**
 * Every action ends. A READY action the engine never took up is failed once its timeout has passed
 * since it was created, or at once when its node or cluster no longer exists. A RUNNING action whose `timeout` (seconds from its start) has passed is failed
 * with "timed out after N s", whatever it waits for (a Nova outage the worker keeps retrying, a
 * result that was lost). Its nodes still in INIT/CREATING/DELETING become ERROR with the same reason,
 * and the cluster's status is recomputed and the cluster released as for any other end of the action
 * (finishAction), so the next action on the cluster is accepted. A result that arrives later is
 * recorded as an event and not applied (recordLateResult).
 *
 * A RUNNING action whose work order can never reach a nova-worker (the outbox relay set it aside: it
 * is larger than the message broker takes) is failed at once with that reason instead of waiting
 * for its timeout; its nodes and cluster are treated as above.
 *
 * Rows are claimed with FOR UPDATE SKIP LOCKED: several engines share the work, and none waits for
 * an action whose result is being applied right now (that transaction holds its lock and ends it).
 */
export class DeadlineSupervisor {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<string[]> | null = null;
  /** kick() during a round: another round once it ends */
  private again = false;
  /** rounds failed in a row (the database away): the first logged, then a line every 30 s, and the recovery */
  private readonly roundFailures: FailureStreak;

  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: Logger,
    private readonly options: { intervalSeconds: number; batchSize?: number },
  ) {
    this.roundFailures = new FailureStreak(logger, 'deadline round failed; will try again', 'deadline rounds succeed again', { level: 'error' });
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (!this.round) this.kick();
    }, this.options.intervalSeconds * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.again = false;
    await this.round;
  }

  /**
   * A round now rather than at the next interval (this process's outbox relay set a work order aside);
   * one during a round runs right after it. Does nothing once stopped.
   */
  kick(): void {
    if (!this.timer) return;
    if (this.round) {
      this.again = true;
      return;
    }
    this.round = this.failOverdue().finally(() => {
      this.round = null;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** One round: fails the overdue actions; returns their ids. */
  async failOverdue(): Promise<string[]> {
    try {
      const failed = await inTransaction(this.dataSource, async (m) => {
        const overdue: Array<{ id: string }> = await m.query(
          `SELECT id FROM actions
            WHERE status = 'RUNNING' AND timeout > 0 AND start_time IS NOT NULL
              AND start_time + timeout <= extract(epoch FROM clock_timestamp())
            ORDER BY start_time LIMIT $1
            FOR UPDATE SKIP LOCKED`,
          [this.options.batchSize ?? 50],
        );
        for (const { id } of overdue) await this.failOne(m, id, 'overdue');
        // RUNNING actions whose work order the outbox relay set aside: it will never be delivered
        const unsent: Array<{ id: string; last_error: string | null; version: string | null }> = await m.query(
          `SELECT a.id, o.last_error, o.payload->>'schema_version' AS version
             FROM outbox o
             -- a payload whose action_id is not a uuid matches nothing (and never fails the round)
             JOIN actions a ON a.id = (CASE WHEN o.payload->>'action_id' ~ '^[0-9a-fA-F-]{36}$' THEN (o.payload->>'action_id')::uuid END)
            WHERE o.failed_at IS NOT NULL AND o.exchange = $2 AND o.routing_key = $3 AND a.status = 'RUNNING'
            ORDER BY o.id LIMIT $1
            FOR UPDATE OF a SKIP LOCKED`,
          [this.options.batchSize ?? 50, Exchanges.work, RoutingKeys.workOrder],
        );
        const unsentIds = new Set<string>();
        for (const u of unsent) {
          if (unsentIds.has(u.id)) continue; // two orders of one action set aside (a resend)
          unsentIds.add(u.id);
          await this.failOne(m, u.id, unsentReason(u.last_error, u.version));
        }
        // READY actions the engine never took up: past their timeout (counted from their creation),
        // or whose node or cluster is gone (deleted by an action that skips the conflict checks)
        const stranded: Array<{ id: string; gone: boolean }> = await m.query(
          `SELECT a.id, NOT EXISTS (
                    SELECT 1 FROM nodes n WHERE a.action LIKE 'NODE\\_%' AND n.id::text = a.target::text
                    UNION ALL SELECT 1 FROM clusters c WHERE a.action NOT LIKE 'NODE\\_%' AND c.id::text = a.target::text) AS gone
             FROM actions a
            WHERE a.status = 'READY'
              AND ((a.timeout > 0 AND extract(epoch FROM a.created_at) + a.timeout <= extract(epoch FROM clock_timestamp()))
                OR NOT EXISTS (
                    SELECT 1 FROM nodes n WHERE a.action LIKE 'NODE\\_%' AND n.id::text = a.target::text
                    UNION ALL SELECT 1 FROM clusters c WHERE a.action NOT LIKE 'NODE\\_%' AND c.id::text = a.target::text))
            ORDER BY a.created_at LIMIT $1
            FOR UPDATE OF a SKIP LOCKED`,
          [this.options.batchSize ?? 50],
        );
        for (const { id, gone } of stranded) await this.failOne(m, id, gone ? 'gone' : 'overdue');
        return [...overdue.map((o) => o.id), ...unsentIds, ...stranded.map((o) => o.id)];
      });
      this.roundFailures.succeeded();
      if (failed.length) this.logger.warn('actions failed: past their timeout, their target gone, or their work order unsendable', { actions: failed });
      return failed;
    } catch (e) {
      this.roundFailures.failed(errorMessage(e));
      return [];
    }
  }

  /** Fails the action: 'overdue' (its timeout passed), 'gone' (its target is), or with the reason given. */
  private async failOne(m: EntityManager, id: string, why: 'overdue' | 'gone' | { reason: string }): Promise<void> {
    const action = await m.getRepository(ActionEntity).findOneByOrFail({ id });
    const now = new Date();
    const kind = action.action.startsWith('NODE_') ? 'node' : 'cluster';
    const reason =
      why === 'gone'
        ? `The ${kind} '${action.target}' could not be found.`
        : why === 'overdue'
          ? `${action.action} timed out after ${action.timeout} s.`
          : `${action.action} failed: ${why.reason}`;
    await m.query(
      `UPDATE nodes SET status = 'ERROR', status_reason = $2, lease_owner = NULL, lease_expires_at = NULL, updated_at = $3
        WHERE action_id = $1 AND status IN ('INIT', 'CREATING', 'DELETING', 'UPDATING')`,
      [id, reason, now],
    );
    const decided: Array<{ plan: EnginePlan }> = await m.query('SELECT plan FROM decisions WHERE action_id = $1', [id]);
    await finishAction(m, action, { status: 'FAILED', reason, plan: decided[0]?.plan ?? NOTHING_PLANNED, now });
  }
}

/**
 * Why an action whose work order was set aside failed: the relay's reason (the order's size and the
 * broker's limit), and for an order written in an older schema_version (for nova-workers of the
 * release before, which take only that) what lets the next one fit.
 */
export function unsentReason(lastError: string | null, version: string | null): { reason: string } {
  const older = version !== null && Number(version) < WORK_ORDER_SCHEMA_VERSION;
  return {
    reason:
      `its work order could not be sent to a nova-worker: ${lastError ?? 'the message broker refused it'}.` +
      (older
        ? ` It was written in schema_version ${version} for a nova-worker of an older release, which repeats the profile on every server;` +
          ' once every nova-worker is upgraded, orders carry the profile once.'
        : ''),
  };
}

/**
 * A work result for an action that has already ended (timed out, cancelled): kept as an event on
 * the action's target, so what the cloud did in the end is on record, and not applied again.
 */
export async function recordLateResult(m: EntityManager, action: ActionEntity, result: WorkResultMessage): Promise<void> {
  const active = result.nodes.filter((n) => n.status === 'ACTIVE').map((n) => n.node_id);
  await m.getRepository(EventEntity).insert(
    row<EventEntity>({
      id: randomUUID(),
      timestamp: new Date(),
      oid: action.target,
      oname: action.name,
      otype: action.action.startsWith('NODE_') ? 'NODE' : 'CLUSTER',
      cluster_id: action.cluster_id,
      level: 30,
      user: action.user,
      project: action.project,
      action: action.action,
      status: 'late_result',
      status_reason: `A ${result.outcome} work result arrived after the action ended ${action.status}; it was recorded, not applied: ${result.reason}`,
      meta_data: { action_id: action.id, result_message_id: result.message_id, outcome: result.outcome, active_nodes: active },
    }),
  );
}
