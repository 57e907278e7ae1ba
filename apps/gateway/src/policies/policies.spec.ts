import { ActionEntity, CloudFactEntity, ClusterPolicyEntity, PolicyEntity } from '@trellis/persistence';
import { randomUUID } from 'node:crypto';
import { NOVA_PROFILE_SPEC, startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';

const ZONE_SPEC = {
  type: 'senlin.policy.zone_placement',
  version: 1.0,
  properties: { zones: [{ name: 'az1', weight: 100 }, { name: 'az2' }] },
};

describe('policies, policy types and bindings (issue 3)', () => {
  let h: GatewayHarness;
  const alice = (v = '1.14') => h.as(TOKENS.alice, v);
  const bob = () => h.as(TOKENS.bob, '1.14');

  beforeAll(async () => {
    h = await startGatewayHarness();
    await h.db.dataSource.getRepository(CloudFactEntity).save({ kind: 'availability_zones', project: '', data: { items: ['az1', 'az2'] }, fetched_at: new Date() });
  });
  afterAll(() => h?.close());

  async function policy(name = `zp-${randomUUID().slice(0, 6)}`, spec: unknown = ZONE_SPEC) {
    const res = await alice().post('/v1/policies', { policy: { name, spec } });
    expect(res.status).toBe(201);
    return res.body.policy as { id: string; name: string };
  }

  async function cluster() {
    const p = await alice().post('/v1/profiles', { profile: { name: `p-${randomUUID().slice(0, 6)}`, spec: NOVA_PROFILE_SPEC } });
    const c = await alice().post('/v1/clusters', { cluster: { name: `c-${randomUUID().slice(0, 6)}`, profile_id: p.body.profile.id } });
    const actionId = c.headers.location.split('/actions/')[1];
    await h.db.dataSource.getRepository(ActionEntity).update({ id: actionId }, { status: 'SUCCEEDED' });
    return c.body.cluster as { id: string; name: string };
  }

  async function bind(clusterId: string, policyId: string) {
    const id = randomUUID();
    await h.db.dataSource.getRepository(ClusterPolicyEntity).save({
      id,
      cluster_id: clusterId,
      policy_id: policyId,
      enabled: true,
      priority: 300,
      data: {},
      last_op: null,
      attached_at: new Date(),
    });
    return id;
  }

  describe('policy types', () => {
    it('lists names only below 1.5 and name, version and support_status from 1.5', async () => {
      const old = await alice('1.0').get('/v1/policy-types');
      expect(old.status).toBe(200);
      expect(old.body.policy_types).toContainEqual({ name: 'senlin.policy.zone_placement-1.0' });
      const recent = await alice('1.5').get('/v1/policy-types');
      const zone = recent.body.policy_types.find((t: { name: string }) => t.name === 'senlin.policy.zone_placement');
      expect(zone).toMatchObject({ version: '1.0', support_status: { '1.0': expect.any(Array) } });
    });

    it('shows a type with its schema, and 404 for a name without version', async () => {
      const res = await alice().get('/v1/policy-types/senlin.policy.zone_placement-1.0');
      expect(res.status).toBe(200);
      expect(res.body.policy_type.name).toBe('senlin.policy.zone_placement-1.0');
      expect(res.body.policy_type.schema.zones.type).toBe('List');
      expect(res.body.policy_type.support_status).toBeDefined();
      expect((await alice('1.4').get('/v1/policy-types/senlin.policy.zone_placement-1.0')).body.policy_type.support_status).toBeUndefined();
      const missing = await alice().get('/v1/policy-types/senlin.policy.zone_placement');
      expect(missing.status).toBe(404);
      expect(missing.body.error.message).toBe("The policy_type 'senlin.policy.zone_placement' could not be found.");
    });
  });

  describe('policies', () => {
    it('creates (201), lists, shows, renames and deletes a policy', async () => {
      const created = await policy('zp1');
      const res = await alice().get(`/v1/policies/${created.id}`);
      expect(res.body.policy).toMatchObject({ name: 'zp1', type: 'senlin.policy.zone_placement-1.0', spec: ZONE_SPEC, data: {}, updated_at: null });
      expect((await alice().get('/v1/policies?type=senlin.policy.zone_placement-1.0')).body.policies.map((p: { id: string }) => p.id)).toContain(
        created.id,
      );
      const same = await alice().patch(`/v1/policies/zp1`, { policy: { name: 'zp1' } });
      expect(same.status).toBe(400);
      expect(same.body.error.message).toBe('No property needs an update.');
      const renamed = await alice().patch(`/v1/policies/zp1`, { policy: { name: 'zp2' } });
      expect(renamed.status).toBe(200);
      expect(renamed.body.policy.name).toBe('zp2');
      expect(renamed.body.policy.updated_at).not.toBeNull();
      const missingKey = await alice().patch(`/v1/policies/zp2`, { name: 'x' });
      expect(missingKey.body.error.message).toBe("Malformed request data, missing 'policy' key in request body.");
      expect((await bob().get(`/v1/policies/${created.id}`)).status).toBe(404);
      const deleted = await alice().delete(`/v1/policies/${created.id}`);
      expect(deleted.status).toBe(204);
      expect((await alice().get(`/v1/policies/${created.id}`)).status).toBe(404);
    });

    it.each([
      [{}, 400, "Request body missing 'policy' key."],
      [{ policy: { name: 'x' } }, 400, "'spec' is a required property"],
      [{ policy: { spec: ZONE_SPEC } }, 400, "'name' is a required property"],
      [{ policy: { name: 'x', spec: ZONE_SPEC, extra: 1 } }, 400, "Additional properties are not allowed ('extra' was unexpected)"],
      [{ policy: { name: 'x', spec: { ...ZONE_SPEC, type: 'senlin.policy.bogus' } } }, 404, "The policy_type 'senlin.policy.bogus-1.0' could not be found."],
      [{ policy: { name: 'x', spec: { ...ZONE_SPEC, properties: { zones: [{ name: 'az1', bogus: 1 }] } } } }, 400, /properties\.zones\[0\]\.bogus/],
      [{ policy: { name: 'x', spec: { ...ZONE_SPEC, properties: { zones: [{ name: 'AZ9' }] } } } }, 400, /AZ9/],
    ])('refuses %j', async (body, status, message) => {
      const res = await alice().post('/v1/policies', body);
      expect(res.status).toBe(status);
      if (typeof message === 'string') expect(res.body.error.message).toBe(message);
      else expect(res.body.error.message).toMatch(message);
    });

    it('validates without Nova from 1.2 only', async () => {
      const old = await alice('1.1').post('/v1/policies/validate', { policy: { spec: ZONE_SPEC } });
      expect(old.status).toBe(400);
      expect(old.body.error.message).toBe("API version '1.1' is not supported on this method.");
      const res = await alice('1.2').post('/v1/policies/validate', { policy: { spec: { ...ZONE_SPEC, properties: { zones: [{ name: 'AZ9' }] } } } });
      expect(res.status).toBe(200);
      expect(res.body.policy).toMatchObject({ id: null, name: 'validated_policy', created_at: null, type: 'senlin.policy.zone_placement-1.0' });
    });

    it('refuses to delete an attached policy with 409', async () => {
      const p = await policy();
      const c = await cluster();
      await bind(c.id, p.id);
      const res = await alice().delete(`/v1/policies/${p.id}`);
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ type: 'ResourceInUse', message: `The policy '${p.id}' cannot be deleted: still attached to some clusters.` });
    });
  });

  describe('binding actions and cluster policies', () => {
    it('accepts policy_attach with the resolved policy id', async () => {
      const p = await policy();
      const c = await cluster();
      const res = await alice().post(`/v1/clusters/${c.id}/actions`, { policy_attach: { policy_id: p.name } });
      expect(res.status).toBe(202);
      const row = await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: res.body.action });
      expect(row).toMatchObject({ action: 'CLUSTER_ATTACH_POLICY', name: `attach_policy_${c.id.slice(0, 8)}`, inputs: { policy_id: p.id, enabled: true } });
      const unknown = await alice().post(`/v1/clusters/${c.id}/actions`, { policy_attach: { policy_id: 'nope' } });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.message).toBe("The specified policy 'nope' could not be found.");
      const missing = await alice().post(`/v1/clusters/${c.id}/actions`, { policy_attach: {} });
      expect(missing.body.error.message).toBe("'policy_id' is a required property");
    });

    it('accepts policy_detach and policy_update only for an attached policy', async () => {
      const p = await policy();
      const c = await cluster();
      const notAttached = await alice().post(`/v1/clusters/${c.name}/actions`, { policy_detach: { policy_id: p.name } });
      expect(notAttached.status).toBe(400);
      expect(notAttached.body.error.message).toBe(`The policy '${p.name}' is not attached to the specified cluster '${c.name}'.`);
      await bind(c.id, p.id);
      const update = await alice().post(`/v1/clusters/${c.id}/actions`, { policy_update: { policy_id: p.id, enabled: 'false' } });
      expect(update.status).toBe(202);
      const row = await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: update.body.action });
      expect(row).toMatchObject({ action: 'CLUSTER_UPDATE_POLICY', inputs: { policy_id: p.id, enabled: false } });
      await h.db.dataSource.getRepository(ActionEntity).update({ id: row.id }, { status: 'SUCCEEDED' });
      const detach = await alice().post(`/v1/clusters/${c.id}/actions`, { policy_detach: { policy_id: p.id } });
      expect(detach.status).toBe(202);
      const detachRow = await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: detach.body.action });
      expect(detachRow).toMatchObject({ action: 'CLUSTER_DETACH_POLICY', inputs: { policy_id: p.id } });
    });

    it('lists and shows bindings with Senlin fields and filters', async () => {
      const p = await policy();
      const c = await cluster();
      const bindingId = await bind(c.id, p.id);
      const list = await alice().get(`/v1/clusters/${c.id}/policies`);
      expect(list.status).toBe(200);
      expect(list.body.cluster_policies).toEqual([
        {
          id: bindingId,
          cluster_id: c.id,
          cluster_name: c.name,
          policy_id: p.id,
          policy_name: p.name,
          policy_type: 'senlin.policy.zone_placement-1.0',
          enabled: true,
          priority: 300,
          data: {},
          last_op: null,
        },
      ]);
      expect((await alice().get(`/v1/clusters/${c.id}/policies?enabled=false`)).body.cluster_policies).toEqual([]);
      expect((await alice().get(`/v1/clusters/${c.id}/policies?enabled=bad`)).body.error.message).toBe("Invalid value 'bad' specified for 'enabled'");
      expect((await alice().get(`/v1/clusters/${c.id}/policies?limit=1`)).body.error.message).toBe('Invalid parameter limit');
      const shown = await alice().get(`/v1/clusters/${c.id}/policies/${p.name}`);
      expect(shown.body.cluster_policy.id).toBe(bindingId);
      const cl = await alice().get(`/v1/clusters/${c.id}`);
      expect(cl.body.cluster.policies).toEqual([bindingId]);
      const other = await policy();
      const missing = await alice().get(`/v1/clusters/${c.id}/policies/${other.id}`);
      expect(missing.status).toBe(404);
      expect(missing.body.error).toMatchObject({
        type: 'PolicyBindingNotFound',
        message: `The policy '${other.id}' is not found attached to the specified cluster '${c.id}'.`,
      });
    });
  });

  describe('cloud facts', () => {
    it('answers 503 while the nova-worker has not stored the zones yet', async () => {
      await h.db.dataSource.getRepository(CloudFactEntity).delete({ kind: 'availability_zones' });
      try {
        const res = await alice().post('/v1/policies', { policy: { name: 'early', spec: ZONE_SPEC } });
        expect(res.status).toBe(503);
        expect(res.body.error.message).toMatch(/availability_zones/);
        expect(await h.db.dataSource.getRepository(PolicyEntity).countBy({ name: 'early' })).toBe(0);
      } finally {
        await h.db.dataSource.getRepository(CloudFactEntity).save({ kind: 'availability_zones', project: '', data: { items: ['az1', 'az2'] }, fetched_at: new Date() });
      }
    });

    it('answers 503 when the nova-worker stored the zones as unreadable', async () => {
      const repo = h.db.dataSource.getRepository(CloudFactEntity);
      await repo.save({ kind: 'availability_zones', project: '', data: { items: [], error: 'HTTP 503 from Nova' }, fetched_at: new Date() });
      try {
        const res = await alice().post('/v1/policies', { policy: { name: 'unreadable', spec: ZONE_SPEC } });
        expect(res.status).toBe(503);
        expect(res.body.error.message).toMatch(/availability_zones/);
      } finally {
        await h.db.dataSource.getRepository(CloudFactEntity).save({ kind: 'availability_zones', project: '', data: { items: ['az1', 'az2'] }, fetched_at: new Date() });
      }
    });
  });
});
