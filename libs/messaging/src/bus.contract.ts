import { randomUUID } from 'node:crypto';
import {
  Exchanges,
  Headers,
  Queues,
  RoutingKeys,
  SCHEMA_VERSION,
  deadLetterQueueOf,
  type QueueSpec,
} from '@trellis/contracts';
import { DeadLetterDrainError, MessageBusError, MessageTooLargeError, RpcTimeoutError, UnroutableMessageError } from './bus-errors';
import type { ConsumerHandle, DeadLetter, IncomingMessage, MessageBus, OutgoingMessage } from './bus.port';
import type { AbortableConsumerHandle } from './consumer-handle';

/**
 * The behaviour both MessageBus adapters must share, written once. `makeBus` must build a bus with
 * `deliveryLimit: CONTRACT_DELIVERY_LIMIT` and `extraQueues: contractTestQueues`; the suite starts
 * and closes it; `options.maxMessageBytes`, when given, must reach the bus. `beforeEach` lets a broker-backed run empty the (fixed-name) queues between tests.
 */
export const CONTRACT_DELIVERY_LIMIT = 3;

const finishedQueue = 'trellis.contract-test.finished';
export const contractTestQueues: QueueSpec[] = [
  { name: finishedQueue, exchange: Exchanges.events, routingKey: 'action.finished.cluster-a.#', type: 'quorum' },
];

/** Every queue the contract suite touches, for purging between tests. */
export const contractTestQueueNames = (): string[] =>
  [...Object.values(Queues), finishedQueue].flatMap((q) => [q, deadLetterQueueOf(q)]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const ack = { kind: 'ack' } as const;

export function describeMessageBusContract(
  name: string,
  makeBus: (options?: { maxMessageBytes?: number }) => Promise<MessageBus>,
  hooks: { beforeEach?: () => Promise<void> } = {},
): void {
  describe(`MessageBus contract: ${name}`, () => {
    const buses: MessageBus[] = [];
    const gates: Array<() => void> = [];
    const queue = Queues.engineActions;
    const dlq = deadLetterQueueOf(queue);

    const newBus = async (options?: { maxMessageBytes?: number }) => {
      const bus = await makeBus(options);
      buses.push(bus);
      await bus.start();
      return bus;
    };
    /** A promise a handler can wait on; every gate opens before the bus closes. */
    const gate = () => {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      gates.push(open);
      return { promise, open };
    };
    const actionMessage = (overrides: Partial<OutgoingMessage> = {}): OutgoingMessage => ({
      exchange: Exchanges.actions,
      routingKey: RoutingKeys.actionRequested,
      messageId: randomUUID(),
      correlationId: 'corr-contract',
      type: 'action.requested',
      body: { action_id: randomUUID(), n: 1 },
      headers: { 'x-test': 'yes' },
      ...overrides,
    });
    const depthIs = (bus: MessageBus, q: string, n: number) => async () => (await bus.depth(q)) === n;
    const drainAll = async (bus: MessageBus, q: string) => {
      const dead: DeadLetter[] = [];
      await bus.drainDeadLetters(q, 100, async (d) => {
        dead.push(d);
      });
      return dead;
    };

    beforeEach(async () => {
      await hooks.beforeEach?.();
    });

    afterEach(async () => {
      gates.splice(0).forEach((open) => open());
      await Promise.all(buses.splice(0).map((bus) => bus.close()));
    });

    it('delivers a published message with its body, ids, type and headers', async () => {
      const bus = await newBus();
      const received: IncomingMessage[] = [];
      await bus.consume(queue, async (m) => (received.push(m), ack), { prefetch: 4 });
      const body = { action_id: 'a-1', nested: { list: [1, 'two', null] as unknown[] } };
      const message = actionMessage({ body, correlationId: 'corr-1' });

      await bus.publish(message);
      body.nested.list.push('mutated after publish');
      await waitFor('the delivery', () => received.length === 1);

      const [m] = received;
      expect(m).toMatchObject({
        queue,
        exchange: Exchanges.actions,
        routingKey: RoutingKeys.actionRequested,
        body: { action_id: 'a-1', nested: { list: [1, 'two', null] } },
        messageId: message.messageId,
        correlationId: 'corr-1',
        type: 'action.requested',
        redelivered: false,
        deliveryCount: 0,
      });
      expect(m.parseError).toBeUndefined();
      expect(m.headers['x-test']).toBe('yes');
      expect(m.headers[Headers.schemaVersion]).toBe(SCHEMA_VERSION);
      expect(JSON.parse(m.raw.toString('utf8'))).toEqual(m.body);
      await waitFor('the ack', depthIs(bus, queue, 0));
    });

    it('rejects an unroutable publish and an unknown exchange, and keeps publishing afterwards', async () => {
      const bus = await newBus();
      await expect(bus.publish(actionMessage({ routingKey: 'nobody.listens' }))).rejects.toThrow(UnroutableMessageError);
      await expect(bus.publish(actionMessage({ exchange: 'trellis.nope' }))).rejects.toThrow(/exchange 'trellis.nope'/);
      await bus.publish(actionMessage());
      expect(await bus.depth(queue)).toBe(1);
    });

    it('refuses a message larger than maxMessageBytes without sending it, and keeps publishing', async () => {
      const bus = await newBus({ maxMessageBytes: 4096 });
      const big = actionMessage({ body: { pad: 'x'.repeat(5000) } });
      const refused = await bus.publish(big).then(() => null, (e: unknown) => e);
      expect(refused).toBeInstanceOf(MessageTooLargeError);
      expect(refused).toMatchObject({ bytes: 5010, limit: 4096, messageId: big.messageId, refusedBy: 'bus', permanent: true });
      expect((refused as Error).message).toBe(
        `message ${big.messageId} is 5,010 bytes (4.9 KiB), larger than the 4,096 bytes (4 KiB) the message broker takes (TRELLIS_MAX_MESSAGE_BYTES)`,
      );
      // exactly the limit is taken; so is what comes after the refusal
      await bus.publish(actionMessage({ body: { pad: 'x'.repeat(4096 - 10) } }));
      await bus.publish(actionMessage());
      expect(await bus.depth(queue)).toBe(2);
      await expect(bus.request({ pad: 'x'.repeat(5000) }, { exchange: Exchanges.rpc, routingKey: RoutingKeys.rpcRequest, pattern: 'ping', timeoutMs: 5000 })).rejects.toThrow(
        MessageTooLargeError,
      );
      await expect(makeBus({ maxMessageBytes: 100 })).rejects.toThrow(MessageBusError);
    });

    it('accepts a notification on trellis.events that nobody listens to', async () => {
      const bus = await newBus();
      await expect(
        bus.publish(actionMessage({ exchange: Exchanges.events, routingKey: 'action.finished.none.x' })),
      ).resolves.toBeUndefined();
      await bus.publish(actionMessage());
      expect(await bus.depth(queue)).toBe(1);
    });

    it('rejects a malformed message naming the field', async () => {
      const bus = await newBus();
      await expect(bus.publish(actionMessage({ messageId: '' }))).rejects.toThrow(/messageId/);
      await expect(bus.publish(actionMessage({ body: { n: BigInt(1) } }))).rejects.toThrow(/body/);
      await expect(bus.publish(actionMessage({ headers: { bad: {} as never } }))).rejects.toThrow(/headers\.bad/);
      await expect(bus.consume(queue, async () => ack, { prefetch: 0 })).rejects.toThrow(/prefetch/);
      expect(await bus.depth(queue)).toBe(0);
    });

    it('rejects unknown queues in consume and depth', async () => {
      const bus = await newBus();
      await expect(bus.depth('trellis.nope')).rejects.toThrow(/unknown queue 'trellis.nope'/);
      await expect(bus.consume('trellis.nope', async () => ack, { prefetch: 1 })).rejects.toThrow(/unknown queue 'trellis.nope'/);
      await bus.publish(actionMessage());
      expect(await bus.depth(queue)).toBe(1);
    });

    it('hands a consumer no more unacked messages than its prefetch', async () => {
      const bus = await newBus();
      const release = gate();
      let holding = 0;
      let maxHolding = 0;
      let done = 0;
      await bus.consume(
        queue,
        async () => {
          holding++;
          maxHolding = Math.max(maxHolding, holding);
          await release.promise;
          holding--;
          done++;
          return ack;
        },
        { prefetch: 2 },
      );
      for (let i = 0; i < 5; i++) await bus.publish(actionMessage());

      await waitFor('two messages in the handler', () => holding === 2);
      await waitFor('three messages waiting', depthIs(bus, queue, 3));
      // A broken bound would show a third delivery during this pause.
      await sleep(150);
      expect(holding).toBe(2);
      expect(await bus.depth(queue)).toBe(3);

      release.open();
      await waitFor('all five handled', () => done === 5);
      expect(maxHolding).toBe(2);
    });

    it('redelivers a retried message flagged as redelivered with the delivery count raised', async () => {
      const bus = await newBus();
      const deliveries: IncomingMessage[] = [];
      await bus.consume(
        queue,
        async (m) => {
          deliveries.push(m);
          return deliveries.length === 1 ? { kind: 'retry', reason: 'not yet' } : ack;
        },
        { prefetch: 1 },
      );
      const message = actionMessage();
      await bus.publish(message);

      await waitFor('the redelivery', () => deliveries.length === 2);
      expect(deliveries[0]).toMatchObject({ redelivered: false, deliveryCount: 0, messageId: message.messageId });
      expect(deliveries[1]).toMatchObject({ redelivered: true, deliveryCount: 1, messageId: message.messageId });
      expect(deliveries[1].body).toEqual(message.body);
      await waitFor('the ack', depthIs(bus, queue, 0));
      expect(await bus.depth(dlq)).toBe(0);
    });

    it('treats a handler that throws or returns a bogus outcome as a retry', async () => {
      const bus = await newBus();
      const deliveries: IncomingMessage[] = [];
      await bus.consume(
        queue,
        async (m) => {
          deliveries.push(m);
          if (deliveries.length === 1) throw new Error('flaky');
          if (deliveries.length === 2) return { kind: 'retyr' } as never;
          return ack;
        },
        { prefetch: 1 },
      );
      await bus.publish(actionMessage());
      await waitFor('the third delivery', () => deliveries.length === 3);
      expect(deliveries.map((d) => d.deliveryCount)).toEqual([0, 1, 2]);
      await waitFor('the ack', depthIs(bus, queue, 0));
      expect(await bus.depth(dlq)).toBe(0);
    });

    it('dead-letters a message after the delivery limit with the last reason', async () => {
      const bus = await newBus();
      const deliveries: IncomingMessage[] = [];
      await bus.consume(
        queue,
        async (m) => {
          deliveries.push(m);
          throw new Error('database unavailable');
        },
        { prefetch: 1 },
      );
      const message = actionMessage();
      await bus.publish(message);

      await waitFor('the dead letter', depthIs(bus, dlq, 1));
      expect(deliveries.map((d) => d.deliveryCount)).toEqual([0, 1, 2]);
      expect(await bus.depth(queue)).toBe(0);
      const [dead] = await drainAll(bus, queue);
      expect(dead).toMatchObject({ queue: dlq, originalQueue: queue });
      expect(dead.reason).toBe('delivery limit reached: database unavailable');
      expect(dead.message).toMatchObject({ messageId: message.messageId, body: message.body, type: 'action.requested' });
    });

    it('dead-letters at once on a dead-letter outcome, keeping the message and its reason', async () => {
      const bus = await newBus();
      let deliveries = 0;
      await bus.consume(
        queue,
        async () => (deliveries++, { kind: 'dead-letter', reason: 'invalid ActionRequestedMessage: cluster_id must be a UUID' }),
        { prefetch: 1 },
      );
      const message = actionMessage({ correlationId: 'corr-dl' });
      await bus.publish(message);

      await waitFor('the dead letter', depthIs(bus, dlq, 1));
      expect(deliveries).toBe(1);
      const [dead] = await drainAll(bus, queue);
      expect(dead).toMatchObject({
        queue: dlq,
        originalQueue: queue,
        reason: 'invalid ActionRequestedMessage: cluster_id must be a UUID',
      });
      expect(dead.message).toMatchObject({
        messageId: message.messageId,
        correlationId: 'corr-dl',
        type: 'action.requested',
        body: message.body,
      });
      expect(dead.message.headers).toMatchObject({
        'x-test': 'yes',
        [Headers.deadLetterReason]: dead.reason,
        [Headers.originalQueue]: queue,
      });
      expect(await bus.depth(dlq)).toBe(0);
    });

    it('drains dead letters into a sink and removes each only once the sink succeeded', async () => {
      const bus = await newBus();
      await bus.consume(queue, async () => ({ kind: 'dead-letter', reason: 'bad' }), { prefetch: 3 });
      const ids = [actionMessage(), actionMessage(), actionMessage()];
      for (const m of ids) await bus.publish(m);
      await waitFor('three dead letters', depthIs(bus, dlq, 3));

      let calls = 0;
      const failing = bus.drainDeadLetters(queue, 10, async () => {
        if (++calls === 2) throw new Error('replay target down');
      });
      await expect(failing).rejects.toThrow(DeadLetterDrainError);
      await expect(failing).rejects.toMatchObject({ drained: 1, message: expect.stringMatching(/replay target down/) });
      await waitFor('two left in the dead-letter queue', depthIs(bus, dlq, 2));

      const seen: string[] = [];
      const sink = async (d: DeadLetter) => {
        seen.push(d.message.messageId!);
      };
      expect(await bus.drainDeadLetters(queue, 1, sink)).toBe(1);
      expect(await bus.drainDeadLetters(dlq, 10, sink)).toBe(1);
      expect(await bus.drainDeadLetters(queue, 10, sink)).toBe(0);
      expect(await bus.depth(dlq)).toBe(0);
      expect(calls).toBe(2);
      expect(seen).toHaveLength(2);
    });

    it('drains only the dead letters that were there when it began, though the sink dead-letters them again', async () => {
      const bus = await newBus();
      await bus.consume(queue, async () => ({ kind: 'dead-letter', reason: 'poison' }), { prefetch: 3 });
      const poison = [actionMessage(), actionMessage()];
      for (const m of poison) await bus.publish(m);
      await waitFor('two dead letters', depthIs(bus, dlq, 2));

      // as `trellis replay` does while the engine runs: each message goes back to its queue, whose
      // consumer refuses it again before the drain takes the next one
      const replayed: string[] = [];
      const drained = await bus.drainDeadLetters(queue, 100, async (d) => {
        replayed.push(d.message.messageId!);
        const before = await bus.depth(dlq);
        await bus.publish(actionMessage({ messageId: d.message.messageId, body: d.message.body }));
        await waitFor('the replayed message dead-lettered again', depthIs(bus, dlq, before + 1));
      });

      expect(drained).toBe(2);
      expect(replayed.sort()).toEqual(poison.map((m) => m.messageId).sort());
      expect(await bus.depth(dlq)).toBe(2);
    });

    it('leaves a dead letter the sink keeps in the dead-letter queue, and hands it out again next time', async () => {
      const bus = await newBus();
      await bus.consume(queue, async () => ({ kind: 'dead-letter', reason: 'bad' }), { prefetch: 3 });
      const messages = [actionMessage(), actionMessage(), actionMessage()];
      for (const m of messages) await bus.publish(m);
      await waitFor('three dead letters', depthIs(bus, dlq, 3));

      const kept = messages[1].messageId;
      const seen: string[] = [];
      const drained = await bus.drainDeadLetters(queue, 100, async (d) => {
        seen.push(d.message.messageId!);
        return d.message.messageId === kept ? 'keep' : undefined;
      });

      expect(drained).toBe(2);
      expect(seen.sort()).toEqual(messages.map((m) => m.messageId).sort());
      await waitFor('the kept message back in the dead-letter queue', depthIs(bus, dlq, 1));
      const again = await drainAll(bus, dlq);
      expect(again.map((d) => d.message.messageId)).toEqual([kept]);
    });

    it("redelivers a dead consumer's unacked messages to another consumer", async () => {
      const bus = await newBus();
      const stuck = gate();
      const first: IncomingMessage[] = [];
      const dying = await bus.consume(queue, async (m) => (first.push(m), await stuck.promise, ack), { prefetch: 2 });
      const messages = [actionMessage(), actionMessage()];
      for (const m of messages) await bus.publish(m);
      await waitFor('the first consumer holding both', () => first.length === 2);

      const second: IncomingMessage[] = [];
      await bus.consume(queue, async (m) => (second.push(m), ack), { prefetch: 2 });
      expect(typeof (dying as AbortableConsumerHandle).abort).toBe('function');
      await (dying as AbortableConsumerHandle).abort();

      await waitFor('the redeliveries', () => second.length === 2);
      expect(second.map((m) => m.messageId).sort()).toEqual(messages.map((m) => m.messageId).sort());
      expect(second.every((m) => m.redelivered)).toBe(true);
      stuck.open();
      await waitFor('the acks', depthIs(bus, queue, 0));
      expect(first).toHaveLength(2);
    });

    it('cancel lets running handlers finish and apply their outcome, then stops deliveries', async () => {
      const bus = await newBus();
      const slow = gate();
      let started = 0;
      let finished = 0;
      const handle: ConsumerHandle = await bus.consume(
        queue,
        async () => (started++, await slow.promise, finished++, ack),
        { prefetch: 1 },
      );
      await bus.publish(actionMessage());
      await waitFor('the handler to start', () => started === 1);

      setTimeout(slow.open, 50);
      await handle.cancel();
      expect(finished).toBe(1);

      await bus.publish(actionMessage());
      await sleep(100);
      expect(started).toBe(1);
      expect(await bus.depth(queue)).toBe(1);
    });

    it('close waits for running handlers', async () => {
      const bus = await newBus();
      const slow = gate();
      let finished = 0;
      await bus.consume(queue, async () => (await slow.promise, finished++, ack), { prefetch: 1 });
      await bus.publish(actionMessage());
      await waitFor('the delivery', depthIs(bus, queue, 0));
      await sleep(20);

      setTimeout(slow.open, 50);
      await bus.close();
      expect(finished).toBe(1);
      await expect(bus.publish(actionMessage())).rejects.toThrow(/closed/);
    });

    describe('RPC', () => {
      const rpc = (timeoutMs = 5000, extra: { correlationId?: string; routingKey?: string } = {}) => ({
        exchange: Exchanges.rpc,
        routingKey: extra.routingKey ?? RoutingKeys.rpcRequest,
        pattern: 'ping',
        timeoutMs,
        correlationId: extra.correlationId,
      });

      it('answers a request with the reply of the serving handler', async () => {
        const bus = await newBus();
        await bus.serve(
          Queues.gatewayRpc,
          async (m) => ({ pong: m.body, type: m.type, correlationId: m.correlationId }),
          { prefetch: 4 },
        );
        expect(await bus.request({ n: 0 }, rpc(5000, { correlationId: 'corr-rpc' }))).toEqual({
          pong: { n: 0 },
          type: 'ping',
          correlationId: 'corr-rpc',
        });
        // A correlation id follows a user request, so concurrent calls may share one.
        const replies = await Promise.all([1, 2, 3].map((n) => bus.request({ n }, rpc(5000, { correlationId: 'shared' }))));
        expect(replies.map((r) => (r as { pong: { n: number } }).pong.n)).toEqual([1, 2, 3]);
        await waitFor('the acks', depthIs(bus, Queues.gatewayRpc, 0));
      });

      it('replies with a 500 error when the handler throws', async () => {
        const bus = await newBus();
        await bus.serve(
          Queues.gatewayRpc,
          async () => {
            throw new Error('boom');
          },
          { prefetch: 1 },
        );
        expect(await bus.request({}, rpc())).toEqual({ error: { code: 500, message: 'boom' } });
      });

      it('answers a reply larger than maxMessageBytes with a 413 error naming the sizes, not silence', async () => {
        const bus = await newBus({ maxMessageBytes: 4096 });
        await bus.serve(Queues.gatewayRpc, async (m) => ({ pad: 'y'.repeat((m.body as { n: number }).n) }), { prefetch: 1 });
        expect(await bus.request({ n: 100 }, rpc())).toEqual({ pad: 'y'.repeat(100) });
        expect(await bus.request({ n: 5000 }, rpc())).toEqual({
          error: {
            code: 413,
            type: 'RequestLimitExceeded',
            message: 'The reply is 5,010 bytes (4.9 KiB), larger than the 4,096 bytes (4 KiB) the message broker takes; ask for less (limit and marker).',
          },
        });
      });

      it('rejects after the timeout when nobody answers, and at once when unroutable', async () => {
        const bus = await newBus();
        await expect(bus.request({}, rpc(200))).rejects.toThrow(RpcTimeoutError);
        await expect(bus.request({}, rpc(5000, { routingKey: 'nobody.listens' }))).rejects.toThrow(UnroutableMessageError);
        await expect(bus.request({}, { ...rpc(5000), exchange: 'trellis.nope' })).rejects.toThrow(/exchange 'trellis.nope'/);
        await expect(bus.request({}, rpc(0))).rejects.toThrow(/timeoutMs/);
      });
    });

    it('routes topic-exchange messages to queues bound with wildcards', async () => {
      const bus = await newBus();
      const received: IncomingMessage[] = [];
      await bus.consume(finishedQueue, async (m) => (received.push(m), ack), { prefetch: 4 });
      const event = (routingKey: string) => ({
        exchange: Exchanges.events,
        routingKey,
        messageId: randomUUID(),
        type: 'action.finished',
        body: { routingKey },
      });

      await bus.publish(event(RoutingKeys.actionFinished('cluster-a', 'act-1')));
      await bus.publish(event('action.finished.cluster-a'));
      // no queue bound for cluster-b: a notification is dropped, not an error
      await bus.publish(event(RoutingKeys.actionFinished('cluster-b', 'act-2')));

      await waitFor('two events', () => received.length === 2);
      expect(received.map((m) => m.routingKey).sort()).toEqual(['action.finished.cluster-a', 'action.finished.cluster-a.act-1']);
      expect(received.every((m) => m.queue === finishedQueue)).toBe(true);
    });
  });
}
