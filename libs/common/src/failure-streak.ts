import type { Logger } from './logger';

export interface FailureStreakOptions {
  /** the level of the first failure and of the reminders (default warn) */
  level?: 'warn' | 'error';
  /** how often a streak that goes on is logged again (default 30 s) */
  remindEveryMs?: number;
  /** the clock (tests) */
  now?: () => number;
}

/**
 * The log of a background loop that fails round after round (the database or the broker away): the
 * first failure is logged as it always was, then a reminder at most every `remindEveryMs` with how
 * many rounds failed and for how long, and one line when a round succeeds again. A loop that retries
 * every 250 ms through a five-minute outage logs about eleven lines instead of 1,200.
 */
export class FailureStreak {
  private count = 0;
  private since = 0;
  private lastLoggedAt = 0;
  private readonly level: 'warn' | 'error';
  private readonly remindEveryMs: number;
  private readonly now: () => number;

  /**
   * @param message what a failure is logged as ("outbox relay round failed")
   * @param recovered what the first success after failures is logged as (info)
   */
  constructor(
    private readonly logger: Logger,
    private readonly message: string,
    private readonly recovered: string,
    options: FailureStreakOptions = {},
  ) {
    this.level = options.level ?? 'warn';
    this.remindEveryMs = options.remindEveryMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  /** rounds failed in a row so far (0: the last one succeeded) */
  get failures(): number {
    return this.count;
  }

  failed(error: string, fields: Record<string, unknown> = {}): void {
    const t = this.now();
    this.count++;
    if (this.count === 1) {
      this.since = t;
      this.lastLoggedAt = t;
      this.logger[this.level](this.message, { ...fields, error });
      return;
    }
    if (t - this.lastLoggedAt < this.remindEveryMs) return;
    this.lastLoggedAt = t;
    this.logger[this.level](this.message, { ...fields, error, failures: this.count, failing_for_s: seconds(t - this.since) });
  }

  succeeded(fields: Record<string, unknown> = {}): void {
    if (this.count === 0) return;
    this.logger.info(this.recovered, { ...fields, failures: this.count, failing_for_s: seconds(this.now() - this.since) });
    this.count = 0;
  }
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;
