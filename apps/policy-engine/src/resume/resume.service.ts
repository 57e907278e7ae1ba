import { FailureStreak, errorMessage, type Logger } from '@trellis/common';
import { leaseTakeovers } from '@trellis/observability';
import { replayStuckActions } from '@trellis/persistence';
import type { DataSource } from 'typeorm';

/**
 * Resumes work whose lease expired: at start-up and then on an interval, actions that no engine
 * took up, or whose work order vanished, are published again (cause 'resume'). Redelivery of a
 * message a crashed engine held is RabbitMQ's job; this covers what the broker cannot know about.
 */
export class ResumeService {
  private timer: NodeJS.Timeout | null = null;
  /** rounds failed in a row (the database away): the first logged, then a line every 30 s, and the recovery */
  private readonly roundFailures: FailureStreak;

  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: Logger,
    private readonly options: { leaseSeconds: number; intervalSeconds: number },
  ) {
    this.roundFailures = new FailureStreak(logger, 'resume round failed; will try again', 'resume rounds succeed again', { level: 'error' });
  }

  async start(): Promise<void> {
    await this.resumeOnce();
    this.timer = setInterval(() => void this.resumeOnce(), this.options.intervalSeconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async resumeOnce(): Promise<number> {
    try {
      const resumed = await replayStuckActions(this.dataSource, { olderThanSeconds: this.options.leaseSeconds }, 'resume');
      if (resumed.length) {
        leaseTakeovers.inc({ lease: 'action' }, resumed.length);
        this.logger.info('resumed actions whose lease expired', {
          count: resumed.length,
          actions: resumed.map((a) => ({ id: a.id, why: a.why })),
        });
      }
      this.roundFailures.succeeded();
      return resumed.length;
    } catch (e) {
      this.roundFailures.failed(errorMessage(e));
      return 0;
    }
  }
}
