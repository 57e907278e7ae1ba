import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection, type Connection } from 'mysql2/promise';
import { openPostgresTestDatabase } from '@trellis/testing/database';
import { importSenlin, type ImportRun } from '../../cli/import-senlin/import-senlin';
import type { ServerReader } from '../../cli/import-senlin/nova-lookup';
import { readSenlin } from '../../cli/import-senlin/senlin-source';
import { SENLIN_COLUMNS, type SenlinRows, type SenlinTable } from '../../cli/import-senlin/senlin-rows';

/**
 * `trellis import-senlin` between real databases: a throwaway MariaDB database made with Senlin
 * 14's own schema (test/fixtures/senlin/schema.sql, from `senlin-manage db_sync`) and seeded with
 * the rows captured from the real Senlin run (rows.json), and a throwaway Trellis PostgreSQL
 * database. Nova is a fake that knows the captured servers (the real one is in test:openstack).
 *
 * MYSQL_ADMIN_URL (default mysql://root@127.0.0.1:3306) may create databases and users; DATABASE_URL
 * is the PostgreSQL of the other integration tests.
 */
const FIXTURES = join(__dirname, '..', 'fixtures', 'senlin');
const ROWS: SenlinRows = JSON.parse(readFileSync(join(FIXTURES, 'rows.json'), 'utf8'));
const ADMIN_URL = new URL(process.env.MYSQL_ADMIN_URL ?? 'mysql://root@127.0.0.1:3306');
const CLUSTER = ROWS.clusters[0];

const TABLE_OF: Record<Exclude<keyof SenlinRows, 'now'>, SenlinTable> = {
  profiles: 'profile',
  policies: 'policy',
  clusters: 'cluster',
  nodes: 'node',
  bindings: 'cluster_policy',
  receivers: 'receiver',
  actions: 'action',
  services: 'service',
  health: 'health_registry',
};

/** Nova as the captured run saw it: every server there, two zones */
const nova: ServerReader = {
  getServer: async (id) => {
    const i = ROWS.nodes.findIndex((n) => n.physical_id === id);
    if (i < 0) return null;
    return { id, name: 'server', status: 'ACTIVE', availabilityZone: i === 0 ? 'az2' : 'az1', host: `fake-host-${i + 1}`, hypervisorHostname: null, hostId: null, metadata: {}, fault: null };
  },
};

describe('trellis import-senlin (MariaDB with Senlin 14 schema → PostgreSQL)', () => {
  const name = `senlin_import_it_${randomBytes(5).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  let admin: Connection;
  let senlin: Connection;
  let from: URL;
  let trellis: Awaited<ReturnType<typeof openPostgresTestDatabase>>;
  const q = (sql: string, params: unknown[] = []) => trellis.dataSource.query(sql, params);
  const run = async (options: Partial<ImportRun> = {}) =>
    importSenlin(await readSenlin(from), { projects: [], clusters: [], force: false, dryRun: false, ...options }, nova, trellis.dataSource);

  beforeAll(async () => {
    admin = await createConnection({
      host: ADMIN_URL.hostname,
      port: Number(ADMIN_URL.port || 3306),
      user: decodeURIComponent(ADMIN_URL.username || 'root'),
      password: decodeURIComponent(ADMIN_URL.password),
      multipleStatements: true,
    }).catch((e) => {
      throw new Error(`MariaDB not reachable at MYSQL_ADMIN_URL=${ADMIN_URL.protocol}//${ADMIN_URL.host}: ${(e as Error).message}`);
    });
    await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
    await admin.query(`CREATE USER '${name}'@'127.0.0.1' IDENTIFIED BY '${password}'`);
    await admin.query(`GRANT ALL PRIVILEGES ON \`${name}\`.* TO '${name}'@'127.0.0.1'`);
    from = new URL(`mysql://${name}:${password}@${ADMIN_URL.hostname}:${ADMIN_URL.port || 3306}/${name}`);
    senlin = await createConnection({ host: from.hostname, port: Number(from.port), user: name, password, database: name, multipleStatements: true, dateStrings: true });
    await senlin.query(readFileSync(join(FIXTURES, 'schema.sql'), 'utf8'));
    for (const [key, table] of Object.entries(TABLE_OF) as Array<[keyof typeof TABLE_OF, SenlinTable]>) {
      for (const row of ROWS[key] as unknown as Array<Record<string, unknown>>) await insert(table, row);
    }
    trellis = await openPostgresTestDatabase({ poolSize: 4 });
  }, 120_000);

  afterAll(async () => {
    await senlin?.end();
    await admin?.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin?.query(`DROP USER IF EXISTS '${name}'@'127.0.0.1'`);
    await admin?.end();
    await trellis?.close();
  });

  const insert = (table: SenlinTable, row: Record<string, unknown>) => {
    const columns = SENLIN_COLUMNS[table].filter((c) => c in row);
    return senlin.query(`INSERT INTO \`${table}\` (${columns.map((c) => `\`${c}\``).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, columns.map((c) => row[c]));
  };
  const count = async (table: string) => Number((await q(`SELECT count(*) AS n FROM ${table}`))[0].n);

  it("reads back exactly the captured rows from Senlin's own schema", async () => {
    const read = await readSenlin(from);
    for (const key of Object.keys(TABLE_OF) as Array<keyof typeof TABLE_OF>) expect({ [key]: read[key] }).toEqual({ [key]: ROWS[key] });
  });

  it('a dry run writes nothing; the import writes every row in Trellis; a second run finds nothing new', async () => {
    const dry = await run({ dryRun: true });
    expect(dry.outcome).toBe('would import');
    expect(await count('clusters')).toBe(0);
    expect(await count('profiles')).toBe(0);

    const done = await run();
    expect(done.outcome).toBe('imported');
    expect(done.totals).toEqual({ ...dry.totals });
    expect(done.totals).toMatchObject({ clusters: 1, nodes: ROWS.nodes.length, bindings: ROWS.bindings.length, receivers: ROWS.receivers.length });

    const [cluster] = await q(`SELECT * FROM clusters WHERE id = $1`, [CLUSTER.id]);
    expect(cluster).toMatchObject({ name: CLUSTER.name, project: CLUSTER.project, user: CLUSTER.user, next_index: CLUSTER.next_index, status: 'ACTIVE' });
    expect(new Date(cluster.created_at).toISOString()).toBe(`${CLUSTER.created_at!.replace(' ', 'T')}.000Z`);
    const nodes = await q(`SELECT id, physical_id, "index", data FROM nodes WHERE cluster_id = $1 ORDER BY "index"`, [CLUSTER.id]);
    expect(nodes.map((n: { physical_id: string }) => n.physical_id).sort()).toEqual(ROWS.nodes.map((n) => n.physical_id).sort());
    const first = nodes.find((n: { physical_id: string }) => n.physical_id === ROWS.nodes[0].physical_id);
    expect(first.data.placement).toMatchObject({ zone: 'az2', host: 'fake-host-1' });
    const bindings = await q(`SELECT policy_id, data FROM cluster_policies WHERE cluster_id = $1`, [CLUSTER.id]);
    for (const b of ROWS.bindings) {
      expect(bindings.find((x: { policy_id: string }) => x.policy_id === b.policy_id).data).toEqual(JSON.parse(b.data ?? 'null') ?? {});
    }
    const [receiver] = await q(`SELECT id, channel, actor FROM receivers`);
    expect(receiver).toEqual({ id: ROWS.receivers[0].id, channel: JSON.parse(ROWS.receivers[0].channel!), actor: {} });

    const again = await run();
    expect(again.outcome).toBe('nothing new');
    expect(again.totals).toEqual({ profiles: 0, policies: 0, clusters: 0, nodes: 0, bindings: 0, receivers: 0 });
  });

  it("keeps a cluster with a RUNNING Senlin action out unless --force, and --force only once Senlin's engine is gone", async () => {
    const id = '6c1a1c1e-0000-4000-8000-000000000001';
    const nodeId = '6c1a1c1e-0000-4000-8000-000000000002';
    await insert('cluster', { ...CLUSTER, id, name: 'second', status: 'RESIZING', next_index: 2 });
    await insert('node', { ...ROWS.nodes[0], id: nodeId, cluster_id: id, name: 'second-node' });
    await insert('action', { id: '6c1a1c1e-0000-4000-8000-000000000003', name: 'scale', cluster_id: id, target: id, action: 'CLUSTER_SCALE_OUT', status: 'RUNNING', owner: 'e1', created_at: ROWS.now });
    await senlin.query("INSERT INTO service (id, host, `binary`, topic, disabled, created_at, updated_at) VALUES ('e1', 'os-controller', 'senlin-engine', 'senlin-engine', 0, UTC_TIMESTAMP(), UTC_TIMESTAMP())");

    const plain = await run({ clusters: [id] });
    expect(plain.outcome).toBe('refused');
    expect(plain.refused).toMatch(/Senlin's engine is running \(senlin-engine e1 on os-controller/);
    const dry = await run({ clusters: [id], dryRun: true });
    expect(dry.units[0]).toMatchObject({ state: 'blocked', unfinished_actions: [expect.objectContaining({ status: 'RUNNING' })] });

    await senlin.query("DELETE FROM service WHERE id = 'e1'");
    const withoutForce = await run({ clusters: [id] });
    expect(withoutForce.outcome).toBe('partial');
    expect(withoutForce.units[0].blockers[0]).toMatch(/import this cluster with --force/);
    expect(await count(`clusters WHERE id = '${id}'`)).toBe(0);

    const forced = await run({ clusters: [id], force: true });
    expect(forced.outcome).toBe('imported');
    const [row] = await q(`SELECT status, status_reason FROM clusters WHERE id = $1`, [id]);
    expect(row).toEqual({ status: 'WARNING', status_reason: expect.stringMatching(/^Imported from Senlin while RESIZING/) });
    expect(await count('actions')).toBe(0);
  });

  it('writes each cluster in one transaction: a cluster Trellis cannot store leaves no row behind', async () => {
    const id = '6c1a1c1e-0000-4000-8000-000000000010';
    const profile = '6c1a1c1e-0000-4000-8000-000000000011';
    await insert('profile', { ...ROWS.profiles[0], id: profile, name: 'third-profile' });
    // Senlin's status column is 255 characters, Trellis's 32: the cluster row fails after the profile is written
    await insert('cluster', { ...CLUSTER, id, name: 'third', profile_id: profile, status: 'A'.repeat(40) });
    await insert('node', { ...ROWS.nodes[1], id: '6c1a1c1e-0000-4000-8000-000000000012', cluster_id: id, profile_id: profile });
    const report = await run({ clusters: [id] });
    expect(report.outcome).toBe('failed');
    expect(report.units[0]).toMatchObject({ state: 'failed', error: expect.stringMatching(/too long|value too long/) });
    expect(await count(`profiles WHERE id = '${profile}'`)).toBe(0);
    expect(await count(`nodes WHERE cluster_id = '${id}'`)).toBe(0);
  });
});
