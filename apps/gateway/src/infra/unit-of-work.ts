import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from '@trellis/common';
import type { DataSource, EntityManager } from 'typeorm';
import { DATA_SOURCE, GATEWAY_LOGGER } from '../core/tokens';
import { addToOutbox, inTransaction, type OutgoingMessage } from './persistence.adapter';

/**
 * One database transaction; outbox rows written through it go to the relay when it commits (the
 * persistence hand-off does that, nothing here has to).
 */
export interface Tx {
  manager: EntityManager;
  addToOutbox(message: OutgoingMessage): Promise<void>;
}

@Injectable()
export class UnitOfWork {
  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(GATEWAY_LOGGER) private readonly logger: Logger,
  ) {}

  get manager(): EntityManager {
    return this.dataSource.manager;
  }

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return inTransaction(
      this.dataSource,
      (manager) =>
        work({
          manager,
          addToOutbox: async (message) => {
            await addToOutbox(manager, message);
          },
        }),
      { logger: this.logger },
    );
  }
}
