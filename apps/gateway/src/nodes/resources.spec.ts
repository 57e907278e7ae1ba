import { ActionEntity, NodeEntity, OutboxEntity } from '@trellis/persistence';
import { randomUUID } from 'node:crypto';
import { NOVA_PROFILE_SPEC, nodeRow, startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';

describe('profiles, clusters and nodes: the rest of issue 3', () => {
  let h: GatewayHarness;
  const alice = (v = '1.14') => h.as(TOKENS.alice, v);
  const actions = () => h.db.dataSource.getRepository(ActionEntity);
  const done = (id: string) => actions().update({ id }, { status: 'SUCCEEDED' });

  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h?.close());

  async function profile() {
    const res = await alice().post('/v1/profiles', { profile: { name: `p-${randomUUID().slice(0, 6)}`, spec: NOVA_PROFILE_SPEC } });
    return res.body.profile as { id: string; name: string };
  }

  async function cluster(extra: Record<string, unknown> = {}) {
    const p = await profile();
    const res = await alice().post('/v1/clusters', { cluster: { name: `c-${randomUUID().slice(0, 6)}`, profile_id: p.id, ...extra } });
    await done(res.headers.location.split('/actions/')[1]);
    return res.body.cluster as { id: string; name: string; profile_id: string };
  }

  async function activeNode(clusterId: string | null, profileId: string) {
    const node = nodeRow({ cluster_id: clusterId, profile_id: profileId });
    await h.db.dataSource.getRepository(NodeEntity).save(node);
    return node.id;
  }

  it('updates, validates and deletes profiles; lists profile types by microversion', async () => {
    const p = await profile();
    const renamed = await alice().patch(`/v1/profiles/${p.id}`, { profile: { name: 'renamed', metadata: { k: 'v' } } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.profile).toMatchObject({ name: 'renamed', metadata: { k: 'v' } });
    expect((await alice().patch(`/v1/profiles/${p.id}`, { profile: { name: 'renamed' } })).body.error.message).toBe('No property needs an update.');
    const validated = await alice('1.2').post('/v1/profiles/validate', { profile: { spec: NOVA_PROFILE_SPEC } });
    expect(validated.body.profile).toMatchObject({ id: null, name: 'validated_profile', type: 'os.nova.server-1.0' });
    expect((await alice().delete(`/v1/profiles/${p.id}`)).status).toBe(204);
    const used = await cluster();
    const inUse = await alice().delete(`/v1/profiles/${used.profile_id}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.type).toBe('ResourceInUse');
    expect((await alice('1.0').get('/v1/profile-types')).body.profile_types).toEqual([
      { name: 'os.nova.server-1.0' },
      { name: 'os.heat.stack-1.0' },
      { name: 'container.dockerinc.docker-1.0' },
    ]);
    const types = await alice('1.5').get('/v1/profile-types');
    expect(types.body.profile_types[0]).toMatchObject({ name: 'os.nova.server', version: '1.0' });
    const shown = await alice().get('/v1/profile-types/os.nova.server-1.0');
    expect(shown.body.profile_type.schema.flavor).toMatchObject({ type: 'String', required: true, updatable: true });
    expect((await alice().get('/v1/profile-types/os.bogus.stack-1.0')).status).toBe(404);
  });

  it('updates a cluster through a CLUSTER_UPDATE action and refuses a no-op', async () => {
    const c = await cluster();
    const res = await alice().patch(`/v1/clusters/${c.id}`, { cluster: { name: 'new-name', timeout: '60' } });
    expect(res.status).toBe(202);
    const row = await actions().findOneByOrFail({ id: res.headers.location.split('/actions/')[1] });
    expect(row).toMatchObject({ action: 'CLUSTER_UPDATE', inputs: { name: 'new-name', timeout: 60 } });
    await done(row.id);
    const noop = await alice().patch(`/v1/clusters/${c.id}`, { cluster: { name: c.name } });
    expect(noop.status).toBe(400);
    expect(noop.body.error.message).toBe('No property needs an update.');
  });

  it('deletes a cluster with 202, body null and Location; refuses a busy cluster unless forced', async () => {
    const c = await cluster();
    await h.db.dataSource.query(`UPDATE clusters SET status = 'UPDATING' WHERE id = $1`, [c.id]);
    const busy = await alice().delete(`/v1/clusters/${c.id}`);
    expect(busy.status).toBe(409);
    expect(busy.body.error.message).toBe(`The cluster '${c.id}' is in status UPDATING.`);
    const res = await alice('1.8').delete(`/v1/clusters/${c.id}?force=true`);
    expect(res.status).toBe(202);
    expect(res.text).toBe('null');
    const row = await actions().findOneByOrFail({ id: res.headers.location.split('/actions/')[1] });
    expect(row).toMatchObject({ action: 'CLUSTER_DELETE', name: `cluster_delete_${c.id.slice(0, 8)}` });
  });

  it('checks add_nodes and del_nodes against membership, status and size', async () => {
    const c = await cluster({ max_size: 1 });
    const orphan = await activeNode(null, c.profile_id);
    const added = await alice().post(`/v1/clusters/${c.id}/actions`, { add_nodes: { nodes: [orphan] } });
    expect(added.status).toBe(202);
    expect((await actions().findOneByOrFail({ id: added.body.action })).inputs).toEqual({ nodes: [orphan] });
    await done(added.body.action);
    const member = await activeNode(c.id, c.profile_id);
    // the engine's part: the add_nodes action raised the desired capacity
    await h.db.dataSource.query('UPDATE clusters SET desired_capacity = 2, max_size = 2 WHERE id = $1', [c.id]);
    expect((await alice().post(`/v1/clusters/${c.id}/actions`, { add_nodes: { nodes: [member] } })).body.error.message).toBe(
      `Nodes ['${member}'] already owned by some cluster.`,
    );
    expect((await alice().post(`/v1/clusters/${c.id}/actions`, { add_nodes: { nodes: ['ghost'] } })).body.error.message).toBe(
      "Nodes not found: ['ghost'].",
    );
    expect((await alice().post(`/v1/clusters/${c.id}/actions`, { add_nodes: { nodes: [] } })).body.error.message).toBe(
      "Value for 'nodes' must have at least 1 item(s).",
    );
    const second = await activeNode(null, c.profile_id);
    const third = await activeNode(null, c.profile_id);
    expect((await alice().post(`/v1/clusters/${c.id}/actions`, { add_nodes: { nodes: [second, third] } })).body.error.message).toBe(
      "The target capacity (4) is greater than the cluster's max_size (2).",
    );
    expect((await alice().post(`/v1/clusters/${c.id}/actions`, { del_nodes: { nodes: [second] } })).body.error.message).toBe(
      `Nodes not members of specified cluster: ['${second}'].`,
    );
    const old = await alice('1.3').post(`/v1/clusters/${c.id}/actions`, { del_nodes: { nodes: [member], destroy_after_deletion: true } });
    expect(old.body.error.message).toBe("Additional properties are not allowed ('destroy_after_deletion' was unexpected)");
    const del = await alice().post(`/v1/clusters/${c.id}/actions`, { del_nodes: { nodes: [member], destroy_after_deletion: true } });
    expect(del.status).toBe(202);
    expect((await actions().findOneByOrFail({ id: del.body.action })).inputs).toEqual({
      candidates: [member],
      count: 1,
      destroy_after_deletion: true,
    });
    await done(del.body.action);
    const check = await alice().post(`/v1/clusters/${c.id}/actions`, { check: {} });
    expect(check.status).toBe(202);
    const unsupported = await alice().post(`/v1/clusters/${c.id}/actions`, { recover: {} });
    expect(unsupported.status).toBe(409);
  });

  it('creates a node in a cluster with the next index, updates and deletes it', async () => {
    const c = await cluster();
    const res = await alice().post('/v1/nodes', { node: { name: 'solo', profile_id: c.profile_id, cluster_id: c.name, role: 'db' } });
    expect(res.status).toBe(202);
    expect(res.body.node).toMatchObject({ name: 'solo', cluster_id: c.id, index: 1, role: 'db', status: 'INIT', tainted: false });
    const actionId = res.headers.location.split('/actions/')[1];
    expect(await actions().findOneByOrFail({ id: actionId })).toMatchObject({
      action: 'NODE_CREATE',
      target: res.body.node.id,
      cluster_id: c.id,
      name: `node_create_${res.body.node.id.slice(0, 8)}`,
    });
    await done(actionId);
    const second = await alice().post('/v1/nodes', { node: { name: 'solo2', profile_id: c.profile_id, cluster_id: c.id } });
    expect(second.body.node.index).toBe(2);
    await done(second.headers.location.split('/actions/')[1]);
    const orphan = await alice('1.12').post('/v1/nodes', { node: { name: 'orphan', profile_id: c.profile_id } });
    expect(orphan.body.node.cluster_id).toBe('');
    expect(orphan.body.node).not.toHaveProperty('tainted');
    const updated = await alice().patch(`/v1/nodes/solo`, { node: { role: 'web', tainted: true } });
    expect(updated.status).toBe(202);
    const updateRow = await actions().findOneByOrFail({ id: updated.headers.location.split('/actions/')[1] });
    expect(updateRow).toMatchObject({ action: 'NODE_UPDATE', inputs: { role: 'web', tainted: true } });
    const deleted = await alice().delete(`/v1/nodes/solo`);
    expect(deleted.status).toBe(202);
    expect(deleted.text).toBe('null');
    expect((await actions().findOneByOrFail({ id: deleted.headers.location.split('/actions/')[1] })).action).toBe('NODE_DELETE');
    const badCluster = await alice().post('/v1/nodes', { node: { name: 'x', profile_id: c.profile_id, cluster_id: 'nope' } });
    expect(badCluster.status).toBe(400);
  });

  describe('POST /v1/actions/{id}/replay', () => {
    it('re-publishes a READY action for an admin with a new outbox row', async () => {
      const c = await cluster();
      const res = await alice().post(`/v1/clusters/${c.id}/actions`, { scale_out: {} });
      const outbox = h.db.dataSource.getRepository(OutboxEntity);
      const before = await outbox.count();
      const member = await alice().post(`/v1/actions/${res.body.action}/replay`);
      expect(member.status).toBe(403);
      const replay = await h.as(TOKENS.admin).post(`/v1/actions/${res.body.action}/replay`);
      expect(replay.status).toBe(202);
      expect(replay.body).toMatchObject({ action: res.body.action, status: 'READY', cause: 'replay' });
      expect(replay.headers.location).toBe(`${h.gateway.url}/v1/actions/${res.body.action}`);
      expect(await outbox.count()).toBe(before + 1);
      const row = await outbox.findOneByOrFail({ message_id: replay.body.message_id });
      expect(row.payload).toMatchObject({ action_id: res.body.action, cause: 'replay' });
    });

    it('refuses a finished action with 409', async () => {
      const c = await cluster();
      const res = await alice().post(`/v1/clusters/${c.id}/actions`, { scale_out: {} });
      await done(res.body.action);
      const replay = await h.as(TOKENS.admin).post(`/v1/actions/${res.body.action}/replay`);
      expect(replay.status).toBe(409);
    });
  });

  it('serves the OpenAPI document at /docs-json and the UI at /docs without a token', async () => {
    const json = await h.http().get('/docs-json');
    expect(json.status).toBe(200);
    expect(Object.keys(json.body.paths)).toEqual(expect.arrayContaining(['/v1/clusters', '/v1/clusters/{cluster_id}/actions']));
    const ui = await h.http().get('/docs');
    expect(ui.status).toBe(200);
    expect(ui.text).toContain('swagger');
  });
});
