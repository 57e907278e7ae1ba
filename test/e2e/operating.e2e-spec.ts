import { randomUUID } from 'node:crypto';
import { createLogger } from '@trellis/common';
import { ApiClient } from '../support/api-client';
import {
  expectOneStory,
  expectDeploymentGauges,
  expectOutboxGauges,
  expectScaleOutCounted,
  moved,
  scaleOutAndWait,
  scrape,
  type LogLine,
} from '../support/operating.scenario';
import { createProfileAndCluster } from '../support/scale-out.scenario';
import { demoApi, startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * Issue 13 on the embedded default: one process, so one registry served once on the gateway's
 * /metrics; probes on /healthz and /readyz; and one request id through every service's log lines
 * and into Nova's request header.
 */
describe('operating Trellis: metrics, health and one id through the logs (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;
  const lines: LogLine[] = [];

  beforeAll(async () => {
    const logger = createLogger('trellis', 'debug', {}, (line) => lines.push(JSON.parse(line)));
    t = await startTestTrellis({ logger });
    api = await demoApi(t.trellis);
  });
  afterAll(() => t?.close());

  it('counts a scale-out on the gateway\'s /metrics: actions, decision, messages, Nova calls', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'counted');
    const before = await scrape(t.trellis.url);
    await scaleOutAndWait(api, clusterId, 2);
    const after = await scrape(t.trellis.url);

    const move = (name: string, labels?: Record<string, string>) => moved(before, after, name, labels);
    expectScaleOutCounted(2, { gateway: move, engine: move, worker: move });
    expectOutboxGauges(after);
    expectDeploymentGauges(after);
    // nothing went wrong on the way
    expect(move('trellis_message_retries_total', { queue: 'trellis.nova-worker.orders', reason: 'transient' })).toBe(0);
  });

  it('answers /healthz and /readyz without a token, the database, the broker and the cloud checked', async () => {
    expect(await (await fetch(`${t.trellis.url}/healthz`)).json()).toEqual({ status: 'alive' });
    const ready = await fetch(`${t.trellis.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { broker: { ok: true }, cloud: { ok: true }, database: { ok: true } } });
  });

  it('says which part is missing when the cloud does not answer', async () => {
    const sim = t.trellis.simulator!;
    const fault = await fetch(`${sim.url}/_sim/faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ method: 'GET', path: '/identity/v3$', status: 503, times: 1 }),
    });
    expect(fault.status).toBeLessThan(300);
    const ready = await fetch(`${t.trellis.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('5');
    expect(await ready.json()).toMatchObject({ status: 'not ready', reason: 'cloud: unavailable (HTTP 503)', checks: { database: { ok: true } } });
    expect((await fetch(`${t.trellis.url}/readyz`)).status).toBe(200);
  });

  it('writes the 202\'s request id on every line about the action, in gateway, engine and worker, and sends it to Nova', async () => {
    const { clusterId } = await createProfileAndCluster(api, 'followed');
    const scaled = await scaleOutAndWait(api, clusterId, 2);
    const of = (service: string) => lines.filter((l) => l.service === service);
    expectOneStory(
      { gateway: of('gateway'), engine: of('policy-engine'), worker: of('nova-worker'), nova: lines.filter((l) => l.component === 'nova-simulator') },
      scaled,
      2,
    );
  });

  it("takes a client's own X-OpenStack-Request-ID, and makes one for anything else", async () => {
    const { clusterId } = await createProfileAndCluster(api, 'named');
    const mine = `req-${randomUUID()}`;
    const res = await api.call('POST', `/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } }, { headers: { 'X-OpenStack-Request-ID': mine } });
    expect([res.status, res.headers.get('x-openstack-request-id')]).toEqual([202, mine]);
    await api.waitForAction(ApiClient.actionIdOf(res));
    expect(lines.some((l) => l.component === 'nova-simulator' && l.global_request_id === mine)).toBe(true);

    const odd = await api.call('GET', '/v1/clusters', undefined, { headers: { 'X-OpenStack-Request-ID': 'my-own-id; rm -rf' } });
    expect(odd.headers.get('x-openstack-request-id')).toMatch(/^req-[0-9a-f-]{36}$/);
  });
});

describe('TRELLIS_OPS_PORT: health and metrics on a port of their own (embedded default)', () => {
  let t: TestTrellis;
  afterAll(() => t?.close());

  it('moves /metrics off the API port; the probes stay on both', async () => {
    t = await startTestTrellis({ env: { TRELLIS_OPS_PORT: '0' } });
    const { url: api, opsUrl } = t.trellis;
    expect(opsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${opsUrl}/metrics`)).status).toBe(200);
    expect((await fetch(`${opsUrl}/readyz`)).status).toBe(200);
    expect((await fetch(`${api}/metrics`)).status).toBe(404);
    expect((await fetch(`${api}/readyz`)).status).toBe(200);
  });
});
