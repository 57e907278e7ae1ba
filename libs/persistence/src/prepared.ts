import { createHash } from 'node:crypto';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import { QueryRunnerAlreadyReleasedError } from 'typeorm/error/QueryRunnerAlreadyReleasedError';

/**
 * Named prepared statements for the statements every action runs (issue 15).
 *
 * TypeORM's `query()` sends each statement unnamed: PostgreSQL parses and plans it again on every
 * call, and TypeORM wraps each call in its broadcaster and logger. `hotQuery` sends the same text as
 * a named statement on the connection of the caller's transaction, so each pooled connection parses
 * it once and then only binds and executes it; the server's CPU per statement drops by about a
 * third (BENCHMARKS.md, pipeline). Results have the shape `manager.query()` gives, so a call site
 * changes only the function it calls.
 *
 * Only for statements whose text is one of a few fixed strings (values always as parameters, never
 * spliced in): each distinct text becomes one prepared statement per connection for the
 * connection's life. Never `SELECT *` or `RETURNING *`: a prepared statement whose result columns
 * change under it (a migration run by a newer replica) fails instead of being planned again.
 *
 * Off for PGlite, whose socket server shares one session between connections (a statement prepared
 * by one would collide with the same name prepared by a new connection), and when
 * TRELLIS_DB_PREPARED_STATEMENTS is false (a PgBouncer before 1.21 in transaction pooling mode,
 * which cannot keep a statement prepared on one server connection for the next transaction).
 */

const preparing = new WeakSet<DataSource>();

/** Lets `hotQuery` use named statements on `dataSource` (a real PostgreSQL, directly connected). */
export function usePreparedStatements(dataSource: DataSource): void {
  preparing.add(dataSource);
}

export function usesPreparedStatements(dataSource: DataSource): boolean {
  return preparing.has(dataSource);
}

interface PgResult {
  command: string;
  rows: unknown[];
  rowCount: number | null;
}

interface PgQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<PgResult>;
}

const names = new Map<string, string>();

/** The statement's name: derived from its text, so two call sites with the same text share it. */
export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `trellis_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * A select list or RETURNING list that takes every column (`SELECT *`, `RETURNING *`, `, n.*`):
 * `count(*)` and arithmetic do not match, nor `SELECT * FROM unnest(...) AS t(a, b)` or
 * `SELECT * FROM (subquery)`, whose columns the statement itself names.
 */
const EVERY_COLUMN = /(?:\bSELECT|\bRETURNING|,)\s*(?:DISTINCT\s+)?(?:"?[A-Za-z_]\w*"?\.)?\*(?![\w*])(?!\s*FROM\s+(?:unnest\s*)?\()/gi;

const checkedTexts = new Set<string>();

/**
 * Refuses a statement whose result columns are a table's (`SELECT * FROM t`, `RETURNING *`,
 * `alias.*`), once per text. While a rolling upgrade runs, a newer release's migration adds columns
 * under the running replicas, and PostgreSQL then refuses to run a prepared statement whose result
 * changed ("cached plan must not change result type"). Checked in every mode, so the tests on PGlite
 * catch it too.
 */
export function checkFixedColumns(text: string): void {
  if (checkedTexts.has(text)) return;
  EVERY_COLUMN.lastIndex = 0;
  const every = EVERY_COLUMN.exec(text);
  if (every) {
    throw new Error(
      `hotQuery: '${every[0].replace(/\s+/g, ' ').trim()}' takes every column of a table; name the columns (a column a newer release adds would break the prepared statement)`,
    );
  }
  checkedTexts.add(text);
}

/**
 * `manager.query(text, params)`, as a named prepared statement where that is on. Returns the rows
 * (SELECT, INSERT, or anything with RETURNING but UPDATE and DELETE), or `[rows, rowCount]` for
 * UPDATE and DELETE, as TypeORM does; errors are TypeORM's `QueryFailedError` with the driver's
 * error (and its SQLSTATE) inside.
 */
export async function hotQuery<T = unknown>(manager: EntityManager, text: string, params: unknown[]): Promise<T> {
  checkFixedColumns(text);
  const dataSource = manager.connection;
  if (!preparing.has(dataSource)) return manager.query(text, params) as Promise<T>;
  const runner = manager.queryRunner;
  let target: PgQueryable;
  if (runner) {
    if (runner.isReleased) throw new QueryRunnerAlreadyReleasedError();
    // the transaction's own connection (connect() returns it, opening it on first use)
    target = await (runner as unknown as { connect(): Promise<PgQueryable> }).connect();
  } else {
    // no transaction: any pooled connection, as manager.query() would take
    target = (dataSource.driver as unknown as { master: PgQueryable }).master;
  }
  if (dataSource.options.logging) dataSource.logger.logQuery(text, params, runner);
  let raw: PgResult;
  try {
    raw = await target.query({ name: statementName(text), text, values: params });
  } catch (e) {
    if (dataSource.options.logging) dataSource.logger.logQueryError(e as Error, text, params, runner);
    throw new QueryFailedError(text, params, e as Error);
  }
  return (raw.command === 'UPDATE' || raw.command === 'DELETE' ? [raw.rows, raw.rowCount ?? 0] : raw.rows) as T;
}
