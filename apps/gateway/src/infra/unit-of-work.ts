import { Inject, Injectable } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '@trellis/common';
import type { DataSource, EntityManager } from 'typeorm';
import { DATA_SOURCE, GATEWAY_LOGGER } from '../core/tokens';
import { addToOutbox, inTransaction, type OutgoingMessage, type SqlStatement } from './persistence.adapter';

/**
 * One database transaction; outbox rows written through it go to the relay when it commits (the
 * persistence hand-off does that, nothing here has to).
 */
export interface Tx {
  manager: EntityManager;
  /** `writes` go to the database in the same statement as the outbox row (addToOutbox's `with`) */
  addToOutbox(message: OutgoingMessage, writes?: readonly SqlStatement[]): Promise<void>;
}

/** The transaction of the `runAsOne` the current call runs in, if any. */
const joined = new AsyncLocalStorage<Tx>();

@Injectable()
export class UnitOfWork {
  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(GATEWAY_LOGGER) private readonly logger: Logger,
  ) {}

  /** Outside a transaction, or inside `runAsOne`'s (with PGlite another connection would wait for it). */
  get manager(): EntityManager {
    return joined.getStore()?.manager ?? this.dataSource.manager;
  }

  /** Whether the current call runs in a `runAsOne`'s transaction (whose commit comes after it returns). */
  get inJoinedTransaction(): boolean {
    return joined.getStore() !== undefined;
  }

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const open = joined.getStore();
    if (open) return work(open);
    return inTransaction(
      this.dataSource,
      (manager) =>
        work({
          manager,
          addToOutbox: async (message, writes) => {
            await addToOutbox(manager, message, { with: writes });
          },
        }),
      { logger: this.logger },
    );
  }

  /**
   * Runs `work` in one transaction that every `run` and `manager` inside it joins, so what `work`
   * writes after the service it calls (an idempotency key's answer) commits with that service's
   * action or not at all. A serialization failure runs the whole of `work` again.
   */
  runAsOne<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.run((tx) => joined.run(tx, () => work(tx)));
  }
}
