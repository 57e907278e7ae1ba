import { ActionEntity, ClusterPolicyEntity, EventEntity, NodeEntity, OutboxEntity, PolicyEntity } from '@trellis/persistence';
import { randomUUID } from 'node:crypto';
import { sortKeys } from '../core/sorted-json';
import { NOVA_PROFILE_SPEC, PROJECT_A, nodeRow, startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';

const actionIdOf = (location: string) => location.split('/actions/')[1];

describe('profiles, clusters and scaling (issue 2)', () => {
  let h: GatewayHarness;
  const alice = () => h.as(TOKENS.alice, '1.14');
  const bob = () => h.as(TOKENS.bob, '1.14');

  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h?.close());

  async function profile(name = `p-${randomUUID().slice(0, 6)}`) {
    const res = await alice().post('/v1/profiles', { profile: { name, spec: NOVA_PROFILE_SPEC } });
    expect(res.status).toBe(201);
    return res.body.profile as { id: string; name: string };
  }

  async function cluster(body: Record<string, unknown> = {}) {
    const p = await profile();
    const res = await alice().post('/v1/clusters', {
      cluster: { name: `c-${randomUUID().slice(0, 6)}`, profile_id: p.name, ...body },
    });
    expect(res.status).toBe(202);
    return { cluster: res.body.cluster as Record<string, unknown> & { id: string }, actionId: actionIdOf(res.headers.location) };
  }

  /** the engine's part, done by hand: the create action finished */
  async function finish(actionId: string, status = 'SUCCEEDED') {
    await h.db.dataSource.getRepository(ActionEntity).update({ id: actionId }, { status });
  }

  /** a scale-out scaling policy with a 300 s cooldown, bound to the cluster and last used at `lastOp` */
  async function bindScaleOutPolicy(clusterId: string, lastOp: Date): Promise<string> {
    const policyId = randomUUID();
    await h.db.dataSource.getRepository(PolicyEntity).save({
      id: policyId,
      name: 'sp',
      type: 'senlin.policy.scaling-1.0',
      spec: { type: 'senlin.policy.scaling', version: '1.0', properties: { event: 'CLUSTER_SCALE_OUT', adjustment: { cooldown: 300 } } },
      data: {},
      project: PROJECT_A,
      user: 'alice-id',
      domain: null,
      created_at: new Date(),
      updated_at: null,
    });
    await h.db.dataSource.getRepository(ClusterPolicyEntity).insert({
      id: randomUUID(),
      cluster_id: clusterId,
      policy_id: policyId,
      enabled: true,
      priority: 100,
      data: {},
      last_op: lastOp,
      attached_at: new Date(),
    });
    return policyId;
  }

  describe('POST /v1/profiles', () => {
    it('creates an os.nova.server-1.0 profile from a numeric version', async () => {
      const res = await alice().post('/v1/profiles', { profile: { name: 'web', spec: NOVA_PROFILE_SPEC, metadata: { a: 'b' } } });
      expect(res.status).toBe(201);
      expect(res.body.profile).toMatchObject({
        name: 'web',
        type: 'os.nova.server-1.0',
        project: PROJECT_A,
        user: 'alice-id',
        domain: 'default',
        spec: NOVA_PROFILE_SPEC,
        metadata: { a: 'b' },
        updated_at: null,
      });
      expect(res.body.profile.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const got = await alice().get(`/v1/profiles/${res.body.profile.id}`);
      expect(got.body.profile.id).toBe(res.body.profile.id);
      const listed = await alice().get('/v1/profiles?name=web');
      expect(listed.body.profiles.map((p: { id: string }) => p.id)).toEqual([res.body.profile.id]);
    });

    it.each([
      [{}, "Request body missing 'profile' key."],
      [{ profile: { spec: NOVA_PROFILE_SPEC } }, "'name' is a required property"],
      [{ profile: { name: 'x' } }, "'spec' is a required property"],
      [{ profile: { name: 'x', spec: NOVA_PROFILE_SPEC, boo: 1 } }, "Additional properties are not allowed ('boo' was unexpected)"],
      [{ profile: { name: 'bad name!', spec: NOVA_PROFILE_SPEC } }, /contains illegal characters/],
      [{ profile: { name: 'x', spec: 'nope' } }, 'The provided spec is not a map.'],
      [{ profile: { name: 'x', spec: { version: 1 } } }, "The 'type' key is missing from the provided spec map."],
      [
        { profile: { name: 'x', spec: { ...NOVA_PROFILE_SPEC, properties: { image: 'cirros' } } } },
        "Failed in creating profile x: Required spec item 'flavor' not provided",
      ],
      [
        { profile: { name: 'x', spec: { ...NOVA_PROFILE_SPEC, properties: { flavor: 'f', image: 'i', bogus: 1 } } } },
        "Failed in creating profile x: Unrecognizable spec item 'bogus'",
      ],
      [
        { profile: { name: 'x', spec: { ...NOVA_PROFILE_SPEC, properties: { flavor: 'f', image: 'i', networks: [{ net: 'x' }] } } } },
        "Failed in creating profile x: Unrecognizable spec item 'net'",
      ],
    ])('refuses %j with 400', async (body, message) => {
      const res = await alice().post('/v1/profiles', body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(400);
      if (typeof message === 'string') expect(res.body.error.message).toBe(message);
      else expect(res.body.error.message).toMatch(message);
    });

    it('answers an unknown profile type with 404', async () => {
      const res = await alice().post('/v1/profiles', { profile: { name: 'x', spec: { ...NOVA_PROFILE_SPEC, type: 'os.bogus.stack' } } });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe("The profile_type 'os.bogus.stack-1.0' could not be found.");
    });
  });

  describe('POST /v1/clusters', () => {
    it('accepts with 202 + Location, stores the cluster INIT and a READY CLUSTER_CREATE action with its outbox row', async () => {
      const p = await profile('cprof');
      const res = await alice().post('/v1/clusters', {
        cluster: { name: 'c1', profile_id: 'cprof', min_size: '1', max_size: 5, desired_capacity: null, timeout: null, metadata: {}, config: {} },
      });
      expect(res.status).toBe(202);
      expect(res.headers.location).toMatch(new RegExp(`^${h.gateway.url}/v1/actions/[0-9a-f-]{36}$`));
      const c = res.body.cluster;
      expect(c).toMatchObject({
        name: 'c1',
        profile_id: p.id,
        profile_name: 'cprof',
        status: 'INIT',
        status_reason: 'Initializing',
        min_size: 1,
        max_size: 5,
        desired_capacity: 1,
        timeout: 3600,
        nodes: [],
        policies: [],
        dependents: {},
        project: PROJECT_A,
      });
      const action = await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: actionIdOf(res.headers.location) });
      expect(action).toMatchObject({
        action: 'CLUSTER_CREATE',
        name: `cluster_create_${c.id.slice(0, 8)}`,
        target: c.id,
        cluster_id: c.id,
        status: 'READY',
        cause: 'RPC Request',
        inputs: { desired_capacity: 1 },
        timeout: 3600,
      });
      const outbox = await h.db.dataSource.getRepository(OutboxEntity).findBy({ type: 'action.requested' });
      const row = outbox.find((o) => (o.payload as { action_id: string }).action_id === action.id);
      expect(row).toMatchObject({ exchange: 'trellis.actions', routing_key: 'action.requested', correlation_id: res.headers['x-openstack-request-id'] });
      expect(row?.payload).toMatchObject({ cause: 'submitted', cluster_id: c.id, action: 'CLUSTER_CREATE', project: PROJECT_A, schema_version: 1 });
    });

    it('defaults desired_capacity to min_size, else 0', async () => {
      const { cluster: c } = await cluster();
      expect(c).toMatchObject({ desired_capacity: 0, min_size: 0, max_size: -1 });
    });

    it.each([
      [{ desired_capacity: 2, min_size: 5 }, 'The target capacity (2) is less than the specified min_size (5).'],
      [{ desired_capacity: 6, max_size: 5 }, 'The target capacity (6) is greater than the specified max_size (5).'],
      [{ min_size: -1 }, 'The value for the min_size field must be greater than or equal to 0.'],
      [{ max_size: -2 }, 'The value for the max_size field must be greater than or equal to -1.'],
      [{ desired_capacity: 1001 }, 'The value for the desired_capacity field must be less than or equal to 1000.'],
      [{ desired_capacity: 'three' }, "The value for desired_capacity must be an integer: 'three'."],
      [{ profile_id: 'nothing-like-it' }, "The specified profile 'nothing-like-it' could not be found."],
      [{ color: 'red' }, "Additional properties are not allowed ('color' was unexpected)"],
      [{ config: { cleanup_failed_nodes: 'yes' } }, `The value for config.cleanup_failed_nodes must be true or false: '"yes"'.`],
    ])('refuses %j with 400', async (extra, message) => {
      const p = await profile();
      const res = await alice().post('/v1/clusters', { cluster: { name: 'bad', profile_id: p.id, ...extra } });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(message);
    });

    it('keeps cleanup_failed_nodes true, false or null in the config, and refuses anything else on update too', async () => {
      for (const value of [true, false, null]) {
        const { cluster: c } = await cluster({ config: { cleanup_failed_nodes: value, other: 'kept' } });
        expect(c.config).toEqual({ cleanup_failed_nodes: value, other: 'kept' });
      }
      const { cluster: c, actionId } = await cluster();
      await finish(actionId);
      const res = await alice().patch(`/v1/clusters/${c.id}`, { cluster: { config: { cleanup_failed_nodes: 1 } } });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe("The value for config.cleanup_failed_nodes must be true or false: '1'.");
    });

    it('lists and shows clusters by id, name and short id, only within the project', async () => {
      const { cluster: c } = await cluster();
      for (const identity of [c.id, c.name as string, c.id.slice(0, 8)]) {
        const res = await alice().get(`/v1/clusters/${identity}`);
        expect(res.status).toBe(200);
        expect(res.body.cluster.id).toBe(c.id);
      }
      const other = await bob().get(`/v1/clusters/${c.id}`);
      expect(other.status).toBe(404);
      expect(other.body.error.message).toBe(`The cluster '${c.id}' could not be found.`);
      const mine = await alice().get('/v1/clusters');
      expect(mine.body.clusters.map((x: { id: string }) => x.id)).toContain(c.id);
      const theirs = await bob().get('/v1/clusters');
      expect(theirs.body.clusters).toEqual([]);
      const everyone = await h.as(TOKENS.admin).get('/v1/clusters?global_project=1');
      expect(everyone.body.clusters.map((x: { id: string }) => x.id)).toContain(c.id);
    });

    it('reports an ambiguous name as 400', async () => {
      const p = await profile();
      for (let i = 0; i < 2; i++) await alice().post('/v1/clusters', { cluster: { name: 'twin', profile_id: p.id } });
      const res = await alice().get('/v1/clusters/twin');
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe("Multiple results found matching the query criteria 'twin'. Please be more specific.");
    });

    it('pages with limit and marker and rejects unknown parameters', async () => {
      const all = (await alice().get('/v1/clusters?sort=name:asc')).body.clusters as Array<{ id: string; name: string }>;
      expect(all.map((c) => c.name)).toEqual([...all.map((c) => c.name)].sort());
      const page = await alice().get(`/v1/clusters?sort=name&limit=2&marker=${all[0].id}`);
      expect(page.body.clusters.map((c: { id: string }) => c.id)).toEqual(all.slice(1, 3).map((c) => c.id));
      const bad = await alice().get('/v1/clusters?colour=red');
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toBe("Invalid parameter 'colour'");
      const badSort = await alice().get('/v1/clusters?sort=colour');
      expect(badSort.body.error.message).toBe("Unsupported sort key 'colour' for 'sort'.");
    });
  });

  describe('POST /v1/clusters/{id}/actions', () => {
    it('accepts scale_out with a numeric string: one action row and one outbox row in one transaction', async () => {
      const { cluster: c, actionId: createId } = await cluster({ max_size: 3 });
      await finish(createId);
      const actions = h.db.dataSource.getRepository(ActionEntity);
      const outbox = h.db.dataSource.getRepository(OutboxEntity);
      const [actionsBefore, outboxBefore] = [await actions.count(), await outbox.count()];
      const res = await alice().post(`/v1/clusters/${c.name}/actions`, { scale_out: { count: '2' } });
      expect(res.status).toBe(202);
      const id = res.body.action;
      expect(res.headers.location).toBe(`${h.gateway.url}/v1/actions/${id}`);
      expect(await actions.count()).toBe(actionsBefore + 1);
      expect(await outbox.count()).toBe(outboxBefore + 1);
      const row = await actions.findOneByOrFail({ id });
      expect(row).toMatchObject({
        name: `cluster_scale_out_${c.id.slice(0, 8)}`,
        action: 'CLUSTER_SCALE_OUT',
        status: 'READY',
        inputs: { count: 2 },
        project: PROJECT_A,
        user: 'alice-id',
      });
      const [message] = await outbox.find({ order: { id: 'DESC' }, take: 1 });
      expect(message.message_id).toBe((message.payload as { message_id: string }).message_id);
      expect(message.payload).toMatchObject({ action_id: id, cause: 'submitted', correlation_id: res.headers['x-openstack-request-id'] });
      expect(res.headers['x-openstack-request-id']).toMatch(/^req-/);
      expect(h.bus.published).toEqual([]);
    });

    it('rolls back the action when the outbox write fails', async () => {
      const { cluster: c, actionId } = await cluster();
      await finish(actionId);
      const actions = h.db.dataSource.getRepository(ActionEntity);
      const before = await actions.count();
      await h.db.dataSource.query('ALTER TABLE outbox ADD CONSTRAINT no_more CHECK (false) NOT VALID');
      try {
        const res = await alice().post(`/v1/clusters/${c.id}/actions`, { scale_out: {} });
        expect(res.status).toBe(500);
      } finally {
        await h.db.dataSource.query('ALTER TABLE outbox DROP CONSTRAINT no_more');
      }
      expect(await actions.count()).toBe(before);
    });

    it('stores scale_out without count as {} and scale_in with its count', async () => {
      const { cluster: c, actionId } = await cluster({ desired_capacity: 2 });
      await finish(actionId);
      const out = await alice().post(`/v1/clusters/${c.id}/actions`, { scale_out: null });
      expect(out.status).toBe(202);
      const outRow = await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: out.body.action });
      expect(outRow.inputs).toEqual({});
      await finish(out.body.action);
      const inn = await alice().post(`/v1/clusters/${c.id}/actions`, { scale_in: { count: 1 } });
      expect(inn.status).toBe(202);
      const inRow = await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: inn.body.action });
      expect(inRow).toMatchObject({ action: 'CLUSTER_SCALE_IN', inputs: { count: 1 }, name: `cluster_scale_in_${c.id.slice(0, 8)}` });
    });

    it.each([
      [{}, 'No action specified'],
      [{ scale_out: {}, scale_in: {} }, 'Multiple actions specified'],
      [{ explode: {} }, "Unrecognized action 'explode' specified"],
      [{ scale_out: 3 }, 'The data provided is not a map'],
      [{ scale_out: { count: 0 } }, 'Count for scale-out request cannot be 0.'],
      [{ scale_in: { count: 0 } }, 'Count for scale-in request cannot be 0.'],
      [{ scale_out: { count: 'bad-count' } }, "The value for count must be an integer: 'bad-count'."],
      [{ scale_out: { count: -1 } }, "Value must be >= 0 for field 'count'."],
      [{ scale_out: { count: 1000 } }, 'The target capacity (1001) is greater than the maximum number of nodes allowed per cluster (1000).'],
      [{ scale_out: { number: 1 } }, "Additional properties are not allowed ('number' was unexpected)"],
      [{ resize: {} }, 'Not enough parameters to do resize action.'],
      [{ resize: { adjustment_type: 'EXACT_CAPACITY' } }, 'Missing number value for size adjustment.'],
      [{ resize: { number: 2 } }, 'Missing adjustment_type value for size adjustment.'],
      [{ resize: { adjustment_type: 'bogus', number: 1 } }, "Value 'bogus' is not acceptable for field 'adjustment_type'."],
      [{ resize: { min_size: 20, max_size: 10 } }, 'The specified min_size (20) is greater than the specified max_size (10).'],
      [{ resize: { adjustment_type: 'EXACT_CAPACITY', number: -1 } }, "The 'number' must be non-negative integer for adjustment type 'EXACT_CAPACITY'."],
      [{ resize: { max_size: 0 } }, 'The specified max_size (0) is less than the current desired_capacity (1) of the cluster.'],
      [{ resize: { min_size: 'x' } }, "The value for min_size must be an integer: 'x'."],
      [{ resize: { number: 'many', adjustment_type: 'CHANGE_IN_CAPACITY' } }, "The value for number must be a number: 'many'."],
      [
        { resize: { max_size: 1, strict: 'not-bool' } },
        "Unrecognized value 'not-bool', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
      ],
    ])('refuses %j with 400', async (body, message) => {
      const { cluster: c } = await cluster({ desired_capacity: 1 });
      const res = await alice().post(`/v1/clusters/${c.id}/actions`, body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(message);
    });

    it('stores a resize with all six inputs (min_step only for percentages)', async () => {
      const { cluster: c, actionId } = await cluster({ desired_capacity: 1, max_size: 10 });
      await finish(actionId);
      const res = await alice().post(`/v1/clusters/${c.id}/actions`, {
        resize: { adjustment_type: 'CHANGE_IN_CAPACITY', number: '2', min_step: 1 },
      });
      expect(res.status).toBe(202);
      const row = await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: res.body.action });
      expect(row.inputs).toEqual({ adjustment_type: 'CHANGE_IN_CAPACITY', number: 2, min_size: null, max_size: null, min_step: null, strict: true });
      expect(row.name).toBe(`cluster_resize_${c.id.slice(0, 8)}`);
    });

    it('refuses an action while another is active on the cluster (409 ActionConflict)', async () => {
      const { cluster: c, actionId } = await cluster();
      const res = await alice().post(`/v1/clusters/${c.id}/actions`, { scale_out: { count: 1 } });
      expect(res.status).toBe(409);
      expect(res.body.title).toBe('Conflict');
      expect(res.body.error).toEqual({
        code: 409,
        type: 'ActionConflict',
        message: `The CLUSTER_SCALE_OUT action for target ${c.id} conflicts with the following action(s): ${actionId}`,
      });
    });

    it('refuses an action while the cluster is locked by a running action (409 ResourceIsLocked)', async () => {
      const { cluster: c, actionId } = await cluster();
      await finish(actionId, 'RUNNING');
      const res = await alice().post(`/v1/clusters/${c.id}/actions`, { scale_in: { count: 1 } });
      expect(res.status).toBe(409);
      expect(res.body.error.type).toBe('ResourceIsLocked');
      expect(res.body.error.message).toBe(`CLUSTER_SCALE_IN for cluster '${c.id}' cannot be completed because it is already locked.`);
    });

    it('refuses a scale-out while a scaling policy is in cooldown (409 ActionCooldown)', async () => {
      const { cluster: c, actionId } = await cluster();
      await finish(actionId);
      const policyId = await bindScaleOutPolicy(c.id, new Date());
      const res = await alice().post(`/v1/clusters/${c.id}/actions`, { scale_out: {} });
      expect(res.status).toBe(409);
      expect(res.body.error.type).toBe('ActionCooldown');
      expect(res.body.error.message).toBe(
        `The CLUSTER_SCALE_OUT action for cluster ${c.id} cannot be processed due to Policy ${policyId} cooldown still in progress`,
      );
      const scaleIn = await alice().post(`/v1/clusters/${c.id}/actions`, { scale_in: {} });
      expect(scaleIn.status).toBe(202);
    });

    it('accepts a scale-out once the scaling policy cooldown has passed', async () => {
      const { cluster: c, actionId } = await cluster();
      await finish(actionId);
      await bindScaleOutPolicy(c.id, new Date(Date.now() - 301_000));
      const res = await alice().post(`/v1/clusters/${c.id}/actions`, { scale_out: {} });
      expect(res.status).toBe(202);
    });

    it('answers 404 for a cluster of another project', async () => {
      const { cluster: c } = await cluster();
      const res = await bob().post(`/v1/clusters/${c.id}/actions`, { scale_out: {} });
      expect(res.status).toBe(404);
    });
  });

  describe('actions, nodes and events', () => {
    it('shows an action with cluster_id from 1.14 only', async () => {
      const { cluster: c, actionId } = await cluster();
      const latest = await alice().get(`/v1/actions/${actionId}`);
      expect(latest.status).toBe(200);
      expect(latest.body.action).toMatchObject({
        id: actionId,
        action: 'CLUSTER_CREATE',
        cluster_id: c.id,
        target: c.id,
        cause: 'RPC Request',
        status: 'READY',
        owner: null,
        interval: -1,
        start_time: null,
        end_time: null,
        depends_on: [],
        depended_by: [],
        outputs: {},
        data: {},
      });
      const old = await h.as(TOKENS.alice, '1.13').get(`/v1/actions/${actionId}`);
      expect(old.body.action).not.toHaveProperty('cluster_id');
      expect((await bob().get(`/v1/actions/${actionId}`)).status).toBe(404);
      const listed = await alice().get(`/v1/actions?cluster_id=${c.id}&action=CLUSTER_CREATE`);
      expect(listed.body.actions.map((a: { id: string }) => a.id)).toEqual([actionId]);
      const bad = await alice().get('/v1/actions?colour=red');
      expect(bad.body.error.message).toBe('Invalid parameter colour');
    });

    it("shows each cluster's node ids in index order and its binding ids in chain order, in a list and alone", async () => {
      const [{ cluster: a }, { cluster: b }, { cluster: empty }] = [await cluster(), await cluster(), await cluster()];
      const nodeOf = (c: { id: string; profile_id?: unknown }, index: number) => ({
        id: randomUUID(),
        name: `n-${randomUUID().slice(0, 6)}`,
        cluster_id: c.id,
        profile_id: c.profile_id as string,
        project: PROJECT_A,
        user: 'alice-id',
        index,
        status: 'ACTIVE',
      });
      // written out of order, interleaved between the clusters
      const [a3, b1, a1, a2] = [nodeOf(a, 3), nodeOf(b, 1), nodeOf(a, 1), nodeOf(a, 2)];
      await h.db.dataSource.getRepository(NodeEntity).insert([a3, b1, a1, a2]);
      const policyId = randomUUID();
      await h.db.dataSource.getRepository(PolicyEntity).save({
        id: policyId, name: `p-${policyId.slice(0, 6)}`, type: 'senlin.policy.deletion-1.1',
        spec: { type: 'senlin.policy.deletion', version: '1.1', properties: {} }, data: {},
        project: PROJECT_A, user: 'alice-id', domain: null, created_at: new Date(), updated_at: null,
      });
      const binding = (clusterId: string, priority: number) => ({
        id: randomUUID(), cluster_id: clusterId, policy_id: policyId, enabled: true, priority, data: {}, last_op: null, attached_at: new Date(),
      });
      const [late, early] = [binding(a.id, 300), binding(b.id, 100)];
      await h.db.dataSource.getRepository(ClusterPolicyEntity).insert([late, early]);

      const listed = await alice().get('/v1/clusters?limit=1000');
      const byId = new Map(listed.body.clusters.map((c: { id: string }) => [c.id, c]));
      expect(byId.get(a.id)).toMatchObject({ nodes: [a1.id, a2.id, a3.id], policies: [late.id] });
      expect(byId.get(b.id)).toMatchObject({ nodes: [b1.id], policies: [early.id] });
      expect(byId.get(empty.id)).toMatchObject({ nodes: [], policies: [] });
      const shown = await alice().get(`/v1/clusters/${a.id}`);
      expect(shown.body.cluster).toMatchObject({ nodes: [a1.id, a2.id, a3.id], policies: [late.id] });

      // the ids are spliced into the answer as PostgreSQL wrote them: the bytes and headers are
      // those of any other answer (compact JSON, keys sorted, a Content-Length and an ETag)
      const profiles = await alice().get('/v1/profiles');
      for (const res of [listed, shown]) {
        expect(res.text).toBe(JSON.stringify(res.body, sortKeys));
        expect(res.headers['content-type']).toBe(profiles.headers['content-type']);
        expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.text)));
        expect(res.headers.etag).toMatch(/^W\/"[0-9a-f]+-[\w+/]{27}"$/);
      }
      expect(profiles.headers['content-type']).toBe('application/json; charset=utf-8');
    });

    it('lists nodes by cluster and refuses an unknown cluster', async () => {
      const { cluster: c } = await cluster();
      const node = nodeRow({
        name: 'node-1',
        cluster_id: c.id,
        profile_id: c.profile_id as string,
        physical_id: 'server-1',
        status_reason: 'Creation succeeded',
        data: { placement: { zone: 'az1' } },
      });
      await h.db.dataSource.getRepository(NodeEntity).save(node);
      const listed = await alice().get(`/v1/nodes?cluster_id=${c.name}`);
      expect(listed.status).toBe(200);
      expect(listed.body.nodes).toHaveLength(1);
      expect(listed.body.nodes[0]).toMatchObject({ id: node.id, cluster_id: c.id, tainted: false, data: { placement: { zone: 'az1' } } });
      const shown = await alice().get(`/v1/nodes/node-1`);
      expect(shown.body.node.id).toBe(node.id);
      const cl = await alice().get(`/v1/clusters/${c.id}`);
      expect(cl.body.cluster.nodes).toEqual([node.id]);
      const unknown = await alice().get('/v1/nodes?cluster_id=nope');
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.message).toBe('Cannot find the given cluster: nope.');
      const badParam = await alice().get('/v1/nodes?colour=red');
      expect(badParam.body.error.message).toBe('Invalid parameter colour');
      expect((await bob().get(`/v1/nodes/${node.id}`)).status).toBe(404);
    });

    it('lists events with level names and shows one', async () => {
      const { cluster: c } = await cluster();
      const id = randomUUID();
      await h.db.dataSource.getRepository(EventEntity).insert({
        id,
        timestamp: new Date('2024-01-01T00:00:00Z'),
        oid: c.id,
        oname: c.name as string,
        otype: 'CLUSTER',
        cluster_id: c.id,
        level: 20,
        user: 'alice-id',
        project: PROJECT_A,
        action: 'CLUSTER_CREATE',
        status: 'start',
        status_reason: 'Cluster creation started',
        meta_data: {},
      });
      const listed = await alice().get(`/v1/events?cluster_id=${c.id}&level=INFO`);
      expect(listed.body.events).toEqual([
        expect.objectContaining({ id, level: '20', timestamp: '2024-01-01T00:00:00Z', otype: 'CLUSTER', action: 'CLUSTER_CREATE' }),
      ]);
      expect((await alice().get(`/v1/events?cluster_id=${c.id}&level=ERROR`)).body.events).toEqual([]);
      expect((await alice().get(`/v1/events/${id}`)).body.event.id).toBe(id);
      expect((await bob().get(`/v1/events/${id}`)).status).toBe(404);
    });
  });
});
