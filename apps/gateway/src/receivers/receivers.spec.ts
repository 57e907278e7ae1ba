import { ActionEntity, ClusterEntity, OutboxEntity, ReceiverEntity, TrustEntity } from '@trellis/persistence';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { redactWebhook } from '../core/senlin-exception.filter';
import { NOVA_PROFILE_SPEC, PROJECT_A, startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';

const KEYS = ['action', 'actor', 'channel', 'cluster_id', 'created_at', 'domain', 'id', 'name', 'params', 'project', 'type', 'updated_at', 'user'];
const uniq = (prefix: string) => `${prefix}-${randomUUID().slice(0, 6)}`;

describe('receivers and webhooks', () => {
  let h: GatewayHarness;
  const alice = (v = '1.14') => h.as(TOKENS.alice, v);
  const bob = () => h.as(TOKENS.bob, '1.14');

  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h?.close());

  async function cluster(token: string = TOKENS.alice) {
    const c = h.as(token, '1.14');
    const p = await c.post('/v1/profiles', { profile: { name: uniq('p'), spec: NOVA_PROFILE_SPEC } });
    const res = await c.post('/v1/clusters', { cluster: { name: uniq('c'), profile_id: p.body.profile.id, max_size: 10 } });
    expect(res.status).toBe(202);
    await settle();
    return res.body.cluster as { id: string; name: string; user: string };
  }

  /** Marks every READY action done, as the engine would, so the next action on a cluster does not conflict. */
  const settle = () => h.db.dataSource.getRepository(ActionEntity).update({ status: 'READY' }, { status: 'SUCCEEDED' });

  async function receiver(clusterId: string, fields: Record<string, unknown> = {}) {
    const res = await alice().post('/v1/receivers', {
      receiver: { name: uniq('r'), type: 'webhook', cluster_id: clusterId, action: 'CLUSTER_SCALE_OUT', params: {}, ...fields },
    });
    expect(res.status).toBe(201);
    return res.body.receiver as { id: string; name: string; channel: { alarm_url: string }; params: Record<string, unknown> };
  }

  /** POSTs to a receiver's alarm_url as a monitoring system would: no token, no microversion. */
  const trigger = (url: string, body?: unknown) => {
    const path = new URL(url).pathname + new URL(url).search;
    const t = h.http().post(path);
    return body === undefined ? t : t.send(body as object);
  };

  describe('create', () => {
    it("answers 201 with Senlin's receiver, a v2 alarm_url with the params, and makes the creator's trust", async () => {
      const c = await cluster();
      const res = await alice().post('/v1/receivers', {
        receiver: { name: 'test-receiver', cluster_id: c.id, type: 'webhook', action: 'CLUSTER_SCALE_IN', params: { count: 5 } },
      });
      expect(res.status).toBe(201);
      const r = res.body.receiver;
      expect(Object.keys(r).sort()).toEqual(KEYS);
      expect(r).toMatchObject({
        name: 'test-receiver',
        cluster_id: c.id,
        type: 'webhook',
        action: 'CLUSTER_SCALE_IN',
        params: { count: 5 },
        project: PROJECT_A,
        user: 'alice-id',
        domain: 'default',
        updated_at: null,
      });
      expect(r.channel.alarm_url).toBe(`${h.gateway.url}/v1/webhooks/${r.id}/trigger?V=2&count=5`);
      const trust = await h.db.dataSource.getRepository(TrustEntity).findOneByOrFail({ user_id: 'alice-id', project_id: PROJECT_A });
      expect(r.actor).toEqual({ trust_id: trust.trust_id });
      expect(h.trusts.trusts.get(trust.trust_id)).toMatchObject({ trustorUserId: 'alice-id', projectId: PROJECT_A, token: TOKENS.alice });
    });

    it('finds the cluster by name, and an alarm_url without params ends at V=2', async () => {
      const c = await cluster();
      const r = await receiver(c.name);
      expect(r.channel.alarm_url).toMatch(/\/v1\/webhooks\/[0-9a-f-]{36}\/trigger\?V=2$/);
    });

    it.each([
      ['the envelope is missing', { receive: { name: 'r', type: 'webhook' } }, "Request body missing 'receiver' key."],
      ['the type is unknown', { receiver: { name: 'r', type: 'bogus', cluster_id: 'x', action: 'CLUSTER_SCALE_IN' } }, "Value 'bogus' is not acceptable for field 'type'."],
      ['the name is too long', { receiver: { name: 'z'.repeat(256), type: 'webhook' } }, `The value for the 'name' (${'z'.repeat(256)}) must be between 1 and 255 characters long.`],
      ['the name is missing', { receiver: { type: 'webhook' } }, "'name' is a required property"],
      ['a key is unknown', { receiver: { name: 'r', type: 'webhook', boo: 1 } }, "Additional properties are not allowed ('boo' was unexpected)"],
      ['the action is unknown', { receiver: { name: 'r', type: 'webhook', cluster_id: 'x', action: 'ILLEGAL_ACTION' } }, "Value 'ILLEGAL_ACTION' is not acceptable for field 'action'."],
      ['there is no cluster', { receiver: { name: 'r', type: 'webhook', action: 'CLUSTER_SCALE_IN' } }, 'Cluster identity is required for creating webhook receiver.'],
      ['there is no action', { receiver: { name: 'r', type: 'webhook', cluster_id: 'x' } }, 'Action name is required for creating webhook receiver.'],
      ['the action is CLUSTER_CREATE', { receiver: { name: 'r', type: 'webhook', cluster_id: 'x', action: 'CLUSTER_CREATE' } }, "Action name cannot be any of ['CLUSTER_CREATE']."],
      ['params is not a map', { receiver: { name: 'r', type: 'webhook', cluster_id: 'x', action: 'CLUSTER_CHECK', params: [1] } }, "The value for params must be a map: '[1]'."],
    ])('refuses with 400 when %s', async (_, body, message) => {
      const res = await alice().post('/v1/receivers', body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(message);
    });

    it("400 for a cluster that does not exist or is another project's, as Senlin's 'referenced' message", async () => {
      const missing = 'e281873f-0dff-4be6-8795-f781efe7cc14';
      const res = await alice().post('/v1/receivers', { receiver: { name: 'r', type: 'webhook', cluster_id: missing, action: 'CLUSTER_SCALE_IN' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 400, message: `The referenced cluster '${missing}' could not be found.`, type: 'BadRequest' });
      const theirs = await cluster(TOKENS.bob);
      const other = await alice().post('/v1/receivers', { receiver: { name: 'r', type: 'webhook', cluster_id: theirs.id, action: 'CLUSTER_SCALE_IN' } });
      expect(other.body.error.message).toBe(`The referenced cluster '${theirs.id}' could not be found.`);
    });

    it("403 for another user's cluster of the same project (Senlin: only the cluster's owner binds a webhook)", async () => {
      const c = await cluster();
      const res = await h.as(TOKENS.carol, '1.14').post('/v1/receivers', { receiver: { name: 'r', type: 'webhook', cluster_id: c.id, action: 'CLUSTER_SCALE_OUT' } });
      expect(res.status).toBe(403);
      expect(res.body.error.type).toBe('Forbidden');
    });

    it('409 FeatureNotSupported for a Senlin action a Trellis webhook does not run', async () => {
      const c = await cluster();
      const res = await alice().post('/v1/receivers', { receiver: { name: 'r', type: 'webhook', cluster_id: c.id, action: 'CLUSTER_RECOVER' } });
      expect(res.status).toBe(409);
      expect(res.body.error.type).toBe('FeatureNotSupported');
      expect(res.body.error.message).toContain('CLUSTER_RECOVER');
    });

    it('fails a message receiver as Senlin does without Zaqar: 500 EResourceCreation, nothing stored', async () => {
      const before = await h.db.dataSource.getRepository(ReceiverEntity).count();
      const res = await alice().post('/v1/receivers', { receiver: { name: 'm', type: 'message' } });
      expect(res.status).toBe(500);
      expect(res.body.error.type).toBe('EResourceCreation');
      expect(res.body.error.message).toMatch(/^Failed in creating queue: .*Zaqar/);
      expect(await h.db.dataSource.getRepository(ReceiverEntity).count()).toBe(before);
    });
  });

  describe('list', () => {
    let c1: { id: string };
    let byResize: { id: string; name: string };
    let byScale: { id: string; name: string };

    beforeAll(async () => {
      c1 = await cluster();
      byResize = await receiver(c1.id, { action: 'CLUSTER_RESIZE', name: uniq('a') });
      byScale = await receiver(c1.id, { action: 'CLUSTER_SCALE_OUT', name: uniq('b') });
    });

    it('lists the project\'s receivers with every key, filtered by cluster_id, action, name and type', async () => {
      const all = await alice().get('/v1/receivers');
      expect(all.status).toBe(200);
      for (const r of all.body.receivers) expect(Object.keys(r).sort()).toEqual(KEYS);
      const ids = (res: { body: { receivers: Array<{ id: string }> } }) => res.body.receivers.map((r) => r.id);
      expect(ids(await alice().get(`/v1/receivers?cluster_id=${c1.id}`))).toEqual([byResize.id, byScale.id]);
      expect(ids(await alice().get(`/v1/receivers?cluster_id=${c1.id}&action=CLUSTER_RESIZE`))).toEqual([byResize.id]);
      expect(ids(await alice().get(`/v1/receivers?name=${byScale.name}`))).toEqual([byScale.id]);
      expect(ids(await alice().get(`/v1/receivers?cluster_id=${c1.id}&type=webhook`))).toHaveLength(2);
      expect(ids(await alice().get(`/v1/receivers?cluster_id=${c1.id}&user=nobody`))).toEqual([]);
      // the user filter came with 1.4: older requests ignore it
      expect(ids(await alice('1.3').get(`/v1/receivers?cluster_id=${c1.id}&user=nobody`))).toHaveLength(2);
    });

    it('sorts, pages with limit and marker, and hides other projects unless a cloud admin asks for global_project', async () => {
      const sorted = await alice().get(`/v1/receivers?cluster_id=${c1.id}&sort=name:desc`);
      expect(sorted.body.receivers.map((r: { id: string }) => r.id)).toEqual([byScale.id, byResize.id]);
      const page = await alice().get(`/v1/receivers?cluster_id=${c1.id}&limit=1&marker=${byResize.id}`);
      expect(page.body.receivers.map((r: { id: string }) => r.id)).toEqual([byScale.id]);
      expect((await bob().get('/v1/receivers')).body.receivers.map((r: { id: string }) => r.id)).not.toContain(byResize.id);
      const global = await h.as(TOKENS.admin, '1.14').get('/v1/receivers?global_project=true');
      expect(global.body.receivers.map((r: { id: string }) => r.id)).toContain(byResize.id);
    });

    it.each([
      ['bogus=foo', 400, 'Invalid parameter bogus'],
      ['limit=not-int', 400, "The value for limit must be an integer: 'not-int'."],
      ['global_project=True', 403, 'You are not authorized to complete this operation.'],
      ['global_project=not-bool', 400, "Invalid value 'not-bool' specified for 'global_project'"],
      ['sort=bad-sort', 400, "Unsupported sort key 'bad-sort' for 'sort'."],
      ['marker=bad-marker', 400, "The value for marker is not a valid UUID: 'bad-marker'."],
      ['type=bogus', 400, "Value 'bogus' is not acceptable for field 'type'."],
      ['action=BOGUS', 400, "Value 'BOGUS' is not acceptable for field 'action'."],
    ])('refuses ?%s with %d', async (query, status, message) => {
      const res = await alice().get(`/v1/receivers?${query}`);
      expect(res.status).toBe(status);
      expect(res.body.error.message).toBe(message);
    });
  });

  describe('show, update, delete, notify', () => {
    it('shows by id, name and short id; 404 for another project and for nothing; 400 for an ambiguous name', async () => {
      const c = await cluster();
      const r = await receiver(c.id, { name: uniq('show') });
      for (const identity of [r.id, r.name, r.id.slice(0, 8)]) {
        const res = await alice().get(`/v1/receivers/${identity}`);
        expect({ identity, status: res.status, id: res.body.receiver?.id }).toEqual({ identity, status: 200, id: r.id });
      }
      const theirs = await bob().get(`/v1/receivers/${r.id}`);
      expect(theirs.status).toBe(404);
      expect(theirs.body.error).toEqual({ code: 404, message: `The receiver '${r.id}' could not be found.`, type: 'ResourceNotFound' });
      expect((await alice().get('/v1/receivers/0cca923f-3e6c-4e23-8d42-2e1c70243c9d')).status).toBe(404);
      const twin = uniq('twin');
      await receiver(c.id, { name: twin });
      await receiver(c.id, { name: twin });
      const ambiguous = await alice().get(`/v1/receivers/${twin}`);
      expect(ambiguous.status).toBe(400);
      expect(ambiguous.body.error.type).toBe('MultipleChoices');
      expect((await alice().delete(`/v1/receivers/${twin}`)).status).toBe(400);
    });

    it('updates name, action and params from 1.7 (the alarm_url follows the params); refuses no change, no envelope, older versions', async () => {
      const c = await cluster();
      const r = await receiver(c.id, { action: 'CLUSTER_SCALE_IN', params: { count: 5 } });
      const res = await alice().patch(`/v1/receivers/${r.id}`, { receiver: { name: 'update-receiver-name', action: 'CLUSTER_SCALE_IN', params: { count: '2' } } });
      expect(res.status).toBe(200);
      expect(res.body.receiver).toMatchObject({ name: 'update-receiver-name', params: { count: '2' }, action: 'CLUSTER_SCALE_IN' });
      expect(res.body.receiver.updated_at).not.toBeNull();
      expect(res.body.receiver.channel.alarm_url).toBe(`${h.gateway.url}/v1/webhooks/${r.id}/trigger?V=2&count=2`);
      expect((await alice().get(`/v1/receivers/${r.id}`)).body.receiver.name).toBe('update-receiver-name');

      const same = await alice().patch(`/v1/receivers/${r.id}`, { receiver: { name: 'update-receiver-name' } });
      expect([same.status, same.body.error.message]).toEqual([400, 'No property needs an update.']);
      const empty = await alice().patch(`/v1/receivers/${r.id}`, {});
      expect([empty.status, empty.body.error.message]).toEqual([400, "Malformed request data, missing 'receiver' key in request body."]);
      const old = await alice('1.6').patch(`/v1/receivers/${r.id}`, { receiver: { name: 'x' } });
      expect([old.status, old.body.error.type]).toEqual([400, 'MethodVersionNotFound']);
      const recover = await alice().patch(`/v1/receivers/${r.id}`, { receiver: { action: 'CLUSTER_RECOVER' } });
      expect(recover.status).toBe(409);
      const missing = await alice().patch('/v1/receivers/db22cabd-32af-4045-81e8-c87980f1e9f5', { receiver: { name: 'n' } });
      expect(missing.status).toBe(404);
      expect((await bob().patch(`/v1/receivers/${r.id}`, { receiver: { name: 'mine' } })).status).toBe(404);
    });

    it('stores params with a key named hasOwnProperty as given (the RPC fuzz found a 500)', async () => {
      const c = await cluster();
      const r = await receiver(c.id, { action: 'CLUSTER_SCALE_OUT', params: { count: 1 } });
      const params = { count: 1, hasOwnProperty: { count: {}, toString: 1.5 } };

      const res = await alice().patch(`/v1/receivers/${r.id}`, { receiver: { params } });

      expect(res.status).toBe(200);
      expect(res.body.receiver.params).toEqual(params);
      expect((await alice().get(`/v1/receivers/${r.id}`)).body.receiver.params).toEqual(params);
    });

    it('deletes (204, then 404); another project cannot', async () => {
      const c = await cluster();
      const r = await receiver(c.id);
      expect((await bob().delete(`/v1/receivers/${r.id}`)).status).toBe(404);
      const res = await alice().delete(`/v1/receivers/${r.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await alice().delete(`/v1/receivers/${r.id}`)).status).toBe(404);
      expect(await h.db.dataSource.getRepository(ReceiverEntity).findOneBy({ id: r.id })).toBeNull();
    });

    it('refuses to notify a webhook receiver (only message receivers are notified)', async () => {
      const c = await cluster();
      const r = await receiver(c.id);
      const res = await alice().post(`/v1/receivers/${r.id}/notify`);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe('Notifying non-message receiver is not allowed.');
      expect((await alice().post(`/v1/receivers/${randomUUID()}/notify`)).status).toBe(404);
    });
  });

  describe('webhook trigger', () => {
    it("runs the receiver's action without a token, as the receiver's owner: 202, Location, the body params over the receiver's", async () => {
      const c = await cluster();
      const r = await receiver(c.id, { action: 'CLUSTER_SCALE_OUT', params: { count: 2 } });
      const res = await trigger(r.channel.alarm_url, { count: '3' });
      expect(res.status).toBe(202);
      expect(Object.keys(res.body)).toEqual(['action']);
      expect(res.headers.location).toBe(`${h.gateway.url}/v1/actions/${res.body.action}`);
      const action = await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: res.body.action });
      expect(action).toMatchObject({
        action: 'CLUSTER_SCALE_OUT',
        cluster_id: c.id,
        target: c.id,
        inputs: { count: 3 },
        status: 'READY',
        project: PROJECT_A,
        user: 'alice-id',
      });
      const outbox = await h.db.dataSource.getRepository(OutboxEntity).findBy({ type: 'action.requested' });
      expect(outbox.some((o) => (o.payload as { action_id: string }).action_id === action.id)).toBe(true);
      // the owner's trust was made when the receiver was created; the trigger makes none
      expect([...h.trusts.trusts.values()].filter((t) => t.token === '')).toEqual([]);
      // the owner may read it like any of their actions
      expect((await alice().get(`/v1/actions/${action.id}`)).body.action.id).toBe(action.id);
    });

    it("uses the receiver's params without a body, and goes through the cluster action's request checks", async () => {
      const c = await cluster();
      const r = await receiver(c.id, { action: 'CLUSTER_RESIZE', params: { max_size: 2 } });
      const res = await trigger(r.channel.alarm_url);
      expect(res.status).toBe(202);
      const action = await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: res.body.action });
      expect(action.inputs).toMatchObject({ max_size: 2, strict: true, adjustment_type: null });
      // a second trigger while the first action is active conflicts, as POST /v1/clusters/{id}/actions would
      const again = await trigger(r.channel.alarm_url);
      expect(again.status).toBe(409);
      await settle();
      const bad = await trigger(r.channel.alarm_url, { min_size: 5 });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toBe('The specified min_size (5) is greater than the specified max_size (2).');
      const unknown = await trigger(r.channel.alarm_url, { bogus: 1 });
      expect(unknown.body.error.message).toBe("Additional properties are not allowed ('bogus' was unexpected)");
    });

    it('reads {"params": ...} with V=1 below 1.10, and the body itself as the params from 1.10', async () => {
      const c = await cluster();
      const r = await receiver(c.id, { action: 'CLUSTER_SCALE_OUT', params: { count: 1 } });
      const url = r.channel.alarm_url.replace('V=2', 'V=1');
      const v1 = await trigger(url, { params: { count: 4 } });
      expect(v1.status).toBe(202);
      expect((await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: v1.body.action })).inputs).toEqual({ count: 4 });
      await settle();
      const v1Flat = await trigger(url, { count: 4 });
      expect([v1Flat.status, v1Flat.body.error.message]).toEqual([400, "Additional properties are not allowed ('count' was unexpected)"]);
      const path = new URL(url).pathname + new URL(url).search;
      const v110 = await h.http().post(path).set('OpenStack-API-Version', 'clustering 1.10').send({ count: 5 });
      expect(v110.status).toBe(202);
      expect(v110.headers['openstack-api-version']).toBe('clustering 1.10');
      expect((await h.db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: v110.body.action })).inputs).toEqual({ count: 5 });
    });

    it("answers Senlin's errors: no V, a V other than 1 or 2, an unknown id", async () => {
      const c = await cluster();
      const r = await receiver(c.id);
      const noV = await h.http().post(`/v1/webhooks/${r.id}/trigger`);
      expect(noV.status).toBe(400);
      expect(noV.body.error).toEqual({ code: 400, message: 'V query parameter is required in webhook trigger URL', type: 'HTTPBadRequest' });
      const v3 = await h.http().post(`/v1/webhooks/${r.id}/trigger?V=3`);
      expect(v3.status).toBe(400);
      const unknown = randomUUID();
      const missing = await h.http().post(`/v1/webhooks/${unknown}/trigger?V=2`);
      expect(missing.status).toBe(404);
      expect(missing.body.error).toEqual({ code: 404, message: `The receiver '${unknown}' could not be found.`, type: 'ResourceNotFound' });
    });

    it('accepts only the full receiver id as the credential: a short id, a name or a bad token do not trigger', async () => {
      const c = await cluster();
      const r = await receiver(c.id, { name: uniq('secret') });
      for (const identity of [r.id.slice(0, 8), r.name, r.id.slice(0, 35)]) {
        const res = await h.http().post(`/v1/webhooks/${identity}/trigger?V=2`);
        expect({ identity, status: res.status }).toEqual({ identity, status: 404 });
      }
      // a token is neither needed nor looked at: a bad one does not turn the call into a 401
      const withBadToken = await h.http().post(new URL(r.channel.alarm_url).pathname + '?V=2').set('X-Auth-Token', 'nonsense');
      expect(withBadToken.status).toBe(202);
    });

    it("400 with Senlin's 'referenced' message when the receiver's cluster is gone", async () => {
      const c = await cluster();
      const r = await receiver(c.id);
      await h.db.dataSource.getRepository(ClusterEntity).delete({ id: c.id });
      const res = await trigger(r.channel.alarm_url);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(`The referenced cluster '${c.id}' could not be found.`);
    });

    it("403 when the owner's trust is gone (no token to make a new one), and the action is not stored", async () => {
      const g = await startGatewayHarness();
      try {
        const a = g.as(TOKENS.bob, '1.14');
        const p = await a.post('/v1/profiles', { profile: { name: 'p', spec: NOVA_PROFILE_SPEC } });
        const cl = await a.post('/v1/clusters', { cluster: { name: 'c', profile_id: p.body.profile.id } });
        await g.db.dataSource.getRepository(ActionEntity).update({ status: 'READY' }, { status: 'SUCCEEDED' });
        const r = await a.post('/v1/receivers', { receiver: { name: 'r', type: 'webhook', cluster_id: cl.body.cluster.id, action: 'CLUSTER_SCALE_OUT' } });
        await g.db.dataSource.getRepository(TrustEntity).delete({ user_id: 'bob-id' });
        const before = await g.db.dataSource.getRepository(ActionEntity).count();
        const res = await g.http().post(new URL(r.body.receiver.channel.alarm_url).pathname + '?V=2');
        expect(res.status).toBe(403);
        expect(res.body.error.message).toContain('has no Keystone trust for Trellis');
        expect(await g.db.dataSource.getRepository(ActionEntity).count()).toBe(before);
      } finally {
        await g.close();
      }
    });

    it("checks webhooks:trigger with the owner's delegated roles (a policy file can turn webhooks off)", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'trellis-webhooks-'));
      const file = join(dir, 'policy.yaml');
      writeFileSync(file, '"webhooks:trigger": "role:admin"\n');
      const g = await startGatewayHarness({ env: { TRELLIS_POLICY_FILE: file } });
      try {
        const a = g.as(TOKENS.alice, '1.14');
        const p = await a.post('/v1/profiles', { profile: { name: 'p', spec: NOVA_PROFILE_SPEC } });
        const cl = await a.post('/v1/clusters', { cluster: { name: 'c', profile_id: p.body.profile.id } });
        await g.db.dataSource.getRepository(ActionEntity).update({ status: 'READY' }, { status: 'SUCCEEDED' });
        const r = await a.post('/v1/receivers', { receiver: { name: 'r', type: 'webhook', cluster_id: cl.body.cluster.id, action: 'CLUSTER_SCALE_OUT' } });
        const res = await g.http().post(new URL(r.body.receiver.channel.alarm_url).pathname + '?V=2');
        expect(res.status).toBe(403);
        expect(res.body.error.message).toBe('You are not authorized to complete this operation.');
      } finally {
        await g.close();
      }
    });

    it('never writes a webhook path into a log line', () => {
      expect(redactWebhook('/v1/webhooks/6a86b2e4-127a-4acc-b0ec-6f951b240e5b/trigger')).toBe('/v1/webhooks/<redacted>/trigger');
      expect(redactWebhook('/v1/clusters/c1')).toBe('/v1/clusters/c1');
    });
  });
});
