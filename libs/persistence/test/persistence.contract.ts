import { randomUUID } from 'node:crypto';
import { silentLogger } from '@trellis/common';
import type { OutgoingMessage } from '@trellis/messaging/bus.port';
import { MessageTooLargeError } from '@trellis/messaging/bus-errors';
import type { DataSource } from 'typeorm';
import type { Database } from '../src/database';
import { ActionEntity, OutboxEntity } from '../src/entities';
import { markProcessed, markProcessedAndLockAction } from '../src/inbox';
import { runMigrationsLocked } from '../src/migrate';
import { ALL_MIGRATIONS } from '../src/migrations';
import { addAllToOutbox, addToOutbox, outboxStats, purgePublishedOutbox } from '../src/outbox/outbox';
import { OutboxRelay, type OutboxRelayOptions } from '../src/outbox/outbox-relay';
import { inTransaction } from '../src/transaction';

/**
 * The behaviour every database Trellis runs on must show: the unit suite runs it on an in-memory
 * PGlite, the integration suite on PostgreSQL. `open` gives a fresh, migrated database.
 */
export function describePersistenceContract(name: string, open: () => Promise<Database>): void {
  describe(`persistence contract: ${name}`, () => {
    let db: Database;
    let ds: DataSource;
    const relays: OutboxRelay[] = [];

    beforeAll(async () => {
      db = await open();
      ds = db.dataSource;
    });
    afterAll(async () => {
      await db?.close();
    });
    beforeEach(async () => {
      await ds.query('TRUNCATE outbox, processed_messages, actions, nodes RESTART IDENTITY');
    });
    afterEach(async () => {
      await Promise.all(relays.splice(0).map((r) => r.stop()));
    });

    const relay = (publish: (m: OutgoingMessage) => Promise<void>, options: Partial<OutboxRelayOptions> = {}) => {
      const r = new OutboxRelay(ds, publish, { batchSize: 10, pollIntervalMs: 20, logger: silentLogger, ...options });
      relays.push(r);
      return r;
    };

    describe('migrations', () => {
      it('leave nothing for TypeORM to change between the entities and the schema', async () => {
        const diff = await ds.driver.createSchemaBuilder().log();
        expect(diff.upQueries.map((q) => q.query)).toEqual([]);
      });

      it('are recorded once each and find nothing pending when run again', async () => {
        expect(await runMigrationsLocked(ds, silentLogger)).toEqual([]);
        const rows: { name: string }[] = await ds.query('SELECT name FROM migrations ORDER BY id');
        expect(rows.map((r) => r.name)).toEqual(ALL_MIGRATIONS.map((m) => m.name));
      });

      it("fill nodes.placement_zone for the rows already there, and PostgreSQL keeps it on every write (the zone nodeZone reads)", async () => {
        // back to the schema before migration 1795970000000, rows written there, then migrated again
        const from = ALL_MIGRATIONS.findIndex((m) => m.name === 'NodePlacementZone1795970000000');
        expect(from).toBeGreaterThan(0);
        for (let i = ALL_MIGRATIONS.length; i > from; i--) await ds.undoLastMigration();
        const profile = randomUUID();
        const data = [{ placement: { zone: 'az1', host: 'h' } }, { placement: { zone: 7 } }, { placement: {} }, {}, { placement: { zone: '' } }];
        const ids = data.map(() => randomUUID());
        try {
          await ds.query(`INSERT INTO profiles (id, name, type, spec, project, "user", created_at) VALUES ($1, 'p', 'os.nova.server-1.0', '{}', 'p', 'u', now())`, [profile]);
          for (const [i, d] of data.entries()) {
            await ds.query(`INSERT INTO nodes (id, name, profile_id, project, "user", status, data) VALUES ($1, $2, $3, 'p', 'u', 'ACTIVE', $4)`, [ids[i], `n${i}`, profile, d]);
          }
        } finally {
          expect(await runMigrationsLocked(ds, silentLogger)).toEqual(ALL_MIGRATIONS.slice(from).map((m) => m.name));
        }
        const zones = async () => {
          const rows: Array<{ id: string; placement_zone: string | null }> = await ds.query('SELECT id, placement_zone FROM nodes WHERE id = ANY($1)', [ids]);
          return ids.map((id) => rows.find((r) => r.id === id)?.placement_zone);
        };
        expect(await zones()).toEqual(['az1', null, null, null, '']);
        // down and up again leave the schema TypeORM expects (the column's expression in typeorm_metadata)
        expect((await ds.driver.createSchemaBuilder().log()).upQueries.map((q) => q.query)).toEqual([]);
        await ds.query(`UPDATE nodes SET data = jsonb_set(data, '{placement}', '{"zone": "az2"}') WHERE id = $1`, [ids[1]]);
        await ds.query(`UPDATE nodes SET data = '{}' WHERE id = $1`, [ids[0]]);
        expect(await zones()).toEqual([null, 'az2', null, null, '']);
        await ds.query('DELETE FROM nodes WHERE id = ANY($1)', [ids]);
        await ds.query('DELETE FROM profiles WHERE id = $1', [profile]);
      });

      it('keep every host a project\'s nodes recorded in project_hosts, with its count, for rows already there and on every write', async () => {
        // back to the schema before migration 1796000000000, a node with a host written there, then migrated again
        const from = ALL_MIGRATIONS.findIndex((m) => m.name === 'ProjectHosts1796000000000');
        expect(from).toBeGreaterThan(0);
        for (let i = ALL_MIGRATIONS.length; i > from; i--) await ds.undoLastMigration();
        const [pa, pb] = [`pa-${randomUUID().slice(0, 8)}`, `pb-${randomUUID().slice(0, 8)}`];
        const profile = randomUUID();
        const node = (project: string, data: unknown) =>
          ds
            .query(`INSERT INTO nodes (id, name, profile_id, project, "user", status, data) VALUES ($1, 'n', $2, $3, 'u', 'ACTIVE', $4) RETURNING id`, [randomUUID(), profile, project, data])
            .then((rows: Array<{ id: string }>) => rows[0].id);
        try {
          await ds.query(`INSERT INTO profiles (id, name, type, spec, project, "user", created_at) VALUES ($1, 'p', 'os.nova.server-1.0', '{}', 'p', 'u', now())`, [profile]);
          await node(pa, { placement: { zone: 'az1', host: 'old-host' } });
          await node(pa, { placement: { host: 'old-host' } });
        } finally {
          expect(await runMigrationsLocked(ds, silentLogger)).toEqual(ALL_MIGRATIONS.slice(from).map((m) => m.name));
        }
        const hosts = async (project: string) => {
          const rows: Array<{ host: string }> = await ds.query('SELECT host FROM project_hosts WHERE project = $1 ORDER BY host', [project]);
          const [count] = (await ds.query('SELECT hosts FROM project_host_counts WHERE project = $1', [project])) as Array<{ hosts: number }>;
          return { hosts: rows.map((r) => r.host), count: count?.hosts ?? 0 };
        };
        expect(await hosts(pa)).toEqual({ hosts: ['old-host'], count: 1 });

        // inserted with a host, or without one (a number, an empty string and no placement record none)
        const built = await node(pa, {});
        await node(pa, { placement: { host: 'h-1' } });
        await node(pb, { placement: { host: 'h-1' } });
        for (const data of [{ placement: { host: 7 } }, { placement: { host: '' } }, { placement: null }]) await node(pb, data);
        expect(await hosts(pa)).toEqual({ hosts: ['h-1', 'old-host'], count: 2 });
        expect(await hosts(pb)).toEqual({ hosts: ['h-1'], count: 1 });
        // a host recorded later, as the worker and the survey write it (whole data, or jsonb_set of the placement)
        await ds.query(`UPDATE nodes SET data = $2 WHERE id = $1`, [built, { placement: { zone: 'az1', host: 'h-2' } }]);
        expect(await hosts(pa)).toEqual({ hosts: ['h-1', 'h-2', 'old-host'], count: 3 });
        await ds.query(`UPDATE nodes SET data = jsonb_set(data, '{placement}', $2::jsonb) WHERE id = $1`, [built, { zone: 'az2', host: 'h-3' }]);
        // the same host again, another column, a host already known: nothing new
        await ds.query(`UPDATE nodes SET data = jsonb_set(data, '{placement,zone}', '"az1"') WHERE id = $1`, [built]);
        await ds.query(`UPDATE nodes SET status = 'ERROR' WHERE id = $1`, [built]);
        await ds.query(`UPDATE nodes SET data = $2 WHERE id = $1`, [built, { placement: { host: 'h-2' } }]);
        // the node moved to another project keeps its host there too; a deleted node's host stays
        await ds.query(`UPDATE nodes SET project = $2 WHERE id = $1`, [built, pb]);
        await ds.query(`DELETE FROM nodes WHERE id = $1`, [built]);
        expect(await hosts(pa)).toEqual({ hosts: ['h-1', 'h-2', 'h-3', 'old-host'], count: 4 });
        expect(await hosts(pb)).toEqual({ hosts: ['h-1', 'h-2'], count: 2 });
        await ds.query('DELETE FROM nodes WHERE profile_id = $1', [profile]);
        await ds.query('DELETE FROM profiles WHERE id = $1', [profile]);
      });
    });

    describe('inTransaction', () => {
      it('commits the work and returns its result', async () => {
        const id = randomUUID();
        const result = await inTransaction(ds, async (m) => {
          await m.save(ActionEntity, action({ id }));
          return 'done';
        });
        expect(result).toBe('done');
        expect(await ds.manager.countBy(ActionEntity, { id })).toBe(1);
      });

      it('rolls everything back and rethrows when the work fails', async () => {
        const id = randomUUID();
        await expect(
          inTransaction(ds, async (m) => {
            await m.save(ActionEntity, action({ id }));
            await addToOutbox(m, message());
            throw new Error('policy said no');
          }),
        ).rejects.toThrow('policy said no');
        expect(await ds.manager.countBy(ActionEntity, { id })).toBe(0);
        expect((await outboxStats(ds)).pending).toBe(0);
      });

      it('runs the work again after a serialization failure, without the failed attempt’s writes', async () => {
        const first = randomUUID();
        const second = randomUUID();
        let calls = 0;
        await inTransaction(ds, async (m) => {
          calls++;
          await m.save(ActionEntity, action({ id: calls === 1 ? first : second }));
          if (calls === 1) throw sqlError('40001', 'could not serialize access due to concurrent update');
        });
        expect(calls).toBe(2);
        expect(await ds.manager.countBy(ActionEntity, { id: first })).toBe(0);
        expect(await ds.manager.countBy(ActionEntity, { id: second })).toBe(1);
      });

      it('gives up after maxAttempts deadlocks and does not retry other errors', async () => {
        let calls = 0;
        const deadlock = inTransaction(
          ds,
          async () => {
            calls++;
            throw sqlError('40P01', 'deadlock detected');
          },
          { maxAttempts: 3 },
        );
        await expect(deadlock).rejects.toThrow('deadlock detected');
        expect(calls).toBe(3);

        const id = randomUUID();
        await ds.manager.save(ActionEntity, action({ id }));
        calls = 0;
        const duplicate = inTransaction(ds, async (m) => {
          calls++;
          await m.createQueryBuilder().insert().into(ActionEntity).values(action({ id }) as never).execute();
        });
        await expect(duplicate).rejects.toThrow(/duplicate key/);
        expect(calls).toBe(1);
      });
    });

    describe('outbox', () => {
      it('writes the message in the caller’s transaction, and only once per message id', async () => {
        const m = message({ correlationId: 'corr-1', type: 'action.requested', headers: { 'x-attempt': 2, urgent: true } });
        await expect(
          inTransaction(ds, async (tx) => {
            await addToOutbox(tx, m);
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        expect(await ds.manager.count(OutboxEntity)).toBe(0);

        expect(await inTransaction(ds, (tx) => addToOutbox(tx, m))).toBe(true);
        expect(await inTransaction(ds, (tx) => addToOutbox(tx, { ...m, body: { other: true } }))).toBe(false);

        const rows = await ds.manager.find(OutboxEntity);
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({
          exchange: m.exchange,
          routing_key: m.routingKey,
          message_id: m.messageId,
          correlation_id: 'corr-1',
          type: 'action.requested',
          payload: m.body,
          headers: { 'x-attempt': 2, urgent: true },
          published_at: null,
          attempts: 0,
        });
      });

      it('writes the statements given `with` it in the outbox row’s statement, all or nothing with the transaction', async () => {
        const insert = `INSERT INTO processed_messages (consumer, message_id, processed_at) VALUES ($1, $2, now())`;
        const stamp = `UPDATE processed_messages SET consumer = $2 WHERE consumer = $1`;
        const [a, b] = [randomUUID(), randomUUID()];
        const count = async (consumer: string) =>
          ((await ds.query('SELECT count(*)::int AS n FROM processed_messages WHERE consumer = $1', [consumer])) as Array<{ n: number }>)[0].n;

        await expect(
          inTransaction(ds, async (tx) => {
            await addToOutbox(tx, message(), { with: [{ text: insert, params: ['with-test', a] }] });
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        expect([await count('with-test'), await ds.manager.count(OutboxEntity)]).toEqual([0, 0]);

        const m = message();
        const written = await inTransaction(ds, (tx) =>
          addToOutbox(tx, m, { with: [{ text: insert, params: ['with-test', a] }, { text: insert, params: ['with-test', b] }] }),
        );
        expect(written).toBe(true);
        expect(await count('with-test')).toBe(2);
        expect((await ds.manager.find(OutboxEntity)).map((r) => [r.message_id, r.payload])).toEqual([[m.messageId, m.body]]);

        // a message already in the outbox is not written again; the writes still are
        expect(await inTransaction(ds, (tx) => addToOutbox(tx, m, { with: [{ text: stamp, params: ['with-test', 'with-done'] }] }))).toBe(false);
        expect([await count('with-test'), await count('with-done'), await ds.manager.count(OutboxEntity)]).toEqual([0, 2, 1]);
      });

      it('writes several messages with one statement (addAllToOutbox): in the order given, once per message id, with the `with` statements', async () => {
        const insert = `INSERT INTO processed_messages (consumer, message_id, processed_at) SELECT $1, unnest($2::uuid[]), now()`;
        const count = async (consumer: string) =>
          ((await ds.query('SELECT count(*)::int AS n FROM processed_messages WHERE consumer = $1', [consumer])) as Array<{ n: number }>)[0].n;
        const [a, b, c] = [message({ type: 'one', headers: { n: 1 } }), message({ body: [1, 2] }), message({ correlationId: 'corr-3' })];

        await expect(
          inTransaction(ds, async (tx) => {
            await addAllToOutbox(tx, [a, b], { with: [{ text: insert, params: ['all-test', [randomUUID()]] }] });
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        expect([await count('all-test'), await ds.manager.count(OutboxEntity)]).toEqual([0, 0]);

        const first = await inTransaction(ds, (tx) => addAllToOutbox(tx, [b, a], { with: [{ text: insert, params: ['all-test', [randomUUID(), randomUUID()]] }] }));
        expect([...first].sort()).toEqual([a.messageId, b.messageId].sort());
        expect(await count('all-test')).toBe(2);
        // already there (a), or given twice (c, in upper case the second time): written once each
        const again = await inTransaction(ds, (tx) => addAllToOutbox(tx, [a, c, { ...c, messageId: c.messageId.toUpperCase(), body: { dup: true } }]));
        expect([...again]).toEqual([c.messageId]);

        const rows = await ds.manager.find(OutboxEntity, { order: { id: 'ASC' } });
        expect(rows.map((r) => [r.message_id, r.payload, r.type, r.correlation_id, r.headers])).toEqual([
          [b.messageId, [1, 2], null, null, {}],
          [a.messageId, a.body, 'one', null, { n: 1 }],
          [c.messageId, c.body, null, 'corr-3', {}],
        ]);
        expect(await inTransaction(ds, (tx) => addAllToOutbox(tx, []))).toEqual(new Set());
        await expect(inTransaction(ds, (tx) => addAllToOutbox(tx, [a, { ...b, exchange: '' }]))).rejects.toThrow(/message\.exchange/);
      });

      it('stores a JSON array body as an array', async () => {
        const m = message({ body: [1, { a: 'b' }] });
        await inTransaction(ds, (tx) => addToOutbox(tx, m));
        const published = await drain([m.messageId]);
        expect(published[0].body).toEqual([1, { a: 'b' }]);
      });

      it('rejects a message it cannot store, naming the field', async () => {
        const bad: [Partial<OutgoingMessage>, RegExp][] = [
          [{ messageId: 'not-a-uuid' }, /message\.messageId must be a UUID/],
          [{ exchange: '' }, /message\.exchange must be 1 to 128 characters/],
          [{ headers: { nested: { a: 1 } } as never }, /message\.headers\.nested must be a string, number or boolean/],
          [{ body: undefined }, /message\.body cannot be stored as JSON/],
          [{ body: { n: BigInt(1) } }, /message\.body cannot be stored as JSON/],
          [{ correlationId: 'x'.repeat(129) }, /message\.correlationId must be 1 to 128 characters/],
        ];
        for (const [patch, error] of bad) {
          await expect(inTransaction(ds, (tx) => addToOutbox(tx, { ...message(), ...patch }))).rejects.toThrow(error);
        }
        expect(await ds.manager.count(OutboxEntity)).toBe(0);
      });

      it('is published exactly once per row by two relays running at once, in id order per relay', async () => {
        const messages = Array.from({ length: 120 }, (_, i) => message({ body: { n: i } }));
        for (let i = 0; i < messages.length; i += 30) {
          await inTransaction(ds, async (tx) => {
            for (const m of messages.slice(i, i + 30)) await addToOutbox(tx, m);
          });
        }
        const ids = new Map((await ds.manager.find(OutboxEntity)).map((r) => [r.message_id, BigInt(r.id)]));
        const seen: string[] = [];
        const byRelay: bigint[][] = [[], []];
        const publisher = (n: number) => async (m: OutgoingMessage) => {
          await new Promise((r) => setTimeout(r, Math.random() * 3));
          seen.push(m.messageId);
          byRelay[n].push(ids.get(m.messageId)!);
        };
        relay(publisher(0), { batchSize: 7 }).start();
        relay(publisher(1), { batchSize: 7 }).start();
        await waitFor(async () => seen.length >= messages.length && (await outboxStats(ds)).pending === 0);
        await Promise.all(relays.splice(0).map((r) => r.stop()));

        expect(seen).toHaveLength(messages.length);
        expect(new Set(seen)).toEqual(new Set(messages.map((m) => m.messageId)));
        for (const list of byRelay) {
          expect(list).toEqual([...list].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
        }
        const unpublished = await ds.query('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL');
        expect(unpublished[0].n).toBe(0);
      });

      it('retries a failed publish with backoff and loses nothing', async () => {
        const messages = Array.from({ length: 6 }, (_, i) => message({ body: { n: i } }));
        await inTransaction(ds, async (tx) => {
          for (const m of messages) await addToOutbox(tx, m);
        });
        const flaky = messages[2].messageId;
        let failures = 0;
        const published: string[] = [];
        relay(
          async (m) => {
            if (m.messageId === flaky && failures < 2) {
              failures++;
              throw new Error('broker said no');
            }
            published.push(m.messageId);
          },
          { retryBaseMs: 5, retryMaxMs: 20 },
        ).start();
        await waitFor(async () => (await outboxStats(ds)).pending === 0);

        expect(failures).toBe(2);
        expect([...published].sort()).toEqual(messages.map((m) => m.messageId).sort());
        expect(published.slice(0, 2)).toEqual([messages[0].messageId, messages[1].messageId]);
        const row = await ds.manager.findOneByOrFail(OutboxEntity, { message_id: flaky });
        expect(row).toMatchObject({ attempts: 2, last_error: 'broker said no' });
        expect(row.published_at).toBeInstanceOf(Date);
        const others = await ds.query(`SELECT max(attempts)::int AS n FROM outbox WHERE message_id <> $1`, [flaky]);
        expect(others[0].n).toBe(0);
      });

      /**
       * A broker that refuses one message for its size (as RabbitMQ over max_message_size, or the bus
       * before sending it) and takes the rest; counts the tries of each message.
       */
      const refusingOneForItsSize = (tooLarge: string) => {
        const tries = new Map<string, number>();
        const published: string[] = [];
        const publish = async (m: OutgoingMessage) => {
          tries.set(m.messageId, (tries.get(m.messageId) ?? 0) + 1);
          if (m.messageId === tooLarge) throw new MessageTooLargeError(20_000_000, 16_777_216, m.messageId, 'bus');
          published.push(m.messageId);
        };
        return { tries, published, publish };
      };

      const expectSetAside = async (messageId: string) => {
        const row = await ds.manager.findOneByOrFail(OutboxEntity, { message_id: messageId });
        expect(row.published_at).toBeNull();
        expect(row.failed_at).toBeInstanceOf(Date);
        expect(row.claimed_until).toBeNull();
        expect(row.attempts).toBe(1);
        expect(row.last_error).toMatch(/is 20,000,000 bytes \(19.1 MiB\), larger than the 16,777,216 bytes \(16 MiB\) the message broker takes/);
        expect(await outboxStats(ds)).toMatchObject({ pending: 0, failing: 0, setAside: 1, oldestPendingAgeMs: null });
      };

      it('sets aside a row the broker can never take, once, and publishes the rows after it in order', async () => {
        const messages = Array.from({ length: 6 }, (_, i) => message({ body: { n: i } }));
        await inTransaction(ds, async (tx) => {
          for (const m of messages) await addToOutbox(tx, m);
        });
        const tooLarge = messages[2].messageId;
        const broker = refusingOneForItsSize(tooLarge);
        relay(broker.publish, { retryBaseMs: 5, retryMaxMs: 20 }).start();
        await waitFor(async () => broker.published.length === 5);
        expect(broker.published).toEqual(messages.filter((m) => m.messageId !== tooLarge).map((m) => m.messageId));
        // many poll intervals later, and another relay besides: nobody tries it again
        const other = refusingOneForItsSize(tooLarge);
        relay(other.publish, { retryBaseMs: 5, retryMaxMs: 20 }).start();
        await new Promise((r) => setTimeout(r, 300));
        expect(broker.tries.get(tooLarge)).toBe(1);
        expect(other.tries.size).toBe(0);
        await expectSetAside(tooLarge);
        // kept for a look, then deleted by the cleanup after SET_ASIDE_RETENTION_MS
        expect(await purgePublishedOutbox(ds, 0)).toBe(5);
        expect(await ds.manager.count(OutboxEntity)).toBe(1);
        await ds.query(`UPDATE outbox SET failed_at = now() - interval '8 days' WHERE message_id = $1`, [tooLarge]);
        expect(await purgePublishedOutbox(ds, 0)).toBe(1);
        expect(await ds.manager.count(OutboxEntity)).toBe(0);
      });

      it('leaves rows claimed by another relay alone until the claim expires', async () => {
        const held = message();
        const free = message();
        await inTransaction(ds, async (tx) => {
          await addToOutbox(tx, held);
          await addToOutbox(tx, free);
        });
        // what a relay that died while publishing leaves behind
        await ds.query(`UPDATE outbox SET claimed_until = now() + interval '1 hour' WHERE message_id = $1`, [held.messageId]);
        const published: string[] = [];
        const r = relay(async (m) => void published.push(m.messageId));
        r.start();
        await waitFor(async () => published.includes(free.messageId));
        expect(published).toEqual([free.messageId]);

        await ds.query(`UPDATE outbox SET claimed_until = now() - interval '1 second' WHERE message_id = $1`, [held.messageId]);
        r.kick();
        await waitFor(async () => published.includes(held.messageId));
        expect(published).toEqual([free.messageId, held.messageId]);
      });

      it('publishes right after kick() without waiting for the poll interval', async () => {
        const published: string[] = [];
        const r = relay(async (m) => void published.push(m.messageId), { pollIntervalMs: 600_000 });
        r.start();
        const m = message();
        await inTransaction(ds, (tx) => addToOutbox(tx, m));
        r.kick();
        await waitFor(async () => published.length === 1);
        expect(published).toEqual([m.messageId]);
      });

      describe('hand-over of rows written in this process', () => {
        const statements = () => {
          const seen: string[] = [];
          const original = ds.query.bind(ds);
          // EntityManager.query comes here too, with its transaction's query runner as the third argument
          const spy = jest.spyOn(ds, 'query').mockImplementation((...args: Parameters<DataSource['query']>) => {
            const [sql, , runner] = args;
            if (!runner) seen.push(sql.replace(/\s+/g, ' ').trim());
            return original(...args);
          });
          // hotQuery's named statements outside a transaction go to the pg pool itself (PostgreSQL only)
          const pool = (ds.driver as unknown as { master?: { query: (...a: unknown[]) => unknown } }).master;
          let poolSpy: jest.SpyInstance | null = null;
          if (pool && typeof pool.query === 'function') {
            const originalPoolQuery = pool.query.bind(pool);
            poolSpy = jest.spyOn(pool, 'query').mockImplementation((...args: unknown[]) => {
              const config = args[0] as { name?: unknown; text?: unknown } | null;
              if (config && typeof config === 'object' && typeof config.name === 'string' && typeof config.text === 'string') {
                seen.push(config.text.replace(/\s+/g, ' ').trim());
              }
              return originalPoolQuery(...args);
            });
          }
          return {
            seen,
            restore: () => {
              spy.mockRestore();
              poolSpy?.mockRestore();
            },
          };
        };

        it('publishes a row as soon as its transaction commits, with one statement and no polling', async () => {
          const published: OutgoingMessage[] = [];
          const spy = statements();
          try {
            const r = relay(async (m) => void published.push(m), { pollIntervalMs: 600_000 });
            r.start();
            const m = message({ correlationId: 'corr-9', type: 'work.order', headers: { 'x-n': 1 }, body: { nested: { list: [1, 'two'] } } });
            await inTransaction(ds, (tx) => addToOutbox(tx, m));
            await waitFor(async () => published.length === 1 && (await outboxStats(ds)).pending === 0);
            expect(published[0]).toEqual({ exchange: m.exchange, routingKey: m.routingKey, messageId: m.messageId, correlationId: 'corr-9', type: 'work.order', headers: { 'x-n': 1 }, body: { nested: { list: [1, 'two'] } } });
            const relayStatements = spy.seen.filter((q) => !q.startsWith('SELECT (count(*) FILTER (WHERE failed_at IS NULL))::int AS pending') && !q.startsWith('DELETE FROM outbox'));
            // the mark, and the poll at start-up (before or after the hand-over; it finds nothing, the
            // row is leased to the hand-over)
            const claims = relayStatements.filter((q) => /^UPDATE outbox SET claimed_until = clock_timestamp\(\) \+ make_interval/.test(q));
            const marks = relayStatements.filter((q) => /^UPDATE outbox SET published_at = now\(\), claimed_until = NULL WHERE id = ANY/.test(q));
            expect([claims.length, marks.length, relayStatements.length]).toEqual([1, 1, 2]);
          } finally {
            spy.restore();
          }
        });

        it('marks the rows of several transactions published with one statement', async () => {
          const published: string[] = [];
          const spy = statements();
          try {
            relay(async (m) => void published.push(m.messageId), { pollIntervalMs: 600_000, markDelayMs: 2_000 }).start();
            const messages = Array.from({ length: 6 }, () => message());
            for (const m of messages) await inTransaction(ds, (tx) => addToOutbox(tx, m));
            await waitFor(async () => published.length === messages.length);
            await waitFor(async () => (await outboxStats(ds)).pending === 0);
            expect(published).toEqual(messages.map((m) => m.messageId));
            const marks = spy.seen.filter((q) => q.startsWith('UPDATE outbox SET published_at'));
            expect(marks).toHaveLength(1);
          } finally {
            spy.restore();
          }
        });

        it('hands over the rows addAllToOutbox writes, in the order given, once each', async () => {
          const published: string[] = [];
          relay(async (m) => void published.push(m.messageId), { pollIntervalMs: 600_000 }).start();
          const messages = Array.from({ length: 7 }, (_, i) => message({ body: { n: i } }));
          await inTransaction(ds, (tx) => addAllToOutbox(tx, [...messages.slice(0, 4), messages[1]]));
          await inTransaction(ds, (tx) => addAllToOutbox(tx, messages.slice(4)));
          await waitFor(async () => published.length === messages.length && (await outboxStats(ds)).pending === 0);
          expect(published).toEqual(messages.map((m) => m.messageId));
        });

        it('keeps the order rows were written in, across transactions', async () => {
          const published: string[] = [];
          relay(async (m) => void published.push(m.messageId), { pollIntervalMs: 600_000 }).start();
          const messages = Array.from({ length: 25 }, (_, i) => message({ body: { n: i } }));
          for (let i = 0; i < messages.length; i += 5) {
            await inTransaction(ds, async (tx) => {
              for (const m of messages.slice(i, i + 5)) await addToOutbox(tx, m);
            });
          }
          await waitFor(async () => published.length === messages.length && (await outboxStats(ds)).pending === 0);
          expect(published).toEqual(messages.map((m) => m.messageId));
        });

        it('publishes nothing of a transaction that rolled back, nor of a savepoint rolled back inside one', async () => {
          const published: string[] = [];
          relay(async (m) => void published.push(m.messageId), { pollIntervalMs: 600_000 }).start();
          const [lost, kept, inner, last] = [message(), message(), message(), message()];
          await expect(
            inTransaction(ds, async (tx) => {
              await addToOutbox(tx, lost);
              throw new Error('rolled back');
            }),
          ).rejects.toThrow('rolled back');
          await inTransaction(ds, async (tx) => {
            await addToOutbox(tx, kept);
            await expect(
              tx.transaction(async (nested) => {
                await addToOutbox(nested, inner);
                throw new Error('savepoint rolled back');
              }),
            ).rejects.toThrow('savepoint rolled back');
            await addToOutbox(tx, last);
          });
          await waitFor(async () => published.length === 2);
          await new Promise((r) => setTimeout(r, 50));
          expect(published).toEqual([kept.messageId, last.messageId]);
          const rows = await ds.query('SELECT message_id FROM outbox ORDER BY id');
          expect(rows.map((r: { message_id: string }) => r.message_id)).toEqual([kept.messageId, last.messageId]);
        });

        it('leaves a row its relay never published to polling once the hand-over lease runs out', async () => {
          let release!: () => void;
          const stuck = new Promise<void>((r) => (release = r));
          const first = relay(() => stuck, { pollIntervalMs: 600_000, handoffLeaseMs: 300 });
          first.start();
          const m = message();
          await inTransaction(ds, (tx) => addToOutbox(tx, m)); // handed to `first`, which hangs
          const rescued: string[] = [];
          const t0 = Date.now();
          const second = relay(async (x) => void rescued.push(x.messageId), { pollIntervalMs: 20 });
          second.start();
          await waitFor(async () => rescued.length === 1);
          expect(rescued).toEqual([m.messageId]);
          expect(Date.now() - t0).toBeGreaterThanOrEqual(200); // not before the lease ran out
          release();
          await waitFor(async () => (await outboxStats(ds)).pending === 0);
        });

        /**
         * `count` messages written in one transaction to a relay whose broker refuses the one at
         * `flakyAt` `failTimes` times ('broker said no'); what it published, in order, and how often it refused.
         */
        const withFlakyBroker = async (count: number, flakyAt: number, failTimes: number, options: Partial<OutboxRelayOptions>) => {
          const messages = Array.from({ length: count }, (_, i) => message({ body: { n: i } }));
          const flaky = messages[flakyAt].messageId;
          const seen = { failures: 0, published: [] as string[] };
          relay(
            async (m) => {
              if (m.messageId === flaky && seen.failures < failTimes) {
                seen.failures++;
                throw new Error('broker said no');
              }
              seen.published.push(m.messageId);
            },
            { pollIntervalMs: 600_000, ...options },
          ).start();
          await inTransaction(ds, async (tx) => {
            for (const m of messages) await addToOutbox(tx, m);
          });
          return { messages, flaky, seen, published: seen.published };
        };

        it('retries a failed publish with backoff; the rows behind it follow it, none lost', async () => {
          const { messages, flaky, seen, published } = await withFlakyBroker(6, 2, 2, { retryBaseMs: 5, retryMaxMs: 20 });
          await waitFor(async () => (await outboxStats(ds)).pending === 0);
          expect(seen.failures).toBe(2);
          expect(published).toEqual(messages.map((m) => m.messageId));
          const row = await ds.manager.findOneByOrFail(OutboxEntity, { message_id: flaky });
          expect(row).toMatchObject({ attempts: 2, last_error: 'broker said no' });
        });

        it('sets aside a handed-over row the broker can never take and publishes the rows after it at once, in order', async () => {
          const messages = Array.from({ length: 6 }, (_, i) => message({ body: { n: i } }));
          const tooLarge = messages[2].messageId;
          const broker = refusingOneForItsSize(tooLarge);
          // no polling: the rows after it go with the hand-over, not after a pause and a poll
          relay(broker.publish, { pollIntervalMs: 600_000, retryBaseMs: 60_000, retryMaxMs: 60_000 }).start();
          await inTransaction(ds, async (tx) => {
            for (const m of messages) await addToOutbox(tx, m);
          });
          await waitFor(async () => broker.published.length === 5 && (await outboxStats(ds)).pending === 0);
          expect(broker.published).toEqual(messages.filter((m) => m.messageId !== tooLarge).map((m) => m.messageId));
          // and what is written next goes at once too: nothing waits behind it
          const next = message();
          await inTransaction(ds, (tx) => addToOutbox(tx, next));
          await waitFor(async () => broker.published.length === 6 && (await outboxStats(ds)).pending === 0);
          expect(broker.published[5]).toBe(next.messageId);
          expect(broker.tries.get(tooLarge)).toBe(1);
          await expectSetAside(tooLarge);
        });

        it('publishes nothing behind a failed row whose lease outlasts the pause, and retries it soon after', async () => {
          // the failed row's backoff lease is on the database's clock and the relay's pause on its
          // own; here the lease is made to outlast the pause by far (as a clock step or another
          // relay holding the row would): the rows behind it must still wait, in order, and the
          // row must not wait for the next poll (10 minutes away)
          const { messages, flaky, published } = await withFlakyBroker(4, 1, 1, { retryBaseMs: 150, retryMaxMs: 150 });
          await waitFor(async () => (await ds.manager.findOneByOrFail(OutboxEntity, { message_id: flaky })).attempts === 1);
          await ds.query(`UPDATE outbox SET claimed_until = clock_timestamp() + interval '600 milliseconds' WHERE message_id = $1`, [flaky]);
          await new Promise((r) => setTimeout(r, 400)); // past the relay's pause, inside the lease
          expect(published).toEqual([messages[0].messageId]);
          await waitFor(async () => (await outboxStats(ds)).pending === 0, 5000);
          expect(published).toEqual(messages.map((m) => m.messageId));
        });

        /** The message ids in the outbox, in id order (the order they must be published in). */
        const inIdOrder = async (): Promise<string[]> =>
          (await ds.query('SELECT message_id FROM outbox ORDER BY id')).map((r: { message_id: string }) => r.message_id);

        it('publishes nothing written during a failed row’s pause ahead of it, handed over or polled, and more than a batch at once', async () => {
          // batchSize 2: the failed row and the rows behind it are more than one polling round takes,
          // and the next poll is 10 minutes away
          const { flaky, published } = await withFlakyBroker(5, 1, 1, { retryBaseMs: 500, retryMaxMs: 500, batchSize: 2 });
          await waitFor(async () => (await ds.manager.findOneByOrFail(OutboxEntity, { message_id: flaky })).attempts === 1);
          // inside the 500 ms pause: two transactions of this process (handed over on commit) and,
          // between them, a row only polling finds (another process's)
          await inTransaction(ds, (tx) => addAllToOutbox(tx, [message(), message()]));
          const foreign = message();
          await ds.query(
            `INSERT INTO outbox (exchange, routing_key, message_id, payload, headers, created_at) VALUES ($1, $2, $3, '{}'::jsonb, '{}'::jsonb, now())`,
            [foreign.exchange, foreign.routingKey, foreign.messageId],
          );
          await inTransaction(ds, (tx) => addToOutbox(tx, message()));
          await waitFor(async () => (await outboxStats(ds)).pending === 0);
          expect(published).toEqual(await inIdOrder());
          expect(published).toHaveLength(9);
        });

        it('publishes nothing handed over while a failed row is held past the pause ahead of it, and all once its lease ends', async () => {
          // the failed row's lease outlasts the relay's pause (as when another relay holds it): rows
          // handed over meanwhile wait behind it, and go in id order once it is published
          const { flaky, published } = await withFlakyBroker(3, 1, 1, { retryBaseMs: 150, retryMaxMs: 150 });
          await waitFor(async () => (await ds.manager.findOneByOrFail(OutboxEntity, { message_id: flaky })).attempts === 1);
          await ds.query(`UPDATE outbox SET claimed_until = clock_timestamp() + interval '1500 milliseconds' WHERE message_id = $1`, [flaky]);
          await new Promise((r) => setTimeout(r, 300)); // past the relay's pause, inside the lease
          await inTransaction(ds, (tx) => addAllToOutbox(tx, [message(), message()]));
          await inTransaction(ds, (tx) => addToOutbox(tx, message()));
          await waitFor(async () => (await outboxStats(ds)).pending === 0);
          expect(published).toEqual(await inIdOrder());
          expect(published).toHaveLength(6);
        });

        it('releases rows handed over during a pause longer than their lease to polling at once: published once, not again after the pause', async () => {
          // another process's relay, polling only (the rows of `ds` are handed over to the relay started last)
          const others: string[] = [];
          relay(async (m) => void others.push(m.messageId), { pollIntervalMs: 20 }).start();
          const { flaky, published } = await withFlakyBroker(2, 1, 1, { retryBaseMs: 2500, retryMaxMs: 2500, handoffLeaseMs: 1000 });
          await waitFor(async () => (await ds.manager.findOneByOrFail(OutboxEntity, { message_id: flaky })).attempts === 1);
          const later = [message(), message()];
          await inTransaction(ds, (tx) => addAllToOutbox(tx, later)); // handed over inside the pause
          await waitFor(async () => (await outboxStats(ds)).pending === 0);
          await waitFor(async () => published.length + others.length >= 4);
          await new Promise((r) => setTimeout(r, 300)); // whatever would be published twice, after the pause
          const all = [...published, ...others];
          expect(all.sort()).toEqual((await inIdOrder()).sort());
        });

        it('keeps rows it could not release behind a failed row, and tries again after retryBaseMs, not at once', async () => {
          const { flaky, published } = await withFlakyBroker(2, 1, 1, { retryBaseMs: 100, retryMaxMs: 100 });
          await waitFor(async () => (await ds.manager.findOneByOrFail(OutboxEntity, { message_id: flaky })).attempts === 1);
          // the failed row stays leased for a while, and releasing rows to polling fails for 500 ms
          await ds.query(`UPDATE outbox SET claimed_until = clock_timestamp() + interval '800 milliseconds' WHERE message_id = $1`, [flaky]);
          let refused = 0;
          const until = Date.now() + 500;
          const original = ds.query.bind(ds);
          const spy = jest.spyOn(ds, 'query').mockImplementation((...args: Parameters<DataSource['query']>) => {
            if (Date.now() < until && /^UPDATE outbox SET claimed_until = NULL/.test(args[0])) {
              refused++;
              return Promise.reject(new Error('connection lost'));
            }
            return original(...args);
          });
          try {
            await inTransaction(ds, (tx) => addAllToOutbox(tx, [message(), message()]));
            await waitFor(async () => (await outboxStats(ds)).pending === 0);
          } finally {
            spy.mockRestore();
          }
          expect(published).toEqual(await inIdOrder());
          expect(published).toHaveLength(4);
          expect(refused).toBeGreaterThanOrEqual(1);
          expect(refused).toBeLessThanOrEqual(10); // about one every 100 ms, not one per turn of the loop
        });

        it('still polls on time while handed-over rows keep coming', async () => {
          const published: string[] = [];
          relay(
            async (m) => {
              await new Promise((r) => setTimeout(r, 5)); // a slow broker: handed-over rows queue up
              published.push(m.messageId);
            },
            { pollIntervalMs: 50, batchSize: 5 },
          ).start();
          let writing = true;
          const writer = (async () => {
            while (writing) await inTransaction(ds, (tx) => addToOutbox(tx, message()));
          })();
          await waitFor(async () => published.length >= 10);
          // a row this process did not write (another process's, or a ran-out lease): only polling finds it
          const foreign = message();
          await ds.query(
            `INSERT INTO outbox (exchange, routing_key, message_id, payload, headers, created_at) VALUES ($1, $2, $3, '{}'::jsonb, '{}'::jsonb, now())`,
            [foreign.exchange, foreign.routingKey, foreign.messageId],
          );
          const t0 = Date.now();
          try {
            await waitFor(async () => published.includes(foreign.messageId), 5_000);
          } finally {
            writing = false;
            await writer;
          }
          expect(Date.now() - t0).toBeLessThan(5_000);
        });

        it('stop() publishes the rows handed over before it was called', async () => {
          let release!: () => void;
          const gate = new Promise<void>((r) => (release = r));
          const published: string[] = [];
          const r = relay(async (m) => {
            await gate;
            published.push(m.messageId);
          }, { pollIntervalMs: 600_000 });
          r.start();
          const messages = [message(), message(), message()];
          for (const m of messages) await inTransaction(ds, (tx) => addToOutbox(tx, m));
          const stopping = r.stop();
          release();
          await stopping;
          expect(published).toEqual(messages.map((m) => m.messageId));
          expect((await outboxStats(ds)).pending).toBe(0);
        });
      });

      it('stop() waits for the batch in flight and marks it published', async () => {
        const m = message();
        await inTransaction(ds, (tx) => addToOutbox(tx, m));
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        let publishing = false;
        const r = relay(async () => {
          publishing = true;
          await gate;
        });
        r.start();
        await waitFor(async () => publishing);
        let stopped = false;
        const stopping = r.stop().then(() => (stopped = true));
        await new Promise((res) => setTimeout(res, 30));
        expect(stopped).toBe(false);
        release();
        await stopping;
        expect((await outboxStats(ds)).pending).toBe(0);
      });

      it('deletes published rows after the retention time, never pending ones', async () => {
        const [old, recent, pending] = [message(), message(), message()];
        await inTransaction(ds, async (tx) => {
          for (const m of [old, recent, pending]) await addToOutbox(tx, m);
        });
        await ds.query(`UPDATE outbox SET published_at = now() - interval '2 hours' WHERE message_id = $1`, [old.messageId]);
        await ds.query(`UPDATE outbox SET published_at = now() WHERE message_id = $1`, [recent.messageId]);
        expect(await purgePublishedOutbox(ds, 3_600_000)).toBe(1);
        const left = (await ds.manager.find(OutboxEntity)).map((r) => r.message_id).sort();
        expect(left).toEqual([recent.messageId, pending.messageId].sort());

        relay(async () => undefined, { retentionMs: 0, cleanupIntervalMs: 1 }).start();
        await waitFor(async () => (await ds.manager.count(OutboxEntity)) === 0);
      });

      it('reports what is pending, what failed and how old the oldest is', async () => {
        expect(await outboxStats(ds)).toEqual({ pending: 0, failing: 0, oldestPendingAgeMs: null, setAside: 0 });
        const [a, b, c] = [message(), message(), message()];
        await inTransaction(ds, async (tx) => {
          for (const m of [a, b, c]) await addToOutbox(tx, m);
        });
        await ds.query(`UPDATE outbox SET created_at = now() - interval '5 minutes' WHERE message_id = $1`, [a.messageId]);
        await ds.query(`UPDATE outbox SET attempts = 3 WHERE message_id = $1`, [b.messageId]);
        await ds.query(`UPDATE outbox SET published_at = now() WHERE message_id = $1`, [c.messageId]);
        const stats = await outboxStats(ds);
        expect(stats.pending).toBe(2);
        expect(stats.failing).toBe(1);
        expect(stats.oldestPendingAgeMs).toBeGreaterThanOrEqual(300_000);
        expect(stats.oldestPendingAgeMs).toBeLessThan(3_600_000);
      });
    });

    describe('inbox', () => {
      it('tells a consumer whether it has applied a message before', async () => {
        const id = randomUUID();
        expect(await inTransaction(ds, (m) => markProcessed(m, 'policy-engine.actions', id))).toBe(true);
        expect(await inTransaction(ds, (m) => markProcessed(m, 'policy-engine.actions', id))).toBe(false);
        expect(await inTransaction(ds, (m) => markProcessed(m, 'policy-engine.results', id))).toBe(true);
      });

      it('forgets a message whose transaction rolled back', async () => {
        const id = randomUUID();
        await expect(
          inTransaction(ds, async (m) => {
            expect(await markProcessed(m, 'c', id)).toBe(true);
            throw new Error('effects failed');
          }),
        ).rejects.toThrow('effects failed');
        expect(await inTransaction(ds, (m) => markProcessed(m, 'c', id))).toBe(true);
      });

      it('lets only one of two deliveries handled at once apply the message', async () => {
        const id = randomUUID();
        const results = await Promise.all([1, 2].map(() => inTransaction(ds, (m) => markProcessed(m, 'c', id))));
        expect(results.sort()).toEqual([false, true]);
      });

      it('rejects a message id that is not a UUID, naming it', async () => {
        await expect(inTransaction(ds, (m) => markProcessed(m, 'c', 'abc'))).rejects.toThrow(/messageId must be a UUID/);
        await expect(inTransaction(ds, (m) => markProcessed(m, '', randomUUID()))).rejects.toThrow(/consumer must be/);
      });
    });

    describe('markProcessedAndLockAction', () => {
      it('answers as markProcessed does and returns the locked row, present or not', async () => {
        const a = action({ status: 'READY', data: { k: [1, 2] } });
        await ds.manager.save(ActionEntity, a);
        const id = randomUUID();
        const first = await inTransaction(ds, (m) => markProcessedAndLockAction(m, 'policy-engine.actions', id, a.id));
        expect(first.fresh).toBe(true);
        expect(first.row).toMatchObject({ id: a.id, status: 'READY', data: { k: [1, 2] } });
        expect(first.row?.created_at).toBeInstanceOf(Date);
        expect(first.row).not.toHaveProperty('inbox_fresh');
        // the same message again: not fresh, the row still comes back
        const again = await inTransaction(ds, (m) => markProcessedAndLockAction(m, 'policy-engine.actions', id, a.id));
        expect(again).toMatchObject({ fresh: false, row: { id: a.id } });
        // no such row: fresh is still told apart
        const gone = randomUUID();
        const other = randomUUID();
        expect(await inTransaction(ds, (m) => markProcessedAndLockAction(m, 'c', other, gone))).toEqual({ fresh: true, row: null });
        expect(await inTransaction(ds, (m) => markProcessedAndLockAction(m, 'c', other, gone))).toEqual({ fresh: false, row: null });
        // a rolled-back transaction forgets the message, as markProcessed's does
        const lost = randomUUID();
        await expect(
          inTransaction(ds, async (m) => {
            await markProcessedAndLockAction(m, 'c', lost, a.id);
            throw new Error('effects failed');
          }),
        ).rejects.toThrow('effects failed');
        expect((await inTransaction(ds, (m) => markProcessedAndLockAction(m, 'c', lost, a.id))).fresh).toBe(true);
      });

      it('reads more columns in the same statement, apart from the action', async () => {
        const a = action({ status: 'RUNNING' });
        await ds.manager.save(ActionEntity, a);
        const also = { select: `a.id::text || $4 AS tagged, (SELECT count(*)::int FROM actions x WHERE x.id = a.id) AS counted`, params: ['!'] };
        const got = await inTransaction(ds, (m) => markProcessedAndLockAction(m, 'c', randomUUID(), a.id, also));
        expect(got.fresh).toBe(true);
        expect(got.also).toEqual({ tagged: `${a.id}!`, counted: 1 });
        expect(got.row).toBeInstanceOf(ActionEntity);
        expect(got.row).toMatchObject({ id: a.id, status: 'RUNNING' });
        expect(got.row).not.toHaveProperty('tagged');
        expect(got.row).not.toHaveProperty('inbox_fresh');
        // without the action there is nothing to read beside it
        expect(await inTransaction(ds, (m) => markProcessedAndLockAction(m, 'c', randomUUID(), randomUUID(), also))).toEqual({ fresh: true, row: null });
      });
    });


    /** Runs relays until the given message ids are published, and returns what they published. */
    async function drain(messageIds: string[]): Promise<OutgoingMessage[]> {
      const published: OutgoingMessage[] = [];
      const r = relay(async (m) => void published.push(m));
      r.start();
      await waitFor(async () => messageIds.every((id) => published.some((m) => m.messageId === id)));
      await r.stop();
      return published;
    }
  });
}

export function message(patch: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return {
    exchange: 'trellis.actions',
    routingKey: 'action.requested',
    body: { action_id: randomUUID(), nested: { list: [1, 2, 3] } },
    messageId: randomUUID(),
    ...patch,
  };
}

/** a READY scale-out row with the fields the schema requires; `patch` overrides any of them */
export function action(patch: Partial<ActionEntity> = {}): ActionEntity {
  return Object.assign(new ActionEntity(), {
    id: randomUUID(),
    name: 'cluster_scale_out_1a2b3c4d',
    cluster_id: null,
    target: randomUUID(),
    action: 'CLUSTER_SCALE_OUT',
    cause: 'RPC Request',
    timeout: 3600,
    status: 'READY',
    project: 'demo',
    user: 'demo',
    created_at: new Date(),
    ...patch,
  });
}

function sqlError(code: string, text: string): Error {
  return Object.assign(new Error(text), { code });
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
