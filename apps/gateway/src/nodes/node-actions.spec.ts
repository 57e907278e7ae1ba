import { ActionEntity, NodeEntity } from '@trellis/persistence';
import { randomUUID } from 'node:crypto';
import { NOVA_PROFILE_SPEC, nodeRow, startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';

describe('node actions, node operations, profile-type operations, complete_lifecycle', () => {
  let h: GatewayHarness;
  const alice = (v = '1.14') => h.as(TOKENS.alice, v);
  const action = (id: string) => h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id });

  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h?.close());

  async function node(): Promise<string> {
    const p = (await alice().post('/v1/profiles', { profile: { name: `p-${randomUUID().slice(0, 6)}`, spec: NOVA_PROFILE_SPEC } })).body.profile;
    const node = nodeRow({ profile_id: p.id, physical_id: randomUUID(), index: -1, status_reason: 'Creation succeeded', updated_at: new Date() });
    await h.db.dataSource.getRepository(NodeEntity).save(node);
    return node.id;
  }

  it('POST /v1/nodes/{id}/actions: check and recover become READY actions with Senlin\'s inputs', async () => {
    const id = await node();
    const checked = await alice().post(`/v1/nodes/${id}/actions`, { check: {} });
    expect(checked.status).toBe(202);
    const checkId = checked.headers.location.split('/actions/')[1];
    expect(checked.body).toEqual({ action: checkId });
    expect(await action(checkId)).toMatchObject({ action: 'NODE_CHECK', target: id, status: 'READY' });
    await h.db.dataSource.getRepository(ActionEntity).update({ id: checkId }, { status: 'SUCCEEDED' });

    const recovered = await alice().post(`/v1/nodes/${id}/actions`, { recover: { operation: 'reboot', operation_params: { type: 'soft' } } });
    expect(recovered.status).toBe(202);
    expect(await action(recovered.body.action)).toMatchObject({
      action: 'NODE_RECOVER',
      inputs: { operation: 'reboot', operation_params: { type: 'soft' } },
    });
  });

  it.each([
    [{}, 'No action specified.'],
    [{ check: {}, recover: {} }, 'Multiple actions specified.'],
    [{ bogus: {} }, "Unrecognized action 'bogus' specified"],
    [{ check: [] }, 'The params provided is not a map.'],
    [{ recover: { operation: 'dance' } }, "Operation value 'dance' has to be one of the following: REBOOT, REBUILD, RECREATE."],
    [{ recover: { foo: 1 } }, "Action parameter ['foo'] is not recognizable."],
  ])('actions: %j → 400 %s', async (body, message) => {
    const id = await node();
    const res = await alice().post(`/v1/nodes/${id}/actions`, body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(message);
  });

  it('POST /v1/nodes/{id}/ops (>= 1.4): Senlin\'s checks in its order, then a NODE_OPERATION', async () => {
    expect((await alice('1.3').post('/v1/nodes/FAKE_ID/ops', { reboot: {} })).body.error.message).toBe("API version '1.3' is not supported on this method.");
    expect((await alice().post('/v1/nodes/FAKE_ID/ops', {})).body.error.message).toBe('No operation specified.');
    expect((await alice().post('/v1/nodes/FAKE_ID/ops', { foo: {}, bar: {} })).body.error.message).toBe('Multiple operations specified.');
    const missing = await alice().post(`/v1/nodes/${'b'.repeat(8)}-0000-0000-0000-000000000000/ops`, { dance: {} });
    expect(missing.status).toBe(404);
    const id = await node();
    const dance = await alice().post(`/v1/nodes/${id}/ops`, { dance: {} });
    expect(dance.body.error.message).toBe("The requested operation 'dance' is not supported by the profile type 'os.nova.server-1.0'.");
    const bad = await alice().post(`/v1/nodes/${id}/ops`, { reboot: { type: 'Unknown' } });
    expect(bad.body.error.message).toBe("'Unknown' must be one of the allowed values: SOFT, HARD.");
    const ok = await alice().post(`/v1/nodes/${id}/ops`, { reboot: { type: 'SOFT' } });
    expect(ok.status).toBe(202);
    expect(await action(ok.body.action)).toMatchObject({ action: 'NODE_OPERATION', inputs: { operation: 'reboot', params: { type: 'SOFT' } } });
  });

  it('GET /v1/profile-types/os.nova.server-1.0/ops lists Senlin\'s server operations', async () => {
    const res = await alice().get('/v1/profile-types/os.nova.server-1.0/ops');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.operations)).toEqual(expect.arrayContaining(['reboot', 'rebuild', 'change_password', 'start', 'stop', 'pause']));
    expect(res.body.operations.reboot).toEqual({
      description: 'Reboot the nova server.',
      parameters: {
        type: {
          type: 'String', description: "Type of reboot which can be 'SOFT' or 'HARD'.", default: 'SOFT', required: false,
          constraints: [{ type: 'AllowedValues', constraint: ['SOFT', 'HARD'] }],
        },
      },
    });
  });

  it('complete_lifecycle (1.9): 202 naming the token\'s action; 404 for an unknown token; 400 before 1.9', async () => {
    const id = await node();
    const token = (await alice().post(`/v1/nodes/${id}/actions`, { check: {} })).body.action;
    const c = randomUUID();
    const done = await alice().post(`/v1/clusters/${c}/actions`, { complete_lifecycle: { lifecycle_action_token: token } });
    expect(done.status).toBe(202);
    expect(done.headers.location.split('/actions/')[1]).toBe(token);
    const unknown = randomUUID();
    const missing = await alice().post(`/v1/clusters/${c}/actions`, { complete_lifecycle: { lifecycle_action_token: unknown } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe(`The action '${unknown}' could not be found.`);
    expect((await alice('1.8').post(`/v1/clusters/${c}/actions`, { complete_lifecycle: { lifecycle_action_token: token } })).status).toBe(400);
  });
});
