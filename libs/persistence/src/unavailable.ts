import { sqlState } from './transaction';

/**
 * SQLSTATEs that say the server cannot be talked to now, whatever the statement: class 08
 * (connection exception), the server shutting down or starting (57P01-57P03), and too many
 * connections (53300). Anything else (a constraint, a syntax error, a serialization failure) is
 * the statement's own problem and stays what it is.
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Socket errors of a connect or of a connection lost mid-query (node's `code`). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * What node-postgres, its pool and PGlite say when the connection is gone; they carry no code, so
 * the message is all there is. Anchored at the start: a message that merely mentions one is not one.
 */
const LOST_CONNECTION = [
  /^Connection terminated( unexpectedly| due to connection timeout)?$/,
  /^timeout exceeded when trying to connect$/,
  /^Client (was closed|has encountered a connection error) and is not queryable$/,
  /^PGlite is closed$/,
];

/**
 * True when `e` means the database cannot be reached (PostgreSQL down, the connection lost, the
 * embedded PGlite closed): worth a 503 and a retry later, not a 500. TypeORM wraps driver errors
 * (`driverError`), and a pool may report the socket error as the `cause` of its own.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  for (let err: unknown = e, depth = 0; err && typeof err === 'object' && depth < 4; depth++) {
    const state = sqlState(err);
    if (state !== undefined && (state.startsWith('08') || UNAVAILABLE_STATES.has(state) || SOCKET_CODES.has(state))) return true;
    const message = (err as { message?: unknown }).message;
    if (typeof message === 'string' && LOST_CONNECTION.some((re) => re.test(message))) return true;
    const inner = err as { driverError?: unknown; cause?: unknown; errors?: unknown };
    // node's AggregateError of a connect tried on each address of a host (IPv4 and IPv6)
    if (Array.isArray(inner.errors) && inner.errors.some(isDatabaseUnavailable)) return true;
    err = inner.driverError ?? inner.cause;
  }
  return false;
}

/** What `untilDatabaseAnswers` queries: a TypeORM DataSource or anything with its `query`. */
export interface Queryable {
  query(sql: string): Promise<unknown>;
}

const probes = new WeakMap<Queryable, Promise<boolean>>();

/**
 * Resolves true once the database answers `SELECT 1` again (tried every `intervalMs`), false when
 * it still does not after `maxMs`. A consumer whose message failed because the database was away
 * waits here before handing the message back to the broker: redelivered at once, a database restart
 * of a few seconds spent each in-flight message's delivery limit in milliseconds and dead-lettered
 * it (found by the fault suite, docs/RELIABILITY.md §9). Callers on one data source share one probe.
 */
export function untilDatabaseAnswers(db: Queryable, options: { maxMs?: number; intervalMs?: number } = {}): Promise<boolean> {
  const running = probes.get(db);
  if (running) return running;
  const { maxMs = 60_000, intervalMs = 1_000 } = options;
  const probe = (async () => {
    const deadline = Date.now() + maxMs;
    for (;;) {
      try {
        await db.query('SELECT 1');
        return true;
      } catch {
        if (Date.now() + intervalMs > deadline) return false;
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    }
  })().finally(() => probes.delete(db));
  probes.set(db, probe);
  return probe;
}
