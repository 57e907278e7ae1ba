import { randomUUID } from 'node:crypto';
import { createLogger, type Logger } from '@trellis/common';
import { messagesDeadLettered } from '@trellis/observability/metrics';
import { Exchanges, Headers, NotificationExchanges, deadLetterQueueOf, type QueueSpec } from '@trellis/contracts';
import {
  MessageBusError,
  UnroutableMessageError,
  errorMessage,
  MessageTooLargeError,
  checkedMaxMessageBytes,
} from './bus-errors';
import { ExchangeTypes, type ExchangeType, deadLetterQueueFor, resolveQueues, topicMatches } from './bus-topology';
import type {
  ConsumeOptions,
  DeadLetterSink,
  IncomingMessage,
  MessageBus,
  MessageHandler,
  OutgoingMessage,
  RpcHandler,
  RpcRequestOptions,
} from './bus.port';
import { type AbortableConsumerHandle, settledWithin } from './consumer-handle';
import {
  type PendingReply,
  type Settlement,
  answerDelivery,
  awaitReply,
  checkConsumeOptions,
  checkMax,
  checkOutgoing,
  checkRpcOptions,
  deadLetterHeaders,
  decodeBody,
  describeMessage,
  messageFields,
  encodeBody,
  handleDelivery,
  offerDeadLetter,
  outgoingHeaders,
} from './message-codec';

export interface InMemoryMessageBusOptions {
  /** deliveries of one message before a `retry` dead-letters it (TRELLIS_DELIVERY_LIMIT) */
  deliveryLimit: number;
  logger?: Logger;
  /** queues to declare besides the shared topology (e.g. a subscriber on `trellis.events`) */
  extraQueues?: QueueSpec[];
  /** how long `cancel()` and `close()` wait for running handlers (default 30 s) */
  shutdownGraceMs?: number;
  /** the largest encoded body taken, as the AMQP adapter's (TRELLIS_MAX_MESSAGE_BYTES, default 16 MiB) */
  maxMessageBytes?: number;
}

/** What the "broker" stores: the encoded body and the AMQP properties, never the caller's objects. */
interface StoredMessage {
  content: Buffer;
  exchange: string;
  routingKey: string;
  messageId?: string;
  correlationId?: string;
  type?: string;
  replyTo?: string;
  headers: Record<string, unknown>;
  deliveryCount: number;
  redelivered: boolean;
}

type Deliver = (message: IncomingMessage, stored: StoredMessage) => Promise<Settlement>;

class MemoryQueue {
  readonly ready: StoredMessage[] = [];
  readonly consumers: MemoryConsumer[] = [];
  nextConsumer = 0;
  dispatchScheduled = false;
  constructor(
    readonly name: string,
    readonly type: 'quorum' | 'classic',
  ) {}
}

class MemoryConsumer {
  active = true;
  readonly unacked = new Set<StoredMessage>();
  readonly inflight = new Set<Promise<void>>();
  constructor(
    readonly queue: MemoryQueue,
    readonly prefetch: number,
    readonly deliver: Deliver,
  ) {}
}

/**
 * The embedded default: RabbitMQ's semantics (as Trellis uses them) inside one process. Messages
 * are stored encoded and parsed again on every delivery, handlers run asynchronously (never inside
 * `publish()`), each consumer holds at most `prefetch` unacked messages, and retries, the delivery
 * limit and dead-lettering behave as with the quorum queues of the AMQP adapter. Nothing survives
 * the process: the outbox in the database is what makes the embedded mode durable.
 */
export class InMemoryMessageBus implements MessageBus {
  private readonly deliveryLimit: number;
  private readonly logger: Logger;
  private readonly shutdownGraceMs: number;
  private readonly queueSpecs: QueueSpec[];
  private readonly exchanges = new Map<string, { type: ExchangeType; bindings: { queue: MemoryQueue; key: string }[] }>();
  private readonly queues = new Map<string, MemoryQueue>();
  private readonly pendingRequests = new Map<string, PendingReply>();
  private state: 'new' | 'started' | 'closing' | 'closed' = 'new';
  private readonly maxMessageBytes: number;

  constructor(options: InMemoryMessageBusOptions) {
    if (!Number.isInteger(options?.deliveryLimit) || options.deliveryLimit < 1) {
      throw new MessageBusError(`deliveryLimit must be a positive integer (got ${options?.deliveryLimit})`);
    }
    this.deliveryLimit = options.deliveryLimit;
    this.logger = options.logger ?? createLogger('message-bus');
    this.shutdownGraceMs = options.shutdownGraceMs ?? 30_000;
    this.queueSpecs = resolveQueues(options.extraQueues);
    this.maxMessageBytes = checkedMaxMessageBytes(options.maxMessageBytes);
  }

  async start(): Promise<void> {
    if (this.state === 'closing' || this.state === 'closed') throw new MessageBusError('message bus is closed');
    if (this.state === 'started') return;
    for (const [name, type] of Object.entries(ExchangeTypes)) this.exchanges.set(name, { type, bindings: [] });
    for (const spec of this.queueSpecs) {
      const queue = this.declareQueue(spec.name, spec.type);
      this.exchanges.get(spec.exchange)!.bindings.push({ queue, key: spec.routingKey });
      const dlq = this.declareQueue(deadLetterQueueOf(spec.name), 'quorum');
      this.exchanges.get(Exchanges.deadLetter)!.bindings.push({ queue: dlq, key: spec.name });
    }
    this.state = 'started';
  }

  async publish(message: OutgoingMessage): Promise<void> {
    this.ensureUsable();
    checkOutgoing(message);
    const content = encodeBody(message.body, 'message.body');
    if (content.length > this.maxMessageBytes) throw new MessageTooLargeError(content.length, this.maxMessageBytes, message.messageId, 'bus');
    const targets = this.route(message.exchange, message.routingKey);
    if (targets.length === 0) {
      // a notification nobody listens to is dropped, as RabbitMQ drops a non-mandatory message
      if (NotificationExchanges.includes(message.exchange)) return;
      throw new UnroutableMessageError(message.exchange, message.routingKey, message.messageId);
    }
    this.enqueue(targets, {
      content,
      exchange: message.exchange,
      routingKey: message.routingKey,
      messageId: message.messageId,
      correlationId: message.correlationId,
      type: message.type,
      headers: outgoingHeaders(message.headers),
      deliveryCount: 0,
      redelivered: false,
    });
  }

  async consume(queue: string, handler: MessageHandler, options: ConsumeOptions): Promise<AbortableConsumerHandle> {
    this.ensureAcceptingConsumers();
    checkConsumeOptions(options);
    if (typeof handler !== 'function') throw new MessageBusError('handler must be a function');
    const target = this.queueNamed(queue);
    return this.addConsumer(target, options.prefetch, (message) => handleDelivery(handler, message, target.type, this.deliveryLimit));
  }

  async serve(queue: string, handler: RpcHandler, options: ConsumeOptions): Promise<AbortableConsumerHandle> {
    this.ensureAcceptingConsumers();
    checkConsumeOptions(options);
    if (typeof handler !== 'function') throw new MessageBusError('handler must be a function');
    const target = this.queueNamed(queue);
    return this.addConsumer(target, options.prefetch, (message, stored) =>
      answerDelivery(
        handler,
        message,
        stored.replyTo,
        (reply) => this.sendReply(stored.replyTo!, reply),
        (error) => this.logger.error(`RPC handler failed on ${describeMessage(message)}: ${errorMessage(error)}`, messageFields(message)),
        this.maxMessageBytes,
      ),
    );
  }

  async request(body: unknown, options: RpcRequestOptions): Promise<unknown> {
    this.ensureUsable();
    checkRpcOptions(options);
    const content = encodeBody(body, 'body');
    const targets = this.route(options.exchange, options.routingKey);
    const messageId = options.messageId ?? randomUUID();
    if (content.length > this.maxMessageBytes) throw new MessageTooLargeError(content.length, this.maxMessageBytes, messageId, 'bus');
    if (targets.length === 0) throw new UnroutableMessageError(options.exchange, options.routingKey, messageId);
    const replyTo = `amq.rabbitmq.reply-to.${messageId}`;
    return new Promise((resolve, reject) => {
      this.pendingRequests.set(replyTo, awaitReply(options, () => this.pendingRequests.delete(replyTo), resolve, reject));
      this.enqueue(targets, {
        content,
        exchange: options.exchange,
        routingKey: options.routingKey,
        messageId,
        correlationId: options.correlationId ?? messageId,
        type: options.pattern,
        replyTo,
        headers: outgoingHeaders(options.headers),
        deliveryCount: 0,
        redelivered: false,
      });
    });
  }

  async drainDeadLetters(queue: string, max: number, sink: DeadLetterSink): Promise<number> {
    this.ensureUsable();
    checkMax(max);
    if (typeof sink !== 'function') throw new MessageBusError('sink must be a function');
    const { deadLetterQueue, originalQueue } = deadLetterQueueFor(queue);
    const dlq = this.queueNamed(deadLetterQueue);
    // only what is there now: a message dead-lettered again meanwhile is appended behind these
    const snapshot = Math.min(max, dlq.ready.length);
    const kept: StoredMessage[] = [];
    let drained = 0;
    try {
      for (let taken = 0; taken < snapshot; taken++) {
        const stored = dlq.ready.shift();
        if (!stored) break;
        const message = this.toIncoming(dlq, stored);
        const verdict = await offerDeadLetter(sink, dlq.name, originalQueue, message, drained, () => this.returnToQueue(dlq, stored));
        if (verdict === 'keep') kept.push(stored);
        else drained++;
      }
      return drained;
    } finally {
      dlq.ready.unshift(...kept);
    }
  }

  async depth(queue: string): Promise<number> {
    this.ensureUsable();
    return this.queueNamed(queue).ready.length;
  }

  async close(): Promise<void> {
    if (this.state === 'closing' || this.state === 'closed') return;
    this.state = 'closing';
    const consumers = [...this.queues.values()].flatMap((q) => q.consumers);
    await Promise.all(consumers.map((c) => this.cancelConsumer(c)));
    for (const pending of [...this.pendingRequests.values()]) {
      pending.reject(new MessageBusError('message bus closed before the RPC reply arrived'));
    }
    this.state = 'closed';
  }

  private ensureUsable(): void {
    if (this.state === 'new') throw new MessageBusError('message bus is not started: call start() first');
    // Publishing stays possible while closing: in-flight handlers may still emit their follow-up messages.
    if (this.state === 'closed') throw new MessageBusError('message bus is closed');
  }

  private ensureAcceptingConsumers(): void {
    this.ensureUsable();
    if (this.state === 'closing') throw new MessageBusError('message bus is closing');
  }

  private declareQueue(name: string, type: 'quorum' | 'classic'): MemoryQueue {
    const queue = new MemoryQueue(name, type);
    this.queues.set(name, queue);
    return queue;
  }

  private queueNamed(name: string): MemoryQueue {
    const queue = this.queues.get(name);
    if (!queue) {
      throw new MessageBusError(`unknown queue '${name}'; declared queues: ${[...this.queues.keys()].join(', ')}`);
    }
    return queue;
  }

  private route(exchange: string, routingKey: string): MemoryQueue[] {
    const target = this.exchanges.get(exchange);
    if (!target) throw new MessageBusError(`unknown exchange '${exchange}'`);
    const matches = target.bindings.filter((b) =>
      target.type === 'topic' ? topicMatches(b.key, routingKey) : b.key === routingKey,
    );
    return [...new Set(matches.map((b) => b.queue))];
  }

  private enqueue(targets: MemoryQueue[], stored: StoredMessage): void {
    for (const queue of targets) {
      queue.ready.push({ ...stored, content: Buffer.from(stored.content), headers: { ...stored.headers } });
      this.scheduleDispatch(queue);
    }
  }

  private scheduleDispatch(queue: MemoryQueue): void {
    if (queue.dispatchScheduled) return;
    queue.dispatchScheduled = true;
    setImmediate(() => {
      queue.dispatchScheduled = false;
      this.dispatch(queue);
    });
  }

  private dispatch(queue: MemoryQueue): void {
    while (queue.ready.length > 0) {
      const consumer = this.nextFreeConsumer(queue);
      if (!consumer) return;
      const stored = queue.ready.shift()!;
      consumer.unacked.add(stored);
      const run = this.runDelivery(consumer, stored);
      consumer.inflight.add(run);
      void run.finally(() => consumer.inflight.delete(run));
    }
  }

  /** Round-robin over consumers with a free prefetch slot, like the broker. */
  private nextFreeConsumer(queue: MemoryQueue): MemoryConsumer | undefined {
    const n = queue.consumers.length;
    for (let i = 0; i < n; i++) {
      const index = (queue.nextConsumer + i) % n;
      const consumer = queue.consumers[index];
      if (consumer.active && consumer.unacked.size < consumer.prefetch) {
        queue.nextConsumer = (index + 1) % n;
        return consumer;
      }
    }
    return undefined;
  }

  private async runDelivery(consumer: MemoryConsumer, stored: StoredMessage): Promise<void> {
    const message = this.toIncoming(consumer.queue, stored);
    let settlement: Settlement;
    try {
      settlement = await consumer.deliver(message, stored);
    } catch (error) {
      settlement = { kind: 'requeue', reason: errorMessage(error), reasonClass: 'unexpected' };
    }
    // An aborted consumer already gave the message back to the queue; its verdict no longer counts.
    if (!consumer.unacked.delete(stored)) return;
    const queue = consumer.queue;
    if (settlement.kind === 'requeue') {
      this.logger.warn(
        `retrying ${describeMessage(message)} (delivery ${message.deliveryCount + 1} of ${this.deliveryLimit}): ${settlement.reason}`,
        { ...messageFields(message), reason: settlement.reason },
      );
      this.returnToQueue(queue, stored);
    } else if (settlement.kind === 'dead-letter') {
      this.deadLetter(queue, stored, settlement.reason);
    }
    this.scheduleDispatch(queue);
  }

  private returnToQueue(queue: MemoryQueue, stored: StoredMessage): void {
    if (queue.type === 'quorum') stored.deliveryCount++;
    stored.redelivered = true;
    queue.ready.unshift(stored);
    this.scheduleDispatch(queue);
  }

  private deadLetter(queue: MemoryQueue, stored: StoredMessage, reason: string): void {
    const described = { ...stored, queue: queue.name };
    this.logger.warn(`dead-lettering ${describeMessage(described)}: ${reason}`, { ...messageFields(described), reason });
    const targets = this.route(Exchanges.deadLetter, queue.name);
    if (targets.length === 0) {
      this.logger.error(`no dead-letter queue for '${queue.name}'; the message goes back to the queue`);
      this.returnToQueue(queue, stored);
      return;
    }
    this.enqueue(targets, {
      ...stored,
      exchange: Exchanges.deadLetter,
      routingKey: queue.name,
      headers: deadLetterHeaders(stored.headers, queue.name, reason),
      deliveryCount: 0,
      redelivered: false,
    });
  }

  private toIncoming(queue: MemoryQueue, stored: StoredMessage): IncomingMessage {
    const { body, parseError } = decodeBody(stored.content);
    const headers: Record<string, unknown> = { ...stored.headers };
    if (queue.type === 'quorum' && stored.deliveryCount > 0) headers[Headers.deliveryCount] = stored.deliveryCount;
    return {
      queue: queue.name,
      exchange: stored.exchange,
      routingKey: stored.routingKey,
      body,
      ...(parseError ? { parseError } : {}),
      raw: Buffer.from(stored.content),
      messageId: stored.messageId,
      correlationId: stored.correlationId,
      type: stored.type,
      headers,
      redelivered: stored.redelivered,
      deliveryCount: queue.type === 'quorum' ? stored.deliveryCount : 0,
    };
  }

  private sendReply(replyTo: string, content: Buffer): void {
    setImmediate(() => {
      const pending = this.pendingRequests.get(replyTo);
      if (!pending) {
        this.logger.debug(`RPC reply to ${replyTo} dropped: the caller is gone (timed out or closed)`);
        return;
      }
      const { body, parseError } = decodeBody(content);
      if (parseError) pending.reject(new MessageBusError(`RPC reply is not JSON: ${parseError}`));
      else pending.resolve(body);
    });
  }

  private addConsumer(queue: MemoryQueue, prefetch: number, deliver: Deliver): AbortableConsumerHandle {
    const consumer = new MemoryConsumer(queue, prefetch, deliver);
    queue.consumers.push(consumer);
    this.scheduleDispatch(queue);
    return {
      cancel: () => this.cancelConsumer(consumer),
      abort: async () => this.abortConsumer(consumer),
    };
  }

  private async cancelConsumer(consumer: MemoryConsumer): Promise<void> {
    if (!consumer.queue.consumers.includes(consumer)) return;
    consumer.active = false;
    const finished = await settledWithin(Promise.allSettled([...consumer.inflight]), this.shutdownGraceMs);
    if (!finished) {
      this.logger.warn(
        `${consumer.inflight.size} handler(s) on '${consumer.queue.name}' still running after ${this.shutdownGraceMs} ms; ` +
          'their messages go back to the queue',
      );
    }
    this.abortConsumer(consumer);
  }

  /** Like the broker when a consumer's channel closes: unacked messages are requeued and counted. */
  private abortConsumer(consumer: MemoryConsumer): void {
    const queue = consumer.queue;
    consumer.active = false;
    const index = queue.consumers.indexOf(consumer);
    if (index >= 0) queue.consumers.splice(index, 1);
    const held = [...consumer.unacked].reverse();
    consumer.unacked.clear();
    for (const stored of held) {
      // The broker's own x-delivery-limit check: the message was delivered deliveryLimit + 1 times.
      if (queue.type === 'quorum' && stored.deliveryCount + 1 > this.deliveryLimit) {
        messagesDeadLettered.inc({ queue: queue.name, reason: 'delivery_limit' });
        this.deadLetter(queue, stored, 'delivery limit reached: the consumer went away without acknowledging');
      } else {
        this.returnToQueue(queue, stored);
      }
    }
    this.scheduleDispatch(queue);
  }
}
