import { Exchanges, RoutingKeys, Queues } from '@trellis/contracts';
import { ActionEntity, IdempotencyKeyEntity, NodeEntity, OutboxEntity } from '@trellis/persistence';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { RpcServer } from '../rpc/rpc-server';
import { NOVA_PROFILE_SPEC, TOKENS, gatewayOnBus, type RpcReply } from '../testing/gateway-harness';
import { IdempotentWrites } from './idempotent-writes';

/**
 * A write whose answer was lost is retried: with the same Idempotency-Key (REST) or message id
 * (RPC) the retry gets the first answer and no second action is stored.
 */
describe('idempotent writes', () => {
  const { t } = gatewayOnBus();

  const as = (token: string, key?: string) => {
    const prepare = (t: request.Test) => {
      t.set('X-Auth-Token', token).set('OpenStack-API-Version', 'clustering 1.14');
      return key === undefined ? t : t.set('Idempotency-Key', key);
    };
    return {
      post: (path: string, body: object) => prepare(request(t.gateway.url).post(path)).send(body),
      delete: (path: string) => prepare(request(t.gateway.url).delete(path)),
    };
  };
  const actions = (where: { target: string; action: string }) => t.db.dataSource.getRepository(ActionEntity).countBy(where);
  const announcements = async (actionId: string) =>
    (await t.db.dataSource.getRepository(OutboxEntity).findBy({ type: 'action.requested' })).filter((o) => o.payload.action_id === actionId).length;
  const finish = (id: string) => t.db.dataSource.getRepository(ActionEntity).update({ id }, { status: 'SUCCEEDED' });

  async function profile(token: string = TOKENS.alice): Promise<string> {
    const created = await as(token).post('/v1/profiles', { profile: { name: `p-${randomUUID().slice(0, 6)}`, spec: NOVA_PROFILE_SPEC } });
    expect(created.status).toBe(201);
    return created.body.profile.id;
  }

  async function activeCluster(): Promise<string> {
    const created = await as(TOKENS.alice).post('/v1/clusters', { cluster: { name: `c-${randomUUID().slice(0, 6)}`, profile_id: await profile(), max_size: 10 } });
    expect(created.status).toBe(202);
    await finish(created.headers.location.split('/actions/')[1]);
    return created.body.cluster.id;
  }

  describe('REST: Idempotency-Key', () => {
    it('answers a retried scale-out with the first answer (status, body, Location) and stores one action', async () => {
      const clusterId = await activeCluster();
      const key = randomUUID();
      const first = await as(TOKENS.alice, key).post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 2 } });
      expect(first.status).toBe(202);
      const retry = await as(TOKENS.alice, key).post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 2 } });
      expect([retry.status, retry.body, retry.headers.location]).toEqual([202, first.body, first.headers.location]);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(await actions({ target: clusterId, action: 'CLUSTER_SCALE_OUT' })).toBe(1);
      expect(await announcements(first.body.action)).toBe(1);
    });

    it('creates one node however often the create is retried, and answers each retry with the same node and action', async () => {
      const profileId = await profile();
      const key = randomUUID();
      const body = { node: { name: `n-${key.slice(0, 6)}`, profile_id: profileId } };
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await as(TOKENS.alice, key).post('/v1/nodes', body));
      expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
      expect(new Set(answers.map((a) => a.headers.location)).size).toBe(1);
      expect(answers[1].body).toEqual(answers[0].body);
      expect(await t.db.dataSource.getRepository(NodeEntity).countBy({ name: body.node.name })).toBe(1);
    });

    it("answers a retried delete with Senlin's 202 and null body, with one delete action", async () => {
      const clusterId = await activeCluster();
      const key = randomUUID();
      const first = await as(TOKENS.alice, key).delete(`/v1/clusters/${clusterId}`);
      const retry = await as(TOKENS.alice, key).delete(`/v1/clusters/${clusterId}`);
      for (const r of [first, retry]) {
        expect([r.status, r.text, r.headers['content-type']]).toEqual([202, 'null', expect.stringMatching(/^application\/json/)]);
      }
      expect(retry.headers.location).toBe(first.headers.location);
      expect(await actions({ target: clusterId, action: 'CLUSTER_DELETE' })).toBe(1);
    });

    it('refuses the same key with another request (422) and stores nothing for it', async () => {
      const clusterId = await activeCluster();
      const key = randomUUID();
      const first = await as(TOKENS.alice, key).post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } });
      expect(first.status).toBe(202);
      await finish(first.body.action);
      const other = await as(TOKENS.alice, key).post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 3 } });
      expect(other.status).toBe(422);
      expect(other.body).toMatchObject({ code: 422, title: 'Unprocessable Entity', error: { code: 422, type: 'IdempotencyKeyMismatch' } });
      expect(other.body.error.message).toBe(`The Idempotency-Key '${key}' was used for another request; a new request needs a new key.`);
      expect(await actions({ target: clusterId, action: 'CLUSTER_SCALE_OUT' })).toBe(1);
    });

    it("keeps each caller's keys apart: another user of the project with the same key starts its own action", async () => {
      const key = randomUUID();
      const profileId = await profile();
      const body = (name: string) => ({ node: { name, profile_id: profileId } });
      const alice = await as(TOKENS.alice, key).post('/v1/nodes', body('shared-key'));
      const carol = await as(TOKENS.carol, key).post('/v1/nodes', body('shared-key'));
      expect([alice.status, carol.status]).toEqual([202, 202]);
      expect(carol.headers.location).not.toBe(alice.headers.location);
      expect(carol.headers['idempotent-replayed']).toBeUndefined();
    });

    it('stores no answer for a refused request: the corrected retry with the key runs', async () => {
      const clusterId = await activeCluster();
      const key = randomUUID();
      const refused = await as(TOKENS.alice, key).post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: -1 } });
      expect(refused.status).toBe(400);
      const fixed = await as(TOKENS.alice, key).post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } });
      expect(fixed.status).toBe(202);
      expect(fixed.headers['idempotent-replayed']).toBeUndefined();
    });

    it('forgets a key once it expired (a new request runs) and prunes it', async () => {
      const clusterId = await activeCluster();
      const key = randomUUID();
      const first = await as(TOKENS.alice, key).post(`/v1/clusters/${clusterId}/actions`, { check: {} });
      await finish(first.body.action);
      const keys = t.db.dataSource.getRepository(IdempotencyKeyEntity);
      expect(await keys.findOneByOrFail({ key })).toMatchObject({ action_id: first.body.action, response: { status: 202 } });
      await keys.update({ key }, { expires_at: new Date(Date.now() - 1000) });
      const later = await as(TOKENS.alice, key).post(`/v1/clusters/${clusterId}/actions`, { check: {} });
      expect(later.status).toBe(202);
      expect(later.body.action).not.toBe(first.body.action);
      await keys.update({ key }, { expires_at: new Date(Date.now() - 1000) });
      expect(await t.gateway.app.get(IdempotentWrites).prune()).toBeGreaterThanOrEqual(1);
      expect(await keys.countBy({ key })).toBe(0);
    });

    it('refuses a key that is empty or longer than 255 characters', async () => {
      const clusterId = await activeCluster();
      const res = await as(TOKENS.alice, 'k'.repeat(256)).post(`/v1/clusters/${clusterId}/actions`, { check: {} });
      expect([res.status, res.body.error.message]).toEqual([400, 'Invalid Idempotency-Key: it must be 1 to 255 printable ASCII characters.']);
      expect(await actions({ target: clusterId, action: 'CLUSTER_CHECK' })).toBe(0);
    });
  });

  describe('RPC: the message id', () => {
    const message = (pattern: string, body: unknown, messageId: string, redelivered = false) => ({
      queue: Queues.gatewayRpc,
      body: { token: TOKENS.alice, microversion: '1.14', ...(body as object) },
      raw: Buffer.alloc(0),
      messageId,
      correlationId: `req-${messageId}`,
      type: pattern,
      headers: {},
      redelivered,
      deliveryCount: redelivered ? 1 : 0,
    });

    it('answers a redelivered request with the first reply and starts nothing new', async () => {
      const clusterId = await activeCluster();
      const rpc = t.gateway.app.get(RpcServer);
      const id = randomUUID();
      const request = { params: { cluster_id: clusterId }, body: { count: 1 } };
      const first = (await rpc.handle(message('cluster.scale_out', request, id))) as unknown as RpcReply;
      const redelivered = (await rpc.handle(message('cluster.scale_out', request, id, true))) as unknown as RpcReply;
      expect(first).toMatchObject({ status: 202, action_id: expect.any(String) });
      expect([redelivered.status, redelivered.body, redelivered.action_id, redelivered.headers.location]).toEqual([
        202, first.body, first.action_id, first.headers.location,
      ]);
      expect(redelivered.headers['idempotent-replayed']).toBe('true');
      expect(await actions({ target: clusterId, action: 'CLUSTER_SCALE_OUT' })).toBe(1);
      expect(await announcements(first.action_id!)).toBe(1);
    });

    it('answers a client resending with the same message id once, and refuses the id with another request', async () => {
      const profileId = await profile();
      const messageId = randomUUID();
      const send = (name: string) =>
        t.bus.request(
          { token: TOKENS.alice, microversion: '1.14', body: { node: { name, profile_id: profileId } } },
          { exchange: Exchanges.rpc, routingKey: RoutingKeys.rpcRequest, pattern: 'node.create', timeoutMs: 20_000, messageId },
        ) as Promise<RpcReply>;
      const first = await send('rpc-once');
      const again = await send('rpc-once');
      expect(first.status).toBe(202);
      expect([again.status, again.action_id, again.body]).toEqual([202, first.action_id, first.body]);
      expect(await t.db.dataSource.getRepository(NodeEntity).countBy({ name: 'rpc-once' })).toBe(1);
      const other = await send('rpc-other');
      expect([other.status, other.error?.type]).toEqual([422, 'IdempotencyKeyMismatch']);
    });
  });
});
