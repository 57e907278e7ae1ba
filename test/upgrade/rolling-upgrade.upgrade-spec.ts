import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as amqp from 'amqplib';
import { Client } from 'pg';
import { Queues, deadLetterQueueOf } from '@trellis/contracts';
import { TrellisProcesses, deadLetterCounts, freePort, freshDatabase, freshVhost, type FreshDatabase } from '@trellis/testing/processes';
import { simulatorCloudEnv } from '@trellis/testing/simulator-env';
import { ApiClient, keystoneToken } from '../support/api-client';
import { createProfileAndCluster, nodesOf } from '../support/scale-out.scenario';

/**
 * A rolling upgrade from the release before (README "Upgrading a running deployment"), as an operator
 * does it, one process at a time, and in the order that used to break: the policy-engine first. The
 * release before (TRELLIS_PREVIOUS_ROOT, built by scripts/upgrade.sh from TRELLIS_PREVIOUS_COMMIT)
 * runs a gateway, an engine and a nova-worker on RabbitMQ and PostgreSQL with the simulator; then
 * this release's engine starts (migrating the database), the old engine stops, a scale-out runs
 * through the new engine and the OLD worker (which takes work orders of schema_version 1 only), then
 * the worker and the gateway are replaced the same way. Every action must succeed, no message may
 * be dead-lettered, every server must boot from the profile.
 */

const PREVIOUS_ROOT = process.env.TRELLIS_PREVIOUS_ROOT;
const PREVIOUS_COMMIT = process.env.TRELLIS_PREVIOUS_COMMIT ?? 'the release before';
const ROOT = join(__dirname, '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`a rolling upgrade from ${PREVIOUS_COMMIT}: engine, then worker, then gateway, one process at a time`, () => {
  let db: FreshDatabase;
  let vhost: ReturnType<typeof freshVhost>;
  let before: TrellisProcesses;
  let after: TrellisProcesses;
  let passed = false;
  const dir = join(tmpdir(), `trellis-upgrade-${process.pid}`);
  const ports = { oldGateway: 0, newGateway: 0, simulator: 0 };

  beforeAll(async () => {
    if (!PREVIOUS_ROOT) throw new Error('TRELLIS_PREVIOUS_ROOT is not set: run this suite with `npm run test:upgrade`, which builds the release before');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, 'logs'), { recursive: true });
    db = await freshDatabase('trellis_upgrade');
    vhost = freshVhost('trellis-upgrade');
    ports.oldGateway = await freePort();
    ports.newGateway = await freePort();
    ports.simulator = await freePort();
    const env = {
      DATABASE_URL: db.url,
      AMQP_URL: vhost.url,
      ...simulatorCloudEnv(`http://127.0.0.1:${ports.simulator}`),
      TRELLIS_POLL_INTERVAL_MS: '250',
      TRELLIS_DB_POOL_SIZE: '5',
      // the rollback below waits for a resume: an action's lease (longer than the engine's 10 s look
      // at the workers, so the resend is written for the workers it saw) and a round every 2 s
      TRELLIS_LEASE_SECONDS: '20',
      TRELLIS_RESUME_INTERVAL_SECONDS: '2',
      LOG_LEVEL: 'info',
    };
    const simulatorEnv = { SIMULATOR_PORT: String(ports.simulator), SIMULATOR_BUILD_DELAY_MS: '200', LOG_LEVEL: 'info' };
    before = new TrellisProcesses({ root: PREVIOUS_ROOT, logDir: join(dir, 'logs'), env, simulatorEnv });
    after = new TrellisProcesses({ root: ROOT, logDir: join(dir, 'logs'), env, simulatorEnv });
    after.add('nova-simulator', 'nova-simulator');
    before.add('old-gateway', 'gateway', { TRELLIS_PORT: String(ports.oldGateway) });
    before.add('old-policy-engine', 'policy-engine');
    before.add('old-nova-worker', 'nova-worker');
    after.add('new-gateway', 'gateway', { TRELLIS_PORT: String(ports.newGateway) });
    after.add('new-policy-engine', 'policy-engine');
    after.add('new-nova-worker', 'nova-worker');
    await after.start('nova-simulator');
  }, 120_000);

  afterAll(async () => {
    await before?.stopAll();
    await after?.stopAll();
    try {
      vhost?.drop();
    } catch {
      /* already gone */
    }
    await db?.drop();
    if (passed) rmSync(dir, { recursive: true, force: true });
    else process.stderr.write(`upgrade test logs: ${join(dir, 'logs')}\n`);
  }, 120_000);

  it('keeps every action succeeding, dead-letters nothing, and writes work orders the workers up can take', async () => {
    const token = await keystoneToken(`http://127.0.0.1:${ports.simulator}/identity/v3`, { name: 'demo', password: 'demo', project: 'demo' });
    const oldApi = new ApiClient(`http://127.0.0.1:${ports.oldGateway}`, token);
    const newApi = new ApiClient(`http://127.0.0.1:${ports.newGateway}`, token);
    const userData = '#!/bin/sh\necho upgraded\n';
    const ran: Array<{ step: string; id: string; status: string; reason: string; order_version: number | null }> = [];
    const scale = async (api: ApiClient, step: string, body: Record<string, unknown>) => {
      const res = await api.post('/v1/clusters/upgrade/actions', body);
      if (res.status !== 202) throw new Error(`${step}: ${res.status} ${JSON.stringify(res.body)}`);
      const action = await api.waitForAction(ApiClient.actionIdOf(res), 90_000);
      ran.push({ step, id: action.id, status: action.status, reason: action.status_reason, order_version: await orderVersion(action.id) });
    };

    // 1. the release before, everywhere
    await Promise.all(['old-gateway', 'old-policy-engine', 'old-nova-worker'].map((n) => before.start(n)));
    const { clusterId } = await createProfileAndCluster(oldApi, 'upgrade', 0, { timeout: 90 }, { user_data: userData });
    await scale(oldApi, 'all old', { scale_out: { count: 2 } });

    // 2. the engine first: this release's starts (and migrates), the old one stops
    await after.start('new-policy-engine');
    await before.stop('old-policy-engine');
    await scale(oldApi, 'new engine, old worker', { scale_out: { count: 3 } });

    // 3. the worker: this release's starts, the old one stops; the engine's next look (every 10 s)
    // finds no worker of the release before up and writes this release's orders
    await after.start('new-nova-worker');
    await before.stop('old-nova-worker');
    const engineLog = () => readFileSync(after.logFile('new-policy-engine'), 'utf8');
    for (let i = 0; i < 100 && !engineLog().includes('writing work orders in the newer schema_version'); i++) await sleep(200);
    await scale(oldApi, 'new engine, new worker', { scale_out: { count: 2 } });

    // 4. the gateway
    await after.start('new-gateway');
    await before.stop('old-gateway');
    await scale(newApi, 'all new', { scale_in: { count: 1 } });

    const summary = { actions: ran, dead_letters: await deadLetterCounts(vhost.url) };
    process.stdout.write(`upgrade test: ${JSON.stringify(summary, null, 2)}\n`);

    expect(ran.map((r) => [r.step, r.status])).toEqual([
      ['all old', 'SUCCEEDED'],
      ['new engine, old worker', 'SUCCEEDED'],
      ['new engine, new worker', 'SUCCEEDED'],
      ['all new', 'SUCCEEDED'],
    ]);
    // the old engine wrote version 1; the new engine wrote version 1 for the old worker, then 2
    expect(ran.map((r) => r.order_version)).toEqual([1, 1, 2, 2]);
    expect(Object.values(summary.dead_letters).reduce((a, b) => a + b, 0)).toBe(0);
    expect(engineLog()).toMatch(/writing work orders in an older schema_version/);

    const nodes = await nodesOf(newApi, clusterId);
    expect(nodes.map((n) => n.status)).toEqual(Array(6).fill('ACTIVE'));
    // every server booted from the profile's user_data, whichever form of order asked for it (Nova
    // shows user_data to the cloud admin, from microversion 2.3)
    const admin = await keystoneToken(`http://127.0.0.1:${ports.simulator}/identity/v3`, { name: 'admin', password: 'admin', project: 'admin' });
    const booted = await Promise.all(
      nodes.map(async (n) => {
        const res = await fetch(`http://127.0.0.1:${ports.simulator}/compute/v2.1/servers/${n.physical_id}`, {
          headers: { 'X-Auth-Token': admin, 'OpenStack-API-Version': 'compute 2.3' },
        });
        return ((await res.json()) as { server: Record<string, unknown> }).server['OS-EXT-SRV-ATTR:user_data'];
      }),
    );
    expect(booted).toEqual(Array(6).fill(Buffer.from(userData).toString('base64')));
    for (const name of ['new-gateway', 'new-policy-engine', 'new-nova-worker']) expect(after.running(name)).toBe(true);
    passed = true;
  });


  /**
   * Rolling the nova-workers back while this release's engine runs (README "Rolling back"). The
   * worst moment: no worker up, so the engine writes this release's orders (version 2), and an
   * action's order waits in the queue when the older worker starts; that worker cannot take it and
   * dead-letters it. The engine's next look (10 s) finds the older worker, and once the action's
   * lease runs out the resume sends its order again, now as version 1: the action SUCCEEDS within
   * about a lease, not at its timeout, and the dead letter is not sent round again.
   */
  it('rolls the nova-worker back: an order the older worker cannot take is sent again in its version, and the action succeeds', async () => {
    if (!passed) throw new Error('the upgrade before did not pass');
    passed = false;
    const token = await keystoneToken(`http://127.0.0.1:${ports.simulator}/identity/v3`, { name: 'demo', password: 'demo', project: 'demo' });
    const api = new ApiClient(`http://127.0.0.1:${ports.newGateway}`, token);
    const engineLog = () => readFileSync(after.logFile('new-policy-engine'), 'utf8');
    const olderLines = () => engineLog().split('\n').filter((l) => l.includes('writing work orders in an older schema_version')).length;
    const olderBefore = olderLines();

    await after.stop('new-nova-worker');
    // no worker up: the engine's next look keeps (or comes back to) this release's version
    const res = await api.post('/v1/clusters/upgrade/actions', { scale_out: { count: 2 } });
    expect(res.status).toBe(202);
    const actionId = ApiClient.actionIdOf(res);
    const submitted = Date.now();
    await before.start('old-nova-worker');
    const action = await api.waitForAction(actionId, 120_000);
    const took = Date.now() - submitted;
    const dead = await deadLetters(vhost.url, deadLetterQueueOf(Queues.workerOrders));
    process.stdout.write(`rollback test: ${JSON.stringify({ status: action.status, took_ms: took, dead_letters: dead }, null, 2)}\n`);

    expect([action.status, action.status_reason]).toEqual(['SUCCEEDED', 'Cluster scaling succeeded.']);
    // sent again in the version the older worker takes, within a lease and a few rounds (timeout: 90 s)
    expect(await orderVersion(actionId)).toBe(1);
    expect(took).toBeLessThan(60_000);
    expect(olderLines()).toBeGreaterThan(olderBefore);
    // the one order the older worker could not take, dead-lettered once, naming why; nothing else
    expect(dead.map((d) => [d.action_id, d.schema_version])).toEqual([[actionId, 2]]);
    expect(dead[0].reason).toMatch(/schema_version/);
    expect(Object.values(await deadLetterCounts(vhost.url)).reduce((a, b) => a + b, 0)).toBe(1);
    const nodes = await nodesOf(api, (await api.get('/v1/clusters/upgrade')).body.cluster.id);
    expect(nodes.map((n) => n.status)).toEqual(Array(8).fill('ACTIVE'));
    expect(new Set(nodes.map((n) => n.physical_id)).size).toBe(8);
    // and Nova holds those servers, none twice
    const servers = await fetch(`http://127.0.0.1:${ports.simulator}/compute/v2.1/servers`, { headers: { 'X-Auth-Token': token } });
    const ids = ((await servers.json()) as { servers: Array<{ id: string }> }).servers.map((x) => x.id).sort();
    expect(ids).toEqual(nodes.map((n) => n.physical_id).sort());
    passed = true;
  });

  /** the schema_version of the work order a worker stored for the action (null: the action had none) */
  async function orderVersion(actionId: string): Promise<number | null> {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      const rows = (await c.query(`SELECT (payload->>'schema_version')::int AS v FROM work_orders WHERE action_id = $1`, [actionId])).rows;
      return rows.length ? rows[0].v : null;
    } finally {
      await c.end();
    }
  }
});

/** The messages a dead-letter queue holds, looked at and left there: the action, the order's version, why. */
async function deadLetters(amqpUrl: string, queue: string): Promise<Array<{ action_id: string; schema_version: number; reason: string }>> {
  const conn = await amqp.connect(amqpUrl);
  try {
    const ch = await conn.createChannel();
    const seen: amqp.GetMessage[] = [];
    for (let m = await ch.get(queue); m; m = await ch.get(queue)) seen.push(m);
    const out = seen.map((m) => {
      const body = JSON.parse(m.content.toString('utf8')) as { action_id: string; schema_version: number };
      return { action_id: body.action_id, schema_version: body.schema_version, reason: String(m.properties.headers?.['x-trellis-dead-letter-reason'] ?? '') };
    });
    for (const m of seen) ch.nack(m, false, true);
    await ch.close();
    return out;
  } finally {
    await conn.close();
  }
}
