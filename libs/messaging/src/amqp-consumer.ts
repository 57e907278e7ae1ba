import type * as amqp from 'amqplib';
import type { Logger } from '@trellis/common';
import { BrokerUnavailableError, MessageBusError, errorMessage } from './bus-errors';
import type { IncomingMessage } from './bus.port';
import { settledWithin } from './consumer-handle';
import { type Settlement, decodeBody, deliveryCountOf, describeMessage, messageFields } from './message-codec';

export type AmqpError = Error & { code?: number };

export type Deliver = (message: IncomingMessage, raw: amqp.ConsumeMessage, channel: amqp.Channel) => Promise<Settlement>;

/** What a consumer needs from the bus that owns the connection. */
export interface ConsumerHost {
  readonly deliveryLimit: number;
  currentConnection(): amqp.ChannelModel | null;
  backoffDelay(attempt: number): number;
  forget(consumer: AmqpConsumer): void;
  publishDeadLetter(queue: string, msg: amqp.Message, reason: string): Promise<void>;
}

export function queueFailure(error: unknown, queue: string): Error {
  const text = errorMessage(error);
  if ((error as AmqpError)?.code === 404 || /NOT_FOUND - no queue/.test(text)) {
    return new MessageBusError(`unknown queue '${queue}' (${text})`, { cause: error });
  }
  return error instanceof MessageBusError ? error : new BrokerUnavailableError(`queue '${queue}': ${text}`, { cause: error });
}

export function toIncoming(queue: string, queueType: 'quorum' | 'classic', msg: amqp.Message): IncomingMessage {
  const headers: Record<string, unknown> = { ...(msg.properties.headers ?? {}) };
  const { body, parseError } = decodeBody(msg.content);
  return {
    queue,
    exchange: msg.fields.exchange,
    routingKey: msg.fields.routingKey,
    body,
    ...(parseError ? { parseError } : {}),
    raw: msg.content,
    messageId: msg.properties.messageId ?? undefined,
    correlationId: msg.properties.correlationId ?? undefined,
    type: msg.properties.type ?? undefined,
    headers,
    redelivered: msg.fields.redelivered ?? false,
    deliveryCount: queueType === 'quorum' ? deliveryCountOf(headers) : 0,
  };
}

/**
 * One consumer on its own channel, so its prefetch is its own and closing it returns exactly its
 * unacked messages. It survives channel and connection loss: the bus reopens it.
 */
export class AmqpConsumer {
  private channel: amqp.Channel | null = null;
  private consumerTag: string | null = null;
  private state: 'active' | 'cancelling' | 'gone' = 'active';
  private opening: Promise<void> | null = null;
  private reopenTimer: NodeJS.Timeout | null = null;
  private reopenAttempt = 0;
  private lastError: AmqpError | undefined;
  private readonly inflight = new Set<Promise<void>>();

  constructor(
    private readonly bus: ConsumerHost,
    readonly queue: string,
    private readonly queueType: 'quorum' | 'classic',
    private readonly prefetch: number,
    private readonly deliver: Deliver,
    private readonly logger: Logger,
    private readonly shutdownGraceMs: number,
  ) {}

  get isActive(): boolean {
    return this.state === 'active';
  }

  open(connection: amqp.ChannelModel): Promise<void> {
    this.opening ??= this.doOpen(connection).finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  /** After a reconnect or a lost channel; failures are retried, never thrown. */
  reopen(): void {
    if (this.state !== 'active' || this.channel || this.opening) return;
    const connection = this.bus.currentConnection();
    if (!connection) return;
    this.open(connection).then(
      () => {
        this.reopenAttempt = 0;
        this.logger.info(`consumer on '${this.queue}' is back`);
      },
      (error) => {
        this.logger.warn(`reopening the consumer on '${this.queue}' failed: ${errorMessage(error)}`);
        this.scheduleReopen();
      },
    );
  }

  async cancel(): Promise<void> {
    if (this.state !== 'active') return;
    this.state = 'cancelling';
    this.clearReopen();
    await this.opening?.catch(() => undefined);
    const channel = this.channel;
    if (channel && this.consumerTag) await channel.cancel(this.consumerTag).catch(() => undefined);
    const finished = await settledWithin(Promise.allSettled([...this.inflight]), this.shutdownGraceMs);
    if (!finished) {
      this.logger.warn(
        `${this.inflight.size} handler(s) on '${this.queue}' still running after ${this.shutdownGraceMs} ms; ` +
          'their messages go back to the queue',
      );
    }
    await this.abort();
  }

  async abort(): Promise<void> {
    this.state = 'gone';
    this.clearReopen();
    this.bus.forget(this);
    await this.opening?.catch(() => undefined);
    const channel = this.channel;
    this.channel = null;
    this.consumerTag = null;
    if (channel) await channel.close().catch(() => undefined);
  }

  private async doOpen(connection: amqp.ChannelModel): Promise<void> {
    const channel = await connection.createChannel();
    this.channel = channel;
    channel.on('error', (error: AmqpError) => {
      this.lastError = error;
    });
    channel.on('close', () => this.onChannelClosed(channel));
    try {
      await channel.prefetch(this.prefetch);
      const { consumerTag } = await channel.consume(this.queue, (msg) => this.onDelivery(channel, msg), { noAck: false });
      this.consumerTag = consumerTag;
    } catch (error) {
      this.channel = null;
      await channel.close().catch(() => undefined);
      throw queueFailure(this.lastError ?? error, this.queue);
    }
    if (this.state !== 'active') {
      // cancelled while the channel was opening
      this.channel = null;
      await channel.close().catch(() => undefined);
    }
  }

  private onChannelClosed(channel: amqp.Channel): void {
    if (this.channel !== channel) return;
    this.channel = null;
    this.consumerTag = null;
    if (this.state !== 'active') return;
    this.logger.warn(
      `consumer channel on '${this.queue}' closed (${this.lastError ? errorMessage(this.lastError) : 'connection lost'}); ` +
        'its unacked messages go back to the queue',
    );
    this.scheduleReopen();
  }

  private scheduleReopen(): void {
    if (this.state !== 'active' || this.reopenTimer) return;
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = null;
      this.reopen();
    }, this.bus.backoffDelay(++this.reopenAttempt));
  }

  private clearReopen(): void {
    if (this.reopenTimer) clearTimeout(this.reopenTimer);
    this.reopenTimer = null;
  }

  private onDelivery(channel: amqp.Channel, msg: amqp.ConsumeMessage | null): void {
    if (msg === null) {
      // The broker cancelled the consumer, e.g. because the queue was deleted.
      this.logger.warn(`the broker cancelled the consumer on '${this.queue}'`);
      if (this.channel === channel) {
        this.channel = null;
        channel.close().catch(() => undefined);
        this.scheduleReopen();
      }
      return;
    }
    const run = this.handle(channel, msg);
    this.inflight.add(run);
    void run.finally(() => this.inflight.delete(run));
  }

  private async handle(channel: amqp.Channel, msg: amqp.ConsumeMessage): Promise<void> {
    const message = toIncoming(this.queue, this.queueType, msg);
    let settlement: Settlement;
    try {
      settlement = await this.deliver(message, msg, channel);
    } catch (error) {
      settlement = { kind: 'requeue', reason: errorMessage(error), reasonClass: 'unexpected' };
    }
    if (this.channel !== channel) {
      this.logger.warn(
        `outcome of ${describeMessage(message)} dropped: its channel is gone and the broker redelivers it`,
        messageFields(message),
      );
      return;
    }
    try {
      if (settlement.kind === 'ack') {
        channel.ack(msg);
      } else if (settlement.kind === 'requeue') {
        this.logger.warn(
          `retrying ${describeMessage(message)} (delivery ${message.deliveryCount + 1} of ${this.bus.deliveryLimit}): ${settlement.reason}`,
          { ...messageFields(message), reason: settlement.reason },
        );
        channel.nack(msg, false, true);
      } else {
        this.logger.warn(`dead-lettering ${describeMessage(message)}: ${settlement.reason}`, {
          ...messageFields(message),
          reason: settlement.reason,
        });
        try {
          await this.bus.publishDeadLetter(this.queue, msg, settlement.reason);
        } catch (error) {
          this.logger.error(
            `could not dead-letter ${describeMessage(message)} (${errorMessage(error)}); it goes back to the queue`,
            messageFields(message),
          );
          channel.nack(msg, false, true);
          return;
        }
        channel.ack(msg);
      }
    } catch (error) {
      this.logger.warn(
        `settling ${describeMessage(message)} failed (${errorMessage(error)}); the broker redelivers it`,
        messageFields(message),
      );
    }
  }
}
