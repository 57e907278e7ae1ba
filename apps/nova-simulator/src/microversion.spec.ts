import { Microversion, negotiateMicroversion } from './microversion';
import { call, login } from './spec-helpers';
import { startNovaSimulator, type RunningSimulator } from './simulator';

const MAX = Microversion.parse('2.93')!;

describe('negotiateMicroversion', () => {
  it.each([
    [{}, '2.1'],
    [{ 'openstack-api-version': 'compute 2.64' }, '2.64'],
    [{ 'openstack-api-version': 'identity 3, compute 2.53' }, '2.53'],
    [{ 'x-openstack-nova-api-version': '2.15' }, '2.15'],
    [{ 'openstack-api-version': 'compute 2.64', 'x-openstack-nova-api-version': '2.15' }, '2.64'],
    [{ 'openstack-api-version': 'compute latest' }, '2.93'],
    [{ 'openstack-api-version': 'identity 3' }, '2.1'],
  ])('%j → %s', (headers, expected) => {
    const r = negotiateMicroversion(headers, MAX);
    expect(r.ok && r.version.toString()).toBe(expected);
  });

  it.each([
    ['compute 2.94', 406, 'Version 2.94 is not supported by the API. Minimum is 2.1 and maximum is 2.93.'],
    ['compute 2.0', 406, 'Version 2.0 is not supported by the API. Minimum is 2.1 and maximum is 2.93.'],
    ['compute 3.1', 406, 'Version 3.1 is not supported by the API. Minimum is 2.1 and maximum is 2.93.'],
    ['compute 2.x', 400, 'API Version String 2.x is of invalid format. Must be of format MajorNum.MinorNum.'],
  ])('%s → %i', (header, status, message) => {
    expect(negotiateMicroversion({ 'openstack-api-version': header }, MAX)).toEqual({ ok: false, status, message });
  });

  it('compares numerically, not as text', () => {
    expect(Microversion.parse('2.10')!.atLeast('2.9')).toBe(true);
    expect(Microversion.parse('2.9')!.atLeast('2.10')).toBe(false);
  });
});

describe('compute microversions over HTTP', () => {
  let sim: RunningSimulator;
  let old: RunningSimulator;
  let token: string;
  beforeAll(async () => {
    sim = await startNovaSimulator({ buildDelayMs: 0 });
    old = await startNovaSimulator({ buildDelayMs: 0, maxMicroversion: '2.60' });
    token = await login(sim, 'demo');
  });
  afterAll(async () => {
    await sim.close();
    await old.close();
  });

  it('lists the versions with v2.1 min 2.1 and the maximum microversion', async () => {
    const r = await call(sim, 'GET', '/compute/');
    expect(r.status).toBe(200);
    const v21 = r.body.versions.find((v: { id: string }) => v.id === 'v2.1');
    expect(v21).toMatchObject({ status: 'CURRENT', min_version: '2.1', version: '2.93' });
    const o = await call(old, 'GET', '/compute/');
    expect(o.body.versions.find((v: { id: string }) => v.id === 'v2.1').version).toBe('2.60');
  });

  it('echoes the negotiated version (2.1 when absent)', async () => {
    const none = await call(sim, 'GET', '/compute/v2.1/servers', { token });
    expect(none.headers.get('openstack-api-version')).toBe('compute 2.1');
    expect(none.headers.get('x-openstack-nova-api-version')).toBe('2.1');
    const legacy = await call(sim, 'GET', '/compute/v2.1/servers', { token, headers: { 'X-OpenStack-Nova-API-Version': '2.37' } });
    expect(legacy.headers.get('openstack-api-version')).toBe('compute 2.37');
    const latest = await call(sim, 'GET', '/compute/v2.1/servers', { token, version: 'latest' });
    expect(latest.headers.get('openstack-api-version')).toBe('compute 2.93');
  });

  it('refuses a version above the maximum with 406 computeFault, like an older Nova', async () => {
    const r = await call(old, 'GET', '/compute/v2.1/os-server-groups', { token: await login(old, 'demo'), version: '2.64' });
    expect(r.status).toBe(406);
    expect(r.body).toEqual({
      computeFault: { code: 406, message: 'Version 2.64 is not supported by the API. Minimum is 2.1 and maximum is 2.60.' },
    });
    const latest = await call(old, 'GET', '/compute/v2.1/servers', { token: await login(old, 'demo'), version: 'latest' });
    expect(latest.headers.get('openstack-api-version')).toBe('compute 2.60');
  });

  it('answers a malformed version with 400', async () => {
    const r = await call(sim, 'GET', '/compute/v2.1/servers', { token, version: 'two' });
    expect(r.status).toBe(400);
    expect(r.body.badRequest.message).toContain('is of invalid format');
  });

  it('requires a token for every compute call', async () => {
    const r = await call(sim, 'GET', '/compute/v2.1/servers', { version: '2.64' });
    expect(r.status).toBe(401);
    expect((await call(sim, 'GET', '/compute/v2.1/os-availability-zone', { token: 'nope' })).status).toBe(401);
  });
});
