import { parseFaultSpec } from './faults';
import { ApiError } from './http-kit';
import { boot, call, login } from './spec-helpers';
import { startNovaSimulator, type RunningSimulator } from './simulator';

describe('fault injection', () => {
  let sim: RunningSimulator;
  let demo: string;
  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: 0 });
    demo = await login(sim, 'demo');
  });
  afterAll(() => sim.close());
  beforeEach(() => call(sim, 'POST', '/_sim/reset'));

  it('fails a matching request `times` times with a Nova-shaped 503, then lets it through', async () => {
    const r = await call(sim, 'POST', '/_sim/faults', { body: { method: 'GET', path: '/servers$', status: 503, times: 2 } });
    expect(r.status).toBe(201);
    const first = await call(sim, 'GET', '/compute/v2.1/servers', { token: demo });
    expect(first.status).toBe(503);
    expect(first.body.serviceUnavailable.code).toBe(503);
    expect((await call(sim, 'GET', '/compute/v2.1/servers', { token: demo })).status).toBe(503);
    expect((await call(sim, 'GET', '/compute/v2.1/servers', { token: demo })).status).toBe(200);
    expect((await call(sim, 'POST', '/compute/v2.1/servers', { token: demo, body: {} })).status).toBe(400);
    const listed = await call(sim, 'GET', '/_sim/faults');
    expect(listed.body.faults[0]).toMatchObject({ fired: 2, remaining: 0 });
  });

  it('answers 429 with Retry-After', async () => {
    await call(sim, 'POST', '/_sim/faults', { body: { path: 'os-server-groups', status: 429, retry_after: 3 } });
    const r = await call(sim, 'GET', '/compute/v2.1/os-server-groups', { token: demo });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('3');
    expect(r.body.overLimit).toMatchObject({ code: 429, retryAfter: '3' });
  });

  it('uses a given body and fails Keystone with Keystone-shaped errors', async () => {
    await call(sim, 'POST', '/_sim/faults', { body: { path: '/servers$', method: 'POST', status: 409, body: { conflictingRequest: { code: 409, message: 'busy' } } } });
    const r = await boot(sim, { token: demo });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ conflictingRequest: { code: 409, message: 'busy' } });
    expect((await call(sim, 'GET', '/_sim/state')).body.servers).toEqual([]);

    await call(sim, 'POST', '/_sim/faults', { body: { path: '^/identity/v3/auth/tokens$', status: 500 } });
    const k = await call(sim, 'POST', '/identity/v3/auth/tokens', { body: {} });
    expect(k.status).toBe(500);
    expect(k.body.error.code).toBe(500);
  });

  it('can let the request act and lose the answer (when: after)', async () => {
    await call(sim, 'POST', '/_sim/faults', { body: { path: '/servers$', method: 'POST', status: 502, when: 'after' } });
    const r = await boot(sim, { token: demo, name: 'lost-reply', metadata: { trellis_node: 'n1' } });
    expect(r.status).toBe(502);
    const state = await call(sim, 'GET', '/_sim/state');
    expect(state.body.servers.map((s: { name: string }) => s.name)).toEqual(['lost-reply']);
  });

  it('delays answers so a client can time out', async () => {
    await call(sim, 'POST', '/_sim/faults', { body: { path: '/servers$', delay_ms: 5_000 } });
    const aborted = await fetch(`${sim.computeUrl}/servers`, { headers: { 'X-Auth-Token': demo }, signal: AbortSignal.timeout(50) }).then(
      () => 'answered',
      (e: Error) => e.name,
    );
    expect(aborted).toBe('TimeoutError');
  });

  it('clears all faults with DELETE /_sim/faults', async () => {
    await call(sim, 'POST', '/_sim/faults', { body: { path: '.*', status: 500, times: 100 } });
    expect((await call(sim, 'DELETE', '/_sim/faults')).status).toBe(204);
    expect((await call(sim, 'GET', '/compute/v2.1/servers', { token: demo })).status).toBe(200);
  });

  it.each([
    [{ status: 503 }, "'path'"],
    [{ path: '(', status: 503 }, "'path' is not a valid regular expression"],
    [{ path: 'x', status: 42 }, "'status'"],
    [{ path: 'x', status: 503, times: 0 }, "'times'"],
    [{ path: 'x' }, "needs a 'status', a 'delay_ms'"],
    [{ path: 'x', status: 503, method: 'FETCH' }, "'method'"],
    [{ path: 'x', status: 503, retry: 1 }, "'retry' is not a known field"],
  ])('refuses a bad fault %j', (spec, message) => {
    expect(() => parseFaultSpec(spec)).toThrow(ApiError);
    expect(() => parseFaultSpec(spec)).toThrow(message);
  });
});
