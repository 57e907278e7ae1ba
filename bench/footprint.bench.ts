import 'reflect-metadata';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Client } from 'pg';
import { BenchContext, BenchResult, BenchTable, TargetCheck, defineBenchmark } from './harness/benchmark';
import { FinishedListener } from './support/clients';
import { intParams } from './support/params';
import { Memory, ServiceProcess, answers, freePort, mb, sleep, waitFor } from './support/processes';
import { seedClusters } from './support/seed';
import { Api, PROFILE_SPEC, SERVICES, demoToken, startStack, type ServiceName, type Stack } from './support/stack';

/**
 * Issue 7: resident memory of each service idle and after a load of 1,000 clusters of 100 nodes
 * (rows inserted straight into PostgreSQL, then one scale-out decision per cluster), and how long
 * each service and the embedded default take to start.
 */

/**
 * The V8 heap limits the services are deployed with: docker-compose.yml's NODE_OPTIONS, read from the
 * file so the benchmark measures what is deployed. Zero when it sets none.
 */
function deployedHeapLimits(root: string): { semi_space_mb: number; old_space_mb: number } {
  const compose = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
  const options = /^\s*NODE_OPTIONS:\s*(.+)$/m.exec(compose)?.[1] ?? '';
  const flag = (name: string) => Number(new RegExp(`--${name}=(\\d+)`).exec(options)?.[1] ?? 0);
  return { semi_space_mb: flag('max-semi-space-size'), old_space_mb: flag('max-old-space-size') };
}

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

interface EmbeddedStart {
  pglite: 'cold' | 'warm';
  ms: number;
  rss_idle_bytes: number | null;
}

/** `node dist/cli/trellis.js start` until the REST API answers; cold = empty data directory. */
async function embeddedStarts(root: string): Promise<EmbeddedStart[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'trellis-bench-embedded-'));
  const out: EmbeddedStart[] = [];
  try {
    for (const pglite of ['cold', 'warm'] as const) {
      const port = await freePort();
      const p = new ServiceProcess('trellis start', root, [path.join(root, 'dist', 'cli', 'trellis.js'), 'start'], {
        TRELLIS_DATA_DIR: dataDir,
        TRELLIS_PORT: String(port),
        SIMULATOR_PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
      }).start();
      try {
        await waitFor('trellis start', () => answers(`http://127.0.0.1:${port}/`), { timeoutMs: 120_000, everyMs: 20, alive: () => p.assertRunning() });
        const ms = Date.now() - p.startedAt;
        await sleep(1000);
        out.push({ pglite, ms, rss_idle_bytes: p.memory()?.rss_bytes ?? null });
      } finally {
        await p.stop();
      }
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return out;
}

async function run(ctx: BenchContext): Promise<BenchResult> {
  const p = intParams('footprint', ctx.params, { ...(ctx.quick ? QUICK : FULL), ...deployedHeapLimits(ctx.root) }, {
    nodes: { min: 0, max: 10_000 },
    semi_space_mb: { min: 0, max: 1024 },
    old_space_mb: { min: 0, max: 65_536 },
  });
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

    ctx.progress.start('embedded default: trellis start, PGlite cold then warm', 2);
    const embedded = await embeddedStarts(ctx.root);
    ctx.progress.end(embedded.map((e) => `${e.pglite} ${(e.ms / 1000).toFixed(1)} s`).join(', '));
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
          'start: spawn until ready (HTTP answers; the engine and worker consume their queues). The gateway started first on the empty database, so its first start includes the migrations.',
          'restart: the service stopped and started again on the migrated database (not run with --quick).',
          `load: ${clusterIds.length} scale-outs in ${loadSeconds.toFixed(1)} s, ${failed} failed; MB = 2^20 bytes`,
        ],
      },
      {
        title: 'Embedded default: node dist/cli/trellis.js start (PGlite, in-memory bus, simulator) until HTTP answers',
        columns: [
          { key: 'pglite', label: 'PGlite' },
          { key: 'seconds', label: 'start (s)' },
          { key: 'rss', label: 'RSS idle (MB)' },
        ],
        rows: embedded.map((e) => ({ pglite: e.pglite === 'cold' ? 'cold (empty data dir)' : 'warm (existing data dir)', seconds: Math.round(e.ms / 100) / 10, rss: e.rss_idle_bytes === null ? null : mb(e.rss_idle_bytes) })),
        footnotes: [`load average ${loadBefore.join(' ')} → ${loadAfter.join(' ')}`],
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
      parameters: { ...p, node_options: v8Flags || null, mode: 'separate processes (dist/apps/<app>/src/main.js) on PostgreSQL + RabbitMQ; embedded: dist/cli/trellis.js start', build_delay_ms: 0 },
      figures: {
        first_start_ms: firstStart,
        restart_ms: restartMs,
        idle,
        after_load: loaded,
        load_seconds: loadSeconds,
        load_failed: failed,
        load_failure_reasons: [...reasons],
        embedded,
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
