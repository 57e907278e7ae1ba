import { randomUUID } from 'node:crypto';
import { silentLogger } from '@trellis/common';
import {
  ActionEntity,
  addToOutbox,
  enqueueActionMessages,
  findStuckActions,
  inTransaction,
  openDatabase,
  OutboxRelay,
  type Database,
} from '@trellis/persistence';
import { action, message, waitFor } from '../../libs/persistence/test/persistence.contract';
import { openPostgresTestDatabase } from '@trellis/testing/database';
import { ResumeService } from '../../apps/policy-engine/src/resume/resume.service';
import { ApplyWorkOrderUseCase } from '../../apps/nova-worker/src/orders/apply-work-order.usecase';
import { FakeNova, fakeAccess, insertActionOf, insertNode, serverFor, storeFixtureTrust, workOrder } from '../../apps/nova-worker/src/testing/worker-fixtures';
import type { ServerCreateRequest } from '@trellis/nova';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Two engines (two connection pools) on one PostgreSQL database: leases are the database's clock at
 * the statement, and rows another engine holds are skipped, not waited for.
 */
describe('outbox and resume leases with two engines (PostgreSQL)', () => {
  let db: Database & { url: string };
  let other: Database;

  beforeAll(async () => {
    db = await openPostgresTestDatabase();
    other = await openDatabase({ url: db.url, dataDir: ':memory:', poolSize: 4, logging: false }, silentLogger);
  });
  afterAll(async () => {
    await other?.close();
    await db?.close();
  });

  it('publishes a row written late in a transaction longer than the handoff lease once, not by both relays', async () => {
    const published: string[] = [];
    // the writing engine's relay gets the row on commit and takes a while to publish it
    const handing = new OutboxRelay(db.dataSource, async (m) => {
      await sleep(500);
      published.push(m.messageId!);
    }, { batchSize: 10, pollIntervalMs: 60_000, handoffLeaseMs: 1_000 });
    // the other engine's relay polls often
    const polling = new OutboxRelay(other.dataSource, async (m) => void published.push(m.messageId!), { batchSize: 10, pollIntervalMs: 20 });
    handing.start();
    polling.start();
    try {
      const msg = message();
      await inTransaction(db.dataSource, async (m) => {
        await m.query('SELECT pg_sleep(1.5)'); // longer than the handoff lease
        await addToOutbox(m, msg);
      });
      await waitFor(async () => published.includes(msg.messageId!));
      await sleep(1_500); // past the row's lease: a second publish would have happened by now
      expect(published.filter((id) => id === msg.messageId)).toHaveLength(1);
    } finally {
      await handing.stop();
      await polling.stop();
    }
  });

  it('two engines resuming at once take different actions: no action is published twice and neither waits for the other', async () => {
    const old = new Date(Date.now() - 3_600_000);
    const stuck = Array.from({ length: 10 }, () => action({ status: 'READY', created_at: old, updated_at: old }));
    await db.dataSource.getRepository(ActionEntity).insert(stuck as never);

    // engine A is in the middle of resuming half of them: its transaction holds their rows
    const runnerA = db.dataSource.createQueryRunner();
    await runnerA.connect();
    await runnerA.startTransaction();
    let resumedByB = 0;
    try {
      const mine = await findStuckActions(runnerA.manager, { actionIds: stuck.slice(0, 5).map((a) => a.id), olderThanSeconds: 30 });
      await enqueueActionMessages(runnerA.manager, mine, 'resume');

      const engineB = new ResumeService(other.dataSource, silentLogger, { leaseSeconds: 30, intervalSeconds: 3_600 });
      const roundB = engineB.resumeOnce();
      // not a measurement: B either finishes while A holds its rows, or it waits until A commits
      let timer: NodeJS.Timeout | undefined;
      const givenUp = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 10_000)));
      const finishedWhileAHolds = await Promise.race([roundB.then(() => true), givenUp]);
      clearTimeout(timer);
      expect(finishedWhileAHolds).toBe(true);
      resumedByB = await roundB;
      await runnerA.commitTransaction();
    } finally {
      if (runnerA.isTransactionActive) await runnerA.rollbackTransaction();
      await runnerA.release();
    }

    expect(resumedByB).toBe(5);
    const rows: Array<{ action_id: string; n: number }> = await db.dataSource.query(
      `SELECT payload->>'action_id' AS action_id, count(*)::int AS n FROM outbox
        WHERE routing_key = 'action.requested' AND payload->>'action_id' = ANY($1) GROUP BY 1`,
      [stuck.map((a) => a.id)],
    );
    expect(rows).toHaveLength(10);
    expect(rows.every((r) => r.n === 1)).toBe(true);
  });

  it('eight workers on two connection pools given one order at once (seven as redeliveries) boot its servers once', async () => {
    const nova = new FakeNova();
    const create = nova.createServer.bind(nova);
    nova.createServer = async (request: ServerCreateRequest) => {
      await sleep(1_500); // a slow Nova: longer than the lease, kept by the heartbeat
      return create(request);
    };
    await storeFixtureTrust(db);
    const actionId = randomUUID();
    const nodes = [await insertNode(db, { action_id: actionId }), await insertNode(db, { action_id: actionId })];
    const order = workOrder(actionId, { create_servers: nodes.map((n) => serverFor(n)) });
    await insertActionOf(db, order);
    const workers = Array.from({ length: 8 }, (_, i) =>
      new ApplyWorkOrderUseCase((i % 2 ? other : db).dataSource, fakeAccess(i % 2 ? other : db, nova).access, silentLogger, {
        concurrency: 4,
        leaseSeconds: 1,
        workerId: `worker-${i}`,
      }),
    );

    const results = await Promise.all(workers.map((w, i) => w.execute(order, { redelivered: i > 0 })));

    expect(results.filter((r) => r.applied)).toHaveLength(1);
    expect(nova.created).toHaveLength(2); // 0 duplicates
    const duplicates = nova.created.length - nodes.length;
    process.stdout.write(`redelivery: ${workers.length} deliveries of one 2-server order, ${duplicates} duplicate servers\n`);
  });
});
