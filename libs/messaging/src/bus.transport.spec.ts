import { randomUUID } from 'node:crypto';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { badRequest, notFound, silentLogger, unavailable } from '@trellis/common';
import { Exchanges, Queues, RoutingKeys, deadLetterQueueOf, parseContract } from '@trellis/contracts';
import type { DeadLetter, HandlerOutcome, IncomingMessage } from './bus.port';
import { BusContext, BusExceptionFilter, BusTransport } from './bus.transport';
import { InMemoryMessageBus } from './in-memory-message-bus';

class Ping {
  @IsString()
  name: string;
}

type Body = { fail?: 'transient' | 'permanent' | 'contract' | 'bug'; outcome?: HandlerOutcome };

const seen: { pattern: string; body: unknown; message: IncomingMessage }[] = [];

@Controller()
class Handlers {
  @EventPattern('action.requested')
  async onAction(@Payload() body: Body, @Ctx() ctx: BusContext): Promise<HandlerOutcome | void> {
    seen.push({ pattern: 'action.requested', body, message: ctx.getMessage() });
    if (body.fail === 'transient') throw unavailable('database unavailable');
    if (body.fail === 'permanent') throw badRequest('cluster has no profile');
    if (body.fail === 'contract') parseContract(Ping, {});
    if (body.fail === 'bug') throw new TypeError('x is undefined');
    return body.outcome;
  }

  @EventPattern(RoutingKeys.workResult)
  async onResult(@Payload() body: unknown, @Ctx() ctx: BusContext): Promise<void> {
    seen.push({ pattern: RoutingKeys.workResult, body, message: ctx.getMessage() });
  }

  @MessagePattern('cluster.get')
  async getCluster(@Payload() body: { id: string }, @Ctx() ctx: BusContext) {
    return { id: body.id, correlation: ctx.getMessage().correlationId };
  }

  @MessagePattern('cluster.missing')
  async missing() {
    throw notFound('cluster', 'c-9');
  }
}

@Controller()
class DuplicateHandlers {
  @EventPattern('action.requested')
  async one(): Promise<void> {}

  @EventPattern('action.requested')
  async two(): Promise<void> {}
}

const queues = { [Queues.engineActions]: 4, [Queues.engineResults]: 4, [Queues.gatewayRpc]: 4 };
const dlq = deadLetterQueueOf(Queues.engineActions);

async function boot(options: { filter?: boolean; controllers?: unknown[] } = {}) {
  const bus = new InMemoryMessageBus({ deliveryLimit: 3, logger: silentLogger });
  await bus.start();
  const moduleRef = await Test.createTestingModule({ controllers: (options.controllers ?? [Handlers]) as never[] }).compile();
  const app = moduleRef.createNestMicroservice({ strategy: new BusTransport(bus, queues), logger: false });
  if (options.filter !== false) app.useGlobalFilters(new BusExceptionFilter());
  return { bus, app };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe('BusTransport', () => {
  let bus: InMemoryMessageBus;
  let app: INestMicroservice;

  const publishAction = (body: Body, type = 'action.requested') =>
    bus.publish({
      exchange: Exchanges.actions,
      routingKey: RoutingKeys.actionRequested,
      messageId: randomUUID(),
      correlationId: 'corr-t',
      type,
      body,
    });
  const deadLetters = async () => {
    const dead: DeadLetter[] = [];
    await bus.drainDeadLetters(Queues.engineActions, 10, async (d) => void dead.push(d));
    return dead;
  };
  const rpc = (pattern: string, body: unknown) =>
    bus.request(body, { exchange: Exchanges.rpc, routingKey: RoutingKeys.rpcRequest, pattern, timeoutMs: 2000, correlationId: 'corr-rpc' });

  beforeEach(async () => {
    seen.length = 0;
    ({ bus, app } = await boot());
    await app.listen();
  });

  afterEach(async () => {
    await app.close();
    await bus.close();
  });

  it('hands an event to its @EventPattern handler with the message in the context, and acks', async () => {
    await publishAction({});
    await waitFor('the handler', () => seen.length === 1);
    expect(seen[0].body).toEqual({});
    expect(seen[0].message).toMatchObject({ queue: Queues.engineActions, correlationId: 'corr-t', deliveryCount: 0 });
    await waitFor('the ack', async () => (await bus.depth(Queues.engineActions)) === 0);
    expect(await bus.depth(dlq)).toBe(0);
  });

  it('lets the returned outcome drive the ack', async () => {
    await publishAction({ outcome: { kind: 'dead-letter', reason: 'stale action' } });
    await waitFor('the dead letter', async () => (await bus.depth(dlq)) === 1);
    expect((await deadLetters())[0].reason).toBe('stale action');
  });

  it('dead-letters permanent and contract errors at once, with the reason', async () => {
    await publishAction({ fail: 'permanent' });
    await publishAction({ fail: 'contract' });
    await waitFor('two dead letters', async () => (await bus.depth(dlq)) === 2);
    expect(seen).toHaveLength(2);
    expect((await deadLetters()).map((d) => d.reason).sort()).toEqual([
      'cluster has no profile',
      'invalid Ping: name: name must be a string',
    ]);
  });

  it('retries transient errors and unexpected ones until the delivery limit', async () => {
    await publishAction({ fail: 'transient' });
    await publishAction({ fail: 'bug' });
    await waitFor('two dead letters', async () => (await bus.depth(dlq)) === 2);
    expect(seen).toHaveLength(6);
    expect((await deadLetters()).map((d) => d.reason).sort()).toEqual([
      'delivery limit reached: database unavailable',
      'delivery limit reached: x is undefined',
    ]);
  });

  it('dead-letters a message type nobody handles', async () => {
    await publishAction({}, 'action.exploded');
    await publishAction({}, 'cluster.get');
    await waitFor('the dead letters', async () => (await bus.depth(dlq)) === 2);
    expect(seen).toHaveLength(0);
    expect((await deadLetters()).map((d) => d.reason).sort()).toEqual([
      "'cluster.get' is an RPC (@MessagePattern) type, not an event of queue 'trellis.policy-engine.actions'",
      "no handler for message type 'action.exploded'",
    ]);
  });

  it('routes a message without a type by its routing key', async () => {
    await bus.publish({
      exchange: Exchanges.results,
      routingKey: RoutingKeys.workResult,
      messageId: randomUUID(),
      body: { ok: true },
    });
    await waitFor('the handler', () => seen.length === 1);
    expect(seen[0]).toMatchObject({ pattern: RoutingKeys.workResult, body: { ok: true } });
  });

  it('answers @MessagePattern requests, and unknown or failing ones with an error reply', async () => {
    expect(await rpc('cluster.get', { id: 'c-1' })).toEqual({ id: 'c-1', correlation: 'corr-rpc' });
    expect(await rpc('cluster.nope', {})).toEqual({ error: { code: 404, message: "no handler for message type 'cluster.nope'" } });
    expect(await rpc('cluster.missing', {})).toEqual({
      error: { code: 500, message: "The cluster 'c-9' could not be found." },
    });
  });

  it('stops consuming on close and leaves the bus open', async () => {
    await app.close();
    await publishAction({});
    await sleep(20);
    expect(seen).toHaveLength(0);
    expect(await bus.depth(Queues.engineActions)).toBe(1);
  });

  it("without BusExceptionFilter Nest hides the error, so even a permanent one is retried", async () => {
    await app.close();
    await bus.close();
    ({ bus, app } = await boot({ filter: false }));
    await app.listen();
    await publishAction({ fail: 'permanent' });
    await waitFor('the dead letter', async () => (await bus.depth(dlq)) === 1);
    expect(seen).toHaveLength(3);
    expect((await deadLetters())[0].reason).toBe('delivery limit reached: Internal server error');
  });

  it('refuses to start with two @EventPattern handlers for one type', async () => {
    await app.close();
    await bus.close();
    ({ bus, app } = await boot({ controllers: [DuplicateHandlers] }));
    await expect(app.listen()).rejects.toThrow(/two @EventPattern handlers for 'action.requested'/);
  });
});
