import 'reflect-metadata';
import * as os from 'os';
import { Client } from 'pg';
import type { EntityManager, QueryRunner } from 'typeorm';
import { silentLogger } from '@trellis/common';
import { loadBindings, loadCloud, loadCluster, loadSnapshot } from '@trellis/decisions';
import { openDatabase, type ActionEntity } from '@trellis/persistence';
import { BenchContext, BenchResult, BenchTable, TargetCheck, defineBenchmark } from './harness/benchmark';
import { sampleCalls } from './harness/sampler';
import { Summary, formatNs, inMicroseconds, percentile, summarise } from './harness/stats';
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

/** Issue 7 (1,000 nodes) and issue 15 (10,000 nodes): the median of loadSnapshot for a scale-out. */
const TARGETS = [
  { nodes: 1_000, ns: 5e6 },
  { nodes: 10_000, ns: 20e6 },
];

/** the deletion policy's criteria: each is bound to every cluster, disabled, and enabled in turn for its scale-ins */
const CRITERIA = ['OLDEST_FIRST', 'YOUNGEST_FIRST', 'OLDEST_PROFILE_FIRST', 'RANDOM'] as const;
type Criterion = (typeof CRITERIA)[number];

/** the zone facts and a zone-placement binding, so every query of the snapshot returns rows */
const ZONE_POLICY = { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 100 }] } };

interface Seeded {
  clusters: Map<number, { clusterId: string; project: string }>;
  /** the deletion policy of each criterion (bound to every cluster, disabled) */
  deletion: Record<Criterion, string>;
}

async function seed(url: string, sizes: number[]): Promise<Seeded> {
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
    const deletion = {} as Record<Criterion, string>;
    for (const criteria of CRITERIA) {
      const row = await c.query<{ id: string }>(
        `INSERT INTO policies (id, name, type, spec, project, "user", created_at)
         VALUES (gen_random_uuid(), $1, 'senlin.policy.deletion-1.1', $2::jsonb, $3, 'bench-user', now()) RETURNING id`,
        [`bench-deletion-${criteria.toLowerCase()}`, JSON.stringify({ type: 'senlin.policy.deletion', version: '1.1', properties: { criteria } }), project],
      );
      deletion[criteria] = row.rows[0].id;
    }
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
    // creation times spread over time, as successive scale actions leave them (victims are picked by age)
    await c.query(
      `UPDATE nodes SET created_at = timestamptz '2025-01-01 00:00:00+00' + index * interval '37 seconds' + random() * interval '2 hours'
        WHERE cluster_id = ANY($1::uuid[])`,
      [[...out.values()].map((v) => v.clusterId)],
    );
    // a third of the nodes still on an older profile (an update half done), for OLDEST_PROFILE_FIRST
    const older = await c.query<{ id: string }>(
      `INSERT INTO profiles (id, name, type, spec, project, "user", created_at)
       SELECT gen_random_uuid(), 'bench-profile-old', type, spec, project, "user", created_at - interval '30 days' FROM profiles WHERE id = $1 RETURNING id`,
      [profile.rows[0].id],
    );
    await c.query(`UPDATE nodes SET profile_id = $2 WHERE cluster_id = ANY($1::uuid[]) AND index % 3 = 0`, [
      [...out.values()].map((v) => v.clusterId),
      older.rows[0].id,
    ]);
    await c.query(
      `INSERT INTO cluster_policies (id, cluster_id, policy_id, enabled, priority, data, attached_at)
       SELECT gen_random_uuid(), cl, d, false, 500, '{}'::jsonb, now() FROM unnest($1::uuid[]) cl, unnest($2::uuid[]) d`,
      [[...out.values()].map((v) => v.clusterId), Object.values(deletion)],
    );
    // other clusters' nodes in the table, so the index has to pick ours out of many
    await seedClusters(c, { profileId: profile.rows[0].id, clusters: 50, nodesPerCluster: 200, zones: 2, hostsPerZone: 10, namePrefix: 'other' });
    await c.query('VACUUM ANALYZE');
    return { clusters: out, deletion };
  } finally {
    await c.end();
  }
}

function actionFor(clusterId: string, project: string, kind: 'CLUSTER_SCALE_OUT' | 'CLUSTER_SCALE_IN' = 'CLUSTER_SCALE_OUT', count = 1): ActionEntity {
  const now = new Date();
  return {
    id: '00000000-0000-4000-8000-000000000001',
    name: 'cluster_scale_bench',
    cluster_id: clusterId,
    target: clusterId,
    action: kind,
    cause: 'RPC Request',
    owner: null,
    interval: -1,
    start_time: null,
    end_time: null,
    timeout: 3600,
    status: 'READY',
    status_reason: '',
    inputs: { count },
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

/** a summary with the 95th percentile too (issue 15 reports median, p95 and p99) */
type Timed = Summary & { p95: number };

async function time(it: Iterations, call: () => Promise<unknown>, tick: () => void): Promise<Timed> {
  const times = await sampleCalls({ ...it, call, tick });
  return { ...summarise(times), p95: percentile(Float64Array.from(times).sort(), 0.95) };
}

interface CriterionResult {
  criteria: Criterion;
  by_1: Timed;
  by_10pct: Timed;
  listed_by_1: number;
  listed_by_10pct: number;
}

interface SizeResult {
  nodes: number;
  /** a deletion policy of each criterion enabled in turn */
  by_criteria: CriterionResult[];
  /** scale-out: summarised (counts per zone, no node listed) */
  snapshot: Timed;
  /** scale-in by 1 and by 10 %: summarised, the candidates listed */
  scale_in_1: Timed;
  scale_in_10pct: Timed;
  listed_in_10pct: number;
  /** the same scale-out with every node listed (the input before issue 15) */
  whole: Summary;
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
    const { clusters, deletion } = await seed(db.url, sizes);
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
      const inBy1 = actionFor(clusterId, project, 'CLUSTER_SCALE_IN', 1);
      const inBy10 = actionFor(clusterId, project, 'CLUSTER_SCALE_IN', Math.max(1, Math.trunc(n / 10)));
      const probe = await loadSnapshot(m, action, 'pre_op', new Date());
      if (probe.cluster?.summary?.node_count !== n) throw new Error(`summary of the ${n}-node cluster counts ${probe.cluster?.summary?.node_count} nodes`);
      if (probe.policies.length !== 1 + CRITERIA.length || probe.cloud.availability_zones.length !== 2) throw new Error('snapshot lacks the seeded binding or facts');
      const wholeProbe = await loadSnapshot(m, action, 'pre_op', new Date(), { everyNode: true });
      if (wholeProbe.cluster?.nodes.length !== n) throw new Error(`snapshot of the ${n}-node cluster holds ${wholeProbe.cluster?.nodes.length} nodes`);
      const inProbe = await loadSnapshot(m, inBy10, 'pre_op', new Date());
      const listed10 = inProbe.cluster?.nodes.length ?? 0;
      if (!inProbe.cluster?.summary || listed10 < Math.max(1, Math.trunc(n / 10))) throw new Error(`scale-in of ${n} nodes lists ${listed10} candidates`);
      ctx.progress.start(`${n.toLocaleString('en-US')} nodes`, it.samples * 8);
      const tick = () => ctx.progress.tick();
      const snapshot = await time(it, () => loadSnapshot(m, action, 'pre_op', new Date()), tick);
      const scaleIn1 = await time(it, () => loadSnapshot(m, inBy1, 'pre_op', new Date()), tick);
      const scaleIn10 = await time(it, () => loadSnapshot(m, inBy10, 'pre_op', new Date()), tick);
      const whole = await time(it, () => loadSnapshot(m, action, 'pre_op', new Date(), { everyNode: true }), tick);
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
      const cloud = await time(it, () => loadCloud(m, project, true), tick);
      ctx.progress.end(`median ${formatNs(snapshot.median)}, p99 ${formatNs(snapshot.p99)}`);
      const byCriteria: CriterionResult[] = [];
      for (const criteria of CRITERIA) {
        await m.query('UPDATE cluster_policies SET enabled = (policy_id = $2) WHERE cluster_id = $1 AND policy_id = ANY($3::uuid[])', [
          clusterId,
          deletion[criteria],
          Object.values(deletion),
        ]);
        const listed = async (a: ActionEntity) => {
          const s = await loadSnapshot(m, a, 'pre_op', new Date());
          // RANDOM lists every node (a random pick needs them all); the others a summary
          if ((criteria === 'RANDOM') !== (s.cluster?.summary === undefined)) throw new Error(`${criteria}: summary ${s.cluster?.summary ? 'present' : 'absent'}`);
          return s.cluster?.nodes.length ?? 0;
        };
        const [listedBy1, listedBy10] = [await listed(inBy1), await listed(inBy10)];
        ctx.progress.start(`${n.toLocaleString('en-US')} nodes, ${criteria}`, it.samples * 2);
        const by1 = await time(it, () => loadSnapshot(m, inBy1, 'pre_op', new Date()), tick);
        const by10 = await time(it, () => loadSnapshot(m, inBy10, 'pre_op', new Date()), tick);
        ctx.progress.end(`scale-in by 1 median ${formatNs(by1.median)}`);
        byCriteria.push({ criteria, by_1: by1, by_10pct: by10, listed_by_1: listedBy1, listed_by_10pct: listedBy10 });
      }
      await m.query('UPDATE cluster_policies SET enabled = false WHERE cluster_id = $1 AND policy_id = ANY($2::uuid[])', [clusterId, Object.values(deletion)]);
      results.push({
        nodes: n,
        by_criteria: byCriteria,
        snapshot,
        scale_in_1: scaleIn1,
        scale_in_10pct: scaleIn10,
        listed_in_10pct: listed10,
        whole,
        cluster,
        nodes_query: nodesQuery,
        bindings,
        cloud,
        loaded_nodes: wholeProbe.cluster.nodes.length,
      });
    }
    const loadAfter = os.loadavg().map((l) => Math.round(l * 100) / 100);

    const us = (ns: number) => Math.round(ns / 10) / 100;
    const pct = (t: Timed) => `${formatNs(t.median)} / ${formatNs(t.p95)} / ${formatNs(t.p99)}`;
    const table: BenchTable = {
      title: 'loadSnapshot(cluster, bindings, Nova facts, nodes summarised) from PostgreSQL, one connection',
      columns: [
        { key: 'nodes', label: 'nodes' },
        { key: 'median', label: 'scale-out median' },
        { key: 'p95', label: 'p95' },
        { key: 'p99', label: 'p99' },
        { key: 'in1', label: 'scale-in by 1 median / p95 / p99' },
        { key: 'in10', label: 'scale-in by 10% median / p95 / p99' },
        { key: 'listed', label: 'listed (10%)' },
        { key: 'whole', label: 'every node listed median / p99' },
        { key: 'nodes_sql', label: 'nodes query alone' },
        { key: 'mapping', label: 'cluster load − queries' },
        { key: 'bindings', label: 'bindings' },
        { key: 'cloud', label: 'facts' },
        { key: 'samples', label: 'samples' },
      ],
      rows: results.map((r) => ({
        nodes: r.nodes.toLocaleString('en-US'),
        median: formatNs(r.snapshot.median),
        p95: formatNs(r.snapshot.p95),
        p99: formatNs(r.snapshot.p99),
        in1: pct(r.scale_in_1),
        in10: pct(r.scale_in_10pct),
        listed: r.listed_in_10pct,
        whole: `${formatNs(r.whole.median)} / ${formatNs(r.whole.p99)}`,
        nodes_sql: formatNs(r.nodes_query.median),
        mapping: formatNs(Math.max(0, r.cluster.median - r.nodes_query.median)),
        bindings: formatNs(r.bindings.median),
        cloud: formatNs(r.cloud.median),
        samples: r.snapshot.samples,
      })),
      footnotes: [
        'summarised (issue 15): PostgreSQL counts the nodes per zone in the cluster statement; a scale-in lists its candidates (bad nodes, the youngest per zone: no deletion policy enabled) in a second',
        '"every node listed": loadSnapshot(..., { everyNode: true }), the fallback when a decision needs them all',
        '"nodes query alone": the nodes SELECT through the same TypeORM manager (pg parses the rows, jsonb included)',
        '"cluster load − queries": loadCluster minus the nodes query: the cluster row query and mapping rows to the snapshot',
        `load average ${loadBefore.join(' ')} → ${loadAfter.join(' ')}`,
      ],
    };
    const criteriaTable: BenchTable = {
      title: 'scale-in with a deletion policy (median / p95 / p99), summarised but for RANDOM',
      columns: [
        { key: 'nodes', label: 'nodes' },
        { key: 'criteria', label: 'criteria' },
        { key: 'by1', label: 'scale-in by 1' },
        { key: 'listed1', label: 'listed' },
        { key: 'by10', label: 'scale-in by 10%' },
        { key: 'listed10', label: 'listed' },
      ],
      rows: results.flatMap((r) =>
        r.by_criteria.map((c) => ({
          nodes: r.nodes.toLocaleString('en-US'),
          criteria: c.criteria,
          by1: pct(c.by_1),
          listed1: c.listed_by_1,
          by10: pct(c.by_10pct),
          listed10: c.listed_by_10pct,
        })),
      ),
      footnotes: [
        'one deletion-1.1 policy of each criterion bound to the cluster, one enabled at a time; a third of the nodes on an older profile',
        'RANDOM: every node listed (a random pick reads the whole zone), as the engine loads it',
      ],
    };
    const targets: TargetCheck[] = [];
    for (const t of TARGETS) {
      const at = results.find((r) => r.nodes === t.nodes);
      if (!at) continue;
      targets.push({
        what: `loadSnapshot for a scale-out at ${t.nodes.toLocaleString('en-US')} nodes (median)`,
        target: `< ${formatNs(t.ns)}`,
        measured: `${formatNs(at.snapshot.median)} (p99 ${formatNs(at.snapshot.p99)})`,
        met: at.snapshot.median < t.ns,
      });
      targets.push({
        what: `loadSnapshot for a scale-in by 1 at ${t.nodes.toLocaleString('en-US')} nodes (median)`,
        target: `< ${formatNs(t.ns)}`,
        measured: `${formatNs(at.scale_in_1.median)} (p99 ${formatNs(at.scale_in_1.p99)})`,
        met: at.scale_in_1.median < t.ns,
      });
      // every summarised input (RANDOM lists every node by design)
      for (const c of at.by_criteria.filter((x) => x.criteria !== 'RANDOM')) {
        for (const [by, timed] of [['1', c.by_1], ['10%', c.by_10pct]] as const) {
          targets.push({
            what: `loadSnapshot for a scale-in by ${by}, ${c.criteria}, at ${t.nodes.toLocaleString('en-US')} nodes (median)`,
            target: `< ${formatNs(t.ns)}`,
            measured: `${formatNs(timed.median)} (p99 ${formatNs(timed.p99)})`,
            met: timed.median < t.ns,
          });
        }
      }
      targets.push({
        what: `loadSnapshot for a scale-in by 10% at ${t.nodes.toLocaleString('en-US')} nodes (median)`,
        target: `< ${formatNs(t.ns)}`,
        measured: `${formatNs(at.scale_in_10pct.median)} (p99 ${formatNs(at.scale_in_10pct.p99)})`,
        met: at.scale_in_10pct.median < t.ns,
      });
    }
    return {
      parameters: { sizes, iterations: Object.fromEntries(sizes.map((n) => [n, iterations[n]])), connection: 'one pooled connection held (QueryRunner), no transaction', other_nodes_in_table: 10_000 },
      figures: {
        load_average_before: loadBefore,
        load_average_after: loadAfter,
        sizes: results.map((r) => ({
          nodes: r.nodes,
          snapshot_us: inMicroseconds(r.snapshot),
          scale_in_1_us: inMicroseconds(r.scale_in_1),
          scale_in_10pct_us: inMicroseconds(r.scale_in_10pct),
          scale_in_10pct_listed: r.listed_in_10pct,
          every_node_us: inMicroseconds(r.whole),
          load_cluster_us: inMicroseconds(r.cluster),
          nodes_query_us: inMicroseconds(r.nodes_query),
          bindings_us: inMicroseconds(r.bindings),
          cloud_us: inMicroseconds(r.cloud),
          p95_us: {
            snapshot: us(r.snapshot.p95),
            scale_in_1: us(r.scale_in_1.p95),
            scale_in_10pct: us(r.scale_in_10pct.p95),
          },
          by_criteria: r.by_criteria.map((c) => ({
            criteria: c.criteria,
            scale_in_1_us: { ...inMicroseconds(c.by_1), p95: us(c.by_1.p95) },
            scale_in_10pct_us: { ...inMicroseconds(c.by_10pct), p95: us(c.by_10pct.p95) },
            listed_by_1: c.listed_by_1,
            listed_by_10pct: c.listed_by_10pct,
          })),
        })),
      },
      tables: [table, criteriaTable],
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
