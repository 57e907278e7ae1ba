import type { DataSource, EntityManager, EntitySubscriberInterface } from 'typeorm';
import type { TransactionCommitEvent } from 'typeorm/subscriber/event/TransactionCommitEvent';
import type { TransactionRollbackEvent } from 'typeorm/subscriber/event/TransactionRollbackEvent';
import { PerTransaction } from './per-transaction';

const pending = new PerTransaction<() => void>();
const subscribed = new WeakSet<DataSource>();

/**
 * Runs `run` once the transaction `manager` belongs to has committed, and never if it rolls back
 * (or a transaction retried after a serialization failure ran it again): for effects that must
 * count only what was stored, such as metrics. Outside a transaction it runs at once. `run` must
 * not throw; what it throws is swallowed, the commit stands.
 */
export function afterCommit(manager: EntityManager, run: () => void): void {
  const runner = manager.queryRunner;
  if (!runner || !runner.isTransactionActive) {
    safely(run);
    return;
  }
  const dataSource = manager.connection;
  if (!subscribed.has(dataSource)) {
    dataSource.subscribers.push(new AfterCommitSubscriber());
    subscribed.add(dataSource);
  }
  pending.add(runner, run);
}

function safely(run: () => void): void {
  try {
    run();
  } catch {
    // an observer's failure is not the transaction's
  }
}

class AfterCommitSubscriber implements EntitySubscriberInterface {
  afterTransactionCommit(event: TransactionCommitEvent): void {
    for (const run of pending.committed(event.queryRunner)) safely(run);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    pending.rolledBack(event.queryRunner);
  }
}
