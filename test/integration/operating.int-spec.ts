import { ApiClient, keystoneToken } from '../support/api-client';
import {
  expectOneStory,
  expectDeploymentGauges,
  expectOutboxGauges,
  expectProcessMetrics,
  expectScaleOutCounted,
  logLines,
  moved,
  scaleOutAndWait,
  scrape,
  type Samples,
} from '../support/operating.scenario';
import { ServiceProcess, freePort, freshDatabase, freshVhost, waitFor } from '../support/processes';
import { createProfileAndCluster } from '../support/scale-out.scenario';

/**
 * Issue 13 with each service a process of its own on RabbitMQ and PostgreSQL: the gateway serves
 * /metrics on its API port, the policy-engine and the nova-worker on ports of their own
 * (TRELLIS_OPS_PORT); each answers /readyz for what it needs; and one request id runs through the
 * three services' logs and the simulator's.
 */
describe('operating Trellis as separate services (RabbitMQ + PostgreSQL)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let vhost: { url: string; drop: () => void };
  let sim: ServiceProcess;
  let gateway: ServiceProcess;
  let engine: ServiceProcess;
  let worker: ServiceProcess;
  let api: ApiClient;
  const urls = { gateway: '', engine: '', worker: '' };

  const services = () => [gateway, engine, worker, sim];

  beforeAll(async () => {
    db = await freshDatabase();
    vhost = freshVhost();
    const [simPort, apiPort, enginePort, workerPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const simUrl = `http://127.0.0.1:${simPort}`;
    sim = new ServiceProcess('nova-simulator', 'apps/nova-simulator/src/main.js', {
      SIMULATOR_PORT: String(simPort),
      SIMULATOR_BUILD_DELAY_MS: '200',
      LOG_LEVEL: 'debug',
    }).start();
    await waitFor('the simulator', async () => (await fetch(`${simUrl}/identity/v3`)).ok);
    const env = {
      DATABASE_URL: db.url,
      AMQP_URL: vhost.url,
      OS_AUTH_URL: `${simUrl}/identity/v3`,
      OS_USERNAME: 'trellis',
      OS_PASSWORD: 'service-secret',
      OS_PROJECT_NAME: 'service',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
      TRELLIS_PORT: String(apiPort),
      TRELLIS_POLL_INTERVAL_MS: '100',
      LOG_LEVEL: 'info',
    };
    gateway = new ServiceProcess('gateway', 'apps/gateway/src/main.js', env).start();
    engine = new ServiceProcess('policy-engine', 'apps/policy-engine/src/main.js', { ...env, TRELLIS_OPS_PORT: String(enginePort) }).start();
    worker = new ServiceProcess('nova-worker', 'apps/nova-worker/src/main.js', { ...env, TRELLIS_OPS_PORT: String(workerPort) }).start();
    urls.gateway = `http://127.0.0.1:${apiPort}`;
    urls.engine = `http://127.0.0.1:${enginePort}`;
    urls.worker = `http://127.0.0.1:${workerPort}`;
    for (const [name, url] of Object.entries(urls)) {
      await waitFor(`the ${name}'s /readyz`, async () => (await fetch(`${url}/readyz`)).status === 200, 60_000).catch((e) => {
        for (const s of services()) process.stderr.write(`--- ${s.name}\n${s.logs().slice(-4000)}\n`);
        throw e;
      });
    }
    api = new ApiClient(urls.gateway, await keystoneToken(`${simUrl}/identity/v3`, { name: 'demo', password: 'demo', project: 'demo' }));
  });

  afterAll(async () => {
    for (const s of services()) await s?.stop();
    vhost?.drop();
    await db?.drop();
  });

  it('answers /readyz on every service for the parts it needs, the worker also for the cloud', async () => {
    const checks = async (url: string) => ((await (await fetch(`${url}/readyz`)).json()) as { checks: object }).checks;
    expect(await checks(urls.gateway)).toEqual({ database: { ok: true }, broker: { ok: true } });
    expect(await checks(urls.engine)).toEqual({ database: { ok: true }, broker: { ok: true } });
    expect(await checks(urls.worker)).toEqual({ database: { ok: true }, broker: { ok: true }, cloud: { ok: true } });
    for (const url of Object.values(urls)) expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'alive' });
  });

  it("counts a scale-out on each service's own /metrics, and one request id tells its story in all their logs", async () => {
    const { clusterId } = await createProfileAndCluster(api, 'operated');
    const scrapeAll = async () => ({ gateway: await scrape(urls.gateway), engine: await scrape(urls.engine), worker: await scrape(urls.worker) });
    const before = await scrapeAll();
    const scaled = await scaleOutAndWait(api, clusterId, 2);
    const after = await scrapeAll();

    const mover = (service: keyof typeof before) => (name: string, labels?: Record<string, string>) => moved(before[service], after[service], name, labels);
    expectScaleOutCounted(2, { gateway: mover('gateway'), engine: mover('engine'), worker: mover('worker') });
    for (const samples of Object.values(after) as Samples[]) {
      expectOutboxGauges(samples);
      expectDeploymentGauges(samples);
      expectProcessMetrics(samples);
    }
    // each process counts its own work: the gateway consumed none of the engine's messages
    expect(mover('gateway')('trellis_messages_consumed_total', { queue: 'trellis.policy-engine.actions', outcome: 'ack' })).toBe(0);

    // the last log lines may still be on their way out of the processes
    await waitFor('the worker and engine lines', async () => logLines(engine.logs()).some((l) => l.msg === 'work result applied' && l.action_id === scaled.actionId));
    expectOneStory(
      { gateway: logLines(gateway.logs()), engine: logLines(engine.logs()), worker: logLines(worker.logs()), nova: logLines(sim.logs()) },
      scaled,
      2,
    );
  });
});
