import { loadConfig, silentLogger, type AuthContext } from '@trellis/common';
import { Exchanges, Queues, RoutingKeys } from '@trellis/contracts';
import { InMemoryMessageBus } from '@trellis/messaging/in-memory-message-bus';
import type { IncomingMessage } from '@trellis/messaging/bus.port';
import { ActionEntity, CloudFactEntity, OutboxEntity, type Database } from '@trellis/persistence';
import { PolicyRegistry } from '@trellis/policies';
import { openTestDatabase } from '@trellis/testing/database';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { EntitySubscriberInterface } from 'typeorm';
import type { TransactionCommitEvent } from 'typeorm/subscriber/event/TransactionCommitEvent';
import { startGateway, type RunningGateway } from '../bootstrap';
import { FakeTokenValidator, NOVA_PROFILE_SPEC, PROJECT_A, RecordingTrustIssuer, TOKENS, FakeCloudCatalog } from '../testing/gateway-harness';
import { MAX_BODY_BYTES } from '../core/request-input';
import { RpcServer } from './rpc-server';

/** Keystone that cannot be reached for one token: the gateway must answer 503, as REST does. */
class FlakyKeystone extends FakeTokenValidator {
  override async validate(token: string): Promise<AuthContext | null> {
    if (token === 'token-keystone-down') throw new Error('connect ECONNREFUSED 127.0.0.1:5000');
    return super.validate(token);
  }
}

type Reply = {
  status: number;
  body?: any;
  action_id?: string;
  error?: { code: number; message: string; type: string; error_id?: string };
  headers: Record<string, string>;
};

describe('gateway RPC over the message bus', () => {
  let db: Database;
  let bus: InMemoryMessageBus;
  let gateway: RunningGateway;
  /** what happened, in order: transactions committed, and replies received */
  const timeline: string[] = [];

  beforeAll(async () => {
    db = await openTestDatabase();
    bus = new InMemoryMessageBus({ deliveryLimit: 3, logger: silentLogger });
    await bus.start();
    // zone placement checks its zones against the cloud facts the nova-worker stores
    await db.dataSource.getRepository(CloudFactEntity).save({ kind: 'availability_zones', project: '', data: { items: ['az1', 'az2'] }, fetched_at: new Date() });
    gateway = await startGateway({
      config: loadConfig({ TRELLIS_PORT: '0', TRELLIS_PUBLIC_URL: 'https://clustering.example/api' }),
      dataSource: db.dataSource,
      bus,
      tokenValidator: new FlakyKeystone(),
      trusts: new RecordingTrustIssuer(),
      cloudCatalog: new FakeCloudCatalog(),
      registry: PolicyRegistry.withBuiltins(),
      logger: silentLogger,
    });
    // a released savepoint also fires afterTransactionCommit; only the outermost COMMIT counts
    const commits: EntitySubscriberInterface = {
      afterTransactionCommit: (event: TransactionCommitEvent) => {
        if (!event.queryRunner.isTransactionActive) timeline.push('commit');
      },
    };
    db.dataSource.subscribers.push(commits);
  });

  afterAll(async () => {
    await gateway?.close();
    await bus?.close();
    await db?.close();
  });

  async function call(pattern: string, message: unknown, correlationId?: string): Promise<Reply> {
    const reply = (await bus.request(message, {
      exchange: Exchanges.rpc,
      routingKey: RoutingKeys.rpcRequest,
      pattern,
      timeoutMs: 20_000,
      correlationId,
    })) as Reply;
    timeline.push(`reply ${pattern}`);
    return reply;
  }

  const alice = (pattern: string, params?: Record<string, unknown>, body?: unknown) =>
    call(pattern, { token: TOKENS.alice, microversion: '1.14', params, body });
  const bob = (pattern: string, params?: Record<string, unknown>, body?: unknown) =>
    call(pattern, { token: TOKENS.bob, microversion: '1.14', params, body });
  const rest = (token: string = TOKENS.alice) => ({
    get: (path: string) => request(gateway.url).get(path).set('X-Auth-Token', token).set('OpenStack-API-Version', 'clustering 1.14'),
    post: (path: string, body: object) =>
      request(gateway.url).post(path).set('X-Auth-Token', token).set('OpenStack-API-Version', 'clustering 1.14').send(body),
  });

  async function activeCluster(maxSize = 5) {
    const profile = await alice('profile.create', undefined, { profile: { name: `p-${randomUUID().slice(0, 6)}`, spec: NOVA_PROFILE_SPEC } });
    expect(profile.status).toBe(201);
    const created = await alice('cluster.create', undefined, {
      cluster: { name: `c-${randomUUID().slice(0, 6)}`, profile_id: profile.body.profile.id, max_size: maxSize },
    });
    expect(created.status).toBe(202);
    // the engine's part, done by hand: the create action finished
    await db.dataSource.getRepository(ActionEntity).update({ id: created.action_id! }, { status: 'SUCCEEDED' });
    return created.body.cluster as { id: string; name: string };
  }

  describe('successful calls answer what REST answers', () => {
    it('creates a profile (201) and shows it with the same JSON as GET /v1/profiles/{id}', async () => {
      const created = await alice('profile.create', undefined, { profile: { name: 'rpc-web', spec: NOVA_PROFILE_SPEC } });
      expect(created).toMatchObject({ status: 201, body: { profile: { name: 'rpc-web', project: PROJECT_A, type: 'os.nova.server-1.0' } } });
      expect(created.headers['openstack-api-version']).toBe('clustering 1.14');
      const shown = await alice('profile.show', { profile_id: 'rpc-web' });
      const viaRest = await rest().get(`/v1/profiles/${created.body.profile.id}`);
      expect(shown.status).toBe(200);
      expect(shown.body).toEqual(viaRest.body);
      expect(Object.keys(shown.body.profile)).toEqual(Object.keys(viaRest.body.profile));
    });

    it('creates a cluster (202 + action id + Location) and lists with query params like the REST query string', async () => {
      const cluster = await activeCluster();
      const listed = await alice('cluster.list', { name: cluster.name, limit: 1, sort: 'name:asc' });
      const viaRest = await rest().get(`/v1/clusters?name=${cluster.name}&limit=1&sort=name:asc`);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual(viaRest.body);
      expect(listed.body.clusters.map((c: { id: string }) => c.id)).toEqual([cluster.id]);
      const shown = await alice('cluster.show', { cluster_id: cluster.name });
      expect(shown.body).toEqual((await rest().get(`/v1/clusters/${cluster.id}`)).body);
    });

    it('deletes with 204 and a null body where REST answers 204', async () => {
      const created = await alice('policy.create', undefined, {
        policy: { name: 'rpc-zones', spec: { type: 'senlin.policy.zone_placement', version: 1.0, properties: { zones: [{ name: 'az1' }] } } },
      });
      expect(created.status).toBe(201);
      expect(await alice('policy.delete', { policy_id: created.body.policy.id })).toMatchObject({ status: 204, body: null });
      expect(await alice('policy.show', { policy_id: created.body.policy.id })).toMatchObject({ status: 404 });
    });

    it('follows the microversion as REST does: absent means 1.0, `latest` means 1.14, bad ones are refused', async () => {
      const old = await call('profile_type.list', { token: TOKENS.alice });
      expect(old).toMatchObject({ status: 200, body: { profile_types: [{ name: 'os.nova.server-1.0' }, { name: 'os.heat.stack-1.0' }, { name: 'container.dockerinc.docker-1.0' }] } });
      expect(old.headers['openstack-api-version']).toBe('clustering 1.0');
      const latest = await call('profile_type.list', { token: TOKENS.alice, microversion: 'latest' });
      expect(latest.headers['openstack-api-version']).toBe('clustering 1.14');
      expect(latest.body.profile_types[0]).toHaveProperty('support_status');
      const bad = await call('profile_type.list', { token: TOKENS.alice, microversion: 'one' });
      expect(bad).toMatchObject({ status: 400, error: { code: 400, type: 'InvalidAPIVersionString' } });
      const tooNew = await call('profile_type.list', { token: TOKENS.alice, microversion: '1.99' });
      expect(tooNew).toMatchObject({ status: 406, error: { code: 406, type: 'InvalidGlobalAPIVersion' } });
    });

    it('serves every REST operation as a pattern', () => {
      const patterns = gateway.app.get(RpcServer).patterns();
      const expected = [
        'policy_type.list', 'policy_type.show',
        ...['create', 'list', 'show', 'update', 'delete', 'validate'].flatMap((v) => [`policy.${v}`, `profile.${v}`]),
        'profile_type.list', 'profile_type.show', 'profile_type.ops',
        ...['create', 'list', 'show', 'update', 'delete'].flatMap((v) => [`cluster.${v}`, `node.${v}`]),
        ...[
          'scale_out', 'scale_in', 'resize', 'policy_attach', 'policy_detach', 'policy_update', 'add_nodes', 'del_nodes', 'check',
          'repair', 'recover', 'replace_nodes', 'complete_lifecycle', 'operation',
        ].map((v) => `cluster.${v}`),
        'cluster_policy.list', 'cluster_policy.show', 'cluster_finding.list',
        'node.check', 'node.recover', 'node.operation',
        'action.list', 'action.show', 'action.replay', 'action.cancel', 'action.decision', 'evaluation.create',
        'event.list', 'event.show',
        ...['create', 'list', 'show', 'update', 'delete', 'notify'].map((v) => `receiver.${v}`),
        'build_info.show', 'cluster.collect', 'service.list',
      ];
      expect(patterns).toEqual([...expected].sort());
    });
  });

  describe('an action-starting call', () => {
    it('replies with the action id only after the action row and its outbox row are committed', async () => {
      const cluster = await activeCluster();
      timeline.length = 0;
      const reply = await alice('cluster.scale_out', { cluster_id: cluster.id }, { count: 2 });
      expect(reply.status).toBe(202);
      expect(reply.body).toEqual({ action: reply.action_id });
      expect(reply.headers.location).toBe(`https://clustering.example/api/v1/actions/${reply.action_id}`);
      // one commit, before the reply; the rows read below are in the database, so that commit wrote them
      expect(timeline).toEqual(['commit', 'reply cluster.scale_out']);
      const action = await db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: reply.action_id! });
      expect(action).toMatchObject({ action: 'CLUSTER_SCALE_OUT', status: 'READY', cluster_id: cluster.id, inputs: { count: 2 }, project: PROJECT_A });
      const outbox = await db.dataSource.getRepository(OutboxEntity).findBy({ type: 'action.requested' });
      const row = outbox.find((o) => (o.payload as { action_id: string }).action_id === reply.action_id);
      expect(row).toMatchObject({ exchange: 'trellis.actions', routing_key: 'action.requested', correlation_id: reply.headers['x-openstack-request-id'] });
    });

    it("uses the caller's AMQP correlation id as the request id that follows the action", async () => {
      const cluster = await activeCluster();
      const reply = await call('cluster.check', { token: TOKENS.alice, params: { cluster_id: cluster.id } }, 'billing-42');
      expect(reply.status).toBe(202);
      expect(reply.headers['x-openstack-request-id']).toBe('billing-42');
      const outbox = await db.dataSource.getRepository(OutboxEntity).findBy({ correlation_id: 'billing-42' });
      expect(outbox.map((o) => (o.payload as { action_id: string }).action_id)).toEqual([reply.action_id]);
    });

    it('makes up a request id when the correlation id could not travel in a message', async () => {
      const reply = await gateway.app.get(RpcServer).handle(incoming({ token: TOKENS.alice }, { correlationId: 'not allowed here!' }));
      expect(reply.status).toBe(200);
      expect(reply.headers['x-openstack-request-id']).toMatch(/^req-[0-9a-f-]{36}$/);
    });

    it('accepts the REST body with its action key as well', async () => {
      const cluster = await activeCluster();
      const reply = await alice('cluster.scale_out', { cluster_id: cluster.id }, { scale_out: { count: 1 } });
      expect(reply.status).toBe(202);
      const action = await db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id: reply.action_id! });
      expect(action.inputs).toEqual({ count: 1 });
    });

    it('answers `dry_run` with the decision (200) and stores no action', async () => {
      const cluster = await activeCluster();
      const actions = db.dataSource.getRepository(ActionEntity);
      const before = await actions.count();
      const dry = await alice('cluster.scale_out', { cluster_id: cluster.id, dry_run: 'true' }, { count: 2 });
      expect(dry).toMatchObject({ status: 200, body: { dry_run: true, action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 2 } } } });
      expect(dry.body.decision.status).toBe('OK');
      expect(dry.action_id).toBeUndefined();
      expect(await actions.count()).toBe(before);
      expect((await alice('cluster.scale_out', { cluster_id: cluster.id, dry_run: 'maybe' }, { count: 2 })).error?.message).toBe(
        "Invalid value 'maybe' specified for 'dry_run'",
      );
    });

    it('stores nothing and replies with the conflict when the request is refused', async () => {
      const cluster = await activeCluster();
      const first = await alice('cluster.scale_out', { cluster_id: cluster.id }, { count: 1 });
      expect(first.status).toBe(202);
      const actions = db.dataSource.getRepository(ActionEntity);
      const before = await actions.count();
      const second = await alice('cluster.scale_in', { cluster_id: cluster.id }, { count: 1 });
      expect(second.status).toBe(409);
      expect(second.error?.message).toMatch(new RegExp(`conflicts with the following action\\(s\\): ${first.action_id}`));
      expect(second.action_id).toBeUndefined();
      expect(await actions.count()).toBe(before);
    });

    it('is taken from the durable queue when the gateway starts serving after the caller sent it', async () => {
      const cluster = await activeCluster();
      await gateway.rpc!.cancel();
      const pending = alice('cluster.check', { cluster_id: cluster.id });
      expect(await bus.depth(Queues.gatewayRpc)).toBe(1);
      gateway.rpc = await gateway.app.get(RpcServer).serve(bus, { baseUrl: gateway.url, prefetch: 4 });
      const reply = await pending;
      expect(reply.status).toBe(202);
      expect(await db.dataSource.getRepository(ActionEntity).findOneBy({ id: reply.action_id! })).toMatchObject({ action: 'CLUSTER_CHECK' });
    });
  });

  describe('errors are the REST errors', () => {
    it('refuses invalid input with the same 400 as REST', async () => {
      const cluster = await activeCluster(2);
      const viaRpc = await alice('cluster.scale_out', { cluster_id: cluster.id }, { count: 'many' });
      const viaRest = await rest().post(`/v1/clusters/${cluster.id}/actions`, { scale_out: { count: 'many' } });
      expect(viaRpc.status).toBe(400);
      expect(viaRpc.error).toEqual(viaRest.body.error);
      const zero = await alice('cluster.scale_out', { cluster_id: cluster.id }, { count: 0 });
      expect(zero).toMatchObject({ status: 400, error: { code: 400, message: 'Count for scale-out request cannot be 0.', type: 'BadRequest' } });
      const noName = await alice('profile.create', undefined, { profile: { spec: NOVA_PROFILE_SPEC } });
      expect(noName.error).toEqual({ code: 400, message: "'name' is a required property", type: 'BadRequest' });
    });

    it('refuses what REST refuses before any route reads it: a repeated scalar parameter, a NUL, an int beyond int4 (issue 18)', async () => {
      const cluster = await activeCluster();
      const actions = db.dataSource.getRepository(ActionEntity);
      const before = await actions.count();
      const twice = await alice('cluster.scale_out', { cluster_id: cluster.id, dry_run: ['true', 'false'] }, { count: 1 });
      expect(twice.error).toEqual({ code: 400, message: "The query parameter 'dry_run' is given 2 times; it takes one value.", type: 'HTTPBadRequest' });
      const nulBody = await alice('cluster.update', { cluster_id: cluster.id }, { cluster: { name: 'a\u0000' } });
      expect(nulBody.error?.message).toBe('The value for cluster.name contains a NUL character.');
      const nulFilter = await alice('cluster.list', { name: ['ok', 'a\u0000'] });
      expect(nulFilter.error?.message).toBe("The value of the query parameter 'name' contains a NUL character.");
      const nulId = await alice('cluster.show', { cluster_id: 'a\u0000b' });
      expect(nulId).toMatchObject({ status: 404, error: { message: "The cluster 'a\u0000b' could not be found." } });
      const huge = await alice('cluster.scale_out', { cluster_id: cluster.id }, { count: 2147483648 });
      const viaRest = await rest().post(`/v1/clusters/${cluster.id}/actions`, { scale_out: { count: 2147483648 } });
      expect(huge.error).toEqual(viaRest.body.error);
      expect(huge.error?.message).toBe("Value must be <= 2147483647 for field 'count'.");
      expect(await actions.count()).toBe(before);
    });

    it('answers 401 without a token, with a token Keystone refuses, and 503 when Keystone is down', async () => {
      const expected = { code: 401, message: 'The request you have made requires authentication.', type: 'HTTPUnauthorized' };
      expect(await call('cluster.list', { microversion: '1.14' })).toMatchObject({ status: 401, error: expected });
      expect(await call('cluster.list', { token: '' })).toMatchObject({ status: 401, error: expected });
      expect(await call('cluster.list', { token: 'token-mallory' })).toMatchObject({ status: 401, error: expected });
      expect((await rest('token-mallory').get('/v1/clusters')).body.error).toEqual(expected);
      const down = await call('cluster.list', { token: 'token-keystone-down' });
      expect(down).toMatchObject({ status: 503, error: { code: 503, type: 'ServiceUnavailable' } });
    });

    it('checks the token before the parameters, as REST does', async () => {
      expect(await call('cluster.show', { params: {} })).toMatchObject({ status: 401 });
    });

    it("answers 404 for another project's cluster, and keeps it out of lists", async () => {
      const cluster = await activeCluster();
      const other = await bob('cluster.show', { cluster_id: cluster.id });
      expect(other).toMatchObject({
        status: 404,
        error: { code: 404, message: `The cluster '${cluster.id}' could not be found.`, type: 'ResourceNotFound' },
      });
      expect(await bob('cluster.scale_out', { cluster_id: cluster.id }, { count: 1 })).toMatchObject({ status: 404 });
      expect((await bob('cluster.list')).body.clusters).toEqual([]);
      expect((await bob('action.list', { cluster_id: cluster.id })).body.actions).toEqual([]);
    });
  });

  describe('malformed requests get an error reply', () => {
    it('answers an unknown pattern with 404 and a request without one with 400', async () => {
      expect(await alice('cluster.explode', { cluster_id: 'x' })).toMatchObject({
        status: 404,
        error: { code: 404, message: "Unknown message pattern 'cluster.explode'.", type: 'HTTPNotFound' },
      });
      const server = gateway.app.get(RpcServer);
      const untyped = await server.handle(incoming({ token: TOKENS.alice }, { type: undefined }));
      expect(untyped).toMatchObject({ status: 400, error: { type: 'HTTPBadRequest' } });
      expect((untyped as { error: { message: string } }).error.message).toMatch(/AMQP 'type' property/);
    });

    it('answers a body that is not JSON with 400', async () => {
      const reply = await gateway.app.get(RpcServer).handle(incoming(undefined, { parseError: 'Unexpected token h in JSON at position 0' }));
      expect(reply).toMatchObject({ status: 400, error: { code: 400, message: 'Malformed request body: Unexpected token h in JSON at position 0' } });
    });

    it.each([
      ['a JSON array', [TOKENS.alice], /body: must be a JSON object/],
      ['a string', 'cluster please', /body: must be a JSON object/],
      ['an unknown field', { token: TOKENS.alice, cluster_id: 'x' }, /Unknown request field\(s\) 'cluster_id'/],
      ['a non-string token', { token: 42 }, /token: token must be a string/],
      ['params that are not a map', { token: TOKENS.alice, params: ['x'] }, /params: params must be an object/],
    ])('answers %s with 400', async (_what, message, expected) => {
      const reply = await call('cluster.list', message);
      expect(reply.status).toBe(400);
      expect(reply.error?.message).toMatch(expected);
    });

    it('names a missing or bad path parameter, an unknown parameter and a body where none is taken', async () => {
      expect((await alice('cluster.show', {})).error?.message).toBe("'params.cluster_id' is required by 'cluster.show' and must be a non-empty string.");
      expect((await alice('cluster.show', { cluster_id: 7 })).error?.message).toMatch(/'params.cluster_id' is required/);
      expect((await alice('cluster.show', { cluster_id: 'x', colour: 'red' })).error?.message).toBe(
        "Invalid parameter 'colour' for 'cluster.show' (GET /v1/clusters/{cluster_id}).",
      );
      expect((await alice('cluster.list', { colour: 'red' })).error?.message).toBe("Invalid parameter 'colour'");
      expect((await alice('cluster.list', { name: { a: 1 } })).error?.message).toMatch(/'params.name' must be a string/);
      expect((await alice('cluster.show', { cluster_id: 'x' }, { cluster: {} })).error?.message).toMatch(/'cluster.show' takes no body/);
    });

    it('answers a body nested 100,000 levels deep with 400 (a 500 before: class-transformer ran out of stack; found by the fuzz suite)', async () => {
      const text = `{"token": "${TOKENS.alice}", "body": ${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
      const reply = await gateway.app.get(RpcServer).handle(incoming(JSON.parse(text), { raw: Buffer.from(text), type: 'cluster.create' }));
      expect(reply).toMatchObject({ status: 400, error: { code: 400, message: 'Malformed request: body: nested more than 64 levels deep', type: 'HTTPBadRequest' } });
    });

    it(`answers a request over ${MAX_BODY_BYTES} bytes with 413, as REST answers such a body, and takes one at the limit`, async () => {
      const sized = (size: number) => {
        const head = `{"token": "${TOKENS.alice}", "body": {"pad": "`;
        return `${head}${'x'.repeat(size - head.length - 3)}"}}`;
      };
      const server = gateway.app.get(RpcServer);
      const over = sized(MAX_BODY_BYTES + 1);
      expect(await server.handle(incoming(JSON.parse(over), { raw: Buffer.from(over), type: 'cluster.create' }))).toMatchObject({
        status: 413,
        error: { code: 413, message: `Request size (${MAX_BODY_BYTES + 1} bytes) exceeds the maximum allowed size (${MAX_BODY_BYTES} bytes).`, type: 'RequestLimitExceeded' },
      });
      const at = sized(MAX_BODY_BYTES);
      expect(await server.handle(incoming(JSON.parse(at), { raw: Buffer.from(at), type: 'cluster.create' }))).toMatchObject({
        status: 400,
        error: { message: "Request body missing 'cluster' key." },
      });
    });

    it(`answers a request over ${MAX_BODY_BYTES} bytes to an unknown or missing pattern with 413, as REST answers an oversized body to an unknown path (found by the fuzz suite)`, async () => {
      const text = `{"token": "${TOKENS.alice}", "body": {"pad": "${'x'.repeat(MAX_BODY_BYTES)}"}}`;
      const server = gateway.app.get(RpcServer);
      for (const type of ['no.such_pattern', undefined]) {
        expect(await server.handle(incoming(JSON.parse(text), { raw: Buffer.from(text), type }))).toMatchObject({ status: 413, error: { type: 'RequestLimitExceeded' } });
      }
      const small = `{"token": "${TOKENS.alice}"}`;
      expect(await server.handle(incoming(JSON.parse(small), { raw: Buffer.from(small), type: 'no.such_pattern' }))).toMatchObject({ status: 404 });
    });

    it('keeps serving after malformed requests', async () => {
      const replies = await Promise.all([call('nothing', 'x'), alice('nothing.at_all'), alice('profile_type.list')]);
      expect(replies.map((r) => r.status)).toEqual([404, 404, 200]);
    });
  });
});

function incoming(body: unknown, overrides: Partial<IncomingMessage> = {}): IncomingMessage {
  return {
    queue: Queues.gatewayRpc,
    body,
    raw: overrides.raw ?? Buffer.from(JSON.stringify(body ?? null)),
    messageId: randomUUID(),
    type: 'cluster.list',
    headers: {},
    redelivered: false,
    deliveryCount: 0,
    ...overrides,
  };
}
