import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { TrellisProcesses, freePort, freshDatabase, freshVhost, waitFor, type FreshDatabase } from '@trellis/testing/processes';
import { simulatorCloudEnv } from '@trellis/testing/simulator-env';
import { ApiClient, keystoneToken } from '../support/api-client';
import { createProfileAndCluster } from '../support/scale-out.scenario';

/**
 * A nova-worker SIGKILLed part way through a cluster reboot (POST /v1/clusters/{id}/ops), and a
 * second worker that takes the order over when the first one's lease runs out: the servers whose
 * reboot the first worker had completed, or had Nova accept (both recorded, work_order_ops), are
 * not rebooted again; the others are rebooted by the second. Counted in Nova's own record of each server's actions
 * (`GET /servers/{id}/os-instance-actions` of the simulator), on RabbitMQ and PostgreSQL.
 */

const NODES = 12;
const CONCURRENCY = 4;
const LEASE_SECONDS = 3;
const ROOT = join(__dirname, '..', '..');

describe('a worker killed part way through a cluster operation (RabbitMQ + PostgreSQL)', () => {
  let db: FreshDatabase;
  let vhost: ReturnType<typeof freshVhost>;
  let procs: TrellisProcesses;
  let api: ApiClient;
  let simUrl: string;
  let token: string;
  let passed = false;
  const dir = join(tmpdir(), `trellis-ops-takeover-${process.pid}`);

  beforeAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, 'logs'), { recursive: true });
    db = await freshDatabase('trellis_ops_takeover');
    vhost = freshVhost('trellis-ops-takeover');
    const [gw, sim] = [await freePort(), await freePort()];
    simUrl = `http://127.0.0.1:${sim}`;
    procs = new TrellisProcesses({
      root: ROOT,
      logDir: join(dir, 'logs'),
      env: {
        DATABASE_URL: db.url,
        AMQP_URL: vhost.url,
        ...simulatorCloudEnv(simUrl),
        TRELLIS_LEASE_SECONDS: String(LEASE_SECONDS),
        TRELLIS_RESUME_INTERVAL_SECONDS: '1',
        TRELLIS_POLL_INTERVAL_MS: '100',
        TRELLIS_WORKER_CONCURRENCY: String(CONCURRENCY),
        LOG_LEVEL: 'info',
      },
      // a reboot settles in half the build delay: one second
      simulatorEnv: { SIMULATOR_PORT: String(sim), SIMULATOR_BUILD_DELAY_MS: '2000', LOG_LEVEL: 'info' },
    });
    procs.add('nova-simulator', 'nova-simulator');
    procs.add('gateway', 'gateway', { TRELLIS_PORT: String(gw) });
    procs.add('policy-engine', 'policy-engine');
    procs.add('nova-worker-1', 'nova-worker');
    procs.add('nova-worker-2', 'nova-worker');
    await procs.start('nova-simulator');
    await Promise.all(['gateway', 'policy-engine', 'nova-worker-1'].map((n) => procs.start(n)));
    token = await keystoneToken(`${simUrl}/identity/v3`, { name: 'demo', password: 'demo', project: 'demo' });
    api = new ApiClient(`http://127.0.0.1:${gw}`, token);
  }, 120_000);

  afterAll(async () => {
    await procs?.stopAll();
    try {
      vhost?.drop();
    } catch {
      /* already gone */
    }
    await db?.drop();
    if (passed) rmSync(dir, { recursive: true, force: true });
    else process.stderr.write(`ops take-over test logs: ${join(dir, 'logs')}\n`);
  }, 60_000);

  /** how many times Nova recorded a reboot of the server */
  async function reboots(serverId: string): Promise<number> {
    const res = await fetch(`${simUrl}/compute/v2.1/servers/${serverId}/os-instance-actions`, { headers: { 'X-Auth-Token': token } });
    if (res.status !== 200) throw new Error(`os-instance-actions of ${serverId}: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { instanceActions: Array<{ action: string }> };
    return body.instanceActions.filter((a) => a.action === 'reboot').length;
  }

  it('reboots each server the killed worker had rebooted once, and every other one by the worker that took over', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'rebooted', NODES, { timeout: 120 });
    const ids: string[] = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster.nodes;
    const servers = new Map<string, string>();
    for (const id of ids) servers.set(id, (await api.get(`/v1/nodes/${id}`)).body.node.physical_id);
    expect(servers.size).toBe(NODES);

    const accepted = await api.post(`/v1/clusters/${clusterId}/ops`, { reboot: { params: { type: 'SOFT' } } });
    expect(accepted.status).toBe(202);
    const actionId = ApiClient.actionIdOf(accepted);
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    try {
      /** the nodes with a record: each reboot's outcome, or (`requested`) that Nova accepted its request */
      const recorded = async (requested = false) =>
        (
          (await pg.query(`SELECT node_id FROM work_order_ops WHERE action_id = $1 AND (outcome ? 'requested') = $2`, [actionId, requested])).rows as Array<{
            node_id: string;
          }>
        ).map((r) => r.node_id);
      // the first wave's reboots settle (one second each, four at a time) and are recorded
      await waitFor('the first reboots recorded', async () => (await recorded()).length >= CONCURRENCY, { timeoutMs: 30_000, everyMs: 50 });
      await procs.kill('nova-worker-1');
      const doneByFirst = await recorded();
      const acceptedByFirst = await recorded(true);
      expect(doneByFirst.length).toBeLessThan(NODES);
      await procs.start('nova-worker-2');

      const action = await api.waitForAction(actionId, 90_000);

      expect(action).toMatchObject({ action: 'CLUSTER_OPERATION', status: 'SUCCEEDED', status_reason: "Cluster operation 'reboot' completed." });
      const counts = new Map<string, number>();
      for (const [node, server] of servers) counts.set(node, await reboots(server));
      // the reboots the first worker completed, or whose request Nova had accepted, are not asked for again
      const known = [...doneByFirst, ...acceptedByFirst];
      expect(known.map((n) => [n, counts.get(n)])).toEqual(known.map((n) => [n, 1]));
      // every other server is rebooted: once, or twice if its request was in flight, unanswered, when the first worker died
      for (const [node, n] of counts) if (!doneByFirst.includes(node)) expect({ node, n: Math.min(n, 2), atLeastOnce: n >= 1 }).toEqual({ node, n: Math.min(n, 2), atLeastOnce: true });
      const twice = [...counts.values()].filter((n) => n > 1).length;
      expect(twice).toBeLessThanOrEqual(CONCURRENCY);
      expect([...counts.values()].every((n) => n <= 2)).toBe(true);
      // the order is finished: its records went with it
      expect([...(await recorded()), ...(await recorded(true))]).toEqual([]);
      for (const id of ids) expect((await api.get(`/v1/nodes/${id}`)).body.node).toMatchObject({ status: 'ACTIVE', status_reason: "Operation 'reboot' succeeded" });
      process.stdout.write(
        `ops take-over: when nova-worker-1 was killed ${doneByFirst.length} of ${NODES} reboots were recorded done and ${acceptedByFirst.length} accepted by Nova; ${twice} server(s) rebooted twice\n`,
      );
      passed = true;
    } finally {
      await pg.end();
    }
  }, 180_000);
});
