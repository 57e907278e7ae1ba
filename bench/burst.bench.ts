import 'reflect-metadata';
import * as os from 'os';
import { performance } from 'perf_hooks';
import { Client } from 'pg';
import { BenchContext, BenchResult, BenchTable, TargetCheck, defineBenchmark } from './harness/benchmark';
import { percentile } from './harness/stats';
import { FinishedListener, RpcCaller, deadLetters } from './support/clients';
import { intParams } from './support/params';
import { backendCpu, backendCpuGrowth, mb } from './support/processes';
import { seedClusters } from './support/seed';
import { Api, PROFILE_SPEC, SERVICES, demoToken, deployedHeapLimits, heapFlags, startStack, type Stack } from './support/stack';

/**
 * Issue 15 point 4: an alarm storm. 500 scale-outs arrive at once over 100 clusters, first as RPC
 * requests (`cluster.scale_out` on trellis.rpc, as a service sends them), then as webhook triggers
 * (`POST /v1/webhooks/{id}/trigger?V=2`, as a monitoring system fires a receiver's alarm_url).
 * Every request must be answered, accepted or refused with Senlin's reason, within 2 s; every
 * accepted action must finish. The gateway runs with the limits Trellis ships (docs/SECURITY.md,
 * Limits); `--param people_limits=1` gives RPC and webhooks the limits meant for people instead
 * (TRELLIS_MAX_ACTIONS_PER_PROJECT's 50, REST's 20 requests a second in bursts of 100), which is what
 * they met before RPC and webhooks had limits of their own.
 */

const ANSWER_WITHIN_MS = 2000;

interface Answer {
  cluster: string;
  sentAt: number;
  ms: number;
  status: number;
  /** Senlin's error type for a refusal */
  type: string | null;
  message: string | null;
  actionId: string | null;
}

interface Storm {
  via: 'rpc' | 'webhook';
  answers: Answer[];
  startedAt: number;
  /** ms from the first request to the last accepted action's action.finished */
  lastFinishedMs: number | null;
  finished: Record<string, number>;
  /** scale-out actions stored during the storm, from the database */
  storedActions: number;
  /** CPU ms per request from the first request to the last answer: each service, PostgreSQL's backends of this database */
  cpuMsPerRequest: Record<string, number>;
}

/** CPU seconds so far of the Trellis services and of the PostgreSQL backends connected to the benchmark database. */
async function cpuNow(stack: Stack, db: Client): Promise<{ services: Record<string, number>; postgres: Map<number, number> }> {
  return {
    services: {
      gateway: stack.services.gateway.cpuSeconds() ?? NaN,
      'policy-engine': stack.services['policy-engine'].cpuSeconds() ?? NaN,
      'nova-worker': stack.services['nova-worker'].cpuSeconds() ?? NaN,
    },
    postgres: await backendCpu(db),
  };
}

const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;
const loadavg = () => os.loadavg().map((l) => round(l, 2));

/** Requests in the order an alarm storm sends them: every cluster once, then every cluster again... */
function stormOrder(clusters: string[], perCluster: number): string[] {
  const out: string[] = [];
  for (let round = 0; round < perCluster; round++) out.push(...clusters);
  return out;
}

async function rpcStorm(caller: RpcCaller, order: string[]): Promise<Answer[]> {
  return Promise.all(
    order.map(async (cluster) => {
      const sentAt = performance.now();
      const reply = await caller.call('cluster.scale_out', { cluster_id: cluster }, { count: 1 }, 120_000);
      return {
        cluster,
        sentAt,
        ms: performance.now() - sentAt,
        status: reply.status,
        type: reply.error?.type ?? null,
        message: reply.error?.message ?? null,
        actionId: reply.action_id ?? null,
      };
    }),
  );
}

async function webhookStorm(apiUrl: string, receivers: Map<string, string>, order: string[]): Promise<Answer[]> {
  return Promise.all(
    order.map(async (cluster) => {
      const sentAt = performance.now();
      const res = await fetch(`${apiUrl}/v1/webhooks/${receivers.get(cluster)}/trigger?V=2`, { method: 'POST', signal: AbortSignal.timeout(120_000) });
      const text = await res.text();
      const ms = performance.now() - sentAt;
      let body: any = null;
      try {
        body = JSON.parse(text);
      } catch {
        /* a body that is not JSON is reported as the message */
      }
      const location = res.headers.get('location');
      return {
        cluster,
        sentAt,
        ms,
        status: res.status,
        type: body?.error?.type ?? null,
        message: body?.error?.message ?? (res.status >= 400 ? text.slice(0, 200) : null),
        actionId: location ? location.split('/actions/')[1] : null,
      };
    }),
  );
}

async function storm(
  via: Storm['via'],
  send: () => Promise<Answer[]>,
  stack: Stack,
  db: Client,
  listener: FinishedListener,
  timeoutMs: number,
): Promise<Storm> {
  const since = (await db.query<{ now: Date }>('SELECT now()')).rows[0].now;
  const cpuBefore = await cpuNow(stack, db);
  const startedAt = performance.now();
  const answers = await send();
  const cpuAfter = await cpuNow(stack, db);
  const cpuMsPerRequest = {
    ...Object.fromEntries(Object.keys(cpuBefore.services).map((k) => [k, round(((cpuAfter.services[k] - cpuBefore.services[k]) * 1000) / answers.length, 2)])),
    postgres: round((backendCpuGrowth(cpuBefore.postgres, cpuAfter.postgres) * 1000) / answers.length, 2),
  };
  const accepted = answers.filter((a) => a.status === 202);
  for (const a of accepted) if (!a.actionId) throw new Error(`${via}: a 202 without an action id`);
  const ends = await Promise.all(accepted.map((a) => listener.finished(a.actionId!, timeoutMs)));
  const finished: Record<string, number> = {};
  for (const e of ends) finished[e.status] = (finished[e.status] ?? 0) + 1;
  const stored = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actions WHERE action = 'CLUSTER_SCALE_OUT' AND created_at >= $1`, [since]);
  return {
    via,
    answers,
    startedAt,
    lastFinishedMs: ends.length ? Math.max(...ends.map((e) => e.at)) - startedAt : null,
    finished,
    storedActions: stored.rows[0].n,
    cpuMsPerRequest,
  };
}

/** `202 accepted`, `409 ResourceIsLocked`, ... with how many each */
function outcomes(s: Storm): Array<{ outcome: string; count: number; example: string }> {
  const groups = new Map<string, { count: number; example: string }>();
  for (const a of s.answers) {
    const key = a.status === 202 ? '202 accepted' : `${a.status} ${a.type ?? '(no type)'}`;
    const g = groups.get(key) ?? { count: 0, example: a.message ?? '' };
    g.count++;
    groups.set(key, g);
  }
  return [...groups.entries()].sort((x, y) => y[1].count - x[1].count).map(([outcome, g]) => ({ outcome, ...g }));
}

function latency(s: Storm) {
  const sorted = Float64Array.from(s.answers.map((a) => a.ms)).sort();
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] };
}

async function run(ctx: BenchContext): Promise<BenchResult> {
  const p = intParams(
    'burst',
    ctx.params,
    {
      clusters: ctx.quick ? 20 : 100,
      per_cluster: 5,
      nodes: 2,
      build_delay_ms: ctx.quick ? 200 : 1000,
      people_limits: 0,
      action_limits: 1,
      ...deployedHeapLimits(ctx.root),
    },
    {
      clusters: { min: 1, max: 1000 },
      per_cluster: { min: 1, max: 100 },
      nodes: { min: 0, max: 100 },
      build_delay_ms: { min: 0, max: 60_000 },
      people_limits: { min: 0, max: 1 },
      action_limits: { min: 0, max: 1 },
      semi_space_mb: { min: 0, max: 1024 },
      old_space_mb: { min: 0, max: 65_536 },
    },
  );
  const flags = heapFlags(p);
  const requests = p.clusters * p.per_cluster;
  // before RPC and webhooks had their own limits they met the people's: 50 unfinished actions, and RPC shared REST's rate
  const peopleLimits: Record<string, string> = p.people_limits === 1 ? { TRELLIS_MAX_RPC_WEBHOOK_ACTIONS_PER_PROJECT: '50', TRELLIS_RPC_REQUESTS_PER_SECOND: '20', TRELLIS_RPC_REQUEST_BURST: '100' } : {};
  // action_limits=0: no limits on unfinished actions, so no advisory locks: what they cost a storm
  const noActionLimits: Record<string, string> =
    p.action_limits === 0 ? { TRELLIS_MAX_ACTIONS_PER_PROJECT: '0', TRELLIS_MAX_RPC_WEBHOOK_ACTIONS_PER_PROJECT: '0', TRELLIS_MAX_ACTIONS: '0' } : {};
  const loadBefore = loadavg();
  ctx.progress.start('starting the four services (limits as shipped)', 1);
  const stack = await startStack({
    root: ctx.root,
    buildDelayMs: p.build_delay_ms,
    zones: 2,
    hostsPerZone: 10,
    instancesPerHost: Math.ceil((p.clusters * (p.nodes + 2 * p.per_cluster)) / 10) + 10,
    admissionLimits: 'defaults',
    env: { ...(flags ? { NODE_OPTIONS: flags } : {}), ...peopleLimits, ...noActionLimits },
  });
  ctx.progress.end();
  const db = new Client({ connectionString: stack.db.url });
  await db.connect();
  let listener: FinishedListener | null = null;
  let caller: RpcCaller | null = null;
  try {
    const token = await demoToken(stack.authUrl);
    const api = new Api(stack.apiUrl, token);
    const profile = (await api.expect(201, 'POST', '/v1/profiles', { profile: { name: 'burst-profile', spec: PROFILE_SPEC } })).body.profile.id as string;
    ctx.progress.start(`inserting ${p.clusters} clusters of ${p.nodes} nodes and a scale-out receiver for each`, 1);
    const clusters = await seedClusters(db, { profileId: profile, clusters: p.clusters, nodesPerCluster: p.nodes, zones: 2, hostsPerZone: 10, namePrefix: 'storm' });
    // the first receiver through the API (it makes the owner's Keystone trust), the others as copies of its row
    const first = (
      await api.expect(201, 'POST', '/v1/receivers', { receiver: { name: 'alarm-0', type: 'webhook', cluster_id: clusters[0], action: 'CLUSTER_SCALE_OUT' } })
    ).body.receiver.id as string;
    const copies = await db.query<{ id: string; cluster_id: string }>(
      `INSERT INTO receivers (id, name, type, cluster_id, action, actor, params, channel, project, "user", domain, created_at)
       SELECT g.id, 'alarm-' || g.n, r.type, g.cluster, r.action, r.actor, r.params,
              jsonb_build_object('alarm_url', replace(r.channel->>'alarm_url', r.id::text, g.id::text)), r.project, r."user", r.domain, now()
         FROM receivers r, (SELECT gen_random_uuid() AS id, c AS cluster, ordinality AS n FROM unnest($2::uuid[]) WITH ORDINALITY c) g
        WHERE r.id = $1
       RETURNING id, cluster_id`,
      [first, clusters.slice(1)],
    );
    const receivers = new Map<string, string>([[clusters[0], first], ...copies.rows.map((r) => [r.cluster_id, r.id] as [string, string])]);
    ctx.progress.end();

    listener = await FinishedListener.open(stack.vhost.url);
    caller = await RpcCaller.open(stack.vhost.url, token);
    const order = stormOrder(clusters, p.per_cluster);
    const timeoutMs = 300_000;

    ctx.progress.start(`RPC storm: ${requests} cluster.scale_out at once over ${p.clusters} clusters`, 1);
    const rpc = await storm('rpc', () => rpcStorm(caller!, order), stack, db, listener, timeoutMs);
    ctx.progress.end(`${rpc.answers.filter((a) => a.status === 202).length} accepted, last finished after ${round(rpc.lastFinishedMs ?? 0, 0)} ms`);

    ctx.progress.start(`webhook storm: ${requests} triggers at once over ${p.clusters} receivers`, 1);
    const hooks = await storm('webhook', () => webhookStorm(stack.apiUrl, receivers, order), stack, db, listener, timeoutMs);
    ctx.progress.end(`${hooks.answers.filter((a) => a.status === 202).length} accepted, last finished after ${round(hooks.lastFinishedMs ?? 0, 0)} ms`);

    // every accepted scale-out added one ACTIVE node to its cluster, and nothing else did
    const acceptedPerCluster = new Map<string, number>();
    for (const a of [...rpc.answers, ...hooks.answers]) if (a.status === 202) acceptedPerCluster.set(a.cluster, (acceptedPerCluster.get(a.cluster) ?? 0) + 1);
    const counts = await db.query<{ cluster_id: string; n: number }>(
      `SELECT cluster_id, count(*)::int AS n FROM nodes WHERE cluster_id = ANY($1::uuid[]) AND status = 'ACTIVE' GROUP BY cluster_id`,
      [clusters],
    );
    const wrongSizes = counts.rows.filter((r) => r.n !== p.nodes + (acceptedPerCluster.get(r.cluster_id) ?? 0)).length + (clusters.length - counts.rows.length);
    const dlq = await deadLetters(stack.vhost.url);
    const deadLettered = Object.values(dlq).reduce((a, b) => a + b, 0);
    const memory = Object.fromEntries(SERVICES.map((s) => [s, stack.services[s].memory()]));

    const storms = [rpc, hooks];
    const rows = storms.map((s) => {
      const l = latency(s);
      const accepted = s.answers.filter((a) => a.status === 202).length;
      return {
        via: s.via === 'rpc' ? 'RPC (cluster.scale_out)' : 'webhook (trigger?V=2)',
        requests: s.answers.length,
        accepted,
        refused: s.answers.length - accepted,
        p50: `${round(l.p50)} ms`,
        p99: `${round(l.p99)} ms`,
        max: `${round(l.max)} ms`,
        last: s.lastFinishedMs === null ? '-' : `${round(s.lastFinishedMs / 1000, 2)} s`,
        finished: Object.entries(s.finished)
          .map(([k, v]) => `${v} ${k}`)
          .join(', '),
        cpu: `${s.cpuMsPerRequest.gateway} / ${s.cpuMsPerRequest.postgres} ms`,
      };
    });
    const table: BenchTable = {
      title: `${requests} scale-outs at once over ${p.clusters} clusters (${p.per_cluster} each, the whole round of clusters, then again), limits ${p.people_limits ? "meant for people (before)" : 'as shipped'}`,
      columns: [
        { key: 'via', label: 'sent as' },
        { key: 'requests', label: 'requests', align: 'right' },
        { key: 'accepted', label: 'accepted', align: 'right' },
        { key: 'refused', label: 'refused', align: 'right' },
        { key: 'p50', label: 'answer p50', align: 'right' },
        { key: 'p99', label: 'answer p99', align: 'right' },
        { key: 'max', label: 'answer max', align: 'right' },
        { key: 'last', label: 'first request → last finished', align: 'right' },
        { key: 'finished', label: 'accepted ended' },
        { key: 'cpu', label: 'CPU/request until answered: gateway / PostgreSQL', align: 'right' },
      ],
      rows,
      footnotes: [
        'answer: from sending the request to its reply (RPC: publish → reply on direct reply-to; webhook: HTTP request → response)',
        'CPU/request: growth of utime + stime (/proc) from the first request to the last answer ÷ requests; PostgreSQL: the backends connected to the benchmark database (the engine and worker start on accepted actions meanwhile, so theirs are in it too)',
        `simulator build delay ${p.build_delay_ms} ms; the services, PostgreSQL, RabbitMQ and this client share the machine`,
      ],
    };
    const reasons: BenchTable = {
      title: 'answers by outcome',
      columns: [
        { key: 'via', label: 'sent as' },
        { key: 'outcome', label: 'outcome' },
        { key: 'count', label: 'count', align: 'right' },
        { key: 'example', label: "Senlin's reason (one of them)" },
      ],
      rows: storms.flatMap((s) => outcomes(s).map((o) => ({ via: s.via, ...o, example: o.example.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>').slice(0, 110) }))),
    };
    const targets: TargetCheck[] = storms.flatMap((s) => {
      const slow = s.answers.filter((a) => a.ms > ANSWER_WITHIN_MS).length;
      const unexplained = s.answers.filter((a) => a.status !== 202 && (!a.type || !a.message || a.status >= 500)).length;
      const accepted = s.answers.filter((a) => a.status === 202).length;
      return [
        { what: `${s.via}: every request answered within 2 s`, target: `${s.answers.length}`, measured: `${s.answers.length - slow} (max ${round(latency(s).max)} ms)`, met: slow === 0 },
        { what: `${s.via}: every refusal a 4xx with Senlin's reason`, target: '0 without', measured: `${unexplained} without`, met: unexplained === 0 },
        { what: `${s.via}: every accepted action finished SUCCEEDED`, target: `${accepted}`, measured: `${s.finished.SUCCEEDED ?? 0}`, met: (s.finished.SUCCEEDED ?? 0) === accepted },
        { what: `${s.via}: actions stored = accepted (a refusal stores nothing)`, target: `${accepted}`, measured: `${s.storedActions}`, met: s.storedActions === accepted },
      ];
    });
    targets.push(
      { what: 'clusters whose ACTIVE nodes ≠ seeded + accepted scale-outs', target: '0', measured: String(wrongSizes), met: wrongSizes === 0 },
      { what: 'dead-lettered messages', target: '0', measured: String(deadLettered), met: deadLettered === 0 },
    );
    return {
      parameters: { ...p, requests, heap_flags: flags, limits: { ...(p.people_limits ? peopleLimits : {}), ...noActionLimits, others: 'as shipped (docs/SECURITY.md, Limits)' } },
      figures: {
        load_before: loadBefore,
        load_after: loadavg(),
        storms: storms.map((s) => ({
          via: s.via,
          requests: s.answers.length,
          accepted: s.answers.filter((a) => a.status === 202).length,
          answer_ms: Object.fromEntries(Object.entries(latency(s)).map(([k, v]) => [k, round(v, 2)])),
          first_request_to_last_finished_ms: s.lastFinishedMs === null ? null : round(s.lastFinishedMs, 0),
          finished: s.finished,
          stored_actions: s.storedActions,
          cpu_ms_per_request_until_answered: s.cpuMsPerRequest,
          outcomes: outcomes(s),
        })),
        wrong_cluster_sizes: wrongSizes,
        dead_letters: dlq,
        rss_mb: Object.fromEntries(Object.entries(memory).map(([k, m]) => [k, m ? { rss: mb(m.rss_bytes), peak: mb(m.peak_rss_bytes) } : null])),
      },
      tables: [table, reasons],
      targets,
      notes: [
        "a cluster with an unfinished action refuses another (409 ResourceIsLocked / ActionInProgress), as Senlin's API does: a storm's repeats for one cluster are refused while its first scale-out runs",
      ],
    };
  } finally {
    await caller?.close();
    await listener?.close();
    await db.end().catch(() => undefined);
    await stack.close();
  }
}

export const benchmark = defineBenchmark({
  name: 'burst',
  description: 'an alarm storm: 500 scale-outs at once over 100 clusters, through RPC and through webhooks; each answered within 2 s, all accepted finish',
  run,
});
