import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { TrellisProcesses, deadLetterCounts, freePort, freshDatabase, freshVhost, type FreshDatabase } from '@trellis/testing/processes';
import { simulatorCloudEnv } from '@trellis/testing/simulator-env';
import { ApiClient, keystoneToken } from '../support/api-client';
import { createProfileAndCluster } from '../support/scale-out.scenario';
import { sample, scrape } from '../support/operating.scenario';
import { checkInvariants, type World } from '../faults/invariants';
import { ScalingLoad } from '../faults/load';
import { engineClaims, overlappingRuns, workerClaims, type ActionRun } from '../faults/replica-checks';

/**
 * Issue 15, point 1: any number of gateways, policy-engines and nova-workers on one broker and one
 * database. Two gateways, two engines, three workers and the Nova simulator run as processes on
 * the integration RabbitMQ (a vhost of their own) and PostgreSQL (a database of its own). A scaling
 * load over CLUSTERS clusters sends every request through one gateway and, at the same moment, a
 * rival request for the same cluster through the other; policy-engine-1 and nova-worker-1 are
 * SIGKILLed while actions are in flight and NOT restarted: the other engine and the two other
 * workers must take their work over (redelivery, and the leases running out). AMQP_URL lists a
 * node that never answers before the real broker, as a RabbitMQ cluster with a node down would be.
 *
 * REPLICAS_ACTIONS / REPLICAS_CLUSTERS change the load; REPLICAS_PORT_BASE puts the two gateways
 * and the simulator on three consecutive ports (otherwise free ones); REPLICAS_KEEP_LOGS=1 keeps
 * the services' logs (in the directory the test prints) after a passing run.
 */

const envInt = (name: string, dflt: number) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return dflt;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a whole number, got '${raw}'`);
  return Number(raw);
};
const ACTIONS = envInt('REPLICAS_ACTIONS', 300);
const CLUSTERS = envInt('REPLICAS_CLUSTERS', 30);
const PORT_BASE = envInt('REPLICAS_PORT_BASE', 0);
const LEASE_SECONDS = 5;
const ACTION_TIMEOUT_SECONDS = 60;
const ROOT = join(__dirname, '..', '..');
const ENGINES = ['policy-engine-1', 'policy-engine-2'];
const WORKERS = ['nova-worker-1', 'nova-worker-2', 'nova-worker-3'];
const KILLED = ['policy-engine-1', 'nova-worker-1'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** the broker URL with the port of a node that is not there (nothing listens on port 1) */
function deadNode(url: string): string {
  const u = new URL(url);
  u.port = '1';
  return u.toString();
}

/** warn and error lines of the services' logs, counted by message */
function noticesIn(logs: string[]): { warn: Record<string, number>; error: Record<string, number> } {
  const out = { warn: {} as Record<string, number>, error: {} as Record<string, number> };
  for (const line of logs.join('\n').split('\n')) {
    if (!line.includes('"level":"warn"') && !line.includes('"level":"error"')) continue;
    try {
      const e = JSON.parse(line) as { level: 'warn' | 'error'; msg: string };
      out[e.level][e.msg] = (out[e.level][e.msg] ?? 0) + 1;
    } catch {
      /* a line cut short by SIGKILL */
    }
  }
  return out;
}

/** the actions whose lease an engine instance ($1) holds: it decided them and they still run */
const ENGINE_IN_HAND = `SELECT id FROM actions WHERE lease_owner = $1 AND status = 'RUNNING'`;
/** the actions a worker instance ($1) holds a work order or a building node of */
const WORKER_IN_HAND = `SELECT action_id AS id FROM work_orders WHERE lease_owner = $1
  UNION SELECT action_id AS id FROM nodes WHERE lease_owner = $1 AND action_id IS NOT NULL`;

describe('replicas: 2 gateways, 2 policy-engines, 3 nova-workers on one broker and one database (issue 15)', () => {
  let db: FreshDatabase;
  let vhost: ReturnType<typeof freshVhost>;
  let procs: TrellisProcesses;
  let load: ScalingLoad;
  let simUrl: string;
  let gatewayUrl: string;
  let clusters: string[] = [];
  let killedAt = 0;
  let passed = false;
  const dir = join(tmpdir(), `trellis-replicas-${process.pid}`);
  const started = Date.now();

  beforeAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, 'logs'), { recursive: true });
    db = await freshDatabase('trellis_replicas');
    vhost = freshVhost('trellis-replicas');
    const port = async (i: number) => (PORT_BASE ? PORT_BASE + i : freePort());
    const [gw1, gw2, sim] = [await port(0), await port(1), await port(2)];
    simUrl = `http://127.0.0.1:${sim}`;
    gatewayUrl = `http://127.0.0.1:${gw1}`;
    procs = new TrellisProcesses({
      root: ROOT,
      logDir: join(dir, 'logs'),
      env: {
        DATABASE_URL: db.url,
        AMQP_URL: `${deadNode(vhost.url)},${vhost.url}`,
        ...simulatorCloudEnv(simUrl),
        TRELLIS_LEASE_SECONDS: String(LEASE_SECONDS),
        TRELLIS_RESUME_INTERVAL_SECONDS: '2',
        TRELLIS_POLL_INTERVAL_MS: '250',
        TRELLIS_DB_POOL_SIZE: '5',
        // the load polls 30 actions at once through two gateways: the per-gateway request rate is
        // not what this test is about (the per-project limit on unfinished actions stays on)
        TRELLIS_REQUESTS_PER_SECOND: '0',
        LOG_LEVEL: 'info',
        NODE_OPTIONS: '--max-semi-space-size=2 --max-old-space-size=192',
      },
      simulatorEnv: { SIMULATOR_PORT: String(sim), SIMULATOR_BUILD_DELAY_MS: '300', LOG_LEVEL: 'info' },
    });
    procs.add('nova-simulator', 'nova-simulator');
    procs.add('gateway-1', 'gateway', { TRELLIS_PORT: String(gw1) });
    procs.add('gateway-2', 'gateway', { TRELLIS_PORT: String(gw2) });
    for (const name of ENGINES) procs.add(name, 'policy-engine');
    for (const name of WORKERS) procs.add(name, 'nova-worker');
    await procs.start('nova-simulator');
    // all at once on the empty database, as `docker compose up` starts replicas: every service runs
    // the migrations, and the advisory lock around them lets one do it while the others wait
    await Promise.all(['gateway-1', 'gateway-2', ...ENGINES, ...WORKERS].map((n) => procs.start(n)));

    const token = await keystoneToken(`${simUrl}/identity/v3`, { name: 'demo', password: 'demo', project: 'demo' });
    const apis = [new ApiClient(`http://127.0.0.1:${gw1}`, token), new ApiClient(`http://127.0.0.1:${gw2}`, token)];
    clusters = await Promise.all(
      Array.from({ length: CLUSTERS }, async (_, i) => (await createProfileAndCluster(apis[i % 2], `replicas-${i}`, 0, { timeout: ACTION_TIMEOUT_SECONDS })).clusterId),
    );
    load = new ScalingLoad({
      api: apis[0],
      moreApis: [apis[1]],
      race: true,
      clusters,
      actionTimeoutSeconds: ACTION_TIMEOUT_SECONDS,
      leaseSeconds: LEASE_SECONDS,
      hangMs: 10_000,
      lastRecovery: () => killedAt,
    });
    load.start();
  }, 240_000);

  afterAll(async () => {
    await load?.stop();
    await procs?.stopAll();
    try {
      vhost?.drop();
    } catch {
      /* already gone */
    }
    await db?.drop();
    if (passed && process.env.REPLICAS_KEEP_LOGS !== '1') rmSync(dir, { recursive: true, force: true });
    else process.stderr.write(`replica test logs: ${join(dir, 'logs')}\n`);
  }, 120_000);

  it(`takes >= ${ACTIONS} actions over ${CLUSTERS} clusters through both gateways, each once, each cluster's in turn, through an engine and a worker SIGKILLed`, async () => {
    const acceptedSoFar = () => load.records.filter((r) => r.actionId).length;
    // every race has at least one of its two requests accepted: ACTIONS races, >= ACTIONS actions
    load.allow(ACTIONS);
    // mid-run: a third of the actions accepted, then half
    while (acceptedSoFar() < ACTIONS / 3 && !load.idle) await sleep(100);
    const engineKill = await killWithWorkInHand('policy-engine-1', ENGINE_IN_HAND);
    while (acceptedSoFar() < ACTIONS / 2 && !load.idle) await sleep(100);
    const workerKill = await killWithWorkInHand('nova-worker-1', WORKER_IN_HAND);
    const inHand = [...engineKill.inHand, ...workerKill.inHand];
    await load.drained();
    const drainedAt = Date.now();

    const w = await world();
    const invariants = checkInvariants(w);
    const engines = engineClaims(w.runs, logsOf(ENGINES));
    const workers = workerClaims(logsOf(WORKERS), KILLED.map((n) => procs.instanceId(n)));
    const overlaps = overlappingRuns(w.runs);
    const deadLetters = await deadLetterCounts(vhost.url);
    const notices = noticesIn(Object.values(logsOf(procs.names)));
    const accepted = load.records.filter((r) => r.actionId);
    const summary = {
      actions_accepted: accepted.length,
      racers_accepted: accepted.filter((r) => r.racer).length,
      racers_refused_409: load.counters.raceRefused409,
      accepted_per_gateway: [0, 1].map((g) => accepted.filter((r) => r.gateway === g).length),
      decided_per_engine: engines.perInstance,
      applied_per_worker: workers.perInstance,
      worker_takeovers: workers.takeovers.length,
      engine_killed_after_accepted: engineKill.accepted,
      worker_killed_after_accepted: workerKill.accepted,
      // actions whose lease the killed replicas held when they were killed: the others finished them
      in_hand_of_killed_engine: engineKill.inHand.length,
      in_hand_of_killed_worker: workerKill.inHand.length,
      drain_after_last_kill_s: Math.round((drainedAt - killedAt) / 100) / 10,
      wall_time_s: Math.round((Date.now() - started) / 100) / 10,
      counters: load.counters,
      warnings: notices.warn,
      dead_letters: deadLetters,
    };
    process.stdout.write(`replica test: ${JSON.stringify(summary, null, 2)}\n`);

    expect(accepted.length).toBeGreaterThanOrEqual(ACTIONS);
    expect(procs.exited(KILLED)).toEqual([]);
    // every action terminal, and SUCCEEDED: nothing here makes one fail
    expect(accepted.filter((r) => r.status !== 'SUCCEEDED').map((r) => ({ id: r.actionId, status: r.status, reason: r.statusReason }))).toEqual([]);
    expect(invariants).toEqual({ lost: [], duplicateServers: [], orphanServers: [], nodesWithoutServer: [], stuckNodes: [], countMismatches: [] });
    // one decision per action, by one engine, and every engine took a share (the killed one before it died)
    expect(engines.violations).toEqual([]);
    for (const e of ENGINES) expect(engines.perInstance[procs.instanceId(e)] ?? 0).toBeGreaterThan(0);
    // one worker applied each order but for orders a killed worker left behind
    expect(workers.violations).toEqual([]);
    for (const wk of WORKERS) expect(workers.perInstance[procs.instanceId(wk)] ?? 0).toBeGreaterThan(0);
    // no two actions of one cluster RUNNING at once
    expect(overlaps).toEqual([]);
    expect(summary.accepted_per_gateway.every((n) => n > 0)).toBe(true);
    // the kills hit replicas with work in hand (the test would prove nothing otherwise), and that work ended well
    expect(engineKill.inHand.length).toBeGreaterThan(0);
    expect(workerKill.inHand.length).toBeGreaterThan(0);
    const statusOf = new Map(w.runs.map((r) => [r.id, r.status]));
    expect(inHand.filter((id) => statusOf.get(id) !== 'SUCCEEDED').map((id) => [id, statusOf.get(id)])).toEqual([]);
    expect(load.counters.raceRefused409).toBeGreaterThan(0);
    expect({ other5xx: load.counters.other5xx, hangs: load.counters.hangs, unexpected4xx: load.counters.unexpected4xx, bad: load.bad }).toEqual({
      other5xx: 0,
      hangs: 0,
      unexpected4xx: 0,
      bad: [],
    });
    expect(Object.values(deadLetters).reduce((a, b) => a + b, 0)).toBe(0);
    expect(notices.error).toEqual({});

    // the killed replicas never deregistered: once their rows are 30 s old every process's /metrics
    // counts them down (the shared services table), the live ones up, and nothing left unfinished
    await sleep(Math.max(0, killedAt + 31_000 - Date.now()));
    const metrics = await scrape(gatewayUrl);
    const components = (binary: string) => [sample(metrics, 'trellis_components', { binary, state: 'up' }), sample(metrics, 'trellis_components', { binary, state: 'down' })];
    expect({ gateway: components('trellis-gateway'), engine: components('trellis-policy-engine'), worker: components('trellis-nova-worker') }).toEqual({
      gateway: [2, 0],
      engine: [1, 1],
      worker: [2, 1],
    });
    expect(['READY', 'WAITING', 'RUNNING', 'WAITING_LIFECYCLE_COMPLETION'].map((status) => sample(metrics, 'trellis_actions_unfinished', { status }))).toEqual([0, 0, 0, 0]);
    passed = true;
  }, 300_000);

  /** SIGKILL `name` the moment the database shows it holding work (`query`: the ids of what it holds) */
  async function killWithWorkInHand(name: string, query: string): Promise<{ at: number; accepted: number; inHand: string[] }> {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const held = (await c.query(query, [procs.instanceId(name)])).rows.map((r: { id: string }) => r.id);
        if (held.length || Date.now() > deadline) {
          await procs.kill(name);
          killedAt = Date.now();
          return { at: killedAt, accepted: load.records.filter((r) => r.actionId).length, inHand: held };
        }
        await sleep(20);
      }
    } finally {
      await c.end();
    }
  }

  async function world(): Promise<World & { runs: ActionRun[] }> {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      const actions = await c.query(
        `SELECT a.id, a.cluster_id, a.action, a.status, a.owner, a.attempts, a.start_time, a.end_time,
                (SELECT count(*)::int FROM decisions d WHERE d.action_id = a.id) AS decisions
           FROM actions a WHERE a.cluster_id = ANY($1::uuid[])`,
        [clusters],
      );
      const cl = await c.query('SELECT id, desired_capacity FROM clusters WHERE id = ANY($1::uuid[])', [clusters]);
      const nodes = await c.query('SELECT id, cluster_id, physical_id, status FROM nodes');
      const state = (await (await fetch(`${simUrl}/_sim/state`)).json()) as { servers: World['servers'] };
      return { records: load.records, actions: actions.rows, clusters: cl.rows, nodes: nodes.rows, servers: state.servers, runs: actions.rows };
    } finally {
      await c.end();
    }
  }

  /** each service's whole log by its instance id (none is restarted: one instance per name) */
  function logsOf(names: string[]): Record<string, string> {
    return Object.fromEntries(names.map((n) => [procs.instanceId(n), readFileSync(procs.logFile(n), 'utf8')]));
  }
});
