import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { UsageError } from '../commands/args';
import { SENLIN_COLUMNS, UNFINISHED_ACTION_STATUSES, type SenlinRows, type SenlinTable } from './senlin-rows';

/** `mysql://user:pass@host:3306/senlin` (also `mysql+pymysql://…` as written in senlin.conf) → a checked URL */
export function parseSenlinUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.replace(/^mysql\+[a-z0-9]+:/i, 'mysql:'));
  } catch {
    throw new UsageError(`--from must be a URL such as mysql://senlin:PASSWORD@127.0.0.1:3306/senlin, got '${redactDbUrl(text)}'`);
  }
  if (url.protocol !== 'mysql:') throw new UsageError(`--from must be a mysql:// URL (Senlin's MySQL or MariaDB database), got '${url.protocol}//…'`);
  if (!url.hostname) throw new UsageError('--from names no host');
  const database = url.pathname.replace(/^\//, '');
  if (database === '') throw new UsageError("--from names no database (the path, e.g. '/senlin')");
  if (/[\x00-\x1f\x7f/]|%00|%2f/i.test(database)) throw new UsageError(`--from names a database with a control character or a slash: '${database.replace(/[\x00-\x1f\x7f]/g, '?')}'`);
  return url;
}

/** the URL with its password replaced, for messages */
export function redactDbUrl(text: string): string {
  return text.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
}

/** A connection to Senlin's database (`parseSenlinUrl`'s URL), its DATETIMEs read as text. */
export async function connectSenlin(from: URL): Promise<Connection> {
  try {
    return await createConnection({
      host: from.hostname,
      port: from.port ? Number(from.port) : 3306,
      user: decodeURIComponent(from.username),
      password: decodeURIComponent(from.password),
      database: decodeURIComponent(from.pathname.replace(/^\//, '')),
      // Senlin writes naive UTC DATETIMEs; read them as text so no local time zone is applied
      dateStrings: true,
      supportBigNumbers: true,
      charset: 'utf8mb4',
      connectTimeout: 10_000,
    });
  } catch (e) {
    throw new Error(`cannot connect to Senlin's database at ${redactDbUrl(from.href)}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Reads what the importer needs from Senlin's database in one read-only transaction with a
 * consistent snapshot (InnoDB), so that the rows agree with each other even if something still
 * writes. Nothing is written to Senlin's database.
 */
export async function readSenlin(from: URL): Promise<SenlinRows> {
  const connection = await connectSenlin(from);
  try {
    await connection.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    await connection.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
    const select = async <T>(table: SenlinTable, where = '', params: unknown[] = []): Promise<T[]> => {
      const columns = SENLIN_COLUMNS[table].map((c) => `\`${c}\``).join(', ');
      try {
        const [rows] = await connection.query<RowDataPacket[]>(`SELECT ${columns} FROM \`${table}\` ${where}`, params);
        return rows.map((r) => ({ ...r }) as T);
      } catch (e) {
        throw new Error(`reading Senlin's '${table}' table failed (is this a Senlin 14 database?): ${(e as Error).message}`, { cause: e });
      }
    };
    const statuses = [...UNFINISHED_ACTION_STATUSES];
    const rows: SenlinRows = {
      profiles: await select('profile', 'ORDER BY created_at, id'),
      policies: await select('policy', 'ORDER BY created_at, id'),
      clusters: await select('cluster', 'ORDER BY created_at, id'),
      nodes: await select('node', 'ORDER BY cluster_id, `index`, id'),
      bindings: await select('cluster_policy', 'ORDER BY cluster_id, priority, id'),
      receivers: await select('receiver', 'ORDER BY created_at, id'),
      actions: await select('action', `WHERE status IN (${statuses.map(() => '?').join(', ')}) ORDER BY created_at, id`, statuses),
      services: await select('service', 'ORDER BY `binary`, host, id'),
      health: await select('health_registry', 'ORDER BY cluster_id, id'),
      now: '',
    };
    const [[clock]] = await connection.query<RowDataPacket[]>('SELECT UTC_TIMESTAMP() AS now');
    rows.now = String(clock.now);
    await connection.query('COMMIT');
    return rows;
  } finally {
    await connection.end().catch(() => undefined);
  }
}
