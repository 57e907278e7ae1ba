import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import { renderReport } from './import-report';
import { importSenlin, type ImportRun } from './import-senlin';
import type { ServerReader } from './nova-lookup';
import type { SenlinRows } from './senlin-rows';

/**
 * The importer from Senlin's rows (captured from the real Senlin 14 run) to Trellis's database
 * (PGlite), and the report an operator reads: dry run, import, and the run after that.
 */
const FIXTURE: SenlinRows = JSON.parse(readFileSync(join(__dirname, '..', '..', 'test', 'fixtures', 'senlin', 'rows.json'), 'utf8'));
const CLUSTER = FIXTURE.clusters[0];
const SOURCE = 'mysql://senlin:***@127.0.0.1:3306/senlin';

/** Nova as a read-only port: records what it was asked, answers from the capture */
function fakeNova(gone: string[] = []): ServerReader & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    getServer: async (id) => {
      asked.push(id);
      if (gone.includes(id)) return null;
      const i = FIXTURE.nodes.findIndex((n) => n.physical_id === id);
      return { id, name: 's', status: 'ACTIVE', availabilityZone: i === 1 ? 'az1' : 'az2', host: `fake-host-${i + 1}`, hypervisorHostname: null, hostId: null, metadata: {}, fault: null };
    },
  };
}

describe('importSenlin on PGlite', () => {
  let db: Database;
  const run = (rows: SenlinRows, nova: ServerReader, options: Partial<ImportRun> = {}) =>
    importSenlin(rows, { projects: [], clusters: [], force: false, dryRun: false, ...options }, nova, db.dataSource);
  const count = async (table: string) => Number((await db.dataSource.query(`SELECT count(*) AS n FROM ${table}`))[0].n);

  beforeEach(async () => {
    db = await openTestDatabase();
  });
  afterEach(() => db.close());

  it('prints what a dry run would import, writes nothing, and reads every node server from Nova once', async () => {
    const rows = structuredClone(FIXTURE);
    rows.services.push({ id: 'e1', host: 'os-controller', binary: 'senlin-engine', topic: 'senlin-engine', disabled: 0, created_at: rows.now, updated_at: rows.now });
    const nova = fakeNova();
    const report = await run(rows, nova, { dryRun: true });
    expect(nova.asked.sort()).toEqual(FIXTURE.nodes.map((n) => n.physical_id).sort());
    expect(await count('clusters')).toBe(0);
    const text = renderReport(report, SOURCE);
    const [node] = FIXTURE.nodes;
    const affinity = FIXTURE.bindings.find((b) => b.data?.includes('AffinityPolicy'))!;
    const group = JSON.parse(affinity.data!).AffinityPolicy.data.servergroup_id;
    for (const line of [
      `Senlin database ${SOURCE}, read at `,
      '  service senlin-engine on os-controller (e1): RUNNING, last report 0 s ago',
      'DRY RUN: nothing is written to Trellis or Senlin; Nova is only read.',
      'A senlin-engine is running: the import itself is refused until every senlin-engine is stopped.',
      `cluster ${CLUSTER.name} (${CLUSTER.id}) project ${CLUSTER.project}: would be imported`,
      `  node ${node.name} (${node.id}) index ${node.index} ACTIVE server ${node.physical_id} in az2 on fake-host-1`,
      `  binding ${affinity.id} of policy ${affinity.policy_id} priority 300 data AffinityPolicy 1.0 {"inherited_group":false,"servergroup_id":"${group}"}`,
      `  receiver ${FIXTURE.receivers[0].name} (${FIXTURE.receivers[0].id}) CLUSTER_SCALE_IN ${JSON.parse(FIXTURE.receivers[0].channel!).alarm_url}`,
      'Would import 1 cluster(s), 3 node(s), 1 profile(s), 3 polic(ies), 3 binding(s), 1 receiver(s).',
    ]) {
      expect(text).toContain(line);
    }
  });

  it("is refused while Senlin's engine runs, imports once it is stopped, and then finds nothing new", async () => {
    const alive = structuredClone(FIXTURE);
    alive.services.push({ id: 'e1', host: 'os-controller', binary: 'senlin-engine', topic: 'senlin-engine', disabled: 0, created_at: alive.now, updated_at: alive.now });
    const refused = await run(alive, fakeNova());
    expect(refused.outcome).toBe('refused');
    expect(renderReport(refused, SOURCE)).toMatch(/\nREFUSED: Senlin's engine is running \(senlin-engine e1 on os-controller, last report 0 s ago\): stop every senlin-engine/);
    expect(await count('clusters')).toBe(0);

    const first = await run(FIXTURE, fakeNova());
    expect(first.outcome).toBe('imported');
    expect(renderReport(first, SOURCE)).toContain('Imported 1 cluster(s), 3 node(s), 1 profile(s), 3 polic(ies), 3 binding(s), 1 receiver(s).\n');
    expect(first.units.find((u) => u.id === CLUSTER.id)!.state).toBe('imported');
    expect(await count('nodes')).toBe(3);
    const [row] = await db.dataSource.query(`SELECT next_index, desired_capacity, metadata FROM clusters WHERE id = $1`, [CLUSTER.id]);
    expect(row).toEqual({ next_index: CLUSTER.next_index, desired_capacity: CLUSTER.desired_capacity, metadata: JSON.parse(CLUSTER.meta_data!) });

    const second = await run(FIXTURE, fakeNova());
    expect(second.outcome).toBe('nothing new');
    expect(renderReport(second, SOURCE)).toMatch(/: already in Trellis: nothing to do\n[\s\S]*Nothing new to import: everything selected is already in Trellis\.\n$/);
  });

  it('imports a node whose server is gone as ERROR and says so; the run is still complete', async () => {
    const [node] = FIXTURE.nodes;
    const report = await run(FIXTURE, fakeNova([node.physical_id!]));
    expect(report.outcome).toBe('imported');
    expect(renderReport(report, SOURCE)).toContain(`  note: node ${node.name} (${node.id}): its server ${node.physical_id} is gone from Nova; imported as ERROR`);
    const [row] = await db.dataSource.query(`SELECT status, physical_id FROM nodes WHERE id = $1`, [node.id]);
    expect(row).toEqual({ status: 'ERROR', physical_id: node.physical_id });
  });
});
