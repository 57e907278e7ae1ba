import { parseFaultSpec } from '../../apps/nova-simulator/src/faults';
import { ApiClient } from '../support/api-client';
import { demoApi, startTestTrellis, type TestTrellis } from '../support/trellis';

const spec = (properties: Record<string, unknown>) => ({
  type: 'os.nova.server',
  version: '1.0',
  properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [{ network: 'private' }], ...properties },
});

/**
 * Profile specs are checked against the cloud as Senlin checked them, with the caller's own token:
 * here the simulator's Glance (cirros-fake), Nova flavors (m1.*) and Neutron networks (private,
 * public). senlin-tempest-plugin's own fixture (image cirros-0.4.0-x86_64-disk) is refused at
 * create, in well under a second, instead of failing later when a node boots.
 */
describe('profile validation against the cloud (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;

  beforeAll(async () => {
    t = await startTestTrellis();
    api = await demoApi(t.trellis);
  });
  afterAll(() => t?.close());

  it('creates and validates a profile whose image, flavor and networks exist, by name or id', async () => {
    expect((await api.post('/v1/profiles', { profile: { name: 'ok', spec: spec({}) } })).status).toBe(201);
    const networks = await api.post('/v1/profiles/validate', { profile: { spec: spec({ flavor: '1', networks: [{ network: 'public' }] }) } });
    expect(networks.status).toBe(200);
  });

  it.each([
    [{ image: 'cirros-0.4.0-x86_64-disk' }, "The specified image 'cirros-0.4.0-x86_64-disk' could not be found."],
    [{ flavor: 'm1.huge' }, "The specified flavor 'm1.huge' could not be found."],
    [{ networks: [{ network: 'private' }, { network: 'no-such-net' }] }, 'The specified network no-such-net could not be found.'],
  ])('refuses %j at create and validate with Senlin’s message', async (properties, message) => {
    const started = Date.now();
    const created = await api.post('/v1/profiles', { profile: { name: 'refused', spec: spec(properties) } });
    expect({ status: created.status, message: created.body.error?.message }).toEqual({ status: 400, message });
    expect(Date.now() - started).toBeLessThan(5000);
    const validated = await api.post('/v1/profiles/validate', { profile: { spec: spec(properties) } });
    expect({ status: validated.status, message: validated.body.error?.message }).toEqual({ status: 400, message });
    expect((await api.get('/v1/profiles?name=refused')).body.profiles).toEqual([]);
  });

  it('answers 503 while Glance is down', async () => {
    const faults = t.trellis.simulator!.state.faults;
    faults.add(parseFaultSpec({ method: 'GET', path: '/image/v2/images', status: 503, times: 100, body: { message: 'glance is down' } }));
    try {
      const res = await api.post('/v1/profiles', { profile: { name: 'glance-down', spec: spec({}) } });
      expect(res.status).toBe(503);
      expect(res.body.error.message).toMatch(/^Trellis could not look up the profile's image 'cirros-fake' in the cloud: /);
    } finally {
      faults.clear();
    }
    expect((await api.post('/v1/profiles', { profile: { name: 'glance-back', spec: spec({}) } })).status).toBe(201);
  });
});
