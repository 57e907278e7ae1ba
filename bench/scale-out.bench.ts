import 'reflect-metadata';
import * as os from 'os';
import { Client } from 'pg';
import { BenchContext, BenchResult, BenchTable, TargetCheck, defineBenchmark } from './harness/benchmark';
import { FinishedListener } from './support/clients';
import { intParams } from './support/params';
import { Api, PROFILE_SPEC, adminToken, demoToken, startStack, type Stack } from './support/stack';

/**
 * Issue 7: one large scale-out against Nova (the simulator, with its default build delay): 100 new
 * nodes under a soft anti-affinity policy and a two-zone placement policy, from the REST request to
 * the action-finished notification, split into Trellis's own work and the time spent on Nova.
 */

/**
 * `user_data_kb`: KB of user_data in the profile (0: none; at most 47, which Nova takes as 62,668
 * base64 characters of its 65,535): what a work order's size depends on (README, "Upgrading to this
 * release").
 */
// delete_delay_ms: how long the simulator takes to answer each server DELETE (a real Nova's here: 74-199 ms)
const FULL = { nodes: 100, runs: 5, build_delay_ms: 500, hosts_per_zone: 60, user_data_kb: 0, delete_delay_ms: 100 };
const QUICK = { nodes: 100, runs: 1, build_delay_ms: 500, hosts_per_zone: 60, user_data_kb: 0, delete_delay_ms: 100 };

const POLICIES = {
  affinity: { type: 'senlin.policy.affinity', version: '1.0', properties: { servergroup: { policies: 'soft-anti-affinity' } } },
  zones: { type: 'senlin.policy.zone_placement', version: '1.0', properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2', weight: 100 }] } },
};

/** ms since the epoch of each step, as the services and Nova recorded them */
interface Timeline {
  submitted: number;
  accepted: number;
  /** actions.start_time: the engine took the action and began its decision */
  decided: number;
  /** work_orders.created_at: the worker took the order */
  ordered: number;
  /** nodes.build_deadline − build_timeout: every server request was answered and the nodes recorded CREATING */
  applied: number;
  /** first and last OS-SRV-USG:launched_at of the servers in Nova */
  firstActive: number;
  lastActive: number;
  /** latest nodes.created_at: the build poller saw the last server ACTIVE */
  observed: number;
  /** actions.end_time */
  finished: number;
  /** the action.finished notification reached the client */
  notified: number;
  /** the size of the work order as the worker stored it (its payload as JSON text) */
  orderBytes: number;
}

const PHASES: Array<{ key: string; label: string; from: keyof Timeline; to: keyof Timeline; side: 'trellis' | 'nova' }> = [
  { key: 'accept', label: 'REST request → 202 (gateway)', from: 'submitted', to: 'accepted', side: 'trellis' },
  { key: 'decide', label: '202 → engine takes the action (relay, broker)', from: 'accepted', to: 'decided', side: 'trellis' },
  { key: 'order', label: 'snapshot, policies, commit → worker takes the order (relay, broker)', from: 'decided', to: 'ordered', side: 'trellis' },
  { key: 'submit', label: 'server group + server requests to Nova (worker ↔ Nova API)', from: 'ordered', to: 'applied', side: 'nova' },
  { key: 'build', label: 'requests done → last server ACTIVE in Nova (builds)', from: 'applied', to: 'lastActive', side: 'nova' },
  { key: 'notice', label: 'last ACTIVE → build poller records it', from: 'lastActive', to: 'observed', side: 'trellis' },
  { key: 'finish', label: 'recorded → action SUCCEEDED (relay, broker, engine)', from: 'observed', to: 'finished', side: 'trellis' },
  { key: 'notify', label: 'SUCCEEDED → notification at the client', from: 'finished', to: 'notified', side: 'trellis' },
];

const loadavg = () => os.loadavg().map((l) => Math.round(l * 100) / 100);
const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function serversOf(stack: Stack, token: string, clusterId: string): Promise<Array<Record<string, any>>> {
  // Nova answers at most its max_limit (1,000) servers a page: page through them by marker
  const all: Array<Record<string, any>> = [];
  let marker: string | null = null;
  for (;;) {
    const query = `all_tenants=1&limit=1000${marker ? `&marker=${marker}` : ''}`;
    const res = await fetch(`${stack.computeUrl}/servers/detail?${query}`, { headers: { 'X-Auth-Token': token, 'OpenStack-API-Version': 'compute latest' } });
    if (!res.ok) throw new Error(`GET /servers/detail: ${res.status} ${await res.text()}`);
    const page = ((await res.json()) as { servers: Array<Record<string, any>> }).servers;
    all.push(...page);
    if (page.length < 1000) break;
    marker = String(page[page.length - 1].id);
  }
  return all.filter((s) => s.metadata?.trellis_cluster === clusterId);
}

/**
 * the nova-worker's compute requests so far, by operation (its trellis_openstack_requests_total), and
 * the servers its build poller's lists returned (`servers_listed.whole` / `.changes`)
 */
async function computeRequests(stack: Stack): Promise<Record<string, number>> {
  const res = await fetch(stack.workerMetricsUrl);
  if (!res.ok) throw new Error(`GET ${stack.workerMetricsUrl}: ${res.status}`);
  const out: Record<string, number> = {};
  for (const line of (await res.text()).split('\n')) {
    const listed = /^trellis_build_poll_listed_servers_total\{list="([a-z]+)"\} (\d+)$/.exec(line);
    if (listed) out[`servers_listed.${listed[1]}`] = Number(listed[2]);
    const m = /^trellis_openstack_requests_total\{(.*)\} (\d+)$/.exec(line);
    if (!m || !/service="compute"/.test(m[1])) continue;
    const op = /operation="([^"]+)"/.exec(m[1])?.[1] ?? '?';
    out[op] = (out[op] ?? 0) + Number(m[2]);
  }
  return out;
}

const minus = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]).filter(([, v]) => (v as number) > 0));

async function timeline(db: Client, actionId: string, submitted: number, accepted: number, notified: number, servers: Array<Record<string, any>>): Promise<Timeline> {
  const a = await db.query<{ start_time: number; end_time: number; status: string }>(`SELECT start_time, end_time, status FROM actions WHERE id = $1`, [actionId]);
  const o = await db.query<{ created: Date; timeout: number; bytes: number }>(
    `SELECT created_at AS created, (payload->>'build_timeout')::int AS timeout, octet_length(payload::text) AS bytes FROM work_orders WHERE action_id = $1`,
    [actionId],
  );
  const n = await db.query<{ applied: Date; observed: Date; count: string }>(
    `SELECT max(build_deadline) AS applied, max(created_at) AS observed, count(*)::text AS count FROM nodes WHERE action_id = $1`,
    [actionId],
  );
  const launched = servers.map((s) => Date.parse(`${s['OS-SRV-USG:launched_at']}Z`)).filter((t) => Number.isFinite(t));
  return {
    submitted,
    accepted,
    decided: a.rows[0].start_time * 1000,
    ordered: o.rows[0].created.getTime(),
    applied: n.rows[0].applied.getTime() - o.rows[0].timeout * 1000,
    firstActive: Math.min(...launched),
    lastActive: Math.max(...launched),
    observed: n.rows[0].observed.getTime(),
    finished: a.rows[0].end_time * 1000,
    notified,
    orderBytes: Number(o.rows[0].bytes),
  };
}

/** Asks the simulator to inject a fault (here: a delay) into the requests matching it. */
async function simFault(stack: Stack, fault: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${stack.simUrl}/_sim/faults`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(fault) });
  if (!res.ok) throw new Error(`simulator fault ${JSON.stringify(fault)}: ${res.status} ${await res.text()}`);
}

async function run(ctx: BenchContext): Promise<BenchResult> {
  const p = intParams('scale-out', ctx.params, ctx.quick ? QUICK : FULL, {
    build_delay_ms: { min: 0, max: 600_000 },
    hosts_per_zone: { min: 1, max: 5000 },
    user_data_kb: { min: 0, max: 47 },
    delete_delay_ms: { min: 0, max: 10_000 },
  });
  const loadBefore = loadavg();
  ctx.progress.start(`starting the services (simulator: 2 zones × ${p.hosts_per_zone} hosts, build delay ${p.build_delay_ms} ms)`, 1);
  // a cluster of more than Senlin's 1000 nodes needs the deployment's limit raised (TRELLIS_MAX_NODES_PER_CLUSTER)
  const env = p.nodes > 1000 ? { TRELLIS_MAX_NODES_PER_CLUSTER: String(p.nodes) } : undefined;
  const stack = await startStack({ root: ctx.root, buildDelayMs: p.build_delay_ms, zones: 2, hostsPerZone: p.hosts_per_zone, instancesPerHost: 100, env });
  ctx.progress.end();
  let events: FinishedListener | null = null;
  const db = new Client({ connectionString: stack.db.url });
  try {
    await db.connect();
    const api = new Api(stack.apiUrl, await demoToken(stack.authUrl));
    const admin = await adminToken(stack.authUrl);
    events = await FinishedListener.open(stack.vhost.url);
    const userData = p.user_data_kb ? `#!/bin/sh\n${'# trellis bench\n'.repeat(Math.floor((p.user_data_kb * 1024 - 10) / 16))}` : undefined;
    const spec = userData ? { ...PROFILE_SPEC, properties: { ...PROFILE_SPEC.properties, user_data: userData } } : PROFILE_SPEC;
    await api.expect(201, 'POST', '/v1/profiles', { profile: { name: 'bench-profile', spec } });
    const affinity = (await api.expect(201, 'POST', '/v1/policies', { policy: { name: 'bench-soft-anti', spec: POLICIES.affinity } })).body.policy.id as string;
    const zones = (await api.expect(201, 'POST', '/v1/policies', { policy: { name: 'bench-zones', spec: POLICIES.zones } })).body.policy.id as string;

    const timelines: Timeline[] = [];
    /** the worker's requests to Nova's compute API for each scale-out, by operation */
    const requests: Array<Record<string, number>> = [];
    const placements: Array<{ servers: number; hosts: number; zones: Record<string, number>; errors: number }> = [];
    const scaleIns: Array<{ total_ms: number }> = [];
    ctx.progress.start(`${p.runs} scale-out(s) of ${p.nodes} nodes, each on a new cluster`, p.runs);
    for (let r = 0; r < p.runs; r++) {
      const created = await api.expect(202, 'POST', '/v1/clusters', {
        cluster: { name: `bench-${r}`, profile_id: 'bench-profile', desired_capacity: 0, min_size: 0, max_size: -1 },
      });
      const clusterId = created.body.cluster.id as string;
      await api.waitForAction(Api.actionIdOf(created));
      for (const policyId of [affinity, zones]) {
        const attach = await api.expect(202, 'POST', `/v1/clusters/${clusterId}/actions`, { policy_attach: { policy_id: policyId } });
        const done = await api.waitForAction(Api.actionIdOf(attach));
        if (done.status !== 'SUCCEEDED') throw new Error(`policy_attach ${policyId}: ${done.status} ${done.status_reason}`);
      }
      const requestsBefore = await computeRequests(stack);
      const submitted = Date.now();
      const res = await api.expect(202, 'POST', `/v1/clusters/${clusterId}/actions`, { scale_out: { count: p.nodes } });
      const accepted = Date.now();
      const actionId = Api.actionIdOf(res);
      const f = await events.finished(actionId, 600_000);
      const notified = Date.now();
      if (f.status !== 'SUCCEEDED') {
        const a = (await api.expect(200, 'GET', `/v1/actions/${actionId}`)).body.action;
        throw new Error(`scale-out of ${p.nodes} ended ${f.status}: ${a.status_reason}`);
      }
      requests.push(minus(await computeRequests(stack), requestsBefore));
      const servers = await serversOf(stack, admin, clusterId);
      if (servers.length !== p.nodes) throw new Error(`expected ${p.nodes} servers in Nova for cluster ${clusterId}, found ${servers.length}`);
      timelines.push(await timeline(db, actionId, submitted, accepted, notified, servers));
      const zoneCounts: Record<string, number> = {};
      for (const s of servers) zoneCounts[s['OS-EXT-AZ:availability_zone']] = (zoneCounts[s['OS-EXT-AZ:availability_zone']] ?? 0) + 1;
      placements.push({
        servers: servers.length,
        hosts: new Set(servers.map((s) => s['OS-EXT-SRV-ATTR:host'])).size,
        zones: zoneCounts,
        errors: servers.filter((s) => s.status !== 'ACTIVE').length,
      });

      // then the whole cluster scaled in, each server DELETE answered after delete_delay_ms
      if (p.delete_delay_ms > 0) await simFault(stack, { method: 'DELETE', path: '/servers/[^/]+$', delay_ms: p.delete_delay_ms, times: p.nodes });
      const inSubmitted = Date.now();
      const scaleIn = await api.expect(202, 'POST', `/v1/clusters/${clusterId}/actions`, { scale_in: { count: p.nodes } });
      const fin = await events.finished(Api.actionIdOf(scaleIn), 600_000);
      if (fin.status !== 'SUCCEEDED') throw new Error(`scale-in of ${p.nodes} ended ${fin.status}`);
      scaleIns.push({ total_ms: Date.now() - inSubmitted });
      ctx.progress.tick();
    }
    ctx.progress.end();
    const loadAfter = loadavg();

    const phaseMs = (t: Timeline, ph: (typeof PHASES)[number]) => t[ph.to] - t[ph.from];
    const total = timelines.map((t) => t.notified - t.submitted);
    const sideMs = (t: Timeline, side: 'trellis' | 'nova') => PHASES.filter((ph) => ph.side === side).reduce((s, ph) => s + phaseMs(t, ph), 0);
    const pollerWait = timelines.map((t) => t.lastActive - t.applied + (t.observed - t.lastActive));
    const table: BenchTable = {
      title: `Scale-out of ${p.nodes} nodes (soft anti-affinity + 2 zones), simulator build delay ${p.build_delay_ms} ms, 2 × ${p.hosts_per_zone} hosts: medians of ${timelines.length} run(s)`,
      columns: [
        { key: 'phase', label: 'phase' },
        { key: 'side', label: 'whose' },
        { key: 'ms', label: 'ms' },
        { key: 'share', label: 'share' },
      ],
      rows: [
        ...PHASES.map((ph) => {
          const v = median(timelines.map((t) => phaseMs(t, ph)));
          return { phase: ph.label, side: ph.side === 'nova' ? 'Nova' : 'Trellis', ms: Math.round(v), share: `${Math.round((v / median(total)) * 100)} %` };
        }),
        { phase: 'total: REST request → notification', side: '', ms: Math.round(median(total)), share: '100 %' },
        { phase: 'of which waiting on Nova (requests + builds)', side: 'Nova', ms: Math.round(median(timelines.map((t) => sideMs(t, 'nova')))), share: `${Math.round((median(timelines.map((t) => sideMs(t, 'nova'))) / median(total)) * 100)} %` },
        { phase: 'of which Trellis (everything else)', side: 'Trellis', ms: Math.round(median(timelines.map((t) => sideMs(t, 'trellis')))), share: `${Math.round((median(timelines.map((t) => sideMs(t, 'trellis'))) / median(total)) * 100)} %` },
        { phase: "build poller's wait (requests done → last node recorded)", side: '', ms: Math.round(median(pollerWait)), share: '' },
        { phase: `then: scale-in of the ${p.nodes} nodes, REST request → notification`, side: '', ms: Math.round(median(scaleIns.map((r) => r.total_ms))), share: '' },
      ],
      footnotes: [
        'times from the services\' own records (actions, work_orders, nodes) and Nova\'s OS-SRV-USG:launched_at; every process on one machine and clock',
        `profile user_data: ${p.user_data_kb ? `${userData!.length} bytes` : 'none'}; work order as stored by the worker: ${timelines.map((t) => t.orderBytes).join(', ')} bytes`,
        `the worker's TRELLIS_POLL_INTERVAL_MS and TRELLIS_WORKER_CONCURRENCY at their defaults (500 ms, 8 requests at a time)`,
        `placement: ${placements.map((pl) => `${pl.hosts} hosts, zones ${JSON.stringify(pl.zones)}`).join('; ')}`,
        `the worker's requests to Nova's compute API per scale-out: ${requests.map((r) => JSON.stringify(r)).join('; ')}`,
        `scale-in: the simulator answers each server DELETE after ${p.delete_delay_ms} ms (a real Nova's DELETE took 74-199 ms on this kind of machine)`,
        `load average ${loadBefore.join(' ')} → ${loadAfter.join(' ')}`,
      ],
    };
    const targets: TargetCheck[] = [
      {
        what: `every server ACTIVE, on distinct hosts (soft anti-affinity, ${p.hosts_per_zone * 2} hosts)`,
        target: `${p.nodes} servers, ${p.nodes} hosts`,
        measured: placements.map((pl) => `${pl.servers - pl.errors} / ${pl.hosts}`).join(', '),
        met: placements.every((pl) => pl.errors === 0 && pl.hosts === p.nodes),
      },
    ];
    return {
      parameters: { ...p, mode: 'separate processes (dist/apps/<app>/src/main.js) on PostgreSQL + RabbitMQ', policies: POLICIES },
      figures: {
        runs: timelines.map((t) => ({
          total_ms: t.notified - t.submitted,
          phases_ms: Object.fromEntries(PHASES.map((ph) => [ph.key, phaseMs(t, ph)])),
          nova_ms: sideMs(t, 'nova'),
          trellis_ms: sideMs(t, 'trellis'),
          first_to_last_active_ms: t.lastActive - t.firstActive,
          work_order_bytes: t.orderBytes,
        })),
        median_total_ms: median(total),
        scale_ins: scaleIns,
        median_scale_in_ms: median(scaleIns.map((r) => r.total_ms)),
        compute_requests: requests,
        placements,
        load_average_before: loadBefore,
        load_average_after: loadAfter,
      },
      tables: [table],
      targets,
      notes: ['Figures on a shared, busy machine (see the load averages); the issue sets no time target for this one.'],
    };
  } finally {
    await events?.close();
    await db.end().catch(() => undefined);
    await stack.close();
  }
}

export const benchmark = defineBenchmark({
  name: 'scale-out',
  description: '100-node scale-out with soft anti-affinity and zones on the simulator: total time, Nova waiting vs Trellis work',
  run,
});
