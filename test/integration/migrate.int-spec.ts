import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { loadConfig } from '@trellis/common';
import { ALL_MIGRATIONS } from '@trellis/persistence/migrations';
import { PendingMigrationsError, openDatabase } from '@trellis/persistence';
import type { MigrateReport } from '../../cli/commands/migrate.command';
import { freshDatabase } from '../support/processes';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const ALL = ALL_MIGRATIONS.map((m) => m.name);

/**
 * `trellis migrate` (the compiled CLI, as a deployment's job runs it before a rollout; Senlin's
 * `senlin-manage db_sync`) and TRELLIS_MIGRATE_ON_START=false (README "Upgrading a running
 * deployment"), on PostgreSQL.
 */
describe('trellis migrate and TRELLIS_MIGRATE_ON_START (PostgreSQL)', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;

  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(() => db?.drop());

  async function migrate(...args: string[]): Promise<{ code: number; report: MigrateReport; stderr: string }> {
    try {
      const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin', 'trellis.js'), 'migrate', ...args], {
        env: { PATH: process.env.PATH, DATABASE_URL: db.url, LOG_LEVEL: 'error' },
      });
      return { code: 0, report: JSON.parse(stdout) as MigrateReport, stderr };
    } catch (e) {
      const failed = e as { code: number; stdout: string; stderr: string };
      return { code: failed.code, report: JSON.parse(failed.stdout) as MigrateReport, stderr: failed.stderr };
    }
  }

  const settings = (migrateOnStart: boolean) => ({ ...loadConfig({ DATABASE_URL: db.url, TRELLIS_DB_POOL_SIZE: '2' }).database, migrateOnStart });

  it('reports, applies once when two run at once, and lets services start without migrating', async () => {
    // an empty database: everything pending, and a service told not to migrate refuses to start
    expect(await migrate('--check')).toMatchObject({ code: 1, report: { check: true, applied_now: [], pending: ALL, unknown: [], latest: null } });
    const refused = openDatabase(settings(false));
    await expect(refused).rejects.toThrow(PendingMigrationsError);
    await expect(refused).rejects.toThrow(
      `the database lacks ${ALL.length} migrations this release needs (${ALL.join(', ')}), and TRELLIS_MIGRATE_ON_START is false: run \`trellis migrate\` with this release first`,
    );

    // two at once (two deployment jobs): the advisory lock lets one apply them, the other finds none
    const [a, b] = await Promise.all([migrate(), migrate()]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect([a.report.applied_now, b.report.applied_now].sort((x, y) => y.length - x.length)).toEqual([ALL, []]);
    for (const r of [a, b]) expect(r.report).toMatchObject({ pending: [], unknown: [], latest: ALL[ALL.length - 1] });

    // a newer release's migration in the table (a rollback): reported, not pending, and services start
    const client = new Client({ connectionString: db.url });
    await client.connect();
    await client.query(`INSERT INTO migrations ("timestamp", name) VALUES (1899999999999, 'NextRelease1899999999999')`);
    await client.end();
    expect(await migrate('--check')).toMatchObject({
      code: 0,
      report: { applied_now: [], pending: [], unknown: ['NextRelease1899999999999'], latest: ALL[ALL.length - 1] },
    });
    const opened = await openDatabase(settings(false));
    expect(await opened.dataSource.query('SELECT count(*)::int AS n FROM migrations')).toEqual([{ n: ALL.length + 1 }]);
    await opened.close();
  }, 120_000);

  it('says what to set when DATABASE_URL is missing', async () => {
    const failed = await run(process.execPath, [join(ROOT, 'bin', 'trellis.js'), 'migrate'], { env: { PATH: process.env.PATH } }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringMatching(/^trellis migrate: set DATABASE_URL/) });
  });
});
