/**
 * TypeORM's `query()` on PostgreSQL returns the rows for SELECT and INSERT, but `[rows, rowCount]`
 * for UPDATE and DELETE. These read the latter shape and fail loudly if it ever changes.
 */
export function changedRows<T>(result: unknown): T[] {
  return changed<T>(result)[0];
}

export function changedCount(result: unknown): number {
  return changed(result)[1];
}

function changed<T>(result: unknown): [T[], number] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result as [T[], number];
  }
  throw new Error('unexpected result shape from an UPDATE or DELETE: expected [rows, rowCount]');
}
