import type { DataSource, EntityManager, EntitySubscriberInterface } from 'typeorm';
import type { TransactionCommitEvent } from 'typeorm/subscriber/event/TransactionCommitEvent';
import type { TransactionRollbackEvent } from 'typeorm/subscriber/event/TransactionRollbackEvent';
import { PerTransaction } from '../per-transaction';
import type { OutboxRow } from './outbox-row';

/**
 * Hand-off of committed outbox rows to the relay of the same process, so a message costs no
 * claiming statement and no polling: `addToOutbox` writes the row with a short lease of its own
 * (`claimed_until`, which keeps polling relays off it) and notes it against the transaction; when
 * that transaction has committed, its rows go to the relay, which publishes them and marks them
 * published. Rows of a transaction that rolls back are forgotten (they no longer exist). Should the
 * process die between commit and publish, or the publish fail, the lease runs out and the rows are
 * published by polling, as every row was before.
 */
export interface HandoffTarget {
  /** seconds a handed-off row stays out of polling relays' way */
  readonly handoffLeaseSeconds: number;
  /** takes rows that are committed, in the order they were written */
  handOff(rows: OutboxRow[]): void;
}

const targets = new WeakMap<DataSource, HandoffTarget>();
const noted = new PerTransaction<OutboxRow>();
const subscribed = new WeakSet<DataSource>();

/** Makes `target` the relay that publishes `dataSource`'s committed rows; returns the undo. */
export function registerHandoff(dataSource: DataSource, target: HandoffTarget): () => void {
  if (!subscribed.has(dataSource)) {
    dataSource.subscribers.push(new HandoffSubscriber());
    subscribed.add(dataSource);
  }
  targets.set(dataSource, target);
  return () => {
    if (targets.get(dataSource) === target) targets.delete(dataSource);
  };
}

/** The relay that would take rows written through `manager`, if any. */
export function handoffTarget(manager: EntityManager): HandoffTarget | undefined {
  return targets.get(manager.connection);
}

/**
 * Notes a row `addToOutbox` just wrote with a hand-off lease. Outside a transaction the row is
 * already committed and goes to the relay at once.
 */
export function noteWritten(manager: EntityManager, target: HandoffTarget, row: OutboxRow): void {
  const runner = manager.queryRunner;
  if (!runner || !runner.isTransactionActive) {
    target.handOff([row]);
    return;
  }
  noted.add(runner, row);
}

class HandoffSubscriber implements EntitySubscriberInterface {
  afterTransactionCommit(event: TransactionCommitEvent): void {
    const rows = noted.committed(event.queryRunner);
    const target = targets.get(event.connection);
    // no relay any more (it stopped): the rows' lease runs out and polling publishes them
    if (target && rows.length > 0) target.handOff(rows);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    noted.rolledBack(event.queryRunner);
  }
}
