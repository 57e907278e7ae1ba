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

/**
 * Constants of the code as an SQL list of text literals (`'a', 'b'`), to write into a statement
 * instead of passing them as a parameter: PostgreSQL then plans a prepared statement for the values
 * once, where with a parameter it may judge a plan for each call's values cheaper and plan it again
 * on every call (BENCHMARKS.md, pipeline, "Session 23"). Only plain names: anything that would need
 * quoting is refused, so no caller's value can become SQL.
 */
export function sqlTextList(values: readonly string[]): string {
  if (values.length === 0) throw new Error('sqlTextList: an empty list');
  for (const v of values) if (!/^[A-Za-z0-9_.:-]+$/.test(v)) throw new Error(`sqlTextList: not a plain name: ${JSON.stringify(v)}`);
  return values.map((v) => `'${v}'`).join(', ');
}
