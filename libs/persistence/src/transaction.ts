import type { DataSource, EntityManager } from 'typeorm';
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
      return await dataSource.transaction(work);
    } catch (e) {
      if (!isRetryableTransactionError(e) || attempt >= maxAttempts) throw e;
      options.logger?.debug('transaction retried', { attempt, sqlState: sqlState(e) });
      // the connection is back in the pool by now: other work goes on while this one waits
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}
