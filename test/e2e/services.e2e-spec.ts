import { ApiClient, keystoneToken } from '../support/api-client';
import { startTestTrellis, type TestTrellis } from '../support/trellis';

/** GET /v1/services on the embedded default: the three components of the process register themselves. */
describe('the running services (embedded default)', () => {
  let t: TestTrellis;

  beforeAll(async () => {
    t = await startTestTrellis();
  });
  afterAll(() => t?.close());

  it('lists the gateway, the policy-engine and the nova-worker, up, to the cloud admin', async () => {
    const admin = new ApiClient(t.trellis.url, await keystoneToken(t.trellis.simulator!.authUrl, { name: 'admin', password: 'admin', project: 'admin' }), '1.7');
    const res = await admin.get('/v1/services');
    expect(res.status).toBe(200);
    const services = res.body.services as Array<{ binary: string; state: string; status: string; topic: string }>;
    expect(services.map((s) => s.binary).sort()).toEqual(['trellis-gateway', 'trellis-nova-worker', 'trellis-policy-engine']);
    expect(services.every((s) => s.state === 'up' && s.status === 'enabled')).toBe(true);
    expect(services.find((s) => s.binary === 'trellis-policy-engine')?.topic).toBe('trellis.policy-engine.actions');
  });
});
