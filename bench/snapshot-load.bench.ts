import 'reflect-metadata';
import * as os from 'os';
import { Client } from 'pg';
import type { EntityManager, QueryRunner } from 'typeorm';
import { silentLogger } from '@trellis/common';
import { loadBindings, loadCloud, loadCluster, loadSnapshot } from '@trellis/decisions';
import { openDatabase, type ActionEntity } from '@trellis/persistence';
import { BenchContext, BenchResult, BenchTable, TargetCheck, defineBenchmark } from './harness/benchmark';
import { Summary, formatNs, inMicroseconds, summarise } from './harness/stats';
import { intParams } from './support/params';
import { freshDatabase } from './support/processes';
import { seedClusters } from './support/seed';

/**
 * Issue 7: what loading a decision's input costs. `loadSnapshot` (libs/decisions) reads the
 * cluster with its nodes, the bound policies and the Nova facts from PostgreSQL, as the
 * policy-engine does before every decision.
 */

const SIZES = [10, 100, 1_000, 10_000];

interface Iterations {
  samples: number;
  warmup: number;
}

const FULL: Record<number, Iterations> = {
  10: { samples: 2000, warmup: 200 },
  100: { samples: 2000, warmup: 200 },
  1_000: { samples: 500, warmup: 50 },
  10_000: { samples: 100, warmup: 10 },
};
const QUICK: Record<number, Iterations> = {
  10: { samples: 200, warmup: 20 },
  100: { samples: 200, warmup: 20 },
  1_000: { samples: 50, warmup: 5 },
  10_000: { samples: 10, warmup: 2 },
};

const TARGET = { nodes: 1_000, ns: 5e6 };

/** the zone facts and a zone-placement binding, so every query of the snapshot returns rows */
const ZONE_POLICY = { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 100 }] } };

async function seed(url: string, sizes: number[]): Promise<Map<number, { clusterId: string; project: string }>> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const project = 'bench-project';
    const profile = await c.query<{ id: string }>(
      `INSERT INTO profiles (id, name, type, spec, project, "user", created_at)
       VALUES (gen_random_uuid(), 'bench-profile', 'os.nova.server-1.0', $1::jsonb, $2, 'bench-user', now()) RETURNING id`,
      [JSON.stringify({ type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [] } }), project],
    );
    const policy = await c.query<{ id: string }>(
      `INSERT INTO policies (id, name, type, spec, project, "user", created_at)
       VALUES (gen_random_uuid(), 'bench-zones', 'senlin.policy.zone_placement-1.0', $1::jsonb, $2, 'bench-user', now()) RETURNING id`,
      [JSON.stringify(ZONE_POLICY), project],
    );
    await c.query(
      `INSERT INTO cloud_facts (kind, project, data, fetched_at) VALUES
         ('availability_zones', '', $1::jsonb, now()), ('hypervisors', '', $2::jsonb, now()), ('server_groups', $3, '{"items": []}'::jsonb, now())`,
      [
        JSON.stringify({ items: [1, 2].map((z) => ({ zoneName: `az${z}`, zoneState: { available: true } })) }),
        JSON.stringify({
          items: Array.from({ length: 20 }, (_, i) => ({
            id: String(i + 1),
            hypervisor_hostname: `az${(i % 2) + 1}-host-${Math.floor(i / 2) + 1}`,
            service: { host: `az${(i % 2) + 1}-host-${Math.floor(i / 2) + 1}` },
            state: 'up',
            status: 'enabled',
          })),
        }),
        project,
      ],
    );
    const out = new Map<number, { clusterId: string; project: string }>();
    for (const n of sizes) {
      const [clusterId] = await seedClusters(c, {
        profileId: profile.rows[0].id,
        clusters: 1,
        nodesPerCluster: n,
        zones: 2,
        hostsPerZone: 10,
        namePrefix: `snap-${n}`,
        policyIds: [policy.rows[0].id],
      });
      out.set(n, { clusterId, project });
    }
    // other clusters' nodes in the table, so the index has to pick ours out of many
    await seedClusters(c, { profileId: profile.rows[0].id, clusters: 50, nodesPerCluster: 200, zones: 2, hostsPerZone: 10, namePrefix: 'other' });
    await c.query('VACUUM ANALYZE');
    return out;
  } finally {
    await c.end();
  }
}

function actionFor(clusterId: string, project: string): ActionEntity {
  const now = new Date();
  return {
    id: '00000000-0000-4000-8000-000000000001',
    name: 'cluster_scale_out_bench',
    cluster_id: clusterId,
    target: clusterId,
    action: 'CLUSTER_SCALE_OUT',
    cause: 'RPC Request',
    owner: null,
    interval: -1,
    start_time: null,
    end_time: null,
    timeout: 3600,
    status: 'READY',
    status_reason: '',
    inputs: { count: 1 },
    outputs: {},
    data: {},
    depends_on: [],
    depended_by: [],
    project,
    user: 'bench-user',
    domain: null,
    created_at: now,
    updated_at: null,
    lease_owner: null,
    lease_expires_at: null,
    attempts: 0,
  } as ActionEntity;
}

async function time(it: Iterations, call: () => Promise<unknown>, tick: () => void): Promise<Summary> {
  for (let i = 0; i < it.warmup; i++) await call();
  const times = new Float64Array(it.samples);
  for (let i = 0; i < it.samples; i++) {
    const t0 = process.hrtime.bigint();
    await call();
    times[i] = Number(process.hrtime.bigint() - t0);
    tick();
  }
  return summarise(times);
}

interface SizeResult {
  nodes: number;
  snapshot: Summary;
  cluster: Summary;
  nodes_query: Summary;
  bindings: Summary;
  cloud: Summary;
  loaded_nodes: number;
}

async function run(ctx: BenchContext): Promise<BenchResult> {
  const p = intParams('snapshot-load', ctx.params, { max_nodes: 10_000 }, { max_nodes: { min: 10, max: 100_000 } });
  const sizes = SIZES.filter((n) => n <= p.max_nodes);
  const iterations = ctx.quick ? QUICK : FULL;
  const db = await freshDatabase('trellis_bench_snap');
  const loadBefore = os.loadavg().map((l) => Math.round(l * 100) / 100);
  let runner: QueryRunner | null = null;
  const database = await openDatabase({ url: db.url, dataDir: '', poolSize: 2, logging: false }, silentLogger).catch(async (e) => {
    await db.drop();
    throw e;
  });
  try {
    ctx.progress.start('seeding clusters of 10 … 10,000 nodes', 1);
    const clusters = await seed(db.url, sizes);
    ctx.progress.end();
    // one connection, as inside the engine's transaction
    runner = database.dataSource.createQueryRunner();
    await runner.connect();
    const m: EntityManager = runner.manager;
    const results: SizeResult[] = [];
    for (const n of sizes) {
      const { clusterId, project } = clusters.get(n)!;
      const action = actionFor(clusterId, project);
      const it = iterations[n];
      const probe = await loadSnapshot(m, action, 'pre_op', new Date());
      if (probe.cluster?.nodes.length !== n) throw new Error(`snapshot of the ${n}-node cluster holds ${probe.cluster?.nodes.length} nodes`);
      if (probe.policies.length !== 1 || probe.cloud.availability_zones.length !== 2) throw new Error('snapshot lacks the seeded binding or facts');
      ctx.progress.start(`${n.toLocaleString('en-US')} nodes`, it.samples * 5);
      const tick = () => ctx.progress.tick();
      const snapshot = await time(it, () => loadSnapshot(m, action, 'pre_op', new Date()), tick);
      const cluster = await time(it, () => loadCluster(m, clusterId), tick);
      const nodesQuery = await time(
        it,
        () =>
          m.query(
            `SELECT n.id, n.name, n.index, n.status, n.created_at, n.tainted, n.data, n.metadata, n.physical_id, p.created_at AS profile_created_at
               FROM nodes n JOIN profiles p ON p.id = n.profile_id WHERE n.cluster_id = $1 ORDER BY n.index`,
            [clusterId],
          ),
        tick,
      );
      const bindings = await time(it, () => loadBindings(m, clusterId), tick);
      const cloud = await time(it, () => loadCloud(m, project), tick);
      ctx.progress.end(`median ${formatNs(snapshot.median)}, p99 ${formatNs(snapshot.p99)}`);
      results.push({ nodes: n, snapshot, cluster, nodes_query: nodesQuery, bindings, cloud, loaded_nodes: probe.cluster.nodes.length });
    }
    const loadAfter = os.loadavg().map((l) => Math.round(l * 100) / 100);

    const table: BenchTable = {
      title: 'loadSnapshot(cluster + nodes, bindings, Nova facts) from PostgreSQL, one connection',
      columns: [
        { key: 'nodes', label: 'nodes' },
        { key: 'median', label: 'median' },
        { key: 'p99', label: 'p99' },
        { key: 'per_node', label: 'per node (median)' },
        { key: 'nodes_sql', label: 'nodes query alone' },
        { key: 'mapping', label: 'cluster load − queries' },
        { key: 'bindings', label: 'bindings' },
        { key: 'cloud', label: 'facts' },
        { key: 'samples', label: 'samples' },
      ],
      rows: results.map((r) => ({
        nodes: r.nodes.toLocaleString('en-US'),
        median: formatNs(r.snapshot.median),
        p99: formatNs(r.snapshot.p99),
        per_node: formatNs(r.snapshot.median / r.nodes),
        nodes_sql: formatNs(r.nodes_query.median),
        mapping: formatNs(Math.max(0, r.cluster.median - r.nodes_query.median)),
        bindings: formatNs(r.bindings.median),
        cloud: formatNs(r.cloud.median),
        samples: r.snapshot.samples,
      })),
      footnotes: [
        '"nodes query alone": the nodes SELECT through the same TypeORM manager (pg parses the rows, jsonb included)',
        '"cluster load − queries": loadCluster minus the nodes query: the cluster row query and mapping rows to the snapshot',
        `load average ${loadBefore.join(' ')} → ${loadAfter.join(' ')}`,
      ],
    };
    const at = results.find((r) => r.nodes === TARGET.nodes);
    const targets: TargetCheck[] = at
      ? [{ what: `loadSnapshot at ${TARGET.nodes.toLocaleString('en-US')} nodes (median)`, target: `< ${formatNs(TARGET.ns)}`, measured: formatNs(at.snapshot.median), met: at.snapshot.median < TARGET.ns }]
      : [];
    return {
      parameters: { sizes, iterations: Object.fromEntries(sizes.map((n) => [n, iterations[n]])), connection: 'one pooled connection held (QueryRunner), no transaction', other_nodes_in_table: 10_000 },
      figures: {
        load_average_before: loadBefore,
        load_average_after: loadAfter,
        sizes: results.map((r) => ({
          nodes: r.nodes,
          snapshot_us: inMicroseconds(r.snapshot),
          load_cluster_us: inMicroseconds(r.cluster),
          nodes_query_us: inMicroseconds(r.nodes_query),
          bindings_us: inMicroseconds(r.bindings),
          cloud_us: inMicroseconds(r.cloud),
        })),
      },
      tables: [table],
      targets,
      notes: ['Figures on a shared, busy machine: see the load averages; PostgreSQL runs on the same 2 cores.'],
    };
  } finally {
    await runner?.release().catch(() => undefined);
    await database.close();
    await db.drop();
  }
}

export const benchmark = defineBenchmark({
  name: 'snapshot-load',
  description: 'loadSnapshot (cluster, nodes, bindings, facts) from PostgreSQL at 10 … 10,000 nodes',
  run,
});
