import * as amqp from 'amqplib';
import { silentLogger } from '@trellis/common';
import { Exchanges, Queues, RoutingKeys } from '@trellis/contracts';
import { AmqpMessageBus } from '@trellis/messaging/amqp-message-bus';
import type { IncomingMessage } from '@trellis/messaging/bus.port';
import { InMemoryMessageBus } from '@trellis/messaging/in-memory-message-bus';
import { ActionEntity, IdempotencyKeyEntity, type Database } from '@trellis/persistence';
import { openPostgresTestDatabase } from '@trellis/testing/database';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { RunningGateway } from '../../apps/gateway/src/bootstrap';
import { RpcServer } from '../../apps/gateway/src/rpc/rpc-server';
import { NOVA_PROFILE_SPEC, PROJECT_A, TOKENS, startGatewayWithFakes } from '../../apps/gateway/src/testing/gateway-harness';
import { freshVhost, waitFor } from '../support/processes';

/**
 * Retries that arrive together (a client that timed out and retried while the first request was
 * still in the gateway) on PostgreSQL, where transactions really run at once: the first request
 * takes the key's row, the others wait for it to commit and answer with its answer.
 */
describe('Idempotency-Key under concurrent retries (PostgreSQL)', () => {
  let db: Database & { url: string; name: string };
  let bus: InMemoryMessageBus;
  let gateway: RunningGateway;

  beforeAll(async () => {
    db = await openPostgresTestDatabase({ poolSize: 10 });
    bus = new InMemoryMessageBus({ deliveryLimit: 3, logger: silentLogger });
    await bus.start();
    gateway = await startGatewayWithFakes(db.dataSource, bus, { rpc: false });
  });

  afterAll(async () => {
    await gateway?.close();
    await bus?.close();
    await db?.close();
  });

  const post = (path: string, body: object, key?: string) => {
    const t = request(gateway.url).post(path).set('X-Auth-Token', TOKENS.alice).set('OpenStack-API-Version', 'clustering 1.14');
    return (key ? t.set('Idempotency-Key', key) : t).send(body);
  };

  it('stores one action for eight copies of a scale-out sent at once with one key, and answers all eight with it', async () => {
    const profile = await post('/v1/profiles', { profile: { name: 'p', spec: NOVA_PROFILE_SPEC } });
    const cluster = await post('/v1/clusters', { cluster: { name: 'c', profile_id: profile.body.profile.id, max_size: 20 } });
    expect(cluster.status).toBe(202);
    const clusterId = cluster.body.cluster.id;
    await db.dataSource.getRepository(ActionEntity).update({ cluster_id: clusterId }, { status: 'SUCCEEDED' });

    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(`/v1/clusters/${clusterId}/actions`, { scale_out: { count: 1 } }, key)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(202));
    expect(new Set(answers.map((a) => a.body.action)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(7);
    expect(await db.dataSource.getRepository(ActionEntity).countBy({ target: clusterId, action: 'CLUSTER_SCALE_OUT' })).toBe(1);
    expect(await db.dataSource.getRepository(IdempotencyKeyEntity).findOneByOrFail({ key })).toMatchObject({ action_id: answers[0].body.action });
  });
});

/**
 * A real redelivery on RabbitMQ: a gateway takes an RPC request, commits its action and dies before
 * its ack (here: its channel closes), so the broker hands the request, `redelivered`, to the next
 * gateway. That one answers with the first reply and stores no second action. A message id belongs
 * to the caller's user and project (docs/RELIABILITY.md §12): another project's request with the
 * same id is its own request, redelivered or not.
 */
describe('a redelivered RPC request (RabbitMQ + PostgreSQL)', () => {
  let db: Database & { url: string; name: string };
  let vhost: { url: string; drop: () => void };
  let bus: AmqpMessageBus;
  let gateway: RunningGateway;
  let client: amqp.ChannelModel;

  beforeAll(async () => {
    db = await openPostgresTestDatabase({ poolSize: 4 });
    vhost = freshVhost();
    bus = new AmqpMessageBus({ url: vhost.url, deliveryLimit: 5, logger: silentLogger });
    await bus.start();
    gateway = await startGatewayWithFakes(db.dataSource, bus, { rpc: false });
    client = await amqp.connect(vhost.url);
  });

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    await bus?.close();
    await db?.close();
    vhost?.drop();
  });

  /**
   * Publishes a request with a message id and has it handled twice, as when a gateway commits and
   * dies before its ack: a consumer takes it and hands it to the RPC server, its channel closes,
   * and RabbitMQ redelivers it to the gateway's RPC server. Answers both replies and the flag.
   */
  async function handledAndRedelivered(token: string, pattern: string, request: object, messageId: string) {
    const rpc = gateway.app.get(RpcServer);
    const caller = await client.createConfirmChannel();
    const replies: any[] = [];
    await caller.consume('amq.rabbitmq.reply-to', (m) => m && replies.push(JSON.parse(m.content.toString())), { noAck: true });
    const body = { token, microversion: '1.14', ...request };
    caller.publish(Exchanges.rpc, RoutingKeys.rpcRequest, Buffer.from(JSON.stringify(body)), {
      messageId, correlationId: messageId, type: pattern, replyTo: 'amq.rabbitmq.reply-to', contentType: 'application/json',
    });
    await caller.waitForConfirms();

    // the first gateway: takes the request, commits what it does, dies before it replies and acks
    const doomed = await client.createChannel();
    await doomed.prefetch(1);
    const taken = await new Promise<amqp.ConsumeMessage>((resolve) => void doomed.consume(Queues.gatewayRpc, (m) => m && resolve(m), { noAck: false }));
    const first = (await rpc.handle(toIncoming(taken))) as any;
    await doomed.close();

    // the next gateway gets it again, marked redelivered, and replies
    let redelivered: boolean | undefined;
    const served = await bus.serve(Queues.gatewayRpc, (m) => ((redelivered = m.redelivered), rpc.handle(m)), { prefetch: 1 });
    const reply = await waitFor('the reply', async () => replies[0]);
    await served.cancel();
    await caller.close();
    return { first, reply, redelivered };
  }

  async function readyCluster(): Promise<string> {
    const rpc = gateway.app.get(RpcServer);
    const profile = (await rpc.handle(incoming('profile.create', { body: { profile: { name: 'p', spec: NOVA_PROFILE_SPEC } } }))) as any;
    const cluster = (await rpc.handle(incoming('cluster.create', { body: { cluster: { name: 'c', profile_id: profile.body.profile.id, max_size: 5 } } }))) as any;
    await db.dataSource.getRepository(ActionEntity).update({ id: cluster.action_id }, { status: 'SUCCEEDED' });
    return cluster.body.cluster.id;
  }

  const scaleOuts = (clusterId: string) => db.dataSource.getRepository(ActionEntity).countBy({ target: clusterId, action: 'CLUSTER_SCALE_OUT' });

  it('answers the redelivery with the first reply and starts nothing new', async () => {
    const clusterId = await readyCluster();
    const { first, reply, redelivered } = await handledAndRedelivered(TOKENS.alice, 'cluster.scale_out', { params: { cluster_id: clusterId }, body: { count: 1 } }, randomUUID());
    expect(first).toMatchObject({ status: 202, action_id: expect.any(String) });
    expect(redelivered).toBe(true);
    expect([reply.status, reply.action_id, reply.body, reply.headers['idempotent-replayed']]).toEqual([202, first.action_id, first.body, 'true']);
    expect(await scaleOuts(clusterId)).toBe(1);
  });

  it("answers another project's request with A's message id as its own: 404 both times, never A's reply", async () => {
    const clusterId = await readyCluster();
    const messageId = randomUUID();
    const request = { params: { cluster_id: clusterId }, body: { count: 1 } };
    const mine = await handledAndRedelivered(TOKENS.alice, 'cluster.scale_out', request, messageId);
    expect(mine.reply).toMatchObject({ status: 202, action_id: mine.first.action_id });

    // project B sends the very same request with the same message id, and it is redelivered too
    const theirs = await handledAndRedelivered(TOKENS.bob, 'cluster.scale_out', request, messageId);
    expect(theirs.redelivered).toBe(true);
    for (const reply of [theirs.first, theirs.reply]) {
      expect(reply).toMatchObject({ status: 404, error: { code: 404, message: `The cluster '${clusterId}' could not be found.`, type: 'ResourceNotFound' } });
      expect(reply.headers['idempotent-replayed']).toBeUndefined();
      expect(JSON.stringify(reply)).not.toContain(mine.first.action_id);
    }
    expect(await scaleOuts(clusterId)).toBe(1);
    expect(await db.dataSource.getRepository(IdempotencyKeyEntity).findBy({ key: messageId })).toEqual([
      expect.objectContaining({ project: PROJECT_A, action_id: mine.first.action_id }),
    ]);
  });
});

function incoming(pattern: string, request: object): IncomingMessage {
  const body = { token: TOKENS.alice, microversion: '1.14', ...request };
  return { queue: Queues.gatewayRpc, body, raw: Buffer.from(JSON.stringify(body)), messageId: randomUUID(), type: pattern, headers: {}, redelivered: false, deliveryCount: 0 };
}

function toIncoming(m: amqp.ConsumeMessage): IncomingMessage {
  return {
    queue: Queues.gatewayRpc,
    body: JSON.parse(m.content.toString()),
    raw: m.content,
    messageId: m.properties.messageId,
    correlationId: m.properties.correlationId,
    type: m.properties.type,
    headers: m.properties.headers ?? {},
    redelivered: m.fields.redelivered,
    deliveryCount: 0,
  };
}
