import 'reflect-metadata';
import * as os from 'os';
import { performance } from 'perf_hooks';
import { Client } from 'pg';
import { BenchContext, BenchResult, BenchTable, TargetCheck, defineBenchmark } from './harness/benchmark';
import { percentile } from './harness/stats';
import { CpuMeter, FinishedListener, RpcCaller, deadLetters } from './support/clients';
import { brokerRate, insertRate } from './support/limits';
import { intParams } from './support/params';
import { PgCounters } from './support/pg-stats';
import { cpuSecondsOf, cpuSecondsOfCommands, rabbitmqPid, sleep } from './support/processes';
import { seedClusters } from './support/seed';
import { Api, PROFILE_SPEC, SERVICES, demoToken, deployedHeapLimits, heapFlags, startStack, type ServiceName, type Stack } from './support/stack';

/**
 * Issue 7: the whole pipeline on RabbitMQ and PostgreSQL, each service a process of its own.
 * Scale-outs of one node go in through REST and RPC (half each), one active action per cluster,
 * through policy-engine and nova-worker to the simulator (build delay 0).
 */

const FULL = { actions: 2000, clusters: 200, warmup: 200, db_pipeline: 1 };
const QUICK = { actions: 50, clusters: 10, warmup: 10, db_pipeline: 1 };

type Via = 'rest' | 'rpc';

interface ActionRun {
  cluster: number;
  via: Via;
  actionId: string;
  submitAt: number;
  acceptedAt: number;
  finishedAt: number;
  status: string;
  conflicts: number;
}

const ms = (v: number) => Math.round(v * 100) / 100;
const round = (v: number, digits = 2) => Math.round(v * 10 ** digits) / 10 ** digits;
const loadavg = () => os.loadavg().map((l) => round(l));

function latency(values: number[]) {
  const sorted = Float64Array.from(values).sort();
  return { samples: sorted.length, p50_ms: ms(percentile(sorted, 0.5)), p90_ms: ms(percentile(sorted, 0.9)), p99_ms: ms(percentile(sorted, 0.99)), max_ms: ms(sorted[sorted.length - 1] ?? NaN) };
}

class Submitter {
  constructor(
    private readonly api: Api,
    private readonly rpc: RpcCaller,
    private readonly events: FinishedListener,
  ) {}

  /** One scale-out of one node, submitted until accepted (a 409 means the previous one is not quite done), then awaited. */
  async scaleOut(clusterId: string, cluster: number, via: Via): Promise<ActionRun> {
    let conflicts = 0;
    for (;;) {
      const submitAt = performance.now();
      let status: number;
      let actionId: string | undefined;
      let detail: unknown;
      if (via === 'rest') {
        const res = await this.api.call('POST', `/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } });
        status = res.status;
        actionId = res.status === 202 ? Api.actionIdOf(res) : undefined;
        detail = res.body;
      } else {
        const reply = await this.rpc.call('cluster.scale_out', { cluster_id: clusterId }, { count: 1 });
        status = reply.status;
        actionId = reply.action_id;
        detail = reply.error;
      }
      const acceptedAt = performance.now();
      if (status === 409 && conflicts < 50) {
        conflicts++;
        await sleep(20);
        continue;
      }
      if (status !== 202 || !actionId) throw new Error(`scale_out over ${via} of cluster ${clusterId}: ${status} ${JSON.stringify(detail)}`);
      const finished = await this.events.finished(actionId, 300_000);
      return { cluster, via, actionId, submitAt, acceptedAt, finishedAt: finished.at, status: finished.status, conflicts };
    }
  }

  /** `rounds` scale-outs per cluster, the clusters side by side; REST and RPC alternate over clusters and rounds */
  async run(clusterIds: string[], total: number, onDone: () => void): Promise<ActionRun[]> {
    const runs: ActionRun[] = [];
    let next = 0;
    await Promise.all(
      clusterIds.map(async (id, c) => {
        for (let round = 0; ; round++) {
          if (next >= total) return;
          next++;
          const via: Via = (c + round) % 2 === 0 ? 'rest' : 'rpc';
          runs.push(await this.scaleOut(id, c, via));
          onDone();
        }
      }),
    );
    return runs;
  }
}

async function run(ctx: BenchContext): Promise<BenchResult> {
  // the services run with the V8 heap limits they are deployed with (docker-compose.yml's NODE_OPTIONS),
  // as the burst and big-clusters benchmarks do: the young generation's size moves their CPU per action
  const p = intParams('pipeline', ctx.params, { ...(ctx.quick ? QUICK : FULL), ...deployedHeapLimits(ctx.root) }, {
    warmup: { min: 0, max: 100_000 },
    semi_space_mb: { min: 0, max: 1024 },
    old_space_mb: { min: 0, max: 65_536 },
    // 0: the services wait for each BEGIN's answer (TRELLIS_DB_PIPELINE=false), for A/B runs of one build
    db_pipeline: { min: 0, max: 1 },
  });
  const flags = heapFlags(p);
  const env: Record<string, string> = { ...(flags ? { NODE_OPTIONS: flags } : {}), ...(p.db_pipeline === 0 ? { TRELLIS_DB_PIPELINE: 'false' } : {}) };
  const maxPerHost = Math.ceil((p.actions + p.warmup) / 20) + 20;
  ctx.progress.start('starting simulator, gateway, policy-engine, nova-worker (separate processes)', 1);
  const stack = await startStack({ root: ctx.root, buildDelayMs: 0, zones: 2, hostsPerZone: 10, instancesPerHost: maxPerHost, env });
  ctx.progress.end();
  const counters = await PgCounters.open();
  let events: FinishedListener | null = null;
  let rpc: RpcCaller | null = null;
  try {
    const token = await demoToken(stack.authUrl);
    const api = new Api(stack.apiUrl, token);
    const profile = await api.expect(201, 'POST', '/v1/profiles', { profile: { name: 'bench-profile', spec: PROFILE_SPEC } });
    const db = new Client({ connectionString: stack.db.url });
    await db.connect();
    let clusterIds: string[];
    try {
      clusterIds = await seedClusters(db, {
        profileId: profile.body.profile.id,
        clusters: p.clusters,
        nodesPerCluster: 0,
        zones: 2,
        hostsPerZone: 10,
        namePrefix: 'pipe',
      });
    } finally {
      await db.end();
    }
    events = await FinishedListener.open(stack.vhost.url);
    rpc = await RpcCaller.open(stack.vhost.url, token);
    const submitter = new Submitter(api, rpc, events);

    if (p.warmup > 0) {
      ctx.progress.start(`warm-up: ${p.warmup} actions`, p.warmup);
      await submitter.run(clusterIds, p.warmup, () => ctx.progress.tick());
      ctx.progress.end();
    }

    // Quiet: PostgreSQL publishes an idle backend's counters up to 10 s late; then the idle rate.
    const quietMs = ctx.quick ? 2000 : 12_000;
    const idleWindowMs = ctx.quick ? 2000 : 10_000;
    ctx.progress.start(`quiet ${(quietMs + idleWindowMs) / 1000} s: idle commit rate`, 1);
    await sleep(quietMs);
    const idleA = { at: performance.now(), tx: await counters.transactions(stack.db.name), xid: await counters.nextXid() };
    await sleep(idleWindowMs);
    const idleB = { at: performance.now(), tx: await counters.transactions(stack.db.name), xid: await counters.nextXid() };
    ctx.progress.end();
    const idleSeconds = (idleB.at - idleA.at) / 1000;
    const idleCommitsPerSecond = (idleB.tx.commits - idleA.tx.commits) / idleSeconds;
    const idleXidPerSecond = (idleB.xid - idleA.xid) / idleSeconds;

    const outboxBefore = await maxOutboxId(stack.db.url);
    const rowsBefore = await rowWrites(stack.db.url);
    const cpuBefore = cpuOf(stack);
    const broker = rabbitmqPid();
    const serversBefore = { postgres: cpuSecondsOfCommands(['postgres']), rabbitmq: broker ? cpuSecondsOf(broker) : null, client: process.cpuUsage() };
    // PostgreSQL's share for this database alone: its backends (the services' pooled connections),
    // whatever else the server does for other users of the machine
    const backendsBefore = new Map((await counters.backendPids(stack.db.name)).map((pid) => [pid, cpuSecondsOf(pid) ?? 0]));
    const machineCpu = new CpuMeter();
    const loadBefore = loadavg();
    ctx.progress.start(`${p.actions} scale-outs over ${p.clusters} clusters (REST and RPC)`, p.actions);
    const runs = await submitter.run(clusterIds, p.actions, () => ctx.progress.tick());
    ctx.progress.end();
    const loadAfter = loadavg();
    const machineBusy = machineCpu.busyShare();
    const machineBusySeconds = machineCpu.busySeconds();
    const cpuAfter = cpuOf(stack);
    const backendsAfter = await counters.backendPids(stack.db.name);
    let backendSeconds = 0;
    for (const pid of backendsAfter) backendSeconds += (cpuSecondsOf(pid) ?? 0) - (backendsBefore.get(pid) ?? 0);
    const backendsGone = [...backendsBefore.keys()].filter((pid) => !backendsAfter.includes(pid)).length;
    const clientCpu = process.cpuUsage(serversBefore.client);
    const serverCpu = {
      postgres: cpuSecondsOfCommands(['postgres']) - serversBefore.postgres,
      rabbitmq: broker && serversBefore.rabbitmq !== null ? (cpuSecondsOf(broker) ?? NaN) - serversBefore.rabbitmq : NaN,
      client: (clientCpu.user + clientCpu.system) / 1e6,
    };

    // Stopping the services publishes their last counters (a backend flushes when it exits).
    await stack.stopServices();
    const tStop = performance.now();
    const after = { tx: await counters.transactions(stack.db.name), xid: await counters.nextXid() };

    const seconds = (runs.reduce((m, r) => Math.max(m, r.finishedAt), 0) - runs.reduce((m, r) => Math.min(m, r.submitAt), Infinity)) / 1000;
    const rate = runs.length / seconds;
    const failed = runs.filter((r) => r.status !== 'SUCCEEDED');
    const windowSeconds = (tStop - idleB.at) / 1000;
    const rawCommits = after.tx.commits - idleB.tx.commits;
    const backgroundCommits = idleCommitsPerSecond * windowSeconds;
    const commitsPerAction = (rawCommits - backgroundCommits) / runs.length;
    const xidPerAction = (after.xid - idleB.xid - idleXidPerSecond * windowSeconds) / runs.length;

    const outbox = await outboxSince(stack.db.url, outboxBefore);
    const rowsAfter = await rowWrites(stack.db.url);
    const rowsPerAction = Object.fromEntries(
      Object.entries(rowsAfter)
        .map(([table, n]) => [table, round((n - (rowsBefore[table] ?? 0)) / runs.length, 2)] as const)
        .filter(([, n]) => n > 0),
    );
    const messagesPerAction = outbox.total / runs.length;
    const rpcActions = runs.filter((r) => r.via === 'rpc').length;
    // every RPC call is a request and a reply on the broker; 409 retries included
    const rpcMessages = 2 * runs.filter((r) => r.via === 'rpc').reduce((n, r) => n + 1 + r.conflicts, 0);
    const dbSide = await dbLatencies(stack.db.url, runs.map((r) => r.actionId));
    const dlq = await deadLetters(stack.vhost.url);

    // The ceilings, measured right after on the same (now idle) database and vhost.
    const bytes = Math.max(64, Math.round(outbox.meanBytes));
    const n = ctx.quick ? { pipelined: 2000, sequential: 300, inserts: 2000, single: 300 } : { pipelined: 20_000, sequential: 2000, inserts: 20_000, single: 3000 };
    ctx.progress.start(`RabbitMQ alone: ${n.pipelined} + ${n.sequential} confirmed messages of ${bytes} B`, 1);
    const brokerPipelined = await brokerRate(stack.vhost.url, { messages: n.pipelined, bytes, window: 64, prefetch: 16, queue: 'bench.limit' });
    const brokerSequential = await brokerRate(stack.vhost.url, { messages: n.sequential, bytes, window: 1, prefetch: 16, queue: 'bench.limit' });
    ctx.progress.end(`${brokerPipelined.per_second}/s pipelined, ${brokerSequential.per_second}/s one at a time`);
    ctx.progress.start(`PostgreSQL alone: ${n.inserts} + ${n.single} committed inserts`, 1);
    const pgMany = await insertRate(stack.db.url, { inserts: n.inserts, connections: 8, bytes, table: 'bench_limit' });
    const pgOne = await insertRate(stack.db.url, { inserts: n.single, connections: 1, bytes, table: 'bench_limit' });
    ctx.progress.end(`${pgMany.per_second}/s on 8 connections, ${pgOne.per_second}/s on 1`);

    const byBroker = brokerPipelined.per_second / messagesPerAction;
    const byDatabase = pgMany.per_second / commitsPerAction;
    const allowed = Math.min(byBroker, byDatabase);

    const accepted = runs.map((r) => r.finishedAt - r.acceptedAt);
    const figures = {
      mode: 'separate processes (dist/apps/<app>/src/main.js), PostgreSQL + RabbitMQ, fresh database and vhost',
      actions: runs.length,
      failed: failed.length,
      conflicts_retried: runs.reduce((s, r) => s + r.conflicts, 0),
      seconds: round(seconds, 3),
      actions_per_second: round(rate, 1),
      accepted_to_finished: latency(accepted),
      accepted_to_finished_rest: latency(runs.filter((r) => r.via === 'rest').map((r) => r.finishedAt - r.acceptedAt)),
      accepted_to_finished_rpc: latency(runs.filter((r) => r.via === 'rpc').map((r) => r.finishedAt - r.acceptedAt)),
      submit_to_accepted_rest: latency(runs.filter((r) => r.via === 'rest').map((r) => r.acceptedAt - r.submitAt)),
      submit_to_accepted_rpc: latency(runs.filter((r) => r.via === 'rpc').map((r) => r.acceptedAt - r.submitAt)),
      database_created_to_end: dbSide,
      broker_messages: { outbox_by_exchange: outbox.byExchange, outbox_total: outbox.total, per_action: round(messagesPerAction, 3), rpc_request_and_reply: rpcMessages, rpc_actions: rpcActions, mean_payload_bytes: bytes, unpublished: outbox.unpublished },
      database_commits: {
        raw: rawCommits,
        idle_commits_per_second: round(idleCommitsPerSecond, 2),
        window_seconds: round(windowSeconds, 2),
        background_estimate: Math.round(backgroundCommits),
        per_action: round(commitsPerAction, 2),
        rollbacks: after.tx.rollbacks - idleB.tx.rollbacks,
        writing_transactions_per_action_server_wide: round(xidPerAction, 2),
        rows_written_per_action_by_table: rowsPerAction,
      },
      cpu_seconds_per_action_ms: Object.fromEntries(
        SERVICES.map((s) => [s, cpuAfter[s] !== null && cpuBefore[s] !== null ? round(((cpuAfter[s]! - cpuBefore[s]!) * 1000) / runs.length, 2) : null]),
      ),
      // Trellis's own share (issue 15): gateway + policy-engine + nova-worker, the simulator left out
      trellis_cpu_per_action_ms: trellisCpu(cpuBefore, cpuAfter, runs.length),
      machine_cpu_busy_share: machineBusy,
      // where the machine's CPU went, per action: PostgreSQL's and RabbitMQ's server processes, this
      // client, and every process of the machine together (/proc/stat)
      other_cpu_per_action_ms: {
        postgres: round((serverCpu.postgres * 1000) / runs.length, 2),
        // only the backends serving the benchmark database (those open at the end; a backend that
        // opened during the run counts from its start, one that closed is missing: see backends_gone)
        postgres_benchmark_backends: round((backendSeconds * 1000) / runs.length, 2),
        postgres_backends: { before: backendsBefore.size, after: backendsAfter.length, backends_gone: backendsGone },
        rabbitmq: Number.isNaN(serverCpu.rabbitmq) ? null : round((serverCpu.rabbitmq * 1000) / runs.length, 2),
        benchmark_client: round((serverCpu.client * 1000) / runs.length, 2),
        machine_total: machineBusySeconds === null ? null : round((machineBusySeconds * 1000) / runs.length, 2),
        cores: os.cpus().length,
      },
      load_average_before: loadBefore,
      load_average_after: loadAfter,
      dead_letters: dlq,
      limits: {
        broker_pipelined: brokerPipelined,
        broker_one_at_a_time: brokerSequential,
        postgres_8_connections: pgMany,
        postgres_1_connection: pgOne,
        allowed_by_broker: round(byBroker, 1),
        allowed_by_database: round(byDatabase, 1),
        allowed: round(allowed, 1),
        pipeline_fraction_of_allowed: round(rate / allowed, 3),
        pipeline_fraction_of_broker: round(rate / brokerPipelined.per_second, 4),
        pipeline_fraction_of_database: round(rate / pgMany.per_second, 4),
      },
    };

    const tables: BenchTable[] = [
      {
        title: `Pipeline: ${runs.length} scale-outs of 1 node over ${p.clusters} clusters, REST and RPC half each (separate processes, build delay 0)`,
        columns: [
          { key: 'what', label: 'what' },
          { key: 'value', label: 'value', align: 'right' },
        ],
        rows: [
          { what: 'actions per second', value: round(rate, 1) },
          { what: 'accepted → SUCCEEDED p50 (ms)', value: figures.accepted_to_finished.p50_ms },
          { what: 'accepted → SUCCEEDED p99 (ms)', value: figures.accepted_to_finished.p99_ms },
          { what: 'REST accept p50 / p99 (ms)', value: `${figures.submit_to_accepted_rest.p50_ms} / ${figures.submit_to_accepted_rest.p99_ms}` },
          { what: 'RPC accept p50 / p99 (ms)', value: `${figures.submit_to_accepted_rpc.p50_ms} / ${figures.submit_to_accepted_rpc.p99_ms}` },
          { what: 'failed actions', value: failed.length },
          { what: '409 retries', value: figures.conflicts_retried },
          { what: 'broker messages per action (outbox)', value: round(messagesPerAction, 2) },
          { what: '+ RPC request/reply per action', value: round(rpcMessages / runs.length, 2) },
          { what: 'database commits per action', value: round(commitsPerAction, 2) },
          { what: 'writing transactions per action (server-wide)', value: round(xidPerAction, 2) },
          { what: 'machine CPU busy during the run', value: machineBusy === null ? null : `${Math.round(machineBusy * 100)} %` },
          { what: 'load average before → after', value: `${loadBefore.join(' ')} → ${loadAfter.join(' ')}` },
        ],
        footnotes: [
          `commits: pg_stat_database.xact_commit of the benchmark database (read-only transactions included), less ${Math.round(backgroundCommits)} counted at the idle rate of ${round(idleCommitsPerSecond, 1)}/s`,
          `rows written per action (inserts + updates + deletes, pg_stat_user_tables): ${Object.entries(rowsPerAction).map(([k, v]) => `${k} ${v}`).join(', ')}`,
          `messages: outbox rows written during the run (${Object.entries(outbox.byExchange).map(([k, v]) => `${k} ${v}`).join(', ')})`,
        ],
      },
      {
        title: 'CPU time per action, by service',
        columns: [
          { key: 'service', label: 'service' },
          { key: 'cpu', label: 'CPU ms per action' },
        ],
        rows: [
          ...SERVICES.map((s) => ({ service: s, cpu: figures.cpu_seconds_per_action_ms[s] })),
          { service: 'Trellis (gateway + policy-engine + nova-worker)', cpu: figures.trellis_cpu_per_action_ms },
          { service: 'PostgreSQL (server processes)', cpu: figures.other_cpu_per_action_ms.postgres },
          { service: 'PostgreSQL (backends of the benchmark database)', cpu: figures.other_cpu_per_action_ms.postgres_benchmark_backends },
          { service: 'RabbitMQ (beam.smp)', cpu: figures.other_cpu_per_action_ms.rabbitmq },
          { service: 'benchmark client', cpu: figures.other_cpu_per_action_ms.benchmark_client },
          { service: 'whole machine (/proc/stat)', cpu: figures.other_cpu_per_action_ms.machine_total },
        ],
        footnotes: [
          figures.other_cpu_per_action_ms.machine_total
            ? `at ${figures.other_cpu_per_action_ms.machine_total} ms of CPU per action, ${figures.other_cpu_per_action_ms.cores} cores carry at most ${round((figures.other_cpu_per_action_ms.cores * 1000) / figures.other_cpu_per_action_ms.machine_total, 0)} actions/s`
            : 'machine CPU not readable',
        ],
      },
      {
        title: 'Limits: RabbitMQ and PostgreSQL alone (plain amqplib / pg), and the pipeline against them',
        columns: [
          { key: 'what', label: 'what' },
          { key: 'rate', label: 'per second' },
          { key: 'per_action', label: 'per action' },
          { key: 'allows', label: 'actions/s it allows' },
        ],
        rows: [
          { what: `RabbitMQ: persistent confirmed publish (64 in flight) + acked consume, quorum queue, ${bytes} B`, rate: brokerPipelined.per_second, per_action: round(messagesPerAction, 2), allows: round(byBroker, 1) },
          { what: 'RabbitMQ: the same, one publish at a time (as one outbox relay does)', rate: brokerSequential.per_second, per_action: null, allows: null },
          { what: `PostgreSQL: committed single-row inserts, 8 connections (synchronous_commit ${pgMany.synchronous_commit})`, rate: pgMany.per_second, per_action: round(commitsPerAction, 2), allows: round(byDatabase, 1) },
          { what: 'PostgreSQL: the same, 1 connection', rate: pgOne.per_second, per_action: null, allows: null },
          { what: 'pipeline', rate: round(rate, 1), per_action: null, allows: `${Math.round((rate / allowed) * 100)} % of ${round(allowed, 1)}` },
        ],
      },
    ];

    const targets: TargetCheck[] = [
      { what: 'broker messages per action', target: '≤ 4', measured: String(round(messagesPerAction, 2)), met: messagesPerAction <= 4 + 1e-9 },
      { what: 'database commits per action', target: '≤ 6', measured: String(round(commitsPerAction, 2)), met: commitsPerAction <= 6 },
      {
        what: 'pipeline rate vs. what the counts allow',
        target: `≥ 50 % of ${round(allowed, 1)}/s`,
        measured: `${round(rate, 1)}/s (${Math.round((rate / allowed) * 100)} %)`,
        met: rate >= allowed / 2,
      },
      { what: 'every action SUCCEEDED', target: `${runs.length}`, measured: String(runs.length - failed.length), met: failed.length === 0 },
    ];
    const notes = [
      'Figures on a shared, busy machine: see the load averages and the machine CPU share; RabbitMQ, PostgreSQL, the four services and this client share 2 cores.',
      `Warm-up: ${p.warmup} actions before the measured ones (JIT, pools, token cache).`,
    ];
    if (Object.values(dlq).some((v) => v > 0)) notes.push(`dead letters after the run: ${JSON.stringify(dlq)}`);
    if (outbox.unpublished > 0) notes.push(`${outbox.unpublished} outbox rows were still unpublished when the services stopped`);
    return { parameters: { ...p, build_delay_ms: 0, topology: `2 zones × 10 hosts × ${maxPerHost} instances`, mode: figures.mode }, figures, tables, targets, notes };
  } finally {
    await events?.close();
    await rpc?.close();
    await counters.close();
    await stack.close();
  }
}

function trellisCpu(before: Record<ServiceName, number | null>, after: Record<ServiceName, number | null>, actions: number): number | null {
  let seconds = 0;
  for (const s of ['gateway', 'policy-engine', 'nova-worker'] as const) {
    if (before[s] === null || after[s] === null) return null;
    seconds += after[s]! - before[s]!;
  }
  return round((seconds * 1000) / actions, 2);
}

function cpuOf(stack: Stack): Record<ServiceName, number | null> {
  return Object.fromEntries(SERVICES.map((s) => [s, stack.services[s].cpuSeconds()])) as Record<ServiceName, number | null>;
}

async function withClient<T>(url: string, work: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

const maxOutboxId = (url: string) => withClient(url, async (c) => (await c.query<{ m: string }>(`SELECT coalesce(max(id), 0)::text AS m FROM outbox`)).rows[0].m);

async function outboxSince(url: string, id: string) {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ exchange: string; n: string; bytes: string; unpublished: string }>(
      `SELECT exchange, count(*)::text AS n, coalesce(sum(octet_length(payload::text)), 0)::text AS bytes,
              count(*) FILTER (WHERE published_at IS NULL)::text AS unpublished
         FROM outbox WHERE id > $1::bigint GROUP BY exchange ORDER BY exchange`,
      [id],
    );
    const total = rows.reduce((s, r) => s + Number(r.n), 0);
    const bytes = rows.reduce((s, r) => s + Number(r.bytes), 0);
    return {
      byExchange: Object.fromEntries(rows.map((r) => [r.exchange, Number(r.n)])),
      total,
      meanBytes: total ? bytes / total : 0,
      unpublished: rows.reduce((s, r) => s + Number(r.unpublished), 0),
    };
  });
}

/** rows inserted, updated and deleted so far, per table (published with the same delay as the commit counters) */
const rowWrites = (url: string) =>
  withClient(url, async (c) => {
    const { rows } = await c.query<{ relname: string; n: string }>(`SELECT relname, (n_tup_ins + n_tup_upd + n_tup_del)::text AS n FROM pg_stat_user_tables`);
    return Object.fromEntries(rows.map((r) => [r.relname, Number(r.n)])) as Record<string, number>;
  });

/** The same latency as the services recorded it: actions.created_at → end_time. */
async function dbLatencies(url: string, ids: string[]) {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ d: number; status: string }>(
      `SELECT (end_time - extract(epoch FROM created_at)) * 1000 AS d, status FROM actions WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return { ...latency(rows.filter((r) => r.d !== null).map((r) => Number(r.d))), succeeded: rows.filter((r) => r.status === 'SUCCEEDED').length };
  });
}

export const benchmark = defineBenchmark({
  name: 'pipeline',
  description: 'REST + RPC → policy-engine → nova-worker → simulator on RabbitMQ and PostgreSQL: actions/s, latency, messages and commits per action',
  run,
});
