import 'reflect-metadata';
import * as amqp from 'amqplib';
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import { performance } from 'perf_hooks';
import { Exchanges, Queues, RoutingKeys } from '@trellis/contracts';

/** What a caller learns when an action ends: the action.finished notification. */
export interface Finished {
  status: string;
  /** performance.now() when it arrived */
  at: number;
}

/**
 * A subscriber to `action.finished.#` on the trellis.events topic exchange, bound before any
 * action is submitted (as docs/RPC.md asks).
 */
export class FinishedListener {
  private readonly seen = new Map<string, Finished>();
  private readonly waiting = new Map<string, (f: Finished) => void>();
  count = 0;

  private constructor(private readonly connection: amqp.ChannelModel) {}

  static async open(amqpUrl: string): Promise<FinishedListener> {
    const connection = await amqp.connect(amqpUrl, { noDelay: true });
    const listener = new FinishedListener(connection);
    const ch = await connection.createChannel();
    const { queue } = await ch.assertQueue('', { exclusive: true, autoDelete: true });
    await ch.bindQueue(queue, Exchanges.events, 'action.finished.#');
    await ch.consume(
      queue,
      (m) => {
        if (!m) return;
        const body = JSON.parse(m.content.toString()) as { action_id: string; status: string };
        listener.arrived(body.action_id, { status: body.status, at: performance.now() });
      },
      { noAck: true },
    );
    return listener;
  }

  private arrived(actionId: string, f: Finished): void {
    if (this.seen.has(actionId)) return;
    this.count++;
    this.seen.set(actionId, f);
    const w = this.waiting.get(actionId);
    if (w) {
      this.waiting.delete(actionId);
      w(f);
    }
  }

  /** resolves when the action's notification arrived (perhaps already) */
  finished(actionId: string, timeoutMs: number): Promise<Finished> {
    const known = this.seen.get(actionId);
    if (known) return Promise.resolve(known);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.waiting.delete(actionId);
        reject(new Error(`no action.finished for ${actionId} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(actionId, (f) => {
        clearTimeout(t);
        resolve(f);
      });
    });
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}

export interface RpcReply {
  status: number;
  action_id?: string;
  body?: unknown;
  error?: { code: number; message: string; type: string };
}

/** A plain-amqplib RPC caller as docs/RPC.md describes: confirm channel, direct reply-to. */
export class RpcCaller {
  private readonly pending = new Map<string, (r: RpcReply) => void>();

  private constructor(
    private readonly connection: amqp.ChannelModel,
    private readonly channel: amqp.ConfirmChannel,
    private readonly token: string,
  ) {}

  static async open(amqpUrl: string, token: string): Promise<RpcCaller> {
    const connection = await amqp.connect(amqpUrl, { noDelay: true });
    const channel = await connection.createConfirmChannel();
    const caller = new RpcCaller(connection, channel, token);
    await channel.consume(
      'amq.rabbitmq.reply-to',
      (m) => {
        if (!m) return;
        const w = caller.pending.get(m.properties.correlationId as string);
        if (!w) return;
        caller.pending.delete(m.properties.correlationId as string);
        w(JSON.parse(m.content.toString()) as RpcReply);
      },
      { noAck: true },
    );
    return caller;
  }

  call(pattern: string, params: Record<string, unknown>, body: unknown, timeoutMs = 60_000): Promise<RpcReply> {
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no reply to ${pattern} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (r) => {
        clearTimeout(t);
        resolve(r);
      });
      this.channel.publish(
        Exchanges.rpc,
        RoutingKeys.rpcRequest,
        Buffer.from(JSON.stringify({ token: this.token, microversion: '1.14', params, body })),
        { type: pattern, correlationId: id, messageId: id, replyTo: 'amq.rabbitmq.reply-to', contentType: 'application/json', persistent: true },
        (err) => {
          if (err) {
            clearTimeout(t);
            this.pending.delete(id);
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        },
      );
    });
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}

/** messages waiting in each dead-letter queue of Trellis's consumer queues */
export async function deadLetters(amqpUrl: string): Promise<Record<string, number>> {
  const connection = await amqp.connect(amqpUrl);
  try {
    const out: Record<string, number> = {};
    for (const q of Object.values(Queues)) {
      const ch = await connection.createChannel();
      ch.on('error', () => undefined);
      try {
        out[`${q}.dlq`] = (await ch.checkQueue(`${q}.dlq`)).messageCount;
        await ch.close();
      } catch {
        out[`${q}.dlq`] = 0;
      }
    }
    return out;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** Busy share of all cores between two readings of /proc/stat (null where there is no /proc). */
export class CpuMeter {
  private readonly start = CpuMeter.read();

  static read(): { busy: number; total: number } | null {
    try {
      const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
      const v = line.trim().split(/\s+/).slice(1).map(Number);
      const idle = v[3] + (v[4] ?? 0);
      const total = v.reduce((a, b) => a + b, 0);
      return { busy: total - idle, total };
    } catch {
      return null;
    }
  }

  /** CPU seconds all cores were busy since this meter was made (USER_HZ 100) */
  busySeconds(): number | null {
    const end = CpuMeter.read();
    return !this.start || !end ? null : (end.busy - this.start.busy) / 100;
  }

  /** 0..1 */
  busyShare(): number | null {
    const end = CpuMeter.read();
    if (!this.start || !end || end.total === this.start.total) return null;
    return Math.round(((end.busy - this.start.busy) / (end.total - this.start.total)) * 1000) / 1000;
  }
}
