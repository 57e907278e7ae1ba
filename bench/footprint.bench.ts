import 'reflect-metadata';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Client } from 'pg';
import { BenchContext, BenchResult, BenchTable, TargetCheck, defineBenchmark } from './harness/benchmark';
import { FinishedListener } from './support/clients';
import { intParams } from './support/params';
import { Memory, ServiceProcess, answers, freePort, mb, sleep, waitFor } from './support/processes';
import { EmbeddedDemoResult, runEmbeddedDemo, startScriptNodeFlags } from './support/embedded';
import { seedClusters } from './support/seed';
import { Api, PROFILE_SPEC, SERVICES, demoToken, deployedHeapLimits, startStack, type ServiceName, type Stack } from './support/stack';

/**
 * Issue 7: resident memory of each service idle and after a load of 1,000 clusters of 100 nodes
 * (rows inserted straight into PostgreSQL, then one scale-out decision per cluster), and how long
 * each service and the embedded default take to start.
 */

/** semi_space_mb / old_space_mb: V8 heap limits for the three Trellis services (default: as deployed; 0 = Node's defaults) */
const FULL = { clusters: 1000, nodes: 100, concurrency: 50 };
const QUICK = { clusters: 50, nodes: 100, concurrency: 25 };
const TARGET_BYTES = 150 * 2 ** 20;

const ZONE_POLICY = {
  type: 'senlin.policy.zone_placement',
  version: '1.0',
  properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 100 }] },
};

const loadavg = () => os.loadavg().map((l) => Math.round(l * 100) / 100);

function memories(stack: Stack): Record<ServiceName, Memory | null> {
  return Object.fromEntries(SERVICES.map((s) => [s, stack.services[s].memory()])) as Record<ServiceName, Memory | null>;
}

/** Stops a service and starts it again on the migrated database: its start-up alone. */
async function restart(stack: Stack, name: ServiceName): Promise<number> {
  const s = stack.services[name];
  await s.stop();
  s.start();
  await waitFor(`${name} to start again`, stack.ready[name], { timeoutMs: 120_000, everyMs: 20, alive: () => s.assertRunning() });
  return Date.now() - s.startedAt;
}

type Params = ReturnType<typeof params>;

function params(ctx: BenchContext) {
  return intParams(
    'footprint',
    ctx.params,
    { ...(ctx.quick ? QUICK : FULL), ...deployedHeapLimits(ctx.root), services: 1, embedded: 1, embedded_actions: ctx.quick ? 10 : 50, start_flags: 1 },
    {
      nodes: { min: 0, max: 10_000 },
      semi_space_mb: { min: 0, max: 1024 },
      old_space_mb: { min: 0, max: 65_536 },
      services: { min: 0, max: 1 },
      embedded: { min: 0, max: 1 },
      embedded_actions: { min: 3, max: 10_000 },
      start_flags: { min: 0, max: 1 },
    },
  );
}

/** services=0: the embedded part only; embedded=0: the separate services only */
async function run(ctx: BenchContext): Promise<BenchResult> {
  const p = params(ctx);
  if (!p.services && !p.embedded) throw new Error('footprint: services=0 and embedded=0 leave nothing to run');
  const parts = [p.services ? await servicesPart(ctx, p) : null, p.embedded ? await embeddedPart(ctx, p) : null].filter((x) => x !== null);
  return {
    parameters: Object.assign({ ...p }, ...parts.map((x) => x.parameters)),
    figures: Object.assign({}, ...parts.map((x) => x.figures)),
    tables: parts.flatMap((x) => x.tables),
    targets: parts.flatMap((x) => x.targets ?? []),
    notes: parts.flatMap((x) => x.notes ?? []),
  };
}

async function servicesPart(ctx: BenchContext, p: Params): Promise<BenchResult> {
  const v8Flags = [p.semi_space_mb ? `--max-semi-space-size=${p.semi_space_mb}` : '', p.old_space_mb ? `--max-old-space-size=${p.old_space_mb}` : '']
    .filter(Boolean)
    .join(' ');
  const loadBefore = loadavg();
  ctx.progress.start('starting the four services one after another', 1);
  const stack = await startStack({
    root: ctx.root,
    buildDelayMs: 0,
    zones: 2,
    hostsPerZone: 10,
    // room for every new server in one zone: zone placement sends them all to the same zone when the
    // seeded nodes are split evenly
    instancesPerHost: Math.ceil(p.clusters / 10) + 20,
    sequential: true,
    env: v8Flags ? { NODE_OPTIONS: v8Flags } : {},
  });
  ctx.progress.end();
  let events: FinishedListener | null = null;
  try {
    const firstStart = { ...stack.startupMs };
    // Restarts on the migrated database time each service's own start; skipped by --quick for time.
    const restartMs: Partial<Record<ServiceName, number>> = {};
    if (!ctx.quick) {
      ctx.progress.start('restarting each Trellis service once (migrated database)', 3);
      for (const name of ['gateway', 'policy-engine', 'nova-worker'] as ServiceName[]) {
        restartMs[name] = await restart(stack, name);
        ctx.progress.tick();
        await sleep(500);
      }
      ctx.progress.end();
    }
    await sleep(ctx.quick ? 1000 : 5000);
    const idle = memories(stack);

    const token = await demoToken(stack.authUrl);
    const api = new Api(stack.apiUrl, token);
    const profile = await api.expect(201, 'POST', '/v1/profiles', { profile: { name: 'bench-profile', spec: PROFILE_SPEC } });
    const policy = await api.expect(201, 'POST', '/v1/policies', { policy: { name: 'bench-zones', spec: ZONE_POLICY } });
    ctx.progress.start(`inserting ${p.clusters.toLocaleString('en-US')} clusters × ${p.nodes} nodes into PostgreSQL`, 1);
    const db = new Client({ connectionString: stack.db.url });
    await db.connect();
    let clusterIds: string[];
    try {
      clusterIds = await seedClusters(db, {
        profileId: profile.body.profile.id,
        clusters: p.clusters,
        nodesPerCluster: p.nodes,
        zones: 2,
        hostsPerZone: 10,
        namePrefix: 'load',
        policyIds: [policy.body.policy.id],
      });
    } finally {
      await db.end();
    }
    ctx.progress.end();

    events = await FinishedListener.open(stack.vhost.url);
    ctx.progress.start(`one scale-out decision per cluster (${p.concurrency} at a time)`, clusterIds.length);
    let next = 0;
    let failed = 0;
    const reasons = new Set<string>();
    const started = Date.now();
    await Promise.all(
      Array.from({ length: p.concurrency }, async () => {
        while (next < clusterIds.length) {
          const id = clusterIds[next++];
          const res = await api.expect(202, 'POST', `/v1/clusters/${id}/actions`, { scale_out: { count: 1 } });
          const actionId = Api.actionIdOf(res);
          const f = await events!.finished(actionId, 300_000);
          if (f.status !== 'SUCCEEDED') {
            failed++;
            if (reasons.size < 5) reasons.add(String((await api.expect(200, 'GET', `/v1/actions/${actionId}`)).body.action.status_reason));
          }
          ctx.progress.tick();
        }
      }),
    );
    const loadSeconds = (Date.now() - started) / 1000;
    ctx.progress.end(`${failed} failed`);
    // a list that walks the large tables through the gateway, as an operator's client would
    await api.expect(200, 'GET', '/v1/clusters?limit=1000');
    await api.expect(200, 'GET', `/v1/nodes?cluster_id=${clusterIds[0]}`);
    await sleep(1000);
    const loaded = memories(stack);

    const loadAfter = loadavg();

    const memRow = (name: ServiceName) => ({
      service: name,
      start_ms: firstStart[name] ?? null,
      restart_ms: restartMs[name] ?? null,
      idle_mb: idle[name] ? mb(idle[name]!.rss_bytes) : null,
      loaded_mb: loaded[name] ? mb(loaded[name]!.rss_bytes) : null,
      peak_mb: loaded[name] ? mb(loaded[name]!.peak_rss_bytes) : null,
    });
    const tables: BenchTable[] = [
      {
        title: `Resident memory and start-up, each service a process of its own (load: ${p.clusters.toLocaleString('en-US')} clusters × ${p.nodes} nodes, one scale-out per cluster)`,
        columns: [
          { key: 'service', label: 'service' },
          { key: 'start_ms', label: 'first start (ms)' },
          { key: 'restart_ms', label: 'restart (ms)' },
          { key: 'idle_mb', label: 'RSS idle (MB)' },
          { key: 'loaded_mb', label: 'RSS after load (MB)' },
          { key: 'peak_mb', label: 'peak RSS (MB)' },
        ],
        rows: SERVICES.map(memRow),
        footnotes: [
          `load average ${loadBefore.join(' ')} → ${loadAfter.join(' ')}`,
          'start: spawn until ready (HTTP answers; the engine and worker consume their queues). The gateway started first on the empty database, so its first start includes the migrations.',
          'restart: the service stopped and started again on the migrated database (not run with --quick).',
          `load: ${clusterIds.length} scale-outs in ${loadSeconds.toFixed(1)} s, ${failed} failed; MB = 2^20 bytes`,
        ],
      },
    ];
    const targets: TargetCheck[] = (['gateway', 'policy-engine', 'nova-worker', 'nova-simulator'] as ServiceName[]).map((name) => {
      const peak = Math.max(loaded[name]?.peak_rss_bytes ?? NaN, idle[name]?.rss_bytes ?? NaN);
      return { what: `${name} peak resident memory`, target: '< 150 MB', measured: `${mb(peak)} MB`, met: peak < TARGET_BYTES };
    });
    const notes = [
      'Figures on a shared, busy machine: start-up times in particular grow with the load average.',
      v8Flags
        ? `Trellis services ran with NODE_OPTIONS="${v8Flags}" (docker-compose.yml's, as deployed; --param semi_space_mb=0 --param old_space_mb=0 for Node's defaults).`
        : "Trellis services ran with Node's default heap limits.",
    ];
    if (failed > 0) {
      targets.push({ what: 'load actions SUCCEEDED', target: String(clusterIds.length), measured: String(clusterIds.length - failed), met: false });
      notes.push(`failed actions said: ${[...reasons].join(' | ')}`);
    }
    return {
      parameters: { ...p, node_options: v8Flags || null, mode: 'separate processes (dist/apps/<app>/src/main.js) on PostgreSQL + RabbitMQ', build_delay_ms: 0 },
      figures: {
        first_start_ms: firstStart,
        restart_ms: restartMs,
        idle,
        after_load: loaded,
        load_seconds: loadSeconds,
        load_failed: failed,
        load_failure_reasons: [...reasons],
        load_average_before: loadBefore,
        load_average_after: loadAfter,
      },
      tables,
      targets,
      notes,
    };
  } finally {
    await events?.close();
    await stack.close();
  }
}

export const benchmark = defineBenchmark({
  name: 'footprint',
  description: 'resident memory of each service idle and under 1,000 clusters × 100 nodes; start-up of each service and of trellis start',
  run,
});

const EMBEDDED_RSS_TARGET = 200 * 2 ** 20;
const EMBEDDED_READY_TARGET_MS = 3000;

/**
 * The embedded default as `npm start` runs it (its Node flags read from package.json): a first start
 * on an empty data directory and a restart on the directory it left, each timed until /readyz
 * answers 200 and then put through a demo of `embedded_actions` actions. The restart first checks
 * the first run's cluster, which must still be ACTIVE: its servers live on in the simulator's state.
 */
async function embeddedPart(ctx: BenchContext, p: Params): Promise<BenchResult> {
  // TRELLIS_BENCH_NODE_ARGS (as for the services) goes after the start script's own flags: to try others
  // start_flags=0: without them (Node's defaults), to see what they do
  const flags = [...(p.start_flags ? startScriptNodeFlags(ctx.root) : []), ...(process.env.TRELLIS_BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'trellis-bench-embedded-'));
  const loadBefore = loadavg();
  const runs: Array<{ start: 'first' | 'restart' } & EmbeddedDemoResult> = [];
  try {
    ctx.progress.start(`embedded default: first start and restart, ${p.embedded_actions} actions each`, 2);
    const first = await runEmbeddedDemo(ctx.root, dataDir, flags, { actions: p.embedded_actions, label: 'first' });
    runs.push({ start: 'first', ...first });
    ctx.progress.tick();
    const again = await runEmbeddedDemo(ctx.root, dataDir, flags, { actions: p.embedded_actions, label: 'restart', checkClusters: [first.cluster_id] });
    runs.push({ start: 'restart', ...again });
    ctx.progress.end(runs.map((r) => `${r.start} ${(r.ready_ms / 1000).toFixed(1)} s, ${mb(r.peak_rss_bytes)} MB`).join('; '));
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const loadAfter = loadavg();
  const restart = runs[1];
  const kept = Object.values(restart.checked);
  const targets: TargetCheck[] = runs.flatMap((r) => [
    { what: `embedded ${r.start} start: ready`, target: '< 3 s', measured: `${(r.ready_ms / 1000).toFixed(2)} s`, met: r.ready_ms < EMBEDDED_READY_TARGET_MS },
    {
      what: `embedded ${r.start} start: peak resident memory (${r.actions}-action demo)`,
      target: '< 200 MB',
      measured: `${mb(r.peak_rss_bytes)} MB`,
      met: r.peak_rss_bytes < EMBEDDED_RSS_TARGET,
    },
    { what: `embedded ${r.start} start: demo actions SUCCEEDED`, target: String(r.actions), measured: String(r.actions - r.actions_failed), met: r.actions_failed === 0 },
  ]);
  targets.push({
    what: "embedded restart: the first run's cluster after a check, and its servers in the simulator",
    target: 'ACTIVE, all servers',
    measured: kept.join('; '),
    met: kept.length > 0 && kept.every((s) => /^ACTIVE, (\d+) of \1 servers/.test(s)),
  });
  return {
    parameters: { embedded_node_flags: flags.join(' ') || null, embedded_mode: "node <package.json start flags> dist/cli/trellis.js start, default settings (simulator build delay 500 ms)" },
    figures: { embedded: { runs, load_average_before: loadBefore, load_average_after: loadAfter } },
    tables: [
      {
        title: `Embedded default (npm start: PGlite, in-memory bus, simulator in one process), ${p.embedded_actions}-action demo after each start`,
        columns: [
          { key: 'start', label: 'start' },
          { key: 'pglite', label: 'PGlite data dir' },
          { key: 'ready', label: 'ready (s)' },
          { key: 'cpu', label: 'CPU to ready (s)' },
          { key: 'rss_ready', label: 'RSS at ready (MB)' },
          { key: 'rss_after', label: 'RSS after demo (MB)' },
          { key: 'peak', label: 'peak RSS (MB)' },
          { key: 'demo', label: 'demo (s)' },
        ],
        rows: runs.map((r) => ({
          start: r.start === 'first' ? 'first (empty data dir)' : 'restart (same data dir)',
          pglite: r.pglite_start,
          ready: Math.round(r.ready_ms / 10) / 100,
          cpu: r.cpu_at_ready_s,
          rss_ready: mb(r.rss_ready_bytes),
          rss_after: mb(r.rss_after_demo_bytes),
          peak: mb(r.peak_rss_bytes),
          demo: Math.round(r.demo_seconds * 10) / 10,
        })),
        footnotes: [
          `Node flags: ${flags.join(' ') || '(none)'} (package.json's start script unless start_flags=0, then TRELLIS_BENCH_NODE_ARGS)`,
          'ready: spawn until GET /readyz answers 200 (database, bus and the simulator as cloud); CPU to ready: user + system time of all its threads by then. peak RSS: VmHWM, the most the process was ever resident, start-up included.',
          `load average ${loadBefore.join(' ')} → ${loadAfter.join(' ')}; MB = 2^20 bytes`,
        ],
      },
    ],
    targets,
    notes: [],
  };
}
