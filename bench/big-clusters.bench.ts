import 'reflect-metadata';
import * as os from 'os';
import { Client } from 'pg';
import { BenchContext, BenchResult, BenchTable, TargetCheck, defineBenchmark } from './harness/benchmark';
import { sampleCalls } from './harness/sampler';
import { Summary, formatNs, inMicroseconds, percentile, summarise } from './harness/stats';
import { intParams } from './support/params';
import { MB, Memory, backendCpu, backendCpuGrowth, mb, sleep } from './support/processes';
import { seedClusters } from './support/seed';
import { Api, PROFILE_SPEC, SERVICES, demoToken, deployedHeapLimits, heapFlags, startStack, type ServiceName, type Stack } from './support/stack';

/**
 * Issue 15 point 5: 1,000 clusters of 100 nodes each in PostgreSQL (100,000 node rows, two bound
 * policies per cluster, ten finished actions per cluster), then the gateway's list and show
 * endpoints a client pages through, each under 50 ms at p95, and every service's peak resident
 * memory under 150 MB while it happens. The four services run as deployed (their own processes,
 * RabbitMQ, PostgreSQL, docker-compose.yml's heap limits).
 */

const TARGET_MS = 50;
const TARGET_BYTES = 150 * MB;

const ZONE_POLICY = {
  type: 'senlin.policy.zone_placement',
  version: '1.0',
  properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 100 }] },
};
const DELETION_POLICY = {
  type: 'senlin.policy.deletion',
  version: '1.1',
  properties: { criteria: 'OLDEST_FIRST', destroy_after_deletion: true, grace_period: 0, reduce_desired_capacity: true },
};

const loadavg = () => os.loadavg().map((l) => Math.round(l * 100) / 100);

interface Case {
  what: string;
  path: string;
  /** what the answer must hold, so a figure is of the right answer */
  check: (body: any) => string | null;
  target: boolean;
  samples?: number;
}

/** Finished actions of each cluster, as the engine leaves them (ten scale-outs, a minute apart). */
async function seedActions(db: Client, perCluster: number): Promise<number> {
  const res = await db.query(
    `INSERT INTO actions (id, name, cluster_id, target, action, cause, timeout, status, status_reason, inputs, outputs,
                          project, "user", domain, created_at, updated_at, start_time, end_time)
     SELECT gen_random_uuid(), 'cluster_scale_out_' || substr(c.id::text, 1, 8), c.id, c.id, 'CLUSTER_SCALE_OUT', 'RPC Request', 3600,
            'SUCCEEDED', 'Cluster scaling succeeded.', '{"count": 1}'::jsonb, '{}'::jsonb, c.project, c."user", c.domain,
            now() - (g * interval '1 minute'), now() - (g * interval '1 minute'),
            extract(epoch FROM now()) - g * 60, extract(epoch FROM now()) - g * 60 + 2
       FROM clusters c, generate_series(1, $1::int) g`,
    [perCluster],
  );
  await db.query('ANALYZE actions');
  return res.rowCount ?? 0;
}

async function one<T>(db: Client, sql: string, args: unknown[]): Promise<T> {
  const { rows } = await db.query(sql, args);
  if (rows.length === 0) throw new Error(`no row for ${sql}`);
  return rows[0] as T;
}

function expectPage(key: string, count: number, first?: string) {
  return (body: any): string | null => {
    const items = body?.[key] as Array<{ id: string }> | undefined;
    if (!Array.isArray(items)) return `no '${key}' list`;
    if (items.length !== count) return `${items.length} ${key}, expected ${count}`;
    if (first !== undefined && items[0]?.id !== first) return `first ${items[0]?.id}, expected ${first}`;
    return null;
  };
}

/**
 * CPU seconds so far of the gateway and of the PostgreSQL backends serving its database (from
 * /proc): what a request costs, which a busy machine does not inflate as it inflates wall time.
 */
async function cpuNow(stack: Stack, db: Client): Promise<{ gateway: number; postgres: Map<number, number> }> {
  return { gateway: stack.services.gateway.cpuSeconds() ?? NaN, postgres: await backendCpu(db) };
}

interface Timed {
  s: Summary;
  p95: number;
  /** CPU ms per request: the gateway process, and PostgreSQL's backends of this database */
  gatewayCpuMs: number;
  postgresCpuMs: number;
}

/** Times `samples` requests after `warmup` untimed ones: the summary, the p95 (nearest rank) and CPU per request. */
async function timeCase(api: Api, c: Case, samples: number, warmup: number, cpu: () => Promise<{ gateway: number; postgres: Map<number, number> }>, tick: () => void): Promise<Timed> {
  const call = () => api.expect(200, 'GET', c.path);
  // warmed up before the CPU reading, so only the timed requests are charged
  for (let i = 0; i < warmup; i++) await call();
  const before = await cpu();
  const times = await sampleCalls({ samples, warmup: 0, call, tick });
  const after = await cpu();
  return {
    s: summarise(times),
    p95: percentile(Float64Array.from(times).sort(), 0.95),
    gatewayCpuMs: ((after.gateway - before.gateway) * 1000) / samples,
    postgresCpuMs: (backendCpuGrowth(before.postgres, after.postgres) * 1000) / samples,
  };
}

function peaks(stack: Stack): Record<ServiceName, Memory | null> {
  return Object.fromEntries(SERVICES.map((s) => [s, stack.services[s].memory()])) as Record<ServiceName, Memory | null>;
}

async function run(ctx: BenchContext): Promise<BenchResult> {
  const p = intParams(
    'big-clusters',
    ctx.params,
    {
      clusters: ctx.quick ? 60 : 1000,
      nodes: ctx.quick ? 20 : 100,
      actions: ctx.quick ? 2 : 10,
      samples: ctx.quick ? 15 : 200,
      // the cloud's size: the gateway hides every host name of it from members
      hosts_per_zone: 10,
      ...deployedHeapLimits(ctx.root),
    },
    {
      clusters: { min: 30, max: 20_000 },
      hosts_per_zone: { min: 1, max: 10_000 },
      nodes: { min: 1, max: 1000 },
      actions: { min: 1, max: 100 },
      samples: { min: 5, max: 10_000 },
      semi_space_mb: { min: 0, max: 1024 },
      old_space_mb: { min: 0, max: 65_536 },
    },
  );
  const loadBefore = loadavg();
  const flags = heapFlags(p);
  ctx.progress.start('starting the four services', 1);
  const stack = await startStack({ root: ctx.root, buildDelayMs: 0, zones: 2, hostsPerZone: p.hosts_per_zone, instancesPerHost: 100, env: flags ? { NODE_OPTIONS: flags } : {} });
  ctx.progress.end();
  const db = new Client({ connectionString: stack.db.url });
  await db.connect();
  try {
    const token = await demoToken(stack.authUrl);
    const api = new Api(stack.apiUrl, token);
    const profile = (await api.expect(201, 'POST', '/v1/profiles', { profile: { name: 'bench-profile', spec: PROFILE_SPEC } })).body.profile.id as string;
    const zones = (await api.expect(201, 'POST', '/v1/policies', { policy: { name: 'bench-zones', spec: ZONE_POLICY } })).body.policy.id as string;
    const deletion = (await api.expect(201, 'POST', '/v1/policies', { policy: { name: 'bench-deletion', spec: DELETION_POLICY } })).body.policy.id as string;

    const rows = p.clusters * p.nodes;
    ctx.progress.start(`inserting ${p.clusters.toLocaleString('en-US')} clusters × ${p.nodes} nodes, 2 bindings and ${p.actions} actions each`, 1);
    const seedStart = Date.now();
    const clusterIds = await seedClusters(db, { profileId: profile, clusters: p.clusters, nodesPerCluster: p.nodes, zones: 2, hostsPerZone: p.hosts_per_zone, namePrefix: 'big', policyIds: [zones, deletion] });
    const actionRows = await seedActions(db, p.actions);
    // what autovacuum does soon after a bulk insert (autovacuum_vacuum_insert_threshold): the
    // visibility map lets index-only scans skip the heap, as they do on a database in service
    await db.query('VACUUM ANALYZE clusters, nodes, cluster_policies, actions');
    const seedSeconds = (Date.now() - seedStart) / 1000;
    ctx.progress.end(`${rows.toLocaleString('en-US')} nodes, ${actionRows.toLocaleString('en-US')} actions in ${seedSeconds.toFixed(1)} s`);
    const memoryBefore = peaks(stack);

    // the answers each request must give, from SQL
    const project = (await one<{ project: string }>(db, 'SELECT project FROM clusters LIMIT 1', [])).project;
    const half = Math.floor(p.clusters / 2);
    const clusterOrder = 'ORDER BY init_at, id';
    const cl = (await db.query<{ id: string; name: string }>(`SELECT id, name FROM clusters WHERE project = $1 ${clusterOrder}`, [project])).rows;
    const byNameDesc = (await db.query<{ id: string }>(`SELECT id FROM clusters WHERE project = $1 AND status = 'ACTIVE' ORDER BY name DESC, init_at, id LIMIT 1`, [project])).rows[0].id;
    const target = clusterIds[Math.floor(clusterIds.length * 0.37)];
    const targetName = cl.find((c) => c.id === target)!.name;
    const nodesOfTarget = (await db.query<{ id: string }>(`SELECT id FROM nodes WHERE cluster_id = $1 ORDER BY init_at, id`, [target])).rows.map((r) => r.id);
    const nodeHalf = Math.floor(nodesOfTarget.length / 2);
    const allNodes = (await one<{ n: number }>(db, 'SELECT count(*)::int AS n FROM nodes WHERE project = $1', [project])).n;
    const nodeMarker = await one<{ id: string; next: string }>(
      db,
      `SELECT id, lead(id) OVER (ORDER BY init_at, id) AS next FROM nodes WHERE project = $1 ORDER BY init_at, id OFFSET $2 LIMIT 1`,
      [project, Math.floor(allNodes / 2)],
    );
    const firstNode = (await one<{ id: string }>(db, `SELECT id FROM nodes WHERE project = $1 ORDER BY init_at, id LIMIT 1`, [project])).id;
    const actionMarker = await one<{ id: string; next: string }>(
      db,
      `SELECT id, lead(id) OVER (ORDER BY created_at, id) AS next FROM actions WHERE project = $1 ORDER BY created_at, id OFFSET $2 LIMIT 1`,
      [project, Math.floor(actionRows / 2)],
    );
    const firstAction = (await one<{ id: string }>(db, `SELECT id FROM actions WHERE project = $1 ORDER BY created_at, id LIMIT 1`, [project])).id;
    const actionsOfTarget = (await db.query<{ id: string }>(`SELECT id FROM actions WHERE cluster_id = $1 ORDER BY created_at, id`, [target])).rows.map((r) => r.id);
    const bindingCheck = (body: any) => {
      const b = body?.cluster_policies as Array<{ policy_id: string }> | undefined;
      if (!Array.isArray(b) || b.length !== 2) return `expected 2 bindings, got ${JSON.stringify(body).slice(0, 200)}`;
      return b.map((x) => x.policy_id).sort().join() === [zones, deletion].sort().join() ? null : 'wrong policies';
    };
    const showCheck = (key: string, id: string, extra?: (o: any) => string | null) => (body: any) => {
      const o = body?.[key];
      if (o?.id !== id) return `${key} ${o?.id}, expected ${id}`;
      return extra ? extra(o) : null;
    };
    const pageOf = Math.min(20, p.clusters);

    const cases: Case[] = [
      { what: 'clusters: first page (limit=20)', path: `/v1/clusters?limit=${pageOf}`, check: expectPage('clusters', pageOf, cl[0].id), target: true },
      { what: 'clusters: half-way by marker (limit=20)', path: `/v1/clusters?limit=${pageOf}&marker=${cl[half].id}`, check: expectPage('clusters', pageOf, cl[half + 1].id), target: true },
      {
        what: 'clusters: status=ACTIVE, sort=name:desc (limit=20)',
        path: `/v1/clusters?limit=${pageOf}&status=ACTIVE&sort=name:desc`,
        check: expectPage('clusters', pageOf, byNameDesc),
        target: true,
      },
      { what: 'clusters: name= filter', path: `/v1/clusters?name=${targetName}`, check: expectPage('clusters', 1, target), target: true },
      { what: 'clusters: limit=100', path: `/v1/clusters?limit=100`, check: expectPage('clusters', Math.min(100, p.clusters), cl[0].id), target: true },
      {
        what: 'clusters: no limit (the first 1,000, each with its node ids)',
        path: `/v1/clusters`,
        check: expectPage('clusters', Math.min(1000, p.clusters), cl[0].id),
        target: false,
        samples: 20,
      },
      {
        what: `cluster show by id (${p.nodes} node ids)`,
        path: `/v1/clusters/${target}`,
        check: showCheck('cluster', target, (c) => (c.nodes?.length === p.nodes && c.policies?.length === 2 ? null : `nodes ${c.nodes?.length}, policies ${c.policies?.length}`)),
        target: true,
      },
      { what: 'cluster show by name', path: `/v1/clusters/${targetName}`, check: showCheck('cluster', target), target: true },
      { what: `nodes: cluster_id= (all ${p.nodes})`, path: `/v1/nodes?cluster_id=${target}`, check: expectPage('nodes', p.nodes, nodesOfTarget[0]), target: true },
      {
        what: 'nodes: cluster_id=, half-way by marker (limit=20)',
        path: `/v1/nodes?cluster_id=${target}&limit=20&marker=${nodesOfTarget[nodeHalf]}`,
        check: expectPage('nodes', Math.min(20, nodesOfTarget.length - nodeHalf - 1), nodesOfTarget[nodeHalf + 1]),
        target: true,
      },
      { what: 'nodes: first page of the project (limit=100)', path: `/v1/nodes?limit=100`, check: expectPage('nodes', Math.min(100, allNodes), firstNode), target: true },
      {
        what: 'nodes: half-way through the project by marker (limit=100)',
        path: `/v1/nodes?limit=100&marker=${nodeMarker.id}`,
        check: expectPage('nodes', Math.min(100, allNodes - Math.floor(allNodes / 2) - 1), nodeMarker.next),
        target: true,
      },
      { what: 'node show', path: `/v1/nodes/${nodesOfTarget[nodeHalf]}`, check: showCheck('node', nodesOfTarget[nodeHalf]), target: true },
      { what: 'actions: first page (limit=100)', path: `/v1/actions?limit=100`, check: expectPage('actions', Math.min(100, actionRows), firstAction), target: true },
      {
        what: 'actions: half-way by marker (limit=100)',
        path: `/v1/actions?limit=100&marker=${actionMarker.id}`,
        check: expectPage('actions', Math.min(100, actionRows - Math.floor(actionRows / 2) - 1), actionMarker.next),
        target: true,
      },
      { what: 'actions: cluster_id=', path: `/v1/actions?cluster_id=${target}`, check: expectPage('actions', actionsOfTarget.length, actionsOfTarget[0]), target: true },
      { what: 'action show', path: `/v1/actions/${actionsOfTarget[0]}`, check: showCheck('action', actionsOfTarget[0]), target: true },
      { what: 'policies list', path: `/v1/policies`, check: expectPage('policies', 2), target: true },
      { what: "a cluster's bindings (cluster policies)", path: `/v1/clusters/${target}/policies`, check: bindingCheck, target: true },
      {
        what: 'one binding',
        path: `/v1/clusters/${target}/policies/${zones}`,
        check: (b) => (b?.cluster_policy?.policy_id === zones ? null : `binding ${JSON.stringify(b).slice(0, 200)}`),
        target: true,
      },
    ];

    const results: Array<{ c: Case } & Timed> = [];
    const gatewayPeakRaisedBy: Array<{ what: string; from_mb: number; to_mb: number }> = [];
    for (const c of cases) {
      const probe = await api.call('GET', c.path);
      const wrong = probe.status !== 200 ? `status ${probe.status} ${JSON.stringify(probe.body).slice(0, 300)}` : c.check(probe.body);
      if (wrong) throw new Error(`${c.what}: GET ${c.path}: ${wrong}`);
      const samples = Math.min(c.samples ?? p.samples, p.samples);
      const warmup = Math.max(3, Math.round(samples / 10));
      ctx.progress.start(c.what, samples);
      const peakBefore = stack.services.gateway.memory()?.peak_rss_bytes ?? NaN;
      const t = await timeCase(api, c, samples, warmup, () => cpuNow(stack, db), () => ctx.progress.tick());
      const peakAfter = stack.services.gateway.memory()?.peak_rss_bytes ?? NaN;
      // the request that raised the gateway's peak resident memory, and by how much
      if (peakAfter > peakBefore) gatewayPeakRaisedBy.push({ what: c.what, from_mb: mb(peakBefore), to_mb: mb(peakAfter) });
      ctx.progress.end(`median ${formatNs(t.s.median)}, p95 ${formatNs(t.p95)}, CPU/request gateway ${t.gatewayCpuMs.toFixed(2)} ms, PostgreSQL ${t.postgresCpuMs.toFixed(2)} ms`);
      results.push({ c, ...t });
    }
    await sleep(200);
    const memoryAfter = peaks(stack);

    const table: BenchTable = {
      title: `GET over HTTP as a project member, ${p.clusters.toLocaleString('en-US')} clusters × ${p.nodes} nodes (${rows.toLocaleString('en-US')} node rows, ${actionRows.toLocaleString('en-US')} actions)`,
      columns: [
        { key: 'what', label: 'request' },
        { key: 'samples', label: 'samples', align: 'right' },
        { key: 'median', label: 'median', align: 'right' },
        { key: 'p95', label: 'p95', align: 'right' },
        { key: 'p99', label: 'p99', align: 'right' },
        { key: 'max', label: 'max', align: 'right' },
        { key: 'gw', label: 'gateway CPU/req', align: 'right' },
        { key: 'pg', label: 'PostgreSQL CPU/req', align: 'right' },
      ],
      rows: results.map(({ c, s, p95, gatewayCpuMs, postgresCpuMs }) => ({
        what: c.what,
        samples: s.samples,
        median: formatNs(s.median),
        p95: formatNs(p95),
        p99: formatNs(s.p99),
        max: formatNs(s.max),
        gw: `${gatewayCpuMs.toFixed(2)} ms`,
        pg: `${postgresCpuMs.toFixed(2)} ms`,
      })),
      footnotes: [
        'one client, requests back to back, wall time from request to the parsed body',
        'CPU/req: growth of utime + stime (/proc, 10 ms ticks) over the timed requests ÷ requests: the gateway process, and the PostgreSQL backends connected to the benchmark database (a backend that exits in between is left out)',
        'the services, PostgreSQL, RabbitMQ and this client share the machine',
      ],
    };
    const memTable: BenchTable = {
      title: `resident memory (MB = 2^20 bytes; heap limits: ${flags || "Node's defaults"})`,
      columns: [
        { key: 'service', label: 'service' },
        { key: 'before', label: 'RSS after seeding', align: 'right' },
        { key: 'after', label: 'RSS after the requests', align: 'right' },
        { key: 'peak', label: 'peak RSS', align: 'right' },
      ],
      rows: SERVICES.map((s) => ({
        service: s,
        before: memoryBefore[s] ? `${mb(memoryBefore[s]!.rss_bytes)} MB` : '-',
        after: memoryAfter[s] ? `${mb(memoryAfter[s]!.rss_bytes)} MB` : '-',
        peak: memoryAfter[s] ? `${mb(memoryAfter[s]!.peak_rss_bytes)} MB` : '-',
      })),
    };
    const targets: TargetCheck[] = [
      ...results.filter(({ c }) => c.target).map(({ c, p95 }) => ({ what: `${c.what} (p95)`, target: `< ${TARGET_MS} ms`, measured: formatNs(p95), met: p95 < TARGET_MS * 1e6 })),
      ...SERVICES.map((s) => {
        const peak = memoryAfter[s]?.peak_rss_bytes ?? NaN;
        return { what: `${s} peak RSS`, target: '< 150 MB', measured: `${mb(peak)} MB`, met: peak < TARGET_BYTES };
      }),
    ];
    return {
      parameters: { ...p, heap_flags: flags, seed: `seedClusters (INSERT … SELECT generate_series), 2 zones × ${p.hosts_per_zone} hosts, 2 bindings per cluster; actions by INSERT … SELECT; then VACUUM ANALYZE` },
      figures: {
        seed_seconds: seedSeconds,
        load_before: loadBefore,
        load_after: loadavg(),
        requests: results.map(({ c, s, p95, gatewayCpuMs, postgresCpuMs }) => ({
          what: c.what,
          path: c.path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>'),
          ...inMicroseconds(s),
          p95: Math.round(p95 / 10) / 100,
          gateway_cpu_ms_per_request: Math.round(gatewayCpuMs * 100) / 100,
          postgres_cpu_ms_per_request: Math.round(postgresCpuMs * 100) / 100,
        })),
        memory_before: memoryBefore,
        memory_after: memoryAfter,
        gateway_peak_raised_by: gatewayPeakRaisedBy,
      },
      tables: [table, memTable],
      targets,
      notes: gatewayPeakRaisedBy.map((g) => `the gateway's peak RSS rose from ${g.from_mb} to ${g.to_mb} MB during '${g.what}'`),
    };
  } finally {
    await db.end().catch(() => undefined);
    await stack.close();
  }
}

export const benchmark = defineBenchmark({
  name: 'big-clusters',
  description: 'list and show endpoints over HTTP with 1,000 clusters × 100 nodes in PostgreSQL (p95 < 50 ms), every service < 150 MB',
  run,
});
