import 'reflect-metadata';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Client } from 'pg';
import { BenchContext, BenchResult, BenchTable, TargetCheck, defineBenchmark } from './harness/benchmark';
import { sampleCalls } from './harness/sampler';
import { Summary, formatNs, inMicroseconds, summarise } from './harness/stats';
import { intParams } from './support/params';
import { ServiceProcess, answers, freePort, freshDatabase, waitFor } from './support/processes';
import { NO_ADMISSION_LIMITS, topologyYaml } from './support/stack';

/**
 * Issue 18: GET /v1/events over HTTP with a million events in PostgreSQL. The gateway (its own
 * process, as deployed, with the Nova + Keystone simulator for tokens) answers from one project's
 * 900,000 events among 1,000,000; a page is 100 events, first and half-way through by marker, in
 * the default order and the reverse, and as the cloud admin over every project (global_project).
 */

const TARGET_MS = 50;
const PAGE = 100;

interface Iterations {
  samples: number;
  warmup: number;
}

/** a Keystone token of the simulator and the project it is scoped to */
async function projectToken(authUrl: string, user: string): Promise<{ token: string; projectId: string }> {
  const res = await fetch(`${authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: user, domain: { name: 'Default' }, password: user } } },
        scope: { project: { name: user, domain: { name: 'Default' } } },
      },
    }),
  });
  if (res.status !== 201) throw new Error(`Keystone refused ${user}: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { token: { project: { id: string } } };
  return { token: res.headers.get('x-subject-token')!, projectId: body.token.project.id };
}

/**
 * `events` rows, nine in ten in `project`, the rest in another; three share each timestamp (ties
 * the order breaks by id); 20 clusters, 1,000 nodes, one event in 50 an ERROR.
 */
async function seedEvents(url: string, events: number, project: string, clusters: string[]): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(
      `INSERT INTO events (id, timestamp, oid, oname, otype, cluster_id, level, "user", project, action, status, status_reason)
       SELECT gen_random_uuid(), timestamptz '2026-01-01' + (i / 3) * interval '1 second',
              ('00000000-0000-4000-8000-' || lpad(to_hex(i % 1000), 12, '0'))::uuid, 'node-' || (i % 1000), 'NODE',
              ($3::uuid[])[1 + i % 20], CASE WHEN i % 50 = 0 THEN 40 ELSE 20 END, 'bench-user',
              CASE WHEN i % 10 = 0 THEN 'other-project' ELSE $2 END, 'CLUSTER_SCALE_OUT', 'SUCCEEDED', 'Node created.'
       FROM generate_series(1, $1::int) AS i`,
      [events, project, clusters],
    );
    await c.query('VACUUM ANALYZE events');
  } finally {
    await c.end();
  }
}

/** the id of the event at `position` (0-based) of an order, as the marker of the page after it */
async function eventAt(url: string, where: string, orderBy: string, position: number, args: unknown[]): Promise<{ marker: string; next: string }> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const rows = await c.query<{ id: string }>(`SELECT id FROM events ${where} ORDER BY ${orderBy} OFFSET $${args.length + 1} LIMIT 2`, [...args, position]);
    return { marker: rows.rows[0].id, next: rows.rows[1].id };
  } finally {
    await c.end();
  }
}

interface Case {
  what: string;
  path: string;
  token: string;
  /** the first event the page must hold, so the figure is of the right answer */
  first: string | null;
  items: number;
  target: boolean;
  /** fewer samples for the slow, informational cases */
  samples?: number;
}

async function get(apiUrl: string, token: string, p: string): Promise<{ status: number; events: Array<{ id: string }> }> {
  const res = await fetch(`${apiUrl}${p}`, { headers: { 'X-Auth-Token': token, 'OpenStack-API-Version': 'clustering 1.14' } });
  const body = (await res.json()) as { events?: Array<{ id: string }>; event?: { id: string } };
  return { status: res.status, events: body.events ?? (body.event ? [body.event] : []) };
}

async function time(it: Iterations, call: () => Promise<unknown>, tick: () => void): Promise<Summary> {
  return summarise(await sampleCalls({ ...it, call, tick }));
}

async function run(ctx: BenchContext): Promise<BenchResult> {
  const p = intParams('list-paging', ctx.params, { events: ctx.quick ? 50_000 : 1_000_000, samples: ctx.quick ? 20 : 300 }, {
    events: { min: 10_000, max: 5_000_000 },
    samples: { min: 10, max: 10_000 },
  });
  const iterations: Iterations = { samples: p.samples, warmup: Math.max(5, Math.round(p.samples / 10)) };
  const db = await freshDatabase('trellis_bench_list');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trellis-bench-list-'));
  const topologyFile = path.join(dir, 'topology.yaml');
  fs.writeFileSync(topologyFile, topologyYaml(1, 1, 10));
  const [simPort, apiPort] = [await freePort(), await freePort()];
  const simUrl = `http://127.0.0.1:${simPort}`;
  const authUrl = `${simUrl}/identity/v3`;
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const simulator = ServiceProcess.entry('nova-simulator', ctx.root, 'apps/nova-simulator/src/main.js', {
    SIMULATOR_PORT: String(simPort),
    SIMULATOR_TOPOLOGY_FILE: topologyFile,
    LOG_LEVEL: 'warn',
  });
  // HTTP only: no AMQP_URL, so the gateway's bus is in memory; nothing here sends a message
  const gateway = ServiceProcess.entry('gateway', ctx.root, 'apps/gateway/src/main.js', {
    DATABASE_URL: db.url,
    OS_AUTH_URL: authUrl,
    OS_USERNAME: 'admin',
    OS_PASSWORD: 'admin',
    OS_PROJECT_NAME: 'admin',
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    TRELLIS_PORT: String(apiPort),
    LOG_LEVEL: 'warn',
    ...NO_ADMISSION_LIMITS,
  });
  try {
    simulator.start();
    await waitFor('nova-simulator', () => answers(authUrl), { timeoutMs: 60_000, alive: () => simulator.assertRunning() });
    gateway.start();
    // the gateway migrates the fresh database before it listens
    await waitFor('gateway', () => answers(`${apiUrl}/`), { timeoutMs: 120_000, alive: () => gateway.assertRunning() });
    const demo = await projectToken(authUrl, 'demo');
    const admin = await projectToken(authUrl, 'admin');
    const clusters = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-9000-${i.toString(16).padStart(12, '0')}`);

    ctx.progress.start(`seeding ${p.events.toLocaleString('en-US')} events (generate_series)`, 1);
    const seedStart = Date.now();
    await seedEvents(db.url, p.events, demo.projectId, clusters);
    const seedSeconds = (Date.now() - seedStart) / 1000;
    ctx.progress.end(`${seedSeconds.toFixed(1)} s`);

    const mine = `WHERE project = $1`;
    const half = Math.floor((p.events * 0.9) / 2);
    const asc = await eventAt(db.url, mine, 'timestamp ASC, id ASC', half, [demo.projectId]);
    const desc = await eventAt(db.url, mine, 'timestamp DESC, id ASC', half, [demo.projectId]);
    const firstAsc = (await eventAt(db.url, mine, 'timestamp ASC, id ASC', 0, [demo.projectId])).marker;
    const firstDesc = (await eventAt(db.url, mine, 'timestamp DESC, id ASC', 0, [demo.projectId])).marker;
    const all = await eventAt(db.url, '', 'timestamp ASC, id ASC', Math.floor(p.events / 2), []);
    const clusterHalf = Math.floor((p.events * 0.9) / 20 / 2);
    const inCluster = await eventAt(db.url, `${mine} AND cluster_id = $2`, 'timestamp ASC, id ASC', clusterHalf, [demo.projectId, clusters[7]]);

    const cases: Case[] = [
      // the floor: token check, one row by primary key, the view and HTTP
      { what: 'baseline: GET /v1/events/{id} (one row)', path: `/v1/events/${asc.marker}`, token: demo.token, first: asc.marker, items: 1, target: false },
      { what: 'first page', path: `/v1/events?limit=${PAGE}`, token: demo.token, first: firstAsc, items: PAGE, target: true },
      { what: 'half-way, by marker', path: `/v1/events?limit=${PAGE}&marker=${asc.marker}`, token: demo.token, first: asc.next, items: PAGE, target: true },
      { what: 'sort=timestamp:desc, first page', path: `/v1/events?limit=${PAGE}&sort=timestamp:desc`, token: demo.token, first: firstDesc, items: PAGE, target: true },
      {
        what: 'sort=timestamp:desc, half-way by marker',
        path: `/v1/events?limit=${PAGE}&sort=timestamp:desc&marker=${desc.marker}`,
        token: demo.token,
        first: desc.next,
        items: PAGE,
        target: true,
      },
      {
        what: 'cluster_id filter, half-way by marker',
        path: `/v1/events?limit=${PAGE}&cluster_id=${clusters[7]}&marker=${inCluster.marker}`,
        token: demo.token,
        first: inCluster.next,
        items: PAGE,
        target: true,
      },
      {
        what: 'global_project (cloud admin), half-way by marker',
        path: `/v1/events?limit=${PAGE}&global_project=true&marker=${all.marker}`,
        token: admin.token,
        first: all.next,
        items: PAGE,
        target: true,
      },
      { what: 'no limit (answers the maximum, 1,000)', path: '/v1/events', token: demo.token, first: firstAsc, items: 1000, target: false, samples: 100 },
      {
        what: 'sort=level:desc (no index), first page',
        path: `/v1/events?limit=${PAGE}&sort=level:desc`,
        token: demo.token,
        first: null,
        items: PAGE,
        target: false,
        samples: 50,
      },
    ];

    const results: Array<{ c: Case; s: Summary }> = [];
    for (const c of cases) {
      const probe = await get(apiUrl, c.token, c.path);
      if (probe.status !== 200 || probe.events.length !== c.items || (c.first !== null && probe.events[0].id !== c.first)) {
        throw new Error(`${c.what}: ${c.path} answered ${probe.status} with ${probe.events.length} events, first ${probe.events[0]?.id} (expected ${c.items}, first ${c.first})`);
      }
      const it = c.samples === undefined ? iterations : { samples: Math.min(c.samples, iterations.samples), warmup: Math.min(5, iterations.warmup) };
      ctx.progress.start(c.what, it.samples);
      const s = await time(it, () => get(apiUrl, c.token, c.path), () => ctx.progress.tick());
      ctx.progress.end(`median ${formatNs(s.median)}, p99 ${formatNs(s.p99)}`);
      results.push({ c, s });
    }

    const table: BenchTable = {
      title: `GET /v1/events over HTTP, ${p.events.toLocaleString('en-US')} events (${Math.round(p.events * 0.9).toLocaleString('en-US')} in the caller's project)`,
      columns: [
        { key: 'what', label: 'request' },
        { key: 'items', label: 'items' },
        { key: 'samples', label: 'samples' },
        { key: 'median', label: 'median' },
        { key: 'p90', label: 'p90' },
        { key: 'p99', label: 'p99' },
        { key: 'max', label: 'max' },
      ],
      rows: results.map(({ c, s }) => ({ what: c.what, items: c.items, samples: s.samples, median: formatNs(s.median), p90: formatNs(s.p90), p99: formatNs(s.p99), max: formatNs(s.max) })),
      footnotes: [
        'one client, requests back to back, wall time from request to the last byte of the body (fetch + JSON parse)',
        'the gateway and the Keystone simulator are processes of their own; PostgreSQL, the gateway and this client share the machine',
      ],
    };
    // the median is the request's cost; the p99 also holds what else the shared machine was doing
    const targets: TargetCheck[] = results
      .filter(({ c }) => c.target)
      .flatMap(({ c, s }) =>
        (['median', 'p99'] as const).map((q) => ({ what: `${c.what} (${q})`, target: `< ${TARGET_MS} ms`, measured: formatNs(s[q]), met: s[q] < TARGET_MS * 1e6 })),
      );
    return {
      parameters: { events: p.events, page: PAGE, iterations, seed: 'generate_series, 3 events per timestamp, 90 % in the caller project, 20 clusters' },
      figures: {
        seed_seconds: seedSeconds,
        requests: results.map(({ c, s }) => ({ what: c.what, path: c.path.replace(/marker=[0-9a-f-]+/, 'marker=<id>'), items: c.items, ...inMicroseconds(s) })),
      },
      tables: [table],
      targets,
      notes: ['sort keys other than the default (timestamp) have no index: the database sorts the filtered rows (top-N) for each page'],
    };
  } finally {
    await gateway.stop();
    await simulator.stop();
    await db.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmark = defineBenchmark({
  name: 'list-paging',
  description: 'GET /v1/events?limit=100 over HTTP with 1,000,000 events in PostgreSQL: first page, by marker, sorted',
  run,
});
