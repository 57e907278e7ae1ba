import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { Client } from 'pg';
import { QueryFailedError } from 'typeorm';
import { statementName } from '../../libs/persistence/src/prepared';
import { silentLogger } from '@trellis/common';
import type { OutgoingMessage } from '@trellis/messaging/bus.port';
import {
  ActionEntity,
  addToOutbox,
  afterCommit,
  ALL_MIGRATIONS,
  hotQuery,
  inTransaction,
  openDatabase,
  OutboxRelay,
  outboxStats,
  type Database,
} from '@trellis/persistence';
import { action, describePersistenceContract, message, waitFor } from '../../libs/persistence/test/persistence.contract';
import { DEFAULT_TEST_DATABASE_URL, openPostgresTestDatabase } from '@trellis/testing/database';

const adminUrl = process.env.DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;

describePersistenceContract('PostgreSQL', () => openPostgresTestDatabase());

describe('persistence on PostgreSQL only', () => {
  let db: Database & { url: string };

  beforeAll(async () => {
    db = await openPostgresTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    await db.dataSource.query('TRUNCATE outbox, processed_messages, actions RESTART IDENTITY');
  });

  it('runs the migrations once when two processes start at the same time', async () => {
    const name = `trellis_it_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    await admin(`CREATE DATABASE ${name}`);
    const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
    const settings = { url, dataDir: ':memory:', poolSize: 2, logging: false };
    const opened = await Promise.all([openDatabase(settings, silentLogger), openDatabase(settings, silentLogger)]);
    try {
      const rows: { name: string }[] = await opened[0].dataSource.query('SELECT name FROM migrations ORDER BY id');
      expect(rows.map((r) => r.name)).toEqual(ALL_MIGRATIONS.map((m) => m.name));
      const diff = await opened[1].dataSource.driver.createSchemaBuilder().log();
      expect(diff.upQueries).toEqual([]);
    } finally {
      await Promise.all(opened.map((d) => d.close()));
      await admin(`DROP DATABASE ${name} WITH (FORCE)`);
    }
  });

  it('runs every transaction READ COMMITTED, even on a server whose default is SERIALIZABLE', async () => {
    const name = `trellis_it_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    await admin(`CREATE DATABASE ${name}`);
    await admin(`ALTER DATABASE ${name} SET default_transaction_isolation = 'serializable'`);
    const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
    const plain = new Client({ connectionString: url });
    await plain.connect();
    const opened = await openDatabase({ url, dataDir: ':memory:', poolSize: 2, logging: false }, silentLogger);
    try {
      // the database's setting is in force for other clients ...
      expect((await plain.query('SHOW default_transaction_isolation')).rows[0].default_transaction_isolation).toBe('serializable');
      // ... and Trellis's transactions run READ COMMITTED without a SET TRANSACTION of their own
      const levels = await Promise.all(
        [1, 2, 3].map(() => inTransaction(opened.dataSource, async (m) => (await m.query('SHOW transaction_isolation'))[0].transaction_isolation)),
      );
      expect(levels).toEqual(['read committed', 'read committed', 'read committed']);
    } finally {
      await plain.end();
      await opened.close();
      await admin(`DROP DATABASE ${name} WITH (FORCE)`);
    }
  });

  it('retries the loser of a real deadlock until both transactions commit', async () => {
    const [a, b] = [action(), action()];
    await db.dataSource.manager.save(ActionEntity, [a, b]);
    const bothLockedFirstRow = barrier(2);
    let attempts = 0;
    const swap = (first: string, second: string) =>
      inTransaction(db.dataSource, async (m) => {
        attempts++;
        await m.query(`UPDATE actions SET attempts = attempts + 1 WHERE id = $1`, [first]);
        await bothLockedFirstRow();
        await m.query(`UPDATE actions SET attempts = attempts + 1 WHERE id = $1`, [second]);
      });
    await Promise.all([swap(a.id, b.id), swap(b.id, a.id)]);
    expect(attempts).toBe(3);
    const rows = await db.dataSource.manager.findBy(ActionEntity, {});
    expect(rows.map((r) => r.attempts)).toEqual([2, 2]);
  });

  it('publishes each row once with relays of two processes (two pools)', async () => {
    const other = await openDatabase({ url: db.url, dataDir: ':memory:', poolSize: 3, logging: false }, silentLogger);
    const messages = Array.from({ length: 200 }, (_, i) => message({ body: { n: i } }));
    for (let i = 0; i < messages.length; i += 50) {
      await inTransaction(db.dataSource, async (m) => {
        for (const msg of messages.slice(i, i + 50)) await addToOutbox(m, msg);
      });
    }
    const seen: string[] = [];
    const publish = async (m: OutgoingMessage) => {
      await new Promise((r) => setTimeout(r, Math.random() * 2));
      seen.push(m.messageId);
    };
    const relays = [db.dataSource, other.dataSource, db.dataSource, other.dataSource].map(
      (ds) => new OutboxRelay(ds, publish, { batchSize: 9, pollIntervalMs: 10, logger: silentLogger }),
    );
    try {
      relays.forEach((r) => r.start());
      await waitFor(async () => (await outboxStats(db.dataSource)).pending === 0);
    } finally {
      await Promise.all(relays.map((r) => r.stop()));
      await other.close();
    }
    expect(seen).toHaveLength(messages.length);
    expect(new Set(seen).size).toBe(messages.length);
  });

  describe('hotQuery (named prepared statements)', () => {
    const insert = `INSERT INTO processed_messages (consumer, message_id, processed_at) VALUES ($1, $2, now())
       ON CONFLICT (consumer, message_id) DO NOTHING RETURNING message_id`;
    const update = `UPDATE processed_messages SET processed_at = now() WHERE consumer = $1 RETURNING message_id`;
    const prepared = `SELECT name FROM pg_prepared_statements WHERE name LIKE 'trellis_%'`;

    it('prepares each text once per connection and answers as manager.query() does', async () => {
      // one connection, so every transaction below runs on the same server session
      const single = await openDatabase({ url: db.url, dataDir: ':memory:', poolSize: 1, logging: false }, silentLogger);
      try {
        const ids = [randomUUID(), randomUUID(), randomUUID()];
        for (const id of ids) {
          const inserted = await inTransaction(single.dataSource, (m) => hotQuery(m, insert, ['hot', id]));
          expect(inserted).toEqual([{ message_id: id }]);
        }
        // a repeated key: ON CONFLICT DO NOTHING, no row (as manager.query() gives)
        expect(await inTransaction(single.dataSource, (m) => hotQuery(m, insert, ['hot', ids[0]]))).toEqual([]);
        // UPDATE and DELETE: [rows, rowCount], as manager.query() gives
        const [rows, count] = await inTransaction(single.dataSource, (m) => hotQuery<[Array<{ message_id: string }>, number]>(m, update, ['hot']));
        expect(count).toBe(3);
        expect(rows.map((r) => r.message_id).sort()).toEqual([...ids].sort());
        expect(await single.dataSource.manager.query(update, ['hot'])).toEqual([expect.any(Array), 3]);
        // outside a transaction: a pooled connection (the same one here)
        expect(await hotQuery(single.dataSource.manager, 'SELECT count(*)::int AS n FROM processed_messages WHERE consumer = $1', ['hot'])).toEqual([{ n: 3 }]);

        const names: Array<{ name: string }> = await single.dataSource.query(prepared);
        expect(names.map((r) => r.name).sort()).toEqual(
          [statementName(insert), statementName(update), statementName('SELECT count(*)::int AS n FROM processed_messages WHERE consumer = $1')].sort(),
        );
      } finally {
        await single.close();
      }
    });

    it('fails with the SQLSTATE inside a QueryFailedError, and the transaction rolls back', async () => {
      const id = randomUUID();
      const failing = inTransaction(db.dataSource, async (m) => {
        await hotQuery(m, insert, ['hot-fail', id]);
        await hotQuery(m, 'INSERT INTO processed_messages (consumer, message_id, processed_at) VALUES ($1, $2, now())', ['hot-fail', id]);
      });
      await expect(failing).rejects.toBeInstanceOf(QueryFailedError);
      await expect(failing).rejects.toMatchObject({ driverError: { code: '23505' } });
      expect(await db.dataSource.query(`SELECT count(*)::int AS n FROM processed_messages WHERE consumer = 'hot-fail'`)).toEqual([{ n: 0 }]);
    });

    it('prepares nothing when TRELLIS_DB_PREPARED_STATEMENTS is false', async () => {
      const off = await openDatabase({ url: db.url, dataDir: ':memory:', poolSize: 1, logging: false, preparedStatements: false }, silentLogger);
      try {
        const id = randomUUID();
        expect(await inTransaction(off.dataSource, (m) => hotQuery(m, insert, ['hot-off', id]))).toEqual([{ message_id: id }]);
        expect(await off.dataSource.query(prepared)).toEqual([]);
      } finally {
        await off.close();
      }
    });
  });

  describe('inTransaction with BEGIN pipelined (TRELLIS_DB_PIPELINE)', () => {
    /** What the pooled connections send and when BEGIN is answered, in order. */
    async function traced(
      pipeline: boolean | undefined,
      work: Parameters<typeof inTransaction>[1],
      { writes = false } = {},
    ): Promise<{ events: string[]; error?: unknown }> {
      const opened = await openDatabase({ url: db.url, dataDir: ':memory:', poolSize: 1, logging: false, pipeline }, silentLogger);
      const events: string[] = [];
      const original = Client.prototype.query;
      // with `writes`, each time a socket hands bytes to the kernel (one system call each)
      const socketProto = Socket.prototype as unknown as Record<'_write' | '_writev', (...a: unknown[]) => unknown>;
      const originalWrite = socketProto._write;
      const originalWritev = socketProto._writev;
      if (writes) {
        socketProto._write = function (this: Socket, ...a: unknown[]) {
          events.push('socket write');
          return originalWrite.apply(this, a);
        };
        socketProto._writev = function (this: Socket, ...a: unknown[]) {
          events.push('socket write');
          return originalWritev.apply(this, a);
        };
      }
      const word = (q: unknown) => (typeof q === 'string' ? q : ((q as { text?: string })?.text ?? '')).trim().split(/\s+/).slice(0, 2).join(' ');
      Client.prototype.query = function (this: Client, ...args: unknown[]) {
        const what = word(args[0]);
        events.push(`sent ${what}`);
        const answer = (original as (...a: unknown[]) => unknown).apply(this, args);
        if (what === 'START TRANSACTION' && answer instanceof Promise) {
          answer.then(
            () => events.push('answered START TRANSACTION'),
            () => events.push('failed START TRANSACTION'),
          );
        }
        return answer;
      } as typeof Client.prototype.query;
      try {
        await inTransaction(opened.dataSource, work);
        return { events };
      } catch (error) {
        return { events, error };
      } finally {
        Client.prototype.query = original;
        socketProto._write = originalWrite;
        socketProto._writev = originalWritev;
        await opened.close();
      }
    }
    const count = async (consumer: string) =>
      (await db.dataSource.query('SELECT count(*)::int AS n FROM processed_messages WHERE consumer = $1', [consumer]))[0].n;

    it('sends the first statement before BEGIN is answered, and it runs inside the transaction', async () => {
      const { events, error } = await traced(undefined, async (m) => {
        await m.query('INSERT INTO processed_messages (consumer, message_id, processed_at) VALUES ($1, $2, now())', ['piped', randomUUID()]);
        throw new Error('undo it');
      });
      expect((error as Error).message).toBe('undo it');
      expect(events.slice(0, 3)).toEqual(['sent START TRANSACTION', 'sent INSERT INTO', 'answered START TRANSACTION']);
      expect(events).toContain('sent ROLLBACK');
      // rolled back with the transaction: the INSERT did not run on its own
      expect(await count('piped')).toBe(0);
    });

    it('commits what the transaction wrote, and its after-commit hooks run', async () => {
      let committed = 0;
      const { events, error } = await traced(undefined, async (m) => {
        await m.query('INSERT INTO processed_messages (consumer, message_id, processed_at) VALUES ($1, $2, now())', ['piped-ok', randomUUID()]);
        afterCommit(m, () => committed++);
      });
      expect(error).toBeUndefined();
      expect(events.filter((e) => e.startsWith('sent'))).toEqual(['sent START TRANSACTION', 'sent INSERT INTO', 'sent COMMIT']);
      expect(committed).toBe(1);
      expect(await count('piped-ok')).toBe(1);
    });

    it('writes BEGIN and the first statement to the socket together, in one write', async () => {
      const { events, error } = await traced(
        undefined,
        async (m) => {
          await m.query('SELECT 1');
        },
        { writes: true },
      );
      expect(error).toBeUndefined();
      expect(events.slice(0, 3)).toEqual(['sent START TRANSACTION', 'sent SELECT 1', 'socket write']);
      expect(events.indexOf('socket write', 3)).toBeGreaterThan(events.indexOf('answered START TRANSACTION'));
    });

    it('waits for BEGIN when TRELLIS_DB_PIPELINE is false', async () => {
      const { events, error } = await traced(false, async (m) => {
        await m.query('SELECT 1');
      });
      expect(error).toBeUndefined();
      expect(events.slice(0, 3)).toEqual(['sent START TRANSACTION', 'answered START TRANSACTION', 'sent SELECT 1']);
    });
  });

  it('names DATABASE_URL when the database does not exist', async () => {
    const url = Object.assign(new URL(adminUrl), { pathname: '/trellis_it_does_not_exist' }).toString();
    await expect(openDatabase({ url, dataDir: ':memory:', poolSize: 1, logging: false }, silentLogger)).rejects.toThrow(
      /DATABASE_URL .*trellis_it_does_not_exist.*does not exist/,
    );
  });
});

async function admin(sql: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Resolves for everyone once `n` callers are waiting. */
function barrier(n: number): () => Promise<void> {
  let waiting = 0;
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return () => {
    if (++waiting >= n) open();
    return opened;
  };
}
