import type { WorkOrderMessage } from '@trellis/contracts';
import { FailureStreak, errorMessage, withLogContext, type Logger } from '@trellis/common';
import type { DataSource } from 'typeorm';
import type { ApplyWorkOrderUseCase } from './apply-work-order.usecase';
import { actionStatusOf } from './order-lease';

/**
 * Applies work orders that no message will bring back: those whose try met a transient cloud error
 * and whose next attempt is due (retry-schedule.ts), and those left APPLYING by a worker that died
 * (its heartbeat stopped, so its lease ran out). The order's own payload, stored at its first claim,
 * is applied; the claim in ApplyWorkOrderUseCase decides which of several pollers gets it. Nothing
 * cycles through the broker: the dead-letter queue is for messages that can never be applied.
 */
export class OrderPoller {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<number> | null = null;
  /** rounds failed in a row (the database away): the first logged, then a line every 30 s, and the recovery */
  private readonly roundFailures: FailureStreak;

  constructor(
    private readonly dataSource: DataSource,
    private readonly apply: Pick<ApplyWorkOrderUseCase, 'execute'>,
    private readonly logger: Logger,
    private readonly options: { intervalMs: number; batchSize: number; afterApply?: (order: WorkOrderMessage) => void },
  ) {
    this.roundFailures = new FailureStreak(logger, 'order poll round failed; will try again', 'order poll rounds succeed again', { level: 'warn' });
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (!this.round) this.round = this.pollOnce().finally(() => (this.round = null));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.round;
  }

  /** One round: the due orders, oldest first; returns how many were applied. */
  async pollOnce(): Promise<number> {
    let applied = 0;
    try {
      // An order waiting for Nova whose action has ended meanwhile (the engine failed it at its
      // timeout) is dropped: booting its servers now would only make servers nobody waits for. A
      // step's order (a repair's replacement) goes with the action the step is part of.
      await this.dataSource.query(
        `UPDATE work_orders w SET status = 'DONE', next_attempt_at = NULL, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
                last_error = 'the action ended before Nova could be reached: ' || COALESCE(w.last_error, ''), updated_at = clock_timestamp()
          WHERE w.status = 'APPLYING' AND w.next_attempt_at IS NOT NULL
            AND (w.lease_expires_at IS NULL OR w.lease_expires_at <= clock_timestamp())
            AND EXISTS (SELECT 1 FROM (${actionStatusOf('w.action_id')}) st WHERE st.action_status IN ('SUCCEEDED', 'FAILED', 'CANCELLED'))`,
      );
      const due: Array<{ payload: WorkOrderMessage }> = await this.dataSource.query(
        `SELECT payload FROM work_orders
          WHERE status = 'APPLYING'
            AND (lease_expires_at IS NULL OR lease_expires_at <= clock_timestamp())
            AND (next_attempt_at IS NULL OR next_attempt_at <= clock_timestamp())
          ORDER BY COALESCE(next_attempt_at, created_at) LIMIT $1`,
        [this.options.batchSize],
      );
      for (const { payload } of due) {
        try {
          const context = { correlation_id: payload.correlation_id, action_id: payload.action_id };
          const result = await withLogContext(context, () => this.apply.execute(payload, { redelivered: true }));
          if (result.applied) {
            applied++;
            this.options.afterApply?.(payload);
          }
        } catch (e) {
          this.logger.warn('work order retry failed; its lease brings it back', { action_id: payload.action_id, error: errorMessage(e) });
        }
      }
      this.roundFailures.succeeded();
    } catch (e) {
      this.roundFailures.failed(errorMessage(e));
    }
    return applied;
  }
}
