import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openPostgresTestDatabase } from '@trellis/testing/database';
import { WORK_ORDER_SCHEMA_VERSION, type WorkOrderMessage } from '@trellis/contracts';
import { claimOrder } from '../../apps/nova-worker/src/orders/order-lease';
import type { PurgeReport } from '../../cli/commands/purge.command';

const run = promisify(execFile);
const workOrderOf = (actionId: string): WorkOrderMessage => ({
  message_id: randomUUID(), schema_version: WORK_ORDER_SCHEMA_VERSION, action_id: actionId, correlation_id: `req-${actionId}`,
  sent_at: new Date().toISOString(), cluster_id: null, project: 'p', user: 'u', action: 'CLUSTER_SCALE_OUT', kind: 'create',
  create_groups: [], create_servers: [], delete_servers: [], delete_groups: [], build_timeout: 600, profile: {},
});
const ROOT = join(__dirname, '..', '..');
const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000);

/**
 * `trellis purge` (the compiled CLI, as an operator runs it, like Senlin's `senlin-manage
 * event-purge` / `action-purge`) on PostgreSQL: old rows go, recent and unfinished ones stay.
 */
describe('trellis purge (PostgreSQL)', () => {
  let db: Awaited<ReturnType<typeof openPostgresTestDatabase>>;
  const q = (sql: string, params: unknown[] = []) => db.dataSource.query(sql, params);

  beforeAll(async () => {
    db = await openPostgresTestDatabase({ poolSize: 2 });
  });
  afterAll(() => db?.close());

  const purge = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [join(ROOT, 'bin', 'trellis.js'), 'purge', ...args], {
      env: { PATH: process.env.PATH, DATABASE_URL: db.url, LOG_LEVEL: 'error' },
    });
    return JSON.parse(stdout) as PurgeReport;
  };
  const rowsOf = (report: PurgeReport) => Object.fromEntries(report.purged.map((p) => [p.kind, p.rows]));
  const ids = async (table: string) => ((await q(`SELECT id FROM ${table} ORDER BY id`)) as Array<{ id: string }>).map((r) => r.id);

  async function action(clusterId: string, status: string, ageDays: number): Promise<string> {
    const id = randomUUID();
    await q(
      `INSERT INTO actions (id, name, cluster_id, target, action, cause, timeout, status, project, "user", created_at, updated_at)
       VALUES ($1, 'a', $2, $2, 'CLUSTER_SCALE_OUT', 'RPC Request', 3600, $3, 'p', 'u', $4, $4)`,
      [id, clusterId, status, daysAgo(ageDays)],
    );
    await q(`INSERT INTO decisions (action_id, hook, input, output, plan, created_at) VALUES ($1, 'pre_op', '{}', '{}', '{}', $2)`, [id, daysAgo(ageDays)]);
    return id;
  }

  it('deletes old events and finished actions, keeps recent and unfinished ones, and counts before it deletes in a dry run', async () => {
    const cluster = randomUUID();
    await q(
      `INSERT INTO clusters (id, name, profile_id, project, "user", min_size, max_size, desired_capacity, timeout, status)
       VALUES ($1, 'c', $2, 'p', 'u', 0, -1, 0, 3600, 'ACTIVE')`,
      [cluster, randomUUID()],
    );
    const oldFinished = await action(cluster, 'SUCCEEDED', 45);
    // the nova-worker's record of its order goes with it
    await q(`INSERT INTO work_orders (action_id, payload, status, created_at, updated_at) VALUES ($1, '{}', 'DONE', $2, $2)`, [oldFinished, daysAgo(45)]);
    const oldRunning = await action(cluster, 'RUNNING', 40);
    const recent = await action(cluster, 'FAILED', 2);
    for (const age of [60, 31, 1]) {
      await q(`INSERT INTO events (id, "timestamp", otype, level, "user", project) VALUES ($1, $2, 'CLUSTER', 20, 'u', 'p')`, [randomUUID(), daysAgo(age)]);
    }
    for (const age of [8, 1]) {
      await q(`INSERT INTO processed_messages (consumer, message_id, processed_at) VALUES ('engine', $1, $2)`, [randomUUID(), daysAgo(age)]);
    }

    const dry = await purge('--events-older-than', '30d', '--actions-older-than', '30d', '--dry-run');
    expect(dry.dry_run).toBe(true);
    expect(rowsOf(dry)).toEqual({
      events: { events: 2 },
      actions: { actions: 1, action_steps: 0, decisions: 1, work_orders: 1, work_order_ops: 0 },
    });
    expect(await ids('events')).toHaveLength(3);

    const done = await purge('--events-older-than', '30d', '--actions-older-than', '30d');
    expect(rowsOf(done)).toEqual({
      events: { events: 2 },
      actions: { actions: 1, action_steps: 0, decisions: 1, work_orders: 1, work_order_ops: 0 },
    });
    expect(await ids('events')).toHaveLength(1);
    expect(await ids('actions')).toEqual([oldRunning, recent].sort());
    expect(await ids('actions')).not.toContain(oldFinished);
    expect(await q(`SELECT 1 FROM work_orders WHERE action_id = $1`, [oldFinished])).toEqual([]);
    // only the kinds asked for: the processed-message ids are untouched
    expect((await q(`SELECT count(*)::int AS n FROM processed_messages`))[0].n).toBe(2);

    // no age given: every kind at its configured retention (processed ids: 7 days)
    const defaults = await purge();
    expect(defaults.purged.map((p) => [p.kind, p.older_than])).toEqual([
      ['processed_messages', '7d'],
      ['events', '30d'],
      ['actions', '30d'],
      ['decisions', '30d'],
      ['services', '1d'],
    ]);
    expect(rowsOf(defaults).processed_messages).toEqual({ processed_messages: 1 });
    expect(await ids('actions')).toEqual([oldRunning, recent].sort());
    expect(((await q(`SELECT action_id FROM decisions ORDER BY action_id`)) as Array<{ action_id: string }>).map((r) => r.action_id)).toEqual(
      [oldRunning, recent].sort(),
    );
  });

  it("a worker's claim of an order whose action is being purged waits for the purge and then applies nothing", async () => {
    const gone = await action(randomUUID(), 'SUCCEEDED', 45);
    const order = workOrderOf(gone);
    const purging = db.dataSource.createQueryRunner();
    await purging.connect();
    try {
      // the purge's hold on the action (retention.ts takes it FOR UPDATE before deleting)
      await purging.startTransaction();
      await purging.query('SELECT id FROM actions WHERE id = $1 FOR UPDATE', [gone]);
      let settled = false;
      const claim = claimOrder(db.dataSource, order, { owner: 'worker-a', leaseSeconds: 60 }).finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 500));
      expect(settled).toBe(false);
      await purging.query('DELETE FROM decisions WHERE action_id = $1', [gone]);
      await purging.query('DELETE FROM actions WHERE id = $1', [gone]);
      await purging.commitTransaction();

      expect(await claim).toEqual({ state: 'gone' });
      expect(await q(`SELECT 1 FROM work_orders WHERE action_id = $1`, [gone])).toEqual([]);
    } finally {
      await purging.release();
    }
  });

  it("forgets dead services' registrations (Senlin's service clean), never a running one's", async () => {
    const service = async (secondsAgo: number) => {
      const id = randomUUID();
      await q(
        `INSERT INTO services (id, "binary", host, topic, disabled, created_at, updated_at)
         VALUES ($1, 'trellis-nova-worker', 'h', 't', false, clock_timestamp() - make_interval(secs => $2 + 60), clock_timestamp() - make_interval(secs => $2))`,
        [id, secondsAgo],
      );
      return id;
    };
    await q('DELETE FROM services');
    const renewing = await service(3);
    const killed = await service(600);
    const longGone = await service(3 * 86_400);

    expect(rowsOf(await purge('--services-older-than', '1d'))).toEqual({ services: { services: 1 } });
    expect(await ids('services')).toEqual([renewing, killed].sort());
    expect(await ids('services')).not.toContain(longGone);
    expect(rowsOf(await purge('--services-older-than', '0s'))).toEqual({ services: { services: 1 } });
    expect(await ids('services')).toEqual([renewing]);
  });

  it('refuses a misspelt flag with status 2 and deletes nothing', async () => {
    await q(`INSERT INTO events (id, "timestamp", otype, level, "user", project) VALUES ($1, $2, 'CLUSTER', 20, 'u', 'p')`, [randomUUID(), daysAgo(400)]);
    const before = (await ids('events')).length;
    const refused = await purge('--event-older-than', '1d').then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining("trellis purge: unknown option '--event-older-than'") });
    expect(await ids('events')).toHaveLength(before);
  });
});
