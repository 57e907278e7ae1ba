import { parseFaultSpec } from '../../apps/nova-simulator/src/faults';
import { ApiClient } from '../support/api-client';
import { createProfileAndCluster } from '../support/scale-out.scenario';
import { demoApi, startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * POST /v1/clusters/{id}/ops (Senlin's cluster_op, API >= 1.4) on the embedded default: the
 * operation reaches the server of every member the filters pick, in the simulator, with the user's
 * trust; Senlin's request errors, in Senlin's order.
 */
describe('cluster operations (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;
  let clusterId: string;
  let members: Array<{ id: string; name: string; physical_id: string; role: string | null }>;

  beforeAll(async () => {
    t = await startTestTrellis();
    api = await demoApi(t.trellis);
    ({ clusterId } = await createProfileAndCluster(api, 'operated', 3));
    const ids: string[] = (await api.get(`/v1/clusters/${clusterId}`)).body.cluster.nodes;
    members = await Promise.all(ids.map(async (id) => (await api.get(`/v1/nodes/${id}`)).body.node));
    // one member gets a role, for the filters
    const updated = await api.call('PATCH', `/v1/nodes/${members[0].id}`, { node: { role: 'master' } });
    expect((await api.waitForAction(ApiClient.actionIdOf(updated), 30_000)).status).toBe('SUCCEEDED');
  });
  afterAll(() => t?.close());

  const ops = (body: unknown, version = '1.4') => api.call('POST', `/v1/clusters/${clusterId}/ops`, body, { headers: { 'OpenStack-API-Version': `clustering ${version}` } });
  const rebootsOf = (physicalId: string) =>
    (t.trellis.simulator!.state.server(physicalId)?.actions ?? []).filter((a) => a.action === 'reboot').length;

  it('reboots the server of every member: one reboot each, the cluster ACTIVE with the operation named', async () => {
    const before = members.map((m) => rebootsOf(m.physical_id));
    const res = await ops({ reboot: { params: { type: 'SOFT' } } });
    expect(res.status).toBe(202);
    const actionId = ApiClient.actionIdOf(res);
    expect(res.body).toEqual({ action: actionId });

    const done = await api.waitForAction(actionId, 30_000);

    expect(done).toMatchObject({
      action: 'CLUSTER_OPERATION',
      name: `cluster_reboot_${clusterId.slice(0, 8)}`,
      status: 'SUCCEEDED',
      status_reason: "Cluster operation 'reboot' completed.",
      inputs: { operation: 'reboot', params: { type: 'SOFT' }, nodes: members.map((m) => m.id) },
    });
    expect(members.map((m) => rebootsOf(m.physical_id) - before[members.indexOf(m)])).toEqual([1, 1, 1]);
    for (const m of members) {
      expect((await api.get(`/v1/nodes/${m.id}`)).body.node).toMatchObject({ status: 'ACTIVE', status_reason: "Operation 'reboot' succeeded" });
    }
    expect((await api.get(`/v1/clusters/${clusterId}`)).body.cluster).toMatchObject({
      status: 'ACTIVE',
      status_reason: 'reboot: number of active nodes is equal or above desired_capacity (3).',
    });
  });

  it("takes openstacksdk's body (`openstack cluster op --params type=HARD`): the params as the operation's map", async () => {
    const done = await api.waitForAction(ApiClient.actionIdOf(await ops({ reboot: { type: 'HARD' } })), 30_000);
    expect(done).toMatchObject({ status: 'SUCCEEDED', inputs: { operation: 'reboot', params: { type: 'HARD' }, nodes: members.map((m) => m.id) } });
  });

  it('operates only on the members the filters pick (a value, or any of a list)', async () => {
    const before = members.map((m) => rebootsOf(m.physical_id));
    const byRole = await api.waitForAction(ApiClient.actionIdOf(await ops({ reboot: { filters: { role: 'master' } } })), 30_000);
    expect(byRole).toMatchObject({ status: 'SUCCEEDED', inputs: { nodes: [members[0].id] } });
    const byName = await api.waitForAction(ApiClient.actionIdOf(await ops({ reboot: { filters: { name: [members[1].name, members[2].name] } } })), 30_000);
    expect(byName).toMatchObject({ status: 'SUCCEEDED', inputs: { nodes: [members[1].id, members[2].id] } });
    expect(members.map((m, i) => rebootsOf(m.physical_id) - before[i])).toEqual([1, 1, 1]);
  });

  it('fails with Nova\'s reason when Nova refuses a member\'s operation, and the others are done', async () => {
    const stopped = await api.waitForAction(ApiClient.actionIdOf(await ops({ stop: { filters: { role: 'master' } } })), 30_000);
    expect(stopped.status).toBe('SUCCEEDED');
    // Nova refuses to stop a stopped server; the two others stop
    const again = await api.waitForAction(ApiClient.actionIdOf(await ops({ stop: {} })), 30_000);
    expect(again.status).toBe('FAILED');
    expect(again.status_reason).toContain(`Node operation 'stop' failed: Failed in stop server '${members[0].physical_id}'`);
    const sim = t.trellis.simulator!.state;
    expect(members.map((m) => sim.status(sim.server(m.physical_id)!))).toEqual(['SHUTOFF', 'SHUTOFF', 'SHUTOFF']);
    const started = await api.waitForAction(ApiClient.actionIdOf(await ops({ start: {} })), 30_000);
    expect(started.status).toBe('SUCCEEDED');
  });

  it('a cluster operation cancelled while Nova refuses it for now ends CANCELLED and reboots nothing; the next one runs', async () => {
    const faults = t.trellis.simulator!.state.faults;
    faults.add(parseFaultSpec({ method: 'POST', path: '/servers/[^/]+/action$', status: 503, times: 100_000, body: { message: 'compute is down' } }));
    const before = members.map((m) => rebootsOf(m.physical_id));
    const id = ApiClient.actionIdOf(await ops({ reboot: {} }));
    const deadline = Date.now() + 20_000;
    while ((await api.get(`/v1/actions/${id}`)).body.action.status !== 'RUNNING' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));

    expect((await api.call('PATCH', `/v1/actions/${id}`, { action: { status: 'CANCELLED' } })).status).toBe(202);
    const ended = await api.waitForAction(id, 30_000);
    faults.clear();

    expect(ended).toMatchObject({ action: 'CLUSTER_OPERATION', status: 'CANCELLED', status_reason: 'Action execution cancelled' });
    expect(members.map((m, i) => rebootsOf(m.physical_id) - before[i])).toEqual([0, 0, 0]);
    const next = await api.waitForAction(ApiClient.actionIdOf(await ops({ reboot: {} })), 30_000);
    expect(next.status).toBe('SUCCEEDED');
    expect(members.map((m, i) => rebootsOf(m.physical_id) - before[i])).toEqual([1, 1, 1]);
  });

  it("answers Senlin's request errors, in Senlin's order", async () => {
    const expectError = async (res: { status: number; body: any }, status: number, message: string) => {
      expect(res.status).toBe(status);
      expect(res.body.error.message).toBe(message);
    };
    // before 1.4 there is no such method
    await expectError(await ops({ reboot: {} }, '1.3'), 400, "API version '1.3' is not supported on this method.");
    await expectError(await ops({}), 400, 'No operation specified');
    await expectError(await ops({ reboot: {}, stop: {} }), 400, 'Multiple operations specified');
    await expectError(await ops({ dance: {} }), 400, "The requested operation 'dance' is not supported by the profile type 'os.nova.server-1.0'.");
    await expectError(await ops({ reboot: { params: { type: 'Unknown' } } }), 400, "'Unknown' must be one of the allowed values: SOFT, HARD.");
    await expectError(await ops({ reboot: { params: { kind: 'SOFT' } } }), 400, "Unrecognizable parameter 'kind'.");
    await expectError(await ops({ reboot: { filters: { flavor: 'x', size: 1 } } }), 400, "Filter key 'flavor' is unsupported\nFilter key 'size' is unsupported");
    await expectError(await ops({ reboot: { filters: { role: 'nobody' } } }), 400, 'No node (matching the filter) could be found');
    await expectError(await ops({ reboot: 'now' }), 400, "The value of 'reboot' must be a map: its params, or 'params' and 'filters'.");
    await expectError(await ops({ reboot: { params: {}, type: 'SOFT' } }), 400, "Unrecognizable field(s) of 'reboot' beside 'params' and 'filters': 'type'.");
    // openstacksdk's form, the params as the operation's map, is checked as params
    await expectError(await ops({ reboot: { type: 'Unknown' } }), 400, "'Unknown' must be one of the allowed values: SOFT, HARD.");
    // hostile values: a NUL byte, numbers where strings go, one far out of range, a huge list
    const nul = await api.call('POST', `/v1/clusters/${clusterId}/ops`, { reboot: { filters: { name: 'a\u0000b' } } });
    expect(nul.status).toBe(400);
    expect(nul.body.error.message).toContain('NUL');
    await expectError(await ops({ reboot: { filters: { role: 12345678901234567890 } } }), 400, "The filter 'role' must be a string or a list of strings.");
    await expectError(await ops({ reboot: { filters: { status: ['ACTIVE', null] } } }), 400, "The filter 'status' must be a string or a list of strings.");
    await expectError(await ops({ reboot: { params: { type: 1e308 } } }), 400, 'value is not a string.');
    await expectError(await ops({ reboot: { filters: 'role=master' } }), 400, 'The filters provided is not a map.');
    await expectError(await ops({ reboot: { filters: { name: Array.from({ length: 5_000 }, (_, i) => `n${i}`) } } }), 400, 'No node (matching the filter) could be found');
    // a repeated key in the JSON text: the last one counts, as for every body (JSON.parse, Python's json)
    const repeated = await fetch(`${api.baseUrl}/v1/clusters/${clusterId}/ops`, {
      method: 'POST',
      headers: { 'X-Auth-Token': (api as any).token, 'OpenStack-API-Version': 'clustering 1.4', 'Content-Type': 'application/json' },
      body: '{"reboot": {"params": {"type": "SOFT"}, "params": {"type": "BAD"}}}',
    });
    expect(repeated.status).toBe(400);
    expect(((await repeated.json()) as any).error.message).toBe("'BAD' must be one of the allowed values: SOFT, HARD.");
    const missing = await api.post('/v1/clusters/no-such-cluster/ops', { reboot: {} });
    expect(missing.status).toBe(404);
  });
});
