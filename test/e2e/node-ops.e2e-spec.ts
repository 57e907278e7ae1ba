import { ApiClient } from '../support/api-client';
import { createProfile } from '../support/scale-out.scenario';
import { demoApi, startTestTrellis, type TestTrellis } from '../support/trellis';

/**
 * Node check, recover and operations on the embedded default: the nova-worker acts on the node's
 * server in the simulator with the user's trust, and every action ends in a final state.
 */
describe('node check, recover and operations (embedded default)', () => {
  let t: TestTrellis;
  let api: ApiClient;

  beforeAll(async () => {
    t = await startTestTrellis();
    api = await demoApi(t.trellis);
    await createProfile(api, 'p1');
  });
  afterAll(() => t?.close());

  async function accepted(res: { status: number; headers: Headers; body: any }) {
    expect(res.status).toBe(202);
    // node actions and operations answer {"action": id} besides the Location
    if (!res.body?.node && !res.body?.cluster) expect(res.body.action).toBe(ApiClient.actionIdOf(res));
    return api.waitForAction(ApiClient.actionIdOf(res), 30_000);
  }

  async function node(name: string): Promise<{ id: string; physical_id: string }> {
    const res = await api.post('/v1/nodes', { node: { name, profile_id: 'p1' } });
    expect((await accepted(res)).status).toBe('SUCCEEDED');
    return (await api.get(`/v1/nodes/${res.body.node.id}`)).body.node;
  }

  it('checks a node whose server was deleted behind Trellis\'s back: the check succeeds, the node is ERROR without a server', async () => {
    const n = await node('checked');
    const ok = await accepted(await api.post(`/v1/nodes/${n.id}/actions`, { check: {} }));
    expect(ok).toMatchObject({ action: 'NODE_CHECK', status: 'SUCCEEDED', status_reason: 'Node check succeeded.' });
    expect((await api.get(`/v1/nodes/${n.id}`)).body.node).toMatchObject({ status: 'ACTIVE', status_reason: 'Check: Node is ACTIVE.' });

    const sim = t.trellis.simulator!.state;
    sim.deleteServer(sim.server(n.physical_id)!);
    sim.advanceClock(60_000);
    const checked = await accepted(await api.post(`/v1/nodes/${n.id}/actions`, { check: {} }));
    expect(checked).toMatchObject({ status: 'SUCCEEDED', status_reason: 'Node check succeeded.' });
    const after = (await api.get(`/v1/nodes/${n.id}`)).body.node;
    expect(after).toMatchObject({
      status: 'ERROR',
      status_reason: `Failed in found server '${n.physical_id}': Instance ${n.physical_id} could not be found.`,
      physical_id: null,
    });
  });

  it('reboots a node\'s server in Nova and recovers a node by rebuilding its server', async () => {
    const n = await node('operated');
    const rebooted = await accepted(await api.post(`/v1/nodes/${n.id}/ops`, { reboot: { type: 'HARD' } }));
    expect(rebooted).toMatchObject({ action: 'NODE_OPERATION', status: 'SUCCEEDED', status_reason: "Node operation 'reboot' succeeded." });
    expect((await api.get(`/v1/nodes/${n.id}`)).body.node).toMatchObject({ status: 'ACTIVE', status_reason: "Operation 'reboot' succeeded" });

    const stopped = await accepted(await api.post(`/v1/nodes/${n.id}/ops`, { stop: {} }));
    expect(stopped.status).toBe('SUCCEEDED');
    const sim = t.trellis.simulator!.state;
    expect(sim.status(sim.server(n.physical_id)!)).toBe('SHUTOFF');
    // Nova refuses to stop a stopped server: the operation fails and says why
    const again = await accepted(await api.post(`/v1/nodes/${n.id}/ops`, { stop: {} }));
    expect(again.status).toBe('FAILED');
    expect(again.status_reason).toContain(`Node operation 'stop' failed: Failed in stop server '${n.physical_id}'`);
    expect(again.status_reason).toContain('vm_state');
    expect((await api.get(`/v1/nodes/${n.id}`)).body.node.status).toBe('ERROR');

    const recovered = await accepted(await api.post(`/v1/nodes/${n.id}/actions`, { recover: { operation: 'REBUILD' } }));
    expect(recovered).toMatchObject({ action: 'NODE_RECOVER', status: 'SUCCEEDED', status_reason: 'Node recovered successfully.' });
    expect((await api.get(`/v1/nodes/${n.id}`)).body.node).toMatchObject({ status: 'ACTIVE', status_reason: 'Recovery succeeded', physical_id: n.physical_id });
    expect(sim.status(sim.server(n.physical_id)!)).toBe('ACTIVE');
  });

  it('answers Senlin\'s request errors', async () => {
    const n = await node('asked');
    let res = await api.post(`/v1/nodes/${n.id}/ops`, { dance: {} });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe("The requested operation 'dance' is not supported by the profile type 'os.nova.server-1.0'.");
    res = await api.post(`/v1/nodes/${n.id}/ops`, { reboot: { type: 'Unknown' } });
    expect(res.body.error.message).toBe("'Unknown' must be one of the allowed values: SOFT, HARD.");
    res = await new ApiClient(t.trellis.url, (api as any).token, '1.3').post('/v1/nodes/FAKE_ID/ops', { reboot: {} });
    expect(res.body.error.message).toBe("API version '1.3' is not supported on this method.");
    res = await api.post('/v1/nodes/node_id/actions', { check: {}, recover: {} });
    expect(res.body.error.message).toBe('Multiple actions specified.');
    res = await api.post('/v1/nodes/node_id/actions', { check: [] });
    expect(res.body.error.message).toBe('The params provided is not a map.');
    res = await api.post('/v1/nodes/694e59ce-551e-4e77-a684-e77781583e12/actions', { recover: {} });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe("The node '694e59ce-551e-4e77-a684-e77781583e12' could not be found.");
    const ops = await api.get('/v1/profile-types/os.nova.server-1.0/ops');
    expect(ops.body.operations.change_password).toMatchObject({ description: 'Change the administrator password.', parameters: { admin_pass: expect.any(Object) } });
  });

  it('completes a lifecycle (1.9): the answer names the token\'s action', async () => {
    const res = await api.post('/v1/clusters', { cluster: { name: 'lc', profile_id: 'p1', desired_capacity: 0, min_size: 0, max_size: -1 } });
    const created = await accepted(res);
    const done = await api.post(`/v1/clusters/${res.body.cluster.id}/actions`, { complete_lifecycle: { lifecycle_action_token: created.id } });
    expect(done.status).toBe(202);
    expect(ApiClient.actionIdOf(done)).toBe(created.id);
    expect((await api.waitForAction(created.id)).status).toBe('SUCCEEDED');
  });
});
