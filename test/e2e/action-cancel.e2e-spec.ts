import { parseFaultSpec } from '../../apps/nova-simulator/src/faults';
import { ApiClient } from '../support/api-client';
import { demoApi, startTestTrellis, type TestTrellis } from '../support/trellis';

/** PATCH /v1/actions/{id} (1.12): a RUNNING action ends CANCELLED and its cluster is released. */
describe('action cancel (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;
  let clusterId: string;

  beforeAll(async () => {
    t = await startTestTrellis({ env: { TRELLIS_RESUME_INTERVAL_SECONDS: '1' } });
    api = await demoApi(t.trellis);
    await api.post('/v1/profiles', {
      profile: { name: 'pc', spec: { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [] } } },
    });
    const created = await api.post('/v1/clusters', { cluster: { name: 'cancel', profile_id: 'pc', desired_capacity: 0, min_size: 0, max_size: -1 } });
    expect((await api.waitForAction(ApiClient.actionIdOf(created))).status).toBe('SUCCEEDED');
    clusterId = created.body.cluster.id;
  });
  afterAll(() => t?.close());

  const cancel = (id: string, version = '1.12', status: unknown = 'CANCELLED') =>
    new ApiClient(api.baseUrl, (api as any).token, version).call('PATCH', `/v1/actions/${id}`, { action: { status } });

  it('cancels a RUNNING scale-out whose servers Nova refuses for now; the next action on the cluster runs', async () => {
    const faults = t.trellis.simulator!.state.faults;
    faults.add(parseFaultSpec({ method: 'POST', path: '/servers$', status: 503, times: 100_000, body: { message: 'compute is down' } }));
    const res = await api.post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 2 } });
    const id = ApiClient.actionIdOf(res);
    const deadline = Date.now() + 20_000;
    while ((await api.get(`/v1/actions/${id}`)).body.action.status !== 'RUNNING' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));

    const patched = await cancel(id);
    expect(patched.status).toBe(202);
    expect(patched.headers.get('location')).toContain(`/v1/actions/${id}`);
    const ended = await api.waitForAction(id, 20_000);
    faults.clear();
    expect(ended).toMatchObject({ status: 'CANCELLED', status_reason: 'Action execution cancelled' });
    const nodes = (await api.get(`/v1/nodes?cluster_id=${clusterId}`)).body.nodes;
    for (const n of nodes) expect(n.status).toBe('ERROR');

    const again = await cancel(id);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe(
      `Action (${id.slice(0, 8)}) is in status (CANCELLED) while expected status must be one of (('INIT', 'WAITING', 'READY', 'RUNNING', 'WAITING_LIFECYCLE_COMPLETION')).`,
    );
    const next = await api.post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } });
    expect(next.status).toBe(202);
    expect((await api.waitForAction(ApiClient.actionIdOf(next), 30_000)).status).toBe('SUCCEEDED');
  });

  it("answers Senlin's errors: older microversion, unknown status, unknown action", async () => {
    const listed = (await api.get('/v1/actions?limit=1')).body.actions[0];
    const old = await cancel(listed.id, '1.11');
    expect(old).toMatchObject({ status: 400, body: { error: { message: "API version '1.11' is not supported on this method." } } });
    const bad = await cancel(listed.id, '1.12', 'invalid');
    expect(bad).toMatchObject({ status: 400, body: { error: { message: `Unknown status invalid for action ${listed.id}` } } });
    const missing = await cancel('26cb0f3a-4e6c-49f6-8475-7cb472933bff');
    expect(missing.status).toBe(404);
    // Senlin's StringField refuses a map or a list with the request, before looking the action up
    // (a map whose own keys shadow toString once made this a 500)
    const asMap = await cancel('26cb0f3a-4e6c-49f6-8475-7cb472933bff', '1.12', { toString: [1], spec: 2 });
    expect(asMap).toMatchObject({ status: 400, body: { error: { message: 'A string is required in field status, not a dict' } } });
    const asList = await cancel(listed.id, '1.12', ['CANCELLED']);
    expect(asList).toMatchObject({ status: 400, body: { error: { message: 'A string is required in field status, not a list' } } });
    const asNull = await cancel(listed.id, '1.12', null);
    expect(asNull).toMatchObject({ status: 400, body: { error: { message: "Field `status' cannot be None" } } });
  });
});
