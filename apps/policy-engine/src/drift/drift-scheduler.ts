import { randomUUID } from 'node:crypto';
import { ActiveActionStatuses, Exchanges, RoutingKeys, SCHEMA_VERSION, type ActionRequestedMessage } from '@trellis/contracts';
import { FailureStreak, errorMessage, type Logger } from '@trellis/common';
import { ActionEntity, addToOutbox, inTransaction, row } from '@trellis/persistence';
import type { DataSource } from 'typeorm';

export interface DriftSchedulerOptions {
  /** TRELLIS_DRIFT_INTERVAL_SECONDS; 0 turns periodic checks off */
  intervalSeconds: number;
  /** the loaded policy types that offer a drift check (`driftAwareTypes()` of the engine's evaluator) */
  driftAwareTypes: readonly string[];
  /** clusters checked per round at most, so one round stays one short transaction */
  batchSize?: number;
}

/**
 * Periodic drift detection: every interval, a `check` action for each cluster with a drift-aware
 * policy whose last check is older than the interval and that no action is busy with. The check
 * runs as one a person asked for, so its findings, events and decision look the same. Clusters are
 * taken with SKIP LOCKED, so several engines share the work instead of checking twice.
 */
export class DriftScheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  /** rounds failed in a row (the database away): the first logged, then a line every 30 s, and the recovery */
  private readonly roundFailures: FailureStreak;

  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: Logger,
    private readonly options: DriftSchedulerOptions,
  ) {
    this.roundFailures = new FailureStreak(logger, 'periodic drift check round failed; will try again', 'periodic drift check rounds succeed again', { level: 'error' });
  }

  start(): void {
    if (this.options.intervalSeconds <= 0) return;
    this.timer = setInterval(() => void this.tick(), this.options.intervalSeconds * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One round; returns the number of checks submitted. */
  tick(now = new Date()): Promise<number> {
    this.running ??= this.round(now).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async round(now: Date): Promise<number> {
    try {
      const submitted = await inTransaction(this.dataSource, async (m) => {
        const due: Array<{ id: string; project: string; user: string; domain: string | null; timeout: number }> = await m.query(
          `SELECT c.id, c.project, c."user", c.domain, c.timeout FROM clusters c
            WHERE EXISTS (SELECT 1 FROM cluster_policies b JOIN policies p ON p.id = b.policy_id
                           WHERE b.cluster_id = c.id AND b.enabled AND p.type = ANY($1::text[]))
              AND NOT EXISTS (SELECT 1 FROM actions a WHERE a.cluster_id = c.id AND a.status = ANY($2::text[]))
              AND COALESCE((c.data->'drift'->>'checked_at')::timestamptz, 'epoch'::timestamptz) < $3
            ORDER BY c.id LIMIT $4 FOR UPDATE OF c SKIP LOCKED`,
          [this.options.driftAwareTypes, ActiveActionStatuses, new Date(now.getTime() - this.options.intervalSeconds * 1000), this.options.batchSize ?? 50],
        );
        for (const c of due) {
          const id = randomUUID();
          await m.getRepository(ActionEntity).insert(
            row<ActionEntity>({
              id,
              name: `cluster_check_${c.id.slice(0, 8)}`,
              cluster_id: c.id,
              target: c.id,
              action: 'CLUSTER_CHECK',
              cause: 'Periodic Drift Check',
              owner: null,
              interval: this.options.intervalSeconds,
              start_time: null,
              end_time: null,
              timeout: c.timeout,
              status: 'READY',
              status_reason: 'Periodic drift check',
              inputs: {},
              outputs: {},
              data: {},
              depends_on: [],
              depended_by: [],
              project: c.project,
              user: c.user,
              domain: c.domain,
              created_at: now,
              updated_at: now,
              lease_owner: null,
              lease_expires_at: null,
              attempts: 0,
            }),
          );
          const message: ActionRequestedMessage = {
            message_id: randomUUID(),
            schema_version: SCHEMA_VERSION,
            action_id: id,
            correlation_id: `drift-${id}`,
            sent_at: now.toISOString(),
            cluster_id: c.id,
            action: 'CLUSTER_CHECK',
            project: c.project,
            cause: 'submitted',
          };
          await addToOutbox(m, {
            exchange: Exchanges.actions,
            routingKey: RoutingKeys.actionRequested,
            type: RoutingKeys.actionRequested,
            messageId: message.message_id,
            correlationId: message.correlation_id,
            body: message,
          });
        }
        return due.length;
      });
      this.roundFailures.succeeded();
      if (submitted) this.logger.info('periodic drift checks submitted', { clusters: submitted });
      return submitted;
    } catch (e) {
      this.roundFailures.failed(errorMessage(e));
      return 0;
    }
  }
}
