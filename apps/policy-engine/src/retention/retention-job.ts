import { errorMessage, type Logger, type TrellisConfig } from '@trellis/common';
import { RETENTION_KINDS, pruneOlderThan, type PruneCounts, type RetentionKind } from '@trellis/persistence';
import type { DataSource } from 'typeorm';

/** long enough to stay out of start-up, short enough for engines that restart often */
const FIRST_ROUND_AFTER_SECONDS = 60;

/**
 * Retention in the background: every `intervalSeconds` the engine forgets processed-message ids,
 * events, finished actions and decisions older than their configured ages (libs/persistence
 * retention.ts says which rows never go). Deletes run in small batches, each its own transaction
 * with SKIP LOCKED, so consumers never wait on a purge and several engines can run it at once.
 * The first round runs a minute after start (not during start-up, and not only an interval later:
 * an engine restarted more often than the interval would otherwise never prune).
 */
export class RetentionJob {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<Partial<Record<RetentionKind, PruneCounts>>> | null = null;
  private stopping = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: Logger,
    private readonly settings: TrellisConfig['retention'],
  ) {}

  start(): void {
    if (this.timer || this.settings.intervalSeconds === 0) return;
    this.stopping = false;
    this.schedule(Math.min(this.settings.intervalSeconds, FIRST_ROUND_AFTER_SECONDS));
  }

  private schedule(seconds: number): void {
    this.timer = setTimeout(() => {
      this.round = this.pruneOnce().finally(() => {
        this.round = null;
        if (!this.stopping) this.schedule(this.settings.intervalSeconds);
      });
    }, seconds * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.round;
  }

  /** One round over every kind kept for a limited time; returns the rows deleted per kind. */
  async pruneOnce(now = new Date()): Promise<Partial<Record<RetentionKind, PruneCounts>>> {
    const deleted: Partial<Record<RetentionKind, PruneCounts>> = {};
    for (const kind of RETENTION_KINDS) {
      const days = this.settings.days[kind];
      if (days === null || this.stopping) continue;
      try {
        deleted[kind] = await pruneOlderThan(this.dataSource, kind, {
          olderThanSeconds: days * 86_400,
          batchSize: this.settings.batchSize,
          now,
          shouldStop: () => this.stopping,
        });
      } catch (e) {
        this.logger.error('retention round failed; will try again', { kind, error: errorMessage(e) });
      }
    }
    const any = Object.values(deleted).some((rows) => Object.values(rows).some((n) => n > 0));
    if (any) this.logger.info('old rows pruned', { deleted });
    return deleted;
  }
}
