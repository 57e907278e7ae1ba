import { randomUUID } from 'node:crypto';
import * as amqp from 'amqplib';
import { silentLogger } from '@trellis/common';
import { Exchanges, Queues, RoutingKeys, deadLetterQueueOf } from '@trellis/contracts';
import {
  AmqpMessageBus,
  BrokerUnavailableError,
  TopologyMismatchError,
  type AbortableConsumerHandle,
  type DeadLetter,
  type IncomingMessage,
} from '@trellis/messaging';
import {
  CONTRACT_DELIVERY_LIMIT,
  contractTestQueueNames,
  contractTestQueues,
  describeMessageBusContract,
} from '../../libs/messaging/src/bus.contract';

/**
 * The MessageBus contract against a real RabbitMQ, plus what only a broker can show (persistence
 * flags, argument mismatches, connection loss). The topology has fixed queue names, so the suite
 * deletes the Trellis queues before it starts (they may exist with another delivery limit), purges
 * them between tests and deletes them at the end.
 */
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

let admin: amqp.ChannelModel;

async function onFreshChannel<T>(work: (channel: amqp.Channel) => Promise<T>): Promise<T> {
  const channel = await admin.createChannel();
  channel.on('error', () => undefined);
  try {
    return await work(channel);
  } finally {
    await channel.close().catch(() => undefined);
  }
}

const deleteQueues = () =>
  onFreshChannel(async (channel) => {
    for (const queue of contractTestQueueNames()) await channel.deleteQueue(queue);
  });

const purgeQueues = () =>
  onFreshChannel(async (channel) => {
    for (const queue of contractTestQueueNames()) await channel.purgeQueue(queue);
  });

const makeBus = (overrides: Partial<ConstructorParameters<typeof AmqpMessageBus>[0]> = {}) =>
  new AmqpMessageBus({
    url: AMQP_URL,
    deliveryLimit: CONTRACT_DELIVERY_LIMIT,
    extraQueues: contractTestQueues,
    logger: silentLogger,
    connectionName: `trellis-contract-${process.pid}`,
    shutdownGraceMs: 5000,
    reconnect: { initialDelayMs: 50, maxDelayMs: 500 },
    ...overrides,
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

beforeAll(async () => {
  admin = await amqp.connect(AMQP_URL);
  await deleteQueues();
  const bus = makeBus();
  await bus.start();
  await bus.close();
});

afterAll(async () => {
  await deleteQueues();
  await admin.close();
});

describeMessageBusContract('AmqpMessageBus', async (options) => makeBus(options), { beforeEach: purgeQueues });

describe('AmqpMessageBus on RabbitMQ', () => {
  const buses: AmqpMessageBus[] = [];
  const started = async (bus = makeBus()) => {
    buses.push(bus);
    await bus.start();
    return bus;
  };
  const actionMessage = () => ({
    exchange: Exchanges.actions,
    routingKey: RoutingKeys.actionRequested,
    messageId: randomUUID(),
    correlationId: 'corr-amqp',
    type: 'action.requested',
    body: { n: 1 },
  });

  beforeEach(purgeQueues);
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((bus) => bus.close()));
  });

  it('stores messages persistent, as JSON, with ids and type', async () => {
    const bus = await started();
    const message = actionMessage();
    await bus.publish(message);
    const got = await onFreshChannel((channel) => channel.get(Queues.engineActions, { noAck: true }));
    expect(got).not.toBe(false);
    const { properties } = got as amqp.GetMessage;
    expect(properties).toMatchObject({
      deliveryMode: 2,
      contentType: 'application/json',
      messageId: message.messageId,
      correlationId: 'corr-amqp',
      type: 'action.requested',
    });
  });

  it('names AMQP_URL, without the password, when the broker cannot be reached', async () => {
    const bus = makeBus({ url: 'amqp://guest:s3cret@127.0.0.1:1' });
    const failure = bus.start();
    await expect(failure).rejects.toThrow(BrokerUnavailableError);
    await expect(failure).rejects.toThrow(/AMQP_URL=amqp:\/\/guest:\*\*\*@127\.0\.0\.1:1/);
    await expect(failure).rejects.not.toThrow(/s3cret/);
  });

  it("takes a cluster's nodes in AMQP_URL: a node that does not answer is passed over, and every node is named when none does", async () => {
    const bus = await started(makeBus({ url: `amqp://guest:s3cret@127.0.0.1:1,${AMQP_URL}` }));
    const message = actionMessage();
    await bus.publish(message);
    expect(await bus.depth(Queues.engineActions)).toBe(1);

    const failure = makeBus({ url: 'amqp://guest:s3cret@127.0.0.1:1, amqp://guest:s3cret@127.0.0.1:2' }).start();
    await expect(failure).rejects.toThrow(BrokerUnavailableError);
    await expect(failure).rejects.toThrow(/127\.0\.0\.1:1\/?: .*; amqp:\/\/guest:\*\*\*@127\.0\.0\.1:2/);
    await expect(failure).rejects.not.toThrow(/s3cret/);
  });

  it('refuses a redeclaration with other arguments, naming the queue, the argument and the fix', async () => {
    const failure = makeBus({ deliveryLimit: CONTRACT_DELIVERY_LIMIT + 1 }).start();
    await expect(failure).rejects.toThrow(TopologyMismatchError);
    await expect(failure).rejects.toMatchObject({ entity: Queues.engineActions, argument: 'x-delivery-limit' });
    await expect(failure).rejects.toThrow(/delete/i);
  });

  it('dead-letters through the broker when consumers keep dying, and reports why', async () => {
    const bus = await started();
    const message = actionMessage();
    await bus.publish(message);
    // Each consumer dies holding the message; the quorum queue counts those returns too.
    for (let i = 0; i <= CONTRACT_DELIVERY_LIMIT; i++) {
      let held = false;
      const handle = (await bus.consume(Queues.engineActions, async () => ((held = true), new Promise(() => undefined)), {
        prefetch: 1,
      })) as AbortableConsumerHandle;
      await waitFor(`delivery ${i + 1}`, () => held);
      await handle.abort();
    }
    await waitFor('the dead letter', async () => (await bus.depth(deadLetterQueueOf(Queues.engineActions))) === 1);
    const dead: DeadLetter[] = [];
    await bus.drainDeadLetters(Queues.engineActions, 10, async (d) => void dead.push(d));
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({
      originalQueue: Queues.engineActions,
      reason: 'delivery limit reached (dead-lettered by the broker)',
    });
    expect(dead[0].message.messageId).toBe(message.messageId);
  });

  it('reconnects after the connection drops, redelivers what was held and keeps consuming', async () => {
    const bus = await started();
    const deliveries: IncomingMessage[] = [];
    await bus.consume(
      Queues.engineActions,
      async (m) => {
        deliveries.push(m);
        // the first delivery is held until the connection is gone
        if (deliveries.length === 1) await sleep(300);
        return { kind: 'ack' };
      },
      { prefetch: 1 },
    );
    const first = actionMessage();
    await bus.publish(first);
    await waitFor('the first delivery', () => deliveries.length === 1);

    // Break the TCP connection under amqplib, as a network failure would (amqplib notices a
    // socket error at once; a silent close only after missed heartbeats).
    const socket = (bus as unknown as { connection: { connection: { stream: { destroy(e: Error): void } } } })
      .connection.connection.stream;
    socket.destroy(new Error('simulated network failure'));
    await expect(bus.publish(actionMessage())).rejects.toThrow(BrokerUnavailableError);

    await waitFor('the redelivery after reconnecting', () => deliveries.length >= 2);
    expect(deliveries[1]).toMatchObject({ messageId: first.messageId, redelivered: true });

    const second = actionMessage();
    await waitFor('publishing to work again', () => bus.publish(second).then(() => true, () => false));
    await waitFor('the new message', () => deliveries.some((m) => m.messageId === second.messageId));
    await waitFor('the acks', async () => (await bus.depth(Queues.engineActions)) === 0);
  });
});
