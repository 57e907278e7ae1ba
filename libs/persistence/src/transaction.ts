import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { Logger } from '@trellis/common';

/** SQLSTATEs after which the whole transaction can simply run again. */
const RETRYABLE = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

export interface TransactionOptions {
  /** how many times `work` may run in all (default 5) */
  maxAttempts?: number;
  logger?: Logger;
}

export function sqlState(e: unknown): string | undefined {
  const err = e as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = err?.code ?? err?.driverError?.code;
  return typeof code === 'string' ? code : undefined;
}

export const isRetryableTransactionError = (e: unknown): boolean => RETRYABLE.has(sqlState(e) ?? '');

/**
 * Runs `work` in one READ COMMITTED transaction and commits it. After a serialization failure or a
 * deadlock the transaction is rolled back and `work` runs again from the start (a bounded number of
 * times, with a short random pause), so `work` must not have effects outside the database.
 *
 * Everything inside must go through `manager`: with PGlite a query on another connection waits for
 * this transaction to end, which it never does.
 */
export async function inTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const maxAttempts = options.maxAttempts ?? 5;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new Error(`inTransaction: maxAttempts must be a whole number of at least 1, got ${maxAttempts}`);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      // READ COMMITTED is every connection's default: PostgreSQL's own, and set at connect time for a
      // server configured otherwise (openPostgres), so no SET TRANSACTION round trip per transaction.
      return await (pipelining.has(dataSource) ? pipelinedTransaction(dataSource, work) : dataSource.transaction(work));
    } catch (e) {
      if (!isRetryableTransactionError(e) || attempt >= maxAttempts) throw e;
      options.logger?.debug('transaction retried', { attempt, sqlState: sqlState(e) });
      // the connection is back in the pool by now: other work goes on while this one waits
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}

const pipelining = new WeakSet<DataSource>();

/**
 * Lets `inTransaction` send BEGIN without waiting for its answer on `dataSource`, whose pooled
 * connections must be in `pg`'s pipeline mode (`extra: { pipeline: true }`; openPostgres does both
 * unless TRELLIS_DB_PIPELINE is false). The transaction's first statement then goes out right
 * behind BEGIN: one round trip fewer per transaction.
 */
export function usePipelinedBegin(dataSource: DataSource): void {
  pipelining.add(dataSource);
}

interface PipelinedConnection {
  query(text: string): Promise<unknown>;
  /** pg's protocol connection and its socket */
  connection?: { stream?: { cork?: () => void; uncork?: () => void } };
}

/**
 * TypeORM's `dataSource.transaction(work)`, but BEGIN is sent and not awaited: with the connection in
 * pipeline mode the first statement of `work` is written behind it at once, and PostgreSQL runs it
 * inside the transaction as it would after a waited BEGIN. BEGIN's own answer is awaited before
 * COMMIT, and its error (if any) is the transaction's.
 *
 * Why not waiting is safe: BEGIN on a live session fails only when the session is in an aborted
 * transaction, and then every statement behind it fails the same way (25P02), so nothing runs
 * outside a transaction; a dead connection fails them all. Inside an open transaction BEGIN only
 * warns, as it does when awaited. The commit and rollback are TypeORM's own (the outbox hand-off
 * and after-commit hooks hear them); no subscriber listens for the start of a transaction, which
 * this path does not announce.
 */
async function pipelinedTransaction<T>(dataSource: DataSource, work: (manager: EntityManager) => Promise<T>): Promise<T> {
  const runner = dataSource.createQueryRunner();
  try {
    const connection = (await runner.connect()) as PipelinedConnection;
    markTransactionStarted(runner);
    // BEGIN and the statement written behind it leave in one write (one system call, one read on
    // the server's side): the socket is held until the work's first statement is queued (it is
    // queued in microtasks, which all run before setImmediate's callback)
    const socket = connection.connection?.stream;
    if (socket?.cork && socket.uncork) {
      const { cork, uncork } = socket as Required<typeof socket>;
      cork.call(socket);
      setImmediate(() => uncork.call(socket));
    }
    const begun = connection.query('START TRANSACTION');
    // observed here at once (no unhandled rejection while work runs), and rethrown below
    begun.catch(() => undefined);
    const result = await work(runner.manager);
    await begun;
    await runner.commitTransaction();
    return result;
  } catch (err) {
    if (runner.isTransactionActive) {
      try {
        await runner.rollbackTransaction();
      } catch {
        // the original error is the one to report, as TypeORM does
      }
    }
    throw err;
  } finally {
    await runner.release();
  }
}

/** The state `QueryRunner.startTransaction()` leaves behind, without its round trip. */
function markTransactionStarted(runner: QueryRunner): void {
  const state = runner as unknown as { isTransactionActive: boolean; transactionDepth: number };
  if (state.transactionDepth !== 0) throw new Error('pipelinedTransaction: the query runner is already in a transaction');
  state.isTransactionActive = true;
  state.transactionDepth = 1;
}
