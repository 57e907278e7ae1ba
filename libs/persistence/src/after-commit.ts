import type { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';
import type { TransactionCommitEvent } from 'typeorm/subscriber/event/TransactionCommitEvent';
import type { TransactionRollbackEvent } from 'typeorm/subscriber/event/TransactionRollbackEvent';
import { depthOf } from './outbox/handoff';

interface Pending {
  run: () => void;
  /** the transaction depth it was registered at (savepoints nest) */
  depth: number;
}

const pending = new WeakMap<QueryRunner, Pending[]>();
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
  let list = pending.get(runner);
  if (!list) pending.set(runner, (list = []));
  list.push({ run, depth: depthOf(runner) });
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
    const runner = event.queryRunner;
    // a released savepoint: its callbacks wait for the outermost COMMIT
    if (runner.isTransactionActive) return;
    const list = pending.get(runner);
    pending.delete(runner);
    for (const p of list ?? []) safely(p.run);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    const runner = event.queryRunner;
    const list = pending.get(runner);
    if (!list) return;
    if (!runner.isTransactionActive) {
      pending.delete(runner);
      return;
    }
    // rolled back to a savepoint: forget what was registered inside it
    const depth = depthOf(runner);
    pending.set(
      runner,
      list.filter((p) => p.depth <= depth),
    );
  }
}
