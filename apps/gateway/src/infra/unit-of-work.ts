import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from '@trellis/common';
import type { DataSource, EntityManager } from 'typeorm';
import { DATA_SOURCE, GATEWAY_LOGGER, OUTBOX_LISTENER, type OutboxListener } from '../core/tokens';
import { addToOutbox, inTransaction, type OutgoingMessage } from './persistence.adapter';

/** One database transaction; outbox rows written through it are announced after the commit. */
export interface Tx {
  manager: EntityManager;
  addToOutbox(message: OutgoingMessage): Promise<void>;
}

@Injectable()
export class UnitOfWork {
  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(OUTBOX_LISTENER) private readonly onOutboxWritten: OutboxListener | null,
    @Inject(GATEWAY_LOGGER) private readonly logger: Logger,
  ) {}

  get manager(): EntityManager {
    return this.dataSource.manager;
  }

  async run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    let wroteOutbox = false;
    const result = await inTransaction(
      this.dataSource,
      (manager) =>
        work({
          manager,
          addToOutbox: async (message) => {
            await addToOutbox(manager, message);
            wroteOutbox = true;
          },
        }),
      { logger: this.logger },
    );
    if (wroteOutbox && this.onOutboxWritten) {
      try {
        this.onOutboxWritten();
      } catch (e) {
        // The rows are committed; the relay's poll publishes them even if the nudge failed.
        this.logger.warn('outbox listener failed', { error: e instanceof Error ? e.message : String(e) });
      }
    }
    return result;
  }
}
