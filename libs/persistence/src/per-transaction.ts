import type { QueryRunner } from 'typeorm';

/**
 * What was noted against a transaction while it ran, until it ends: handed back once its outermost
 * COMMIT is done, forgotten when it rolls back (of a savepoint rolled back to, only what was noted
 * inside it). The outbox hand-off and `afterCommit` keep their notes this way.
 */
export class PerTransaction<T> {
  private readonly noted = new WeakMap<QueryRunner, Array<{ item: T; depth: number }>>();

  add(runner: QueryRunner, item: T): void {
    let list = this.noted.get(runner);
    if (!list) this.noted.set(runner, (list = []));
    list.push({ item, depth: depthOf(runner) });
  }

  /** At a COMMIT: everything noted, once the transaction is over (a released savepoint's notes wait for the outermost COMMIT). */
  committed(runner: QueryRunner): T[] {
    if (runner.isTransactionActive) return [];
    const list = this.noted.get(runner) ?? [];
    this.noted.delete(runner);
    return list.map((n) => n.item);
  }

  /** At a ROLLBACK: forgets what it undid. */
  rolledBack(runner: QueryRunner): void {
    const list = this.noted.get(runner);
    if (!list) return;
    if (!runner.isTransactionActive) {
      this.noted.delete(runner);
      return;
    }
    // rolled back to a savepoint: what was noted inside it never happened
    const depth = depthOf(runner);
    this.noted.set(
      runner,
      list.filter((n) => n.depth <= depth),
    );
  }
}

/** TypeORM counts nested transactions (savepoints) in a field its QueryRunner type does not show. */
function depthOf(runner: QueryRunner): number {
  const depth = (runner as unknown as { transactionDepth?: unknown }).transactionDepth;
  return typeof depth === 'number' ? depth : 1;
}
