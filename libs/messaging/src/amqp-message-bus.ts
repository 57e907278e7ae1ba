import { randomUUID } from 'node:crypto';
import * as amqp from 'amqplib';
import { createLogger, type Logger } from '@trellis/common';
import { Exchanges, NotificationExchanges, deadLetterQueueOf, type QueueSpec } from '@trellis/contracts';
import {
  BrokerUnavailableError,
  MessageBusError,
  MessageTooLargeError,
  TopologyMismatchError,
  checkedMaxMessageBytes,
  UnroutableMessageError,
  errorMessage,
} from './bus-errors';
import {
  ExchangeTypes,
  consumerQueueArguments,
  deadLetterQueueArguments,
  deadLetterQueueFor,
  resolveQueues,
} from './bus-topology';
import { AmqpConsumer, type AmqpError, type ConsumerHost, type Deliver, queueFailure, toIncoming } from './amqp-consumer';
import type {
  ConsumeOptions,
  DeadLetterSink,
  MessageBus,
  MessageHandler,
  OutgoingMessage,
  RpcHandler,
  RpcRequestOptions,
} from './bus.port';
import { type AbortableConsumerHandle, settledWithin } from './consumer-handle';
import { coalesceWrites } from './coalesce-writes';
import {
  IN_REPLY_TO_HEADER,
  JSON_CONTENT_TYPE,
  type PendingReply,
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

export interface AmqpMessageBusOptions {
  /**
   * AMQP_URL, e.g. amqp://user:password@host:5672/vhost, or the nodes of a RabbitMQ cluster as a
   * comma-separated list of such URLs: connections go to the first that answers, and after a lost
   * connection to the next ones first.
   */
  url: string;
  /** deliveries of one message before a `retry` dead-letters it; also the quorum queues' x-delivery-limit */
  deliveryLimit: number;
  logger?: Logger;
  /** shown in the RabbitMQ management UI and `rabbitmqctl list_connections` */
  connectionName?: string;
  /** queues to declare besides the shared topology (e.g. a subscriber on `trellis.events`) */
  extraQueues?: QueueSpec[];
  /** how long `cancel()` and `close()` wait for running handlers (default 30 s) */
  shutdownGraceMs?: number;
  /** reconnect backoff after a lost connection (defaults 200 ms doubling up to 30 s) */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /**
   * The largest encoded body sent (TRELLIS_MAX_MESSAGE_BYTES, default 16 MiB, RabbitMQ 4's
   * `max_message_size`): a larger one is refused with MessageTooLargeError before it is sent, rather
   * than by the broker, which closes the channel and fails every publish in flight on it.
   */
  maxMessageBytes?: number;
}

const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';
const CONNECT_TIMEOUT_MS = 10_000;

interface Publisher {
  channel: amqp.ConfirmChannel;
  /** basic.return arrives before the confirm of the same message; keyed by exchange, key and id */
  returned: Map<string, number>;
  closeError?: AmqpError;
}

interface PendingRequest extends PendingReply {
  correlationId: string;
}

interface RpcClient {
  channel: amqp.Channel;
  pending: Map<string, PendingRequest>;
  closeError?: AmqpError;
}

const returnKey = (exchange: string, routingKey: string, messageId: string | undefined) =>
  `${exchange}\u0000${routingKey}\u0000${messageId ?? ''}`;

/**
 * AMQP_URL's URLs: one, or a cluster's nodes separated by commas; each must be amqp:// or amqps://.
 * The error names the URL at fault (its password hidden).
 */
export function amqpUrls(raw: string): string[] {
  const urls = String(raw ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  if (!urls.length) throw new MessageBusError(`AMQP_URL is not a valid URL (got ${JSON.stringify(raw)})`);
  for (const u of urls) {
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw new MessageBusError(`AMQP_URL is not a valid URL (got ${JSON.stringify(u)})`);
    }
    if (parsed.protocol !== 'amqp:' && parsed.protocol !== 'amqps:') {
      throw new MessageBusError(`AMQP_URL must start with amqp:// or amqps:// (got ${redactUrl(u)})`);
    }
  }
  return urls;
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/**
 * What a closed channel means: "no exchange 'x'" (404) said plainly instead of "channel closed", a
 * message above the broker's max_message_size (406) as the permanent MessageTooLargeError, anything
 * else as the broker being unavailable (transient).
 */
export function channelFailure(error: unknown, closeError: AmqpError | undefined, what: string, messageId?: string): Error {
  const cause = closeError ?? (error as AmqpError);
  const text = errorMessage(cause);
  const exchange = /no exchange '([^']+)'/.exec(text);
  if (exchange) return new MessageBusError(`unknown exchange '${exchange[1]}' (${text})`, { cause });
  const size = /message size (\d+) is larger than configured max size (\d+)/.exec(text);
  if (size) return new MessageTooLargeError(Number(size[1]), Number(size[2]), messageId, 'broker', { cause });
  return new BrokerUnavailableError(`${what} failed: ${text}`, { cause });
}

/**
 * The MessageBus on RabbitMQ with amqplib: durable exchanges, quorum queues with a delivery limit
 * and per-queue dead-letter queues, persistent messages with publisher confirms and `mandatory`,
 * one channel per consumer with manual acks and bounded prefetch, RPC over direct reply-to.
 * After a lost connection it reconnects with backoff, redeclares the topology and reopens every
 * consumer; while it is down, publishes reject at once (the outbox relay retries them).
 */
export class AmqpMessageBus implements MessageBus, ConsumerHost {
  readonly deliveryLimit: number;
  private readonly urls: string[];
  /** the index in `urls` of the node connected to last */
  private current = 0;
  private readonly logger: Logger;
  private readonly connectionName: string;
  private readonly queueSpecs: QueueSpec[];
  private readonly queueTypes = new Map<string, 'quorum' | 'classic'>();
  private readonly shutdownGraceMs: number;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private state: 'new' | 'starting' | 'open' | 'reconnecting' | 'closing' | 'closed' = 'new';
  private starting: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  private connection: amqp.ChannelModel | null = null;
  private publisher: Promise<Publisher> | null = null;
  private rpcClient: Promise<RpcClient> | null = null;
  private readonly consumers = new Set<AmqpConsumer>();
  private readonly inflightPublishes = new Set<Promise<unknown>>();
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectAttempt = 0;
  private readonly maxMessageBytes: number;

  constructor(options: AmqpMessageBusOptions) {
    this.urls = amqpUrls(options?.url);
    if (!Number.isInteger(options.deliveryLimit) || options.deliveryLimit < 1) {
      throw new MessageBusError(`deliveryLimit must be a positive integer (got ${options.deliveryLimit})`);
    }
    this.deliveryLimit = options.deliveryLimit;
    this.logger = options.logger ?? createLogger('message-bus');
    this.connectionName = options.connectionName ?? `trellis-${process.pid}`;
    this.queueSpecs = resolveQueues(options.extraQueues);
    for (const spec of this.queueSpecs) {
      this.queueTypes.set(spec.name, spec.type);
      this.queueTypes.set(deadLetterQueueOf(spec.name), 'quorum');
    }
    this.shutdownGraceMs = options.shutdownGraceMs ?? 30_000;
    this.initialDelayMs = options.reconnect?.initialDelayMs ?? 200;
    this.maxDelayMs = options.reconnect?.maxDelayMs ?? 30_000;
    this.maxMessageBytes = checkedMaxMessageBytes(options.maxMessageBytes);
  }

  start(): Promise<void> {
    if (this.state === 'closing' || this.state === 'closed') return Promise.reject(new MessageBusError('message bus is closed'));
    if (this.state !== 'new') return this.starting ?? Promise.resolve();
    this.state = 'starting';
    this.starting = (async () => {
      const connection = await this.connect();
      try {
        await this.declareTopology(connection);
      } catch (error) {
        await connection.close().catch(() => undefined);
        throw error;
      }
      this.attach(connection);
      this.state = 'open';
      this.logger.info(`connected to RabbitMQ at ${redactUrl(this.url)} as '${this.connectionName}'`);
    })().catch((error) => {
      this.state = 'new';
      this.starting = null;
      throw error;
    });
    return this.starting;
  }

  async publish(message: OutgoingMessage): Promise<void> {
    this.ensureUsable();
    checkOutgoing(message);
    const content = encodeBody(message.body, 'message.body');
    await this.publishConfirmed(message.exchange, message.routingKey, content, {
      persistent: true,
      messageId: message.messageId,
      correlationId: message.correlationId,
      type: message.type,
      contentType: JSON_CONTENT_TYPE,
      timestamp: Math.floor(Date.now() / 1000),
      headers: outgoingHeaders(message.headers),
    });
  }

  async consume(queue: string, handler: MessageHandler, options: ConsumeOptions): Promise<AbortableConsumerHandle> {
    checkConsumeOptions(options);
    if (typeof handler !== 'function') throw new MessageBusError('handler must be a function');
    const queueType = this.queueTypes.get(queue) ?? 'classic';
    return this.addConsumer(queue, queueType, options.prefetch, (message) => handleDelivery(handler, message, queueType, this.deliveryLimit));
  }

  async serve(queue: string, handler: RpcHandler, options: ConsumeOptions): Promise<AbortableConsumerHandle> {
    checkConsumeOptions(options);
    if (typeof handler !== 'function') throw new MessageBusError('handler must be a function');
    return this.addConsumer(queue, this.queueTypes.get(queue) ?? 'classic', options.prefetch, (message, raw, channel) =>
      answerDelivery(
        handler,
        message,
        raw.properties.replyTo,
        (reply) =>
          channel.sendToQueue(raw.properties.replyTo, reply, {
            correlationId: raw.properties.correlationId,
            contentType: JSON_CONTENT_TYPE,
            type: message.type,
            headers: raw.properties.messageId ? { [IN_REPLY_TO_HEADER]: raw.properties.messageId } : {},
          }),
        (error) => this.logger.error(`RPC handler failed on ${describeMessage(message)}: ${errorMessage(error)}`, messageFields(message)),
        this.maxMessageBytes,
      ),
    );
  }

  async request(body: unknown, options: RpcRequestOptions): Promise<unknown> {
    this.ensureUsable();
    checkRpcOptions(options);
    const content = encodeBody(body, 'body');
    const messageId = options.messageId ?? randomUUID();
    if (content.length > this.maxMessageBytes) throw new MessageTooLargeError(content.length, this.maxMessageBytes, messageId, 'bus');
    const client = await this.openRpcClient();
    const correlationId = options.correlationId ?? messageId;
    return new Promise((resolve, reject) => {
      const pending: PendingRequest = { correlationId, ...awaitReply(options, () => client.pending.delete(messageId), resolve, reject) };
      client.pending.set(messageId, pending);
      try {
        // Direct reply-to: the reply comes back on this channel's no-ack consumer, so nothing is
        // durable here; RPC is never used for work that must survive.
        client.channel.publish(options.exchange, options.routingKey, content, {
          mandatory: true,
          persistent: false,
          replyTo: DIRECT_REPLY_TO,
          messageId,
          correlationId,
          type: options.pattern,
          contentType: JSON_CONTENT_TYPE,
          headers: outgoingHeaders(options.headers),
        });
      } catch (error) {
        pending.reject(channelFailure(error, client.closeError, `RPC request '${options.pattern}'`, messageId));
      }
    });
  }

  async drainDeadLetters(queue: string, max: number, sink: DeadLetterSink): Promise<number> {
    this.ensureUsable();
    checkMax(max);
    if (typeof sink !== 'function') throw new MessageBusError('sink must be a function');
    const { deadLetterQueue, originalQueue } = deadLetterQueueFor(queue);
    const channel = await this.requireConnection().createChannel();
    let closeError: AmqpError | undefined;
    channel.on('error', (error: AmqpError) => (closeError = error));
    const kept: amqp.GetMessage[] = [];
    let drained = 0;
    try {
      const { messageCount } = await channel.checkQueue(deadLetterQueue).catch((error) => {
        throw queueFailure(closeError ?? error, deadLetterQueue);
      });
      // The queue is FIFO and a message dead-lettered again is appended: the first `messageCount`
      // gets are exactly the messages that were there at the start. Kept ones stay unacked (so the
      // next get does not return them) until the drain ends.
      for (let taken = 0; taken < Math.min(max, messageCount); taken++) {
        const msg = await channel.get(deadLetterQueue, { noAck: false });
        if (!msg) break;
        const message = toIncoming(deadLetterQueue, 'quorum', msg);
        const verdict = await offerDeadLetter(sink, deadLetterQueue, originalQueue, message, drained, () => channel.nack(msg, false, true));
        if (verdict === 'keep') {
          kept.push(msg);
          continue;
        }
        channel.ack(msg);
        drained++;
      }
      return drained;
    } finally {
      for (const msg of kept) channel.nack(msg, false, true);
      await channel.close().catch(() => undefined);
    }
  }

  async depth(queue: string): Promise<number> {
    this.ensureUsable();
    const channel = await this.requireConnection().createChannel();
    let closeError: AmqpError | undefined;
    channel.on('error', (error: AmqpError) => (closeError = error));
    try {
      return (await channel.checkQueue(queue)).messageCount;
    } catch (error) {
      throw queueFailure(closeError ?? error, queue);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** @internal used by consumers */
  currentConnection(): amqp.ChannelModel | null {
    return this.state === 'open' || this.state === 'closing' ? this.connection : null;
  }

  /** @internal exponential backoff with jitter, so a restarted broker is not hit by every client at once */
  backoffDelay(attempt: number): number {
    const base = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** Math.min(attempt - 1, 20));
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  /** @internal */
  forget(consumer: AmqpConsumer): void {
    this.consumers.delete(consumer);
  }

  /** @internal a copy into `<queue>.dlq` with the reason, confirmed before the original is acked */
  publishDeadLetter(queue: string, msg: amqp.Message, reason: string): Promise<void> {
    const p = msg.properties;
    return this.publishConfirmed(Exchanges.deadLetter, queue, msg.content, {
      persistent: true,
      messageId: p.messageId,
      correlationId: p.correlationId,
      type: p.type,
      contentType: p.contentType ?? JSON_CONTENT_TYPE,
      timestamp: Math.floor(Date.now() / 1000),
      headers: deadLetterHeaders(p.headers ?? {}, queue, reason),
    });
  }

  private async shutdown(): Promise<void> {
    if (this.state === 'new') {
      this.state = 'closed';
      return;
    }
    await this.starting?.catch(() => undefined);
    this.state = 'closing';
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    await Promise.all([...this.consumers].map((c) => c.cancel()));
    await settledWithin(Promise.allSettled([...this.inflightPublishes]), this.shutdownGraceMs);
    const rpc = await this.rpcClient?.catch(() => undefined);
    for (const pending of rpc ? [...rpc.pending.values()] : []) {
      pending.reject(new MessageBusError('message bus closed before the RPC reply arrived'));
    }
    const connection = this.connection;
    this.connection = null;
    this.publisher = null;
    this.rpcClient = null;
    this.state = 'closed';
    if (connection) await connection.close().catch(() => undefined);
  }

  private ensureUsable(): void {
    if (this.state === 'new' || this.state === 'starting') {
      throw new MessageBusError('message bus is not started: call start() first');
    }
    if (this.state === 'closed') throw new MessageBusError('message bus is closed');
  }

  private requireConnection(): amqp.ChannelModel {
    this.ensureUsable();
    const connection = this.currentConnection();
    if (!connection) {
      throw new BrokerUnavailableError(
        `the RabbitMQ connection (${redactUrl(this.url)}) is lost; reconnecting (attempt ${this.reconnectAttempt})`,
      );
    }
    return connection;
  }

  /** the node connected to last (or being tried), its password hidden, for messages */
  private get url(): string {
    return this.urls[this.current];
  }

  /**
   * A connection to the first node of AMQP_URL that takes one, starting with the one after the
   * node connected to last when `next` (a reconnect: that node may be the one that went away).
   */
  private async connect(next = false): Promise<amqp.ChannelModel> {
    const failures: string[] = [];
    let lastError: unknown;
    const first = next ? this.current + 1 : this.current;
    for (let i = 0; i < this.urls.length; i++) {
      const at = (first + i) % this.urls.length;
      try {
        const connection = await amqp.connect(this.urls[at], {
          noDelay: true,
          timeout: CONNECT_TIMEOUT_MS,
          clientProperties: { connection_name: this.connectionName },
        });
        // An 'error' event without a listener kills the process; until attach() logs them, the
        // failing topology declaration or reconnect attempt reports the problem instead.
        connection.on('error', () => undefined);
        if (!coalesceWrites(connection)) this.logger.debug('amqplib internals not as expected: frames are written one by one');
        this.current = at;
        return connection;
      } catch (error) {
        lastError = error;
        failures.push(`${redactUrl(this.urls[at])}: ${errorMessage(error)}`);
      }
    }
    throw new BrokerUnavailableError(
      `cannot connect to RabbitMQ at AMQP_URL=${failures.join('; ')}. ` +
        'Check that the broker is running and that AMQP_URL (user, password, host, port, vhost) is right, ' +
        'or unset AMQP_URL to use the in-memory bus.',
      { cause: lastError },
    );
  }

  private attach(connection: amqp.ChannelModel): void {
    this.connection = connection;
    connection.on('error', (error: Error) => this.logger.error(`RabbitMQ connection error: ${errorMessage(error)}`));
    connection.on('blocked', (reason: string) => this.logger.warn(`RabbitMQ blocked publishing: ${reason}`));
    connection.on('unblocked', () => this.logger.info('RabbitMQ unblocked publishing'));
    connection.on('close', (error?: Error) => this.onConnectionClosed(connection, error));
  }

  private onConnectionClosed(connection: amqp.ChannelModel, error?: Error): void {
    if (this.connection !== connection) return;
    this.connection = null;
    this.publisher = null;
    this.rpcClient = null;
    if (this.state !== 'open') return;
    this.state = 'reconnecting';
    this.logger.error(`lost the RabbitMQ connection (${error ? errorMessage(error) : 'closed'}); reconnecting`);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const delay = this.backoffDelay(++this.reconnectAttempt);
    this.reconnectTimer = setTimeout(() => void this.reconnect(), delay);
  }

  private async reconnect(): Promise<void> {
    this.reconnectTimer = null;
    if (this.state !== 'reconnecting') return;
    let connection: amqp.ChannelModel | undefined;
    try {
      connection = await this.connect(true);
      await this.declareTopology(connection);
    } catch (error) {
      await connection?.close().catch(() => undefined);
      if (this.state !== 'reconnecting') return;
      this.logger.warn(`reconnect attempt ${this.reconnectAttempt} failed: ${errorMessage(error)}`);
      this.scheduleReconnect();
      return;
    }
    if (this.state !== 'reconnecting') {
      await connection.close().catch(() => undefined);
      return;
    }
    this.reconnectAttempt = 0;
    this.attach(connection);
    this.state = 'open';
    this.logger.info(`reconnected to RabbitMQ at ${redactUrl(this.url)}; reopening ${this.consumers.size} consumer(s)`);
    for (const consumer of this.consumers) consumer.reopen();
  }

  /**
   * Exchanges, quorum consumer queues (classic for RPC) and their dead-letter queues, all durable.
   * Runs on every (re)connect: declarations are idempotent while the arguments stay the same.
   */
  private async declareTopology(connection: amqp.ChannelModel): Promise<void> {
    const channel = await connection.createChannel();
    let closeError: AmqpError | undefined;
    channel.on('error', (error: AmqpError) => (closeError = error));
    const step = async (kind: 'queue' | 'exchange', name: string, run: () => Promise<unknown>) => {
      try {
        await run();
      } catch (error) {
        const cause = closeError ?? (error as AmqpError);
        const text = errorMessage(cause);
        const mismatch = /inequivalent arg '([^']+)' for (queue|exchange) '([^']+)'/.exec(text);
        if (cause.code === 406 || mismatch) {
          throw new TopologyMismatchError(
            (mismatch?.[2] as 'queue' | 'exchange') ?? kind,
            mismatch?.[3] ?? name,
            mismatch?.[1],
            text,
          );
        }
        throw new MessageBusError(`declaring ${kind} '${name}' failed: ${text}`, { cause });
      }
    };
    try {
      for (const [name, type] of Object.entries(ExchangeTypes)) {
        await step('exchange', name, () => channel.assertExchange(name, type, { durable: true }));
      }
      for (const spec of this.queueSpecs) {
        const dlq = deadLetterQueueOf(spec.name);
        await step('queue', spec.name, () =>
          channel.assertQueue(spec.name, { durable: true, arguments: consumerQueueArguments(spec, this.deliveryLimit) }),
        );
        await step('queue', spec.name, () => channel.bindQueue(spec.name, spec.exchange, spec.routingKey));
        await step('queue', dlq, () => channel.assertQueue(dlq, { durable: true, arguments: deadLetterQueueArguments }));
        await step('queue', dlq, () => channel.bindQueue(dlq, Exchanges.deadLetter, spec.name));
      }
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  private async addConsumer(
    queue: string,
    queueType: 'quorum' | 'classic',
    prefetch: number,
    deliver: Deliver,
  ): Promise<AbortableConsumerHandle> {
    this.ensureUsable();
    if (this.state === 'closing') throw new MessageBusError('message bus is closing');
    const consumer = new AmqpConsumer(this, queue, queueType, prefetch, deliver, this.logger, this.shutdownGraceMs);
    const connection = this.currentConnection();
    // While reconnecting the consumer is registered and opens with the new connection.
    if (connection) await consumer.open(connection);
    this.consumers.add(consumer);
    return { cancel: () => consumer.cancel(), abort: () => consumer.abort() };
  }

  private publisherChannel(): Promise<Publisher> {
    if (this.publisher) return this.publisher;
    const connection = this.requireConnection();
    const opening: Promise<Publisher> = (async () => {
      const channel = await connection.createConfirmChannel();
      const publisher: Publisher = { channel, returned: new Map() };
      channel.on('error', (error: AmqpError) => (publisher.closeError = error));
      channel.on('close', () => {
        if (this.publisher === opening) this.publisher = null;
      });
      channel.on('return', (msg: amqp.Message) => {
        const key = returnKey(msg.fields.exchange, msg.fields.routingKey, msg.properties.messageId);
        publisher.returned.set(key, (publisher.returned.get(key) ?? 0) + 1);
      });
      return publisher;
    })();
    this.publisher = opening;
    opening.catch(() => {
      if (this.publisher === opening) this.publisher = null;
    });
    return opening;
  }

  private publishConfirmed(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: amqp.Options.Publish,
  ): Promise<void> {
    if (content.length > this.maxMessageBytes) {
      return Promise.reject(new MessageTooLargeError(content.length, this.maxMessageBytes, options.messageId, 'bus'));
    }
    const work = (async () => {
      const publisher = await this.publisherChannel();
      const key = returnKey(exchange, routingKey, options.messageId);
      await new Promise<void>((resolve, reject) => {
        const confirmed = (error: unknown) => {
          const returns = publisher.returned.get(key) ?? 0;
          if (returns > 0) {
            if (returns === 1) publisher.returned.delete(key);
            else publisher.returned.set(key, returns - 1);
            if (!error) return reject(new UnroutableMessageError(exchange, routingKey, options.messageId));
          }
          if (error) return reject(channelFailure(error, publisher.closeError, `publishing to '${exchange}'`, options.messageId));
          resolve();
        };
        try {
          // notifications may have no listener; work must reach a queue (see NotificationExchanges)
          const mandatory = !NotificationExchanges.includes(exchange);
          publisher.channel.publish(exchange, routingKey, content, { ...options, mandatory }, confirmed);
        } catch (error) {
          reject(channelFailure(error, publisher.closeError, `publishing to '${exchange}'`, options.messageId));
        }
      });
    })();
    this.inflightPublishes.add(work);
    void work.catch(() => undefined).finally(() => this.inflightPublishes.delete(work));
    return work;
  }

  private openRpcClient(): Promise<RpcClient> {
    if (this.rpcClient) return this.rpcClient;
    const connection = this.requireConnection();
    const opening: Promise<RpcClient> = (async () => {
      const channel = await connection.createChannel();
      const client: RpcClient = { channel, pending: new Map() };
      channel.on('error', (error: AmqpError) => (client.closeError = error));
      channel.on('close', () => {
        if (this.rpcClient === opening) this.rpcClient = null;
        for (const pending of [...client.pending.values()]) {
          pending.reject(channelFailure(new Error('channel closed'), client.closeError, 'RPC request'));
        }
      });
      channel.on('return', (msg: amqp.Message) => {
        const id = msg.properties.messageId;
        client.pending.get(id)?.reject(new UnroutableMessageError(msg.fields.exchange, msg.fields.routingKey, id));
      });
      await channel.consume(DIRECT_REPLY_TO, (msg) => msg && this.onReply(client, msg), { noAck: true });
      return client;
    })();
    this.rpcClient = opening;
    opening.catch(() => {
      if (this.rpcClient === opening) this.rpcClient = null;
    });
    return opening;
  }

  private onReply(client: RpcClient, msg: amqp.ConsumeMessage): void {
    const inReplyTo = msg.properties.headers?.[IN_REPLY_TO_HEADER];
    const pending =
      typeof inReplyTo === 'string'
        ? client.pending.get(inReplyTo)
        : // a server that only echoes the correlation id (not a Trellis bus)
          [...client.pending.values()].find((p) => p.correlationId === msg.properties.correlationId);
    if (!pending) {
      this.logger.debug(`RPC reply ${msg.properties.correlationId ?? ''} dropped: the caller is gone (timed out)`);
      return;
    }
    const { body, parseError } = decodeBody(msg.content);
    if (parseError) pending.reject(new MessageBusError(`RPC reply is not JSON: ${parseError}`));
    else pending.resolve(body);
  }
}
