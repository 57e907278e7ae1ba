import { ALL_MIGRATIONS } from '@trellis/persistence/migrations';
import { Client } from 'pg';
import { ApiClient } from '../support/api-client';
import { act, adminApi, createPolicy, demoApi, zoneSpec } from '../support/placement.scenario';
import { freshDatabase, freshVhost } from '../support/processes';
import { createProfileAndCluster, nodesOf } from '../support/scale-out.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * Rolling upgrades (README "Upgrading a running deployment"; docs/RELIABILITY.md §14), on
 * PostgreSQL with named prepared statements and RabbitMQ, as deployed. While an upgrade rolls, the
 * first process of the newer release migrates the database under the processes of this one; a
 * rollback starts this release again on the newer schema. Here "the next release" is what its
 * migrations may do (test/architecture/migrations-additive.spec.ts): a nullable column and a NOT
 * NULL column with a default on every table, a new table, a new index, and its row in
 * `migrations`, applied by another connection while this release runs and after its statements are
 * prepared. Every kind of action, list and show must go on working, and this release must start
 * again on that schema.
 */

const NEXT_MIGRATION = 'NextRelease1899999999999';

/** What the next release's migration may do, applied as its first replica would: another session, live. */
async function migrateToNextRelease(url: string): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name NOT IN ('migrations', 'typeorm_metadata')
        ORDER BY table_name`,
    );
    const tables = rows.map((r) => r.table_name);
    await client.query('BEGIN');
    for (const table of tables) {
      await client.query(`ALTER TABLE "${table}" ADD COLUMN "next_release_note" text, ADD COLUMN "next_release_rev" integer NOT NULL DEFAULT 7`);
    }
    await client.query(`CREATE TABLE "next_release_things" ("id" uuid PRIMARY KEY, "created_at" timestamptz NOT NULL DEFAULT now())`);
    await client.query(`CREATE INDEX "IDX_next_release_nodes" ON "nodes" ("cluster_id", "next_release_rev")`);
    await client.query(`INSERT INTO "migrations" ("timestamp", "name") VALUES (1899999999999, $1)`, [NEXT_MIGRATION]);
    await client.query('COMMIT');
    return tables;
  } finally {
    await client.end();
  }
}

async function migrationNames(url: string): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ name: string }>('SELECT name FROM migrations ORDER BY id')).rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

describe("a rolling upgrade: this release on the next release's schema (RabbitMQ + PostgreSQL)", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let vhost: ReturnType<typeof freshVhost>;
  let t: TestTrellis | null = null;
  const start = () => startTestTrellis({ env: { DATABASE_URL: db.url, AMQP_URL: vhost.url } });

  beforeAll(async () => {
    db = await freshDatabase();
    vhost = freshVhost();
  });
  afterAll(async () => {
    await t?.close();
    await db?.drop();
    vhost?.drop();
  });

  /** scale out and in, a node check, a policy attached, and the lists and shows a user reads */
  async function everyKindOfWork(api: ApiClient, cluster: string, clusterId: string, expectNodes: number): Promise<void> {
    expect(await act(api, cluster, { scale_out: { count: 3 } })).toMatchObject({ status: 'SUCCEEDED' });
    const scaleIn = await act(api, cluster, { scale_in: { count: 1 } });
    expect(scaleIn).toMatchObject({ status: 'SUCCEEDED' });
    const nodes = await nodesOf(api, clusterId);
    expect(nodes).toHaveLength(expectNodes);
    expect(nodes.every((n) => n.status === 'ACTIVE')).toBe(true);
    const check = await api.post(`/v1/nodes/${nodes[0].id}/actions`, { check: {} });
    expect(check.status).toBe(202);
    expect(await api.waitForAction(ApiClient.actionIdOf(check))).toMatchObject({ status: 'SUCCEEDED' });
    for (const path of [
      `/v1/clusters/${clusterId}`,
      '/v1/clusters',
      `/v1/nodes/${nodes[0].id}`,
      '/v1/actions',
      `/v1/actions/${scaleIn.id}`,
      `/v1/actions/${scaleIn.id}/decision`,
      '/v1/events',
      '/v1/policies',
      `/v1/clusters/${clusterId}/policies`,
      '/v1/profiles',
    ]) {
      const res = await api.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    // the services table gained columns too (an admin's list)
    const services = await (await adminApi(t!.trellis)).get('/v1/services');
    expect(services.status).toBe(200);
    expect(services.body.services.length).toBeGreaterThan(0);
    expect(Object.keys(services.body.services[0])).not.toContain('next_release_note');
  }

  it('goes on working while the next release migrates, and starts again on its schema', async () => {
    t = await start();
    let api = await demoApi(t.trellis);
    const { clusterId } = await createProfileAndCluster(api, 'rolling', 2);
    await createPolicy(api, 'rolling-zones', zoneSpec);
    expect(await act(api, 'rolling', { policy_attach: { policy_id: 'rolling-zones' } })).toMatchObject({ status: 'SUCCEEDED' });
    // this release's statements prepared on its connections (2 + 3 - 1)
    await everyKindOfWork(api, 'rolling', clusterId, 4);

    const altered = await migrateToNextRelease(db.url);
    expect(altered).toEqual(expect.arrayContaining(['actions', 'clusters', 'nodes', 'outbox', 'processed_messages', 'work_orders', 'decisions', 'events']));

    // the same processes, the same prepared statements, the newer schema (4 + 3 - 1)
    await everyKindOfWork(api, 'rolling', clusterId, 6);

    // a rollback, or a replica of this release restarting mid-upgrade: it starts on the newer schema,
    // leaves the migration it does not know alone, and works
    await t.close();
    t = null;
    t = await start();
    api = await demoApi(t.trellis);
    await everyKindOfWork(api, 'rolling', clusterId, 8);
    expect((await migrationNames(db.url)).slice(-2)).toEqual([ALL_MIGRATIONS[ALL_MIGRATIONS.length - 1].name, NEXT_MIGRATION]);
  }, 240_000);
});
