import { Client } from 'pg';
import { baseDatabaseUrl } from './processes';

/**
 * Database counters read from another database, so reading them adds no transaction to the one
 * measured. PostgreSQL 15 publishes a backend's counters when it goes idle (at most once a second,
 * at the latest 10 s later) and when it exits: read after the services stopped, or after a quiet
 * pause, to see them all.
 */
export class PgCounters {
  private constructor(private readonly client: Client) {}

  static async open(): Promise<PgCounters> {
    const client = new Client({ connectionString: baseDatabaseUrl() });
    await client.connect();
    return new PgCounters(client);
  }

  /** committed and rolled-back transactions of one database (read-only ones included) */
  async transactions(database: string): Promise<{ commits: number; rollbacks: number }> {
    const { rows } = await this.client.query<{ c: string; r: string }>(
      `SELECT xact_commit::text AS c, xact_rollback::text AS r FROM pg_stat_database WHERE datname = $1`,
      [database],
    );
    if (!rows.length) throw new Error(`no statistics for database ${database}`);
    return { commits: Number(rows[0].c), rollbacks: Number(rows[0].r) };
  }

  /**
   * The next transaction id of the whole server: its growth counts transactions that wrote
   * something, in every database (other users of the server included).
   */
  async nextXid(): Promise<number> {
    const { rows } = await this.client.query<{ x: string }>(`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS x`);
    return Number(rows[0].x);
  }

  /** process ids of the server's backends connected to `database` right now */
  async backendPids(database: string): Promise<number[]> {
    const { rows } = await this.client.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1`, [database]);
    return rows.map((r) => r.pid);
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
