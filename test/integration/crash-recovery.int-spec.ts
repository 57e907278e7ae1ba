import { ApiClient, keystoneToken } from '../support/api-client';
import { ServiceProcess, freePort, freshDatabase, freshVhost, simulatorCloudEnv, waitFor } from '../support/processes';
import { createProfileAndCluster, nodesOf } from '../support/scale-out.scenario';

/**
 * Issue 2's proof: each service runs as its own process on real RabbitMQ and PostgreSQL; the
 * policy-engine and, separately, the nova-worker are SIGKILLed in the middle of a 20-node
 * scale-out and restarted. The action must finish with exactly 20 servers in Nova: nothing lost,
 * nothing duplicated.
 */
describe('crash recovery during a 20-node scale-out (RabbitMQ + PostgreSQL)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let vhost: { url: string; drop: () => void };
  let simUrl: string;
  let env: Record<string, string>;
  let sim: ServiceProcess;
  let gateway: ServiceProcess;
  let engine: ServiceProcess;
  let worker: ServiceProcess;
  let api: ApiClient;

  const services = () => [gateway, engine, worker, sim];

  beforeAll(async () => {
    db = await freshDatabase();
    vhost = freshVhost();
    const simPort = await freePort();
    const apiPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    sim = new ServiceProcess('nova-simulator', 'apps/nova-simulator/src/main.js', {
      SIMULATOR_PORT: String(simPort),
      SIMULATOR_BUILD_DELAY_MS: '1500',
      LOG_LEVEL: 'warn',
    }).start();
    await waitFor('the simulator', async () => (await fetch(`${simUrl}/identity/v3`)).ok);
    env = {
      DATABASE_URL: db.url,
      AMQP_URL: vhost.url,
      ...simulatorCloudEnv(simUrl),
      TRELLIS_PORT: String(apiPort),
      TRELLIS_LEASE_SECONDS: '3',
      TRELLIS_RESUME_INTERVAL_SECONDS: '2',
      TRELLIS_POLL_INTERVAL_MS: '200',
      TRELLIS_WORKER_CONCURRENCY: '2',
      LOG_LEVEL: 'info',
    };
    gateway = new ServiceProcess('gateway', 'apps/gateway/src/main.js', env).start();
    engine = new ServiceProcess('policy-engine', 'apps/policy-engine/src/main.js', env).start();
    worker = new ServiceProcess('nova-worker', 'apps/nova-worker/src/main.js', env).start();
    const url = `http://127.0.0.1:${apiPort}`;
    await waitFor('the gateway', async () => (await fetch(`${url}/`)).status === 300, 60_000);
    api = new ApiClient(url, await keystoneToken(`${simUrl}/identity/v3`, { name: 'demo', password: 'demo', project: 'demo' }));
  });

  afterAll(async () => {
    for (const s of services()) await s?.stop();
    vhost?.drop();
    await db?.drop();
  });

  /** servers the simulator holds for one cluster (by the metadata the worker tags them with) */
  async function serversOf(clusterId: string): Promise<Array<Record<string, any>>> {
    const state = (await (await fetch(`${simUrl}/_sim/state`)).json()) as { servers: Array<Record<string, any>> };
    return state.servers.filter((s) => s.metadata?.trellis_cluster === clusterId && s.status !== 'DELETED');
  }

  async function expectExactly20(clusterId: string, actionId: string) {
    const action = await api.waitForAction(actionId, 120_000).catch((e) => {
      for (const s of services()) process.stderr.write(`--- ${s.name}\n${s.logs().slice(-4000)}\n`);
      throw e;
    });
    expect(action.status).toBe('SUCCEEDED');
    const servers = await serversOf(clusterId);
    expect(servers).toHaveLength(20);
    expect(servers.every((s) => s.status === 'ACTIVE')).toBe(true);
    const nodes = await nodesOf(api, clusterId);
    expect(nodes).toHaveLength(20);
    expect(nodes.every((n) => n.status === 'ACTIVE')).toBe(true);
    expect(new Set(nodes.map((n) => n.physical_id)).size).toBe(20);
    expect(nodes.map((n) => n.physical_id).sort()).toEqual(servers.map((s) => s.id).sort());
  }

  it('survives a SIGKILL of the policy-engine mid-way', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'engine-crash');
    const res = await api.post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 20 } });
    expect(res.status).toBe(202);
    const actionId = ApiClient.actionIdOf(res);
    // the engine has decided and the worker is building: the engine will miss the worker's result
    await waitFor('the first servers', async () => (await serversOf(clusterId)).length >= 1);
    await engine.kill();
    await new Promise((r) => setTimeout(r, 2000));
    engine = new ServiceProcess('policy-engine', 'apps/policy-engine/src/main.js', env).start();
    await expectExactly20(clusterId, actionId);
  });

  it('survives a SIGKILL of the nova-worker while it creates servers', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'worker-crash');
    // slow every server create down so the worker is killed half-way through the order
    await fetch(`${simUrl}/_sim/faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ method: 'POST', path: '/servers$', delay_ms: 300, times: 1000 }),
    });
    const res = await api.post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 20 } });
    expect(res.status).toBe(202);
    const actionId = ApiClient.actionIdOf(res);
    await waitFor('some but not all servers', async () => {
      const n = (await serversOf(clusterId)).length;
      return n >= 4 && n < 20;
    });
    await worker.kill();
    await fetch(`${simUrl}/_sim/faults`, { method: 'DELETE' });
    const before = (await serversOf(clusterId)).length;
    expect(before).toBeLessThan(20);
    worker = new ServiceProcess('nova-worker', 'apps/nova-worker/src/main.js', env).start();
    await expectExactly20(clusterId, actionId);
  });
});
