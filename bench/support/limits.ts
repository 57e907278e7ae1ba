import * as amqp from 'amqplib';
import { Client } from 'pg';

/**
 * What RabbitMQ and PostgreSQL manage on their own on this machine, measured with the plain
 * drivers: the ceilings the pipeline is compared with.
 */

export interface BrokerRate {
  messages: number;
  message_bytes: number;
  /** unconfirmed publishes allowed at once */
  window: number;
  prefetch: number;
  seconds: number;
  per_second: number;
}

/**
 * Persistent publishes with publisher confirms (at most `window` unconfirmed) into a quorum queue
 * declared like Trellis's consumer queues, consumed at the same time with manual acks and a bounded
 * prefetch. The rate counts a message once it was confirmed to the publisher and acked by the
 * consumer.
 */
export async function brokerRate(
  amqpUrl: string,
  o: { messages: number; bytes: number; window: number; prefetch: number; queue: string },
): Promise<BrokerRate> {
  const pub = await amqp.connect(amqpUrl, { noDelay: true });
  const sub = await amqp.connect(amqpUrl, { noDelay: true });
  try {
    const setup = await pub.createChannel();
    await setup.assertQueue(o.queue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 5 } });
    await setup.purgeQueue(o.queue);
    await setup.close();
    const body = Buffer.alloc(o.bytes, 'x');
    const consumer = await sub.createChannel();
    await consumer.prefetch(o.prefetch);
    let acked = 0;
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const started = process.hrtime.bigint();
    await consumer.consume(
      o.queue,
      (m) => {
        if (!m) return;
        consumer.ack(m);
        if (++acked === o.messages) resolveDone();
      },
      { noAck: false },
    );
    const channel = await pub.createConfirmChannel();
    let inFlight = 0;
    let wake: (() => void) | null = null;
    let failed: Error | null = null;
    for (let i = 0; i < o.messages; i++) {
      while (inFlight >= o.window) await new Promise<void>((r) => (wake = r));
      if (failed) throw failed;
      inFlight++;
      channel.publish('', o.queue, body, { persistent: true, messageId: String(i), contentType: 'application/json' }, (err) => {
        if (err) failed = err instanceof Error ? err : new Error(String(err));
        inFlight--;
        const w = wake;
        wake = null;
        w?.();
      });
    }
    await channel.waitForConfirms();
    if (failed) throw failed;
    await done;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cleanup = await pub.createChannel();
    await cleanup.deleteQueue(o.queue);
    await cleanup.close();
    return { messages: o.messages, message_bytes: o.bytes, window: o.window, prefetch: o.prefetch, seconds: round(seconds, 3), per_second: Math.round(o.messages / seconds) };
  } finally {
    await pub.close().catch(() => undefined);
    await sub.close().catch(() => undefined);
  }
}

export interface InsertRate {
  inserts: number;
  connections: number;
  row_bytes: number;
  seconds: number;
  per_second: number;
  synchronous_commit: string;
}

/** Committed single-row INSERTs (autocommit, one statement per transaction) from `connections` clients at once. */
export async function insertRate(databaseUrl: string, o: { inserts: number; connections: number; bytes: number; table: string }): Promise<InsertRate> {
  const clients = Array.from({ length: o.connections }, () => new Client({ connectionString: databaseUrl }));
  await Promise.all(clients.map((c) => c.connect()));
  try {
    const [first] = clients;
    await first.query(`DROP TABLE IF EXISTS ${o.table}`);
    await first.query(`CREATE TABLE ${o.table} (id bigserial PRIMARY KEY, message_id uuid NOT NULL UNIQUE, payload jsonb NOT NULL, created_at timestamptz NOT NULL)`);
    const sync = (await first.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0].synchronous_commit;
    const payload = JSON.stringify({ data: 'x'.repeat(Math.max(0, o.bytes - 12)) });
    let next = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      clients.map(async (c) => {
        while (next < o.inserts) {
          next++;
          await c.query(`INSERT INTO ${o.table} (message_id, payload, created_at) VALUES (gen_random_uuid(), $1::jsonb, now())`, [payload]);
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await first.query(`DROP TABLE ${o.table}`);
    return {
      inserts: o.inserts,
      connections: o.connections,
      row_bytes: o.bytes,
      seconds: round(seconds, 3),
      per_second: Math.round(o.inserts / seconds),
      synchronous_commit: sync,
    };
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
