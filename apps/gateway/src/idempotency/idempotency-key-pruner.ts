import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from '@trellis/common';
import { GATEWAY_LOGGER } from '../core/tokens';
import { IdempotentWrites } from './idempotent-writes';

/** Expired keys are only skipped by lookups; this deletes them, hourly, so the table stays a day's worth. */
const PRUNE_INTERVAL_MS = 3600_000;

@Injectable()
export class IdempotencyKeyPruner implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly writes: IdempotentWrites,
    @Inject(GATEWAY_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.pruneOnce(), PRUNE_INTERVAL_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass; a failure (the database away) is logged and the next pass tries again. */
  async pruneOnce(): Promise<void> {
    try {
      const pruned = await this.writes.prune();
      if (pruned > 0) this.logger.debug('idempotency keys pruned', { pruned });
    } catch (e) {
      this.logger.warn('idempotency key pruning failed', { error: e instanceof Error ? e.message : String(e) });
    }
  }
}
