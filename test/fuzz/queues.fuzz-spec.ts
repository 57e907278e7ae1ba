import * as amqp from 'amqplib';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { ConsumerQueues, Queues, deadLetterQueueOf } from '@trellis/contracts';
import { deadLetterOrigin } from '@trellis/messaging/message-codec';
import { MAX_BODY_BYTES } from '../../apps/gateway/src/core/request-input';
import { ApiClient } from '../support/api-client';
import { act } from '../support/placement.scenario';
import { createProfileAndCluster } from '../support/scale-out.scenario';
import { startTestTrellis, type TestTrellis } from '../support/trellis';
import { fcParameters, fuzzSettings } from './fuzz-settings';
import { hostileMessage, type HostileMessage } from './queue-messages';
import { RestFixtures } from './rest-fixtures';
import { fuzzedOperations, type OpenApiDocument } from './rest-operations';
import { rpcCase, toRpcMessage, type RpcCase } from './rpc-cases';
import { StatusTally, excerpt, senlinErrorProblem } from './senlin-answer';

/**
 * Issue 12 part 2, queues: Trellis on RabbitMQ and PostgreSQL (its own database and vhost), and raw
 * amqplib publishing hostile messages straight into every consumer queue of libs/contracts. Each
 * one must be dead-lettered at once into `<queue>.dlq` with its reason (not retried until the
 * delivery limit), within 5 s; an RPC request must get a reply, never a 5xx, every 4xx with Senlin's
 * error object. Afterwards every consumer is still attached and a scale-out runs through all of
 * them, and no good message was dead-lettered.
 */

/** cases per queue in CI; FUZZ_RUNS overrides, `--long` runs 10,000 */
const CI_RUNS = 200;
const WITHIN_MS = 5_000;
const CASE_HEADER = 'x-fuzz-case';

interface Arrival {
  headers: Record<string, unknown>;
  content: Buffer;
}

/** Waits for messages tagged with a case id: dead letters from every `<queue>.dlq`, RPC replies. */
class Mailbox {
  private readonly arrived = new Map<string, Arrival>();
  private readonly waiting = new Map<string, (a: Arrival) => void>();
  /** dead letters without a case id: a message Trellis itself sent was dead-lettered */
  readonly untagged: Arrival[] = [];

  deliver(id: unknown, arrival: Arrival): void {
    if (typeof id !== 'string') return void this.untagged.push(arrival);
    const waiter = this.waiting.get(id);
    if (waiter) waiter(arrival);
    else this.arrived.set(id, arrival);
  }

  next(id: string, timeoutMs: number): Promise<Arrival | null> {
    const early = this.arrived.get(id);
    if (early) return Promise.resolve(early);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(null);
      }, timeoutMs);
      this.waiting.set(id, (a) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(a);
      });
    });
  }
}

describe('queue fuzz (RabbitMQ + PostgreSQL)', () => {
  let t: TestTrellis;
  let connection: amqp.ChannelModel;
  let channel: amqp.ConfirmChannel;
  let fixtures: RestFixtures;
  let doc: OpenApiDocument;
  const deadLetters = new Mailbox();
  const replies = new Mailbox();
  let cases = 0;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    t = await startTestTrellis({ stack: 'rabbitmq+postgres', env: { SIMULATOR_BUILD_DELAY_MS: '20', TRELLIS_RESUME_INTERVAL_SECONDS: '3600', TRELLIS_REQUESTS_PER_SECOND: '0', TRELLIS_RPC_REQUESTS_PER_SECOND: '0' } });
    connection = await amqp.connect(t.trellis.config.amqp.url!);
    channel = await connection.createConfirmChannel();
    channel.on('error', (e: Error) => (channelClosed = new Error(`the broker closed the publishing channel: ${e.message}`)));
    for (const queue of ConsumerQueues) {
      await channel.consume(deadLetterQueueOf(queue.name), (msg) => {
        if (!msg) return;
        const headers = msg.properties.headers ?? {};
        deadLetters.deliver(headers[CASE_HEADER], { headers, content: msg.content });
        channel.ack(msg);
      });
    }
    await channel.consume(
      'amq.rabbitmq.reply-to',
      (msg) => msg && replies.deliver(msg.properties.correlationId, { headers: msg.properties.headers ?? {}, content: msg.content }),
      { noAck: true },
    );
    doc = (await (await fetch(`${t.trellis.url}/docs-json`)).json()) as OpenApiDocument;
    fixtures = await RestFixtures.create(t.trellis);
  }, 180_000);
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await connection?.close().catch(() => undefined);
    await t?.close();
  });

  /**
   * Publishes and waits for the broker's confirm. A message the broker refuses closes the channel,
   * and amqplib then never settles waitForConfirms: the broker's reason fails the case instead.
   */
  let channelClosed: Error | null = null;
  const publish = async (queue: string, content: Buffer, properties: amqp.Options.Publish) => {
    if (channelClosed) throw channelClosed;
    channel.sendToQueue(queue, content, properties);
    let onClose = () => undefined as void;
    let timer: NodeJS.Timeout | undefined;
    const failed = new Promise<never>((_, reject) => {
      onClose = () => reject(channelClosed ?? new Error('the publishing channel closed'));
      channel.once('close', onClose);
      timer = setTimeout(() => reject(new Error(`the broker did not confirm within ${WITHIN_MS} ms`)), WITHIN_MS);
    });
    try {
      await Promise.race([channel.waitForConfirms(), failed]);
    } finally {
      channel.off('close', onClose);
      clearTimeout(timer);
    }
  };

  const consumersOf = async (queue: string) => (await channel.checkQueue(queue)).consumerCount;

  const consumerQueues = ConsumerQueues.filter((q) => q.name !== Queues.gatewayRpc).map((q) => q.name);

  it.each(consumerQueues)('%s dead-letters every hostile message at once with its reason, and keeps consuming', async (queue) => {
    const settings = fuzzSettings(`hostile messages on ${queue}`, CI_RUNS);
    await fc.assert(
      fc.asyncProperty(hostileMessage(queue), async (m: HostileMessage) => {
        const id = `case-${++cases}`;
        await publish(queue, m.content, { ...m.properties, headers: { ...m.properties.headers, [CASE_HEADER]: id } });
        const dead = await deadLetters.next(id, WITHIN_MS);
        const shown = `${m.label}: ${excerpt(m.content.toString('utf8'), 400)} with ${excerpt(JSON.stringify(m.properties), 300)}`;
        if (!dead) throw new Error(`not dead-lettered within ${WITHIN_MS} ms: ${shown}`);
        const origin = deadLetterOrigin(dead.headers, queue);
        if (origin.originalQueue !== queue) throw new Error(`dead-lettered as from ${origin.originalQueue}: ${shown}`);
        if (/^unknown|delivery limit/.test(origin.reason)) throw new Error(`dead-lettered without its own reason (${origin.reason}): ${shown}`);
      }),
      fcParameters(settings),
    );
    expect(await consumersOf(queue)).toBeGreaterThanOrEqual(1);
  }, 3_600_000);

  it(`${Queues.gatewayRpc} answers every fuzzed request within ${WITHIN_MS / 1000} s, never with a 5xx, every 4xx with Senlin's error object (413 over ${MAX_BODY_BYTES} bytes), and dead-letters one it cannot answer`, async () => {
    const settings = fuzzSettings(`hostile requests on ${Queues.gatewayRpc}`, CI_RUNS * 2);
    const answered = new StatusTally();
    const operations = fuzzedOperations(doc);
    await fc.assert(
      fc.asyncProperty(rpcCase(operations), fc.boolean(), fc.integer({ min: 0, max: 19 }), async (c: RpcCase, hostileId, replyDraw) => {
        const id = `case-${++cases}`;
        const { pattern, content } = toRpcMessage(c, fixtures);
        const shown = `${c.kind === 'rest' ? c.rest.label : c.label} as '${pattern}': ${excerpt(content.toString('utf8'), 400)}`;
        // one in twenty without a reply address: that one cannot be answered, so it is dead-lettered
        const replyTo = replyDraw !== 0;
        await publish(Queues.gatewayRpc, content, {
          ...(pattern === undefined ? {} : { type: pattern }),
          messageId: hostileId ? `fz ${id} ü` : randomUUID(),
          correlationId: id,
          ...(replyTo ? { replyTo: 'amq.rabbitmq.reply-to' } : {}),
          headers: { [CASE_HEADER]: id },
        });
        if (!replyTo) {
          const dead = await deadLetters.next(id, WITHIN_MS);
          if (!dead || /^unknown|delivery limit/.test(deadLetterOrigin(dead.headers, Queues.gatewayRpc).reason)) {
            throw new Error(`a request without a reply address was not dead-lettered with its reason: ${shown}`);
          }
          return;
        }
        const reply = await replies.next(id, WITHIN_MS);
        if (!reply) throw new Error(`no reply within ${WITHIN_MS} ms: ${shown}`);
        const answer = JSON.parse(reply.content.toString('utf8')) as { status: number; error?: unknown };
        answered.record(c.kind === 'rest' ? pattern! : c.kind, answer.status);
        const problem =
          answer.status >= 500
            ? `answered ${answer.status}`
            : answer.status >= 400
              ? senlinErrorProblem(answer.status, answer.error)
              : null;
        const limit =
          content.length > MAX_BODY_BYTES && answer.status !== 413
            ? `a request of ${content.length} bytes was answered ${answer.status}, not 413`
            : content.length <= MAX_BODY_BYTES && answer.status === 413
              ? `a request of ${content.length} bytes was answered 413`
              : null;
        if (problem ?? limit) throw new Error(`${problem ?? limit}\n  request: ${shown}\n  reply: ${excerpt(reply.content.toString('utf8'))}`);
        if (answer.status < 300 && c.kind === 'rest' && c.rest.method !== 'GET') await fixtures.ensure();
      }),
      fcParameters(settings),
    );
    answered.print();
    expect(await consumersOf(Queues.gatewayRpc)).toBeGreaterThanOrEqual(1);
  }, 3_600_000);

  it('still works afterwards: every consumer attached, a scale-out runs through the engine and the worker, nothing good was dead-lettered', async () => {
    for (const queue of ConsumerQueues) expect(await consumersOf(queue.name)).toBeGreaterThanOrEqual(1);
    const api = new ApiClient(t.trellis.url, fixtures.tokens.demo);
    await createProfileAndCluster(api, 'fz-after');
    expect((await act(api, 'fz-after', { scale_out: { count: 2 } })).status).toBe('SUCCEEDED');
    expect(deadLetters.untagged.map((d) => d.headers)).toEqual([]);
    expect(unhandled).toEqual([]);
  }, 120_000);
});
