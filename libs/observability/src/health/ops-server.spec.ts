import request from 'supertest';
import { startOpsServer, type RunningOpsServer } from './ops-server';
import type { ReadinessProbe } from './readiness';

describe('the ops server (/healthz, /readyz, /metrics)', () => {
  let server: RunningOpsServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  const probe = (name: string, check: () => Promise<void>): ReadinessProbe => ({ name, check });
  const start = async (probes: ReadinessProbe[], metrics = true) =>
    (server = await startOpsServer({ host: '127.0.0.1', port: 0, probes, metrics }));

  it('is ready when every part answers', async () => {
    const { url } = await start([probe('database', async () => undefined), probe('broker', async () => undefined)]);
    expect((await request(url).get('/healthz')).body).toEqual({ status: 'alive' });
    const ready = await request(url).get('/readyz');
    expect([ready.status, ready.body]).toEqual([200, { status: 'ready', checks: { database: { ok: true }, broker: { ok: true } } }]);
    expect(ready.headers['cache-control']).toContain('no-store');
  });

  it('answers 503 with Retry-After naming each part that does not answer, and why', async () => {
    const { url } = await start([
      probe('database', async () => undefined),
      probe('broker', async () => {
        throw new Error('unavailable (connection lost)');
      }),
      probe('cloud', () => new Promise<void>(() => undefined)),
    ]);
    const ready = await request(url).get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers['retry-after']).toBe('5');
    expect(ready.body).toEqual({
      status: 'not ready',
      reason: 'broker: unavailable (connection lost); cloud: unavailable (no answer within 2000 ms)',
      checks: {
        database: { ok: true },
        broker: { ok: false, reason: 'unavailable (connection lost)' },
        cloud: { ok: false, reason: 'unavailable (no answer within 2000 ms)' },
      },
    });
    // liveness does not depend on the parts
    expect((await request(url).get('/healthz')).status).toBe(200);
  });

  it("serves the process's metrics in Prometheus's text format, or nothing when they are turned off", async () => {
    const { url } = await start([]);
    const res = await request(url).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain;.*version=0\.0\.4/);
    expect(res.text).toContain('# TYPE trellis_actions_finished_total counter');
    expect(res.text).toContain('# TYPE trellis_decision_duration_seconds histogram');
    expect(res.text).toMatch(/^process_cpu_user_seconds_total \d/m);
    await server!.close();

    const off = await start([], false);
    expect((await request(off.url).get('/metrics')).status).toBe(404);
    expect((await request(off.url).get('/readyz')).status).toBe(200);
  });
});
