import { randomUUID } from 'node:crypto';
import * as amqp from 'amqplib';
import {
  EVENTS_EXCHANGE,
  RPC_EXCHANGE,
  RPC_ROUTING_KEY,
  isFailure,
  type ActionFinished,
  type RpcFailure,
  type RpcReply,
  type RpcRequest,
  type RpcSuccess,
} from './messages';

/** RabbitMQ's direct reply-to pseudo-queue: replies come back on the channel that sent the request. */
const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';

/** A reply with `error`: the status and Senlin's error object, as REST would have answered. */
export class TrellisRpcError extends Error {
  constructor(
    readonly pattern: string,
    readonly reply: RpcFailure,
  ) {
    super(`${pattern} failed with ${reply.status} ${reply.error.type}: ${reply.error.message}`);
    this.name = 'TrellisRpcError';
  }
}

interface Pending {
  pattern: string;
  resolve(reply: RpcReply): void;
  reject(error: Error): void;
}

/**
 * A small Trellis RPC client on plain amqplib: requests on `trellis.rpc` with direct reply-to, and
 * subscriptions to `trellis.events` on an exclusive queue of its own.
 */
export class TrellisRpcClient {
  private readonly pending = new Map<string, Pending>();

  private constructor(
    private readonly connection: amqp.ChannelModel,
    private readonly channel: amqp.ConfirmChannel,
    private readonly token: string,
    private readonly microversion: string,
  ) {}

  static async connect(url: string, token: string, microversion = '1.14'): Promise<TrellisRpcClient> {
    const connection = await amqp.connect(url);
    try {
      // A confirm channel: `call` knows the broker stored the request before waiting for the reply.
      const channel = await connection.createConfirmChannel();
      const client = new TrellisRpcClient(connection, channel, token, microversion);
      channel.on('return', (msg: amqp.Message) => {
        const id = msg.properties.correlationId as string;
        client.settle(id)?.reject(new Error(`no queue is bound to ${RPC_EXCHANGE}/${RPC_ROUTING_KEY}: is the Trellis gateway running?`));
      });
      channel.on('close', () => {
        for (const id of [...client.pending.keys()]) client.settle(id)?.reject(new Error('the AMQP channel closed before the reply'));
      });
      // The reply consumer must exist before the first request that names direct reply-to.
      await channel.consume(DIRECT_REPLY_TO, (msg) => msg && client.onReply(msg), { noAck: true });
      return client;
    } catch (e) {
      await connection.close().catch(() => undefined);
      throw e;
    }
  }

  /** Sends one request and resolves with a success reply; an error reply rejects with TrellisRpcError. */
  async call<T = unknown>(pattern: string, params?: Record<string, unknown>, body?: unknown, timeoutMs = 30_000): Promise<RpcSuccess<T>> {
    const request: RpcRequest = { token: this.token, microversion: this.microversion, params, body };
    const id = randomUUID();
    const reply = await new Promise<RpcReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(id);
        reject(new Error(`no reply to ${pattern} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        pattern,
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      // Persistent, confirmed and mandatory: once the broker confirms, the request waits in the
      // durable queue even if this process dies; the gateway stores the action all the same.
      this.channel.publish(
        RPC_EXCHANGE,
        RPC_ROUTING_KEY,
        Buffer.from(JSON.stringify(request)),
        {
          type: pattern,
          messageId: id,
          correlationId: id,
          replyTo: DIRECT_REPLY_TO,
          contentType: 'application/json',
          persistent: true,
          mandatory: true,
        },
        (err) => err && this.settle(id)?.reject(new Error(`the broker refused the ${pattern} request: ${String(err)}`)),
      );
    });
    if (isFailure(reply)) throw new TrellisRpcError(pattern, reply);
    return reply as RpcSuccess<T>;
  }

  /**
   * An exclusive queue bound to `trellis.events` with `routingKey` (e.g. `action.finished.<cluster>.*`).
   * Bind before sending the request that starts the action: a notification published before the
   * binding exists is not delivered to anyone.
   */
  async subscribe(routingKey: string): Promise<ActionFinishedSubscription> {
    const channel = await this.connection.createChannel();
    await channel.checkExchange(EVENTS_EXCHANGE);
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, EVENTS_EXCHANGE, routingKey);
    const subscription = new ActionFinishedSubscription(channel);
    await channel.consume(queue, (msg) => msg && subscription.receive(msg), { noAck: true });
    return subscription;
  }

  async close(): Promise<void> {
    await this.connection.close();
  }

  private onReply(msg: amqp.ConsumeMessage): void {
    const id = msg.properties.correlationId as string;
    const pending = this.settle(id);
    if (!pending) return; // timed out already
    try {
      pending.resolve(JSON.parse(msg.content.toString('utf8')) as RpcReply);
    } catch (e) {
      pending.reject(new Error(`the reply to ${pending.pattern} is not JSON: ${String(e)}`));
    }
  }

  private settle(id: string): Pending | undefined {
    const pending = this.pending.get(id);
    this.pending.delete(id);
    return pending;
  }
}

/** Action-finished notifications of one subscription, kept until someone waits for them. */
export class ActionFinishedSubscription {
  private readonly received = new Map<string, ActionFinished>();
  private readonly waiters = new Map<string, (m: ActionFinished) => void>();

  constructor(private readonly channel: amqp.Channel) {}

  receive(msg: amqp.ConsumeMessage): void {
    let message: ActionFinished;
    try {
      message = JSON.parse(msg.content.toString('utf8')) as ActionFinished;
    } catch {
      return; // not a Trellis notification: nothing to wait for
    }
    const waiter = this.waiters.get(message.action_id);
    if (waiter) waiter(message);
    else this.received.set(message.action_id, message);
  }

  /** Resolves with the action's notification, including one that arrived before this call. */
  waitFor(actionId: string, timeoutMs: number): Promise<ActionFinished> {
    const early = this.received.get(actionId);
    if (early) return Promise.resolve(early);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(actionId);
        reject(new Error(`action ${actionId} did not finish within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(actionId, (m) => {
        clearTimeout(timer);
        this.waiters.delete(actionId);
        resolve(m);
      });
    });
  }

  async close(): Promise<void> {
    await this.channel.close();
  }
}
