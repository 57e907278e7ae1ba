import { randomUUID } from 'node:crypto';
import { createLogger, silentLogger } from '@trellis/common';
import { NovaError, type ServerCreateRequest } from '@trellis/nova';
import type { Database } from '@trellis/persistence';
import { leaseTakeovers } from '@trellis/observability';
import { metricValue } from '@trellis/observability/testing';
import { openTestDatabase } from '@trellis/testing/database';
import { FakeNova, fakeAccess, insertActionOf, insertNode, insertOrderLeftApplying, serverFor, storeFixtureTrust, storingActions, workOrder, workerOn } from '../testing/worker-fixtures';
import { ApplyWorkOrderUseCase } from './apply-work-order.usecase';
import { OrderHeartbeat, claimOrder, fencedUpdate } from './order-lease';
import { OrderPoller } from './order-poller';
import { retryDelayMs } from './retry-schedule';

/** A FakeNova whose createServer takes `delayMs` before Nova has the server (a slow boot request). */
class SlowNova extends FakeNova {
  delayMs = 0;
  /** set to make every call fail as if Nova refused connections */
  down = false;
  override async createServer(request: ServerCreateRequest): Promise<{ id: string }> {
    if (this.down) throw new NovaError({ service: 'compute', status: null, method: 'POST', path: '/servers', serviceMessage: 'connect ECONNREFUSED 127.0.0.1:8774' });
    await new Promise((r) => setTimeout(r, this.delayMs));
    return super.createServer(request);
  }
}

describe('work order leases: one worker applies an order at a time', () => {
  let db: Database;
  let nova: SlowNova;
  const worker = (id: string, leaseSeconds: number) =>
    storingActions(db, new ApplyWorkOrderUseCase(db.dataSource, fakeAccess(db, nova).access, silentLogger, { concurrency: 4, leaseSeconds, workerId: id }));

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db.close());
  beforeEach(async () => {
    await storeFixtureTrust(db);
    nova = new SlowNova();
  });

  it('a redelivery while the first worker is still calling Nova is not taken over: one server, not two', async () => {
    const actionId = randomUUID();
    const node = await insertNode(db, { action_id: actionId });
    const order = workOrder(actionId, { create_servers: [serverFor(node)] });
    nova.delayMs = 2_500; // longer than the lease: only the heartbeat keeps it
    const [first, second] = [worker('worker-a', 1), worker('worker-b', 1)];

    const applying = first.execute(order);
    await new Promise((r) => setTimeout(r, 1_500));
    const redelivered = await second.execute(order, { redelivered: true });
    const applied = await applying;

    expect(redelivered.applied).toBe(false);
    expect(applied).toMatchObject({ applied: true, created: 1 });
    expect(nova.created).toHaveLength(1);
    expect(await workerOn(db, nova).node(node.id)).toMatchObject({ status: 'CREATING', physical_id: [...nova.servers.keys()][0] });
  });

  it("a renewal that meets the holder's own release is no takeover; one that meets another worker's token is", async () => {
    const order = workOrder(randomUUID());
    await insertActionOf(db, order);
    const lines: string[] = [];
    const logger = createLogger('nova-worker', 'warn', {}, (l) => lines.push(l));
    const claim = await claimOrder(db.dataSource, order, { owner: 'worker-a', leaseSeconds: 60 });
    if (!claim.token) throw new Error(`not claimed: ${claim.state}`);
    const beat = new OrderHeartbeat(db.dataSource, order.action_id, claim.token, { owner: 'worker-a', leaseSeconds: 60 }, logger);
    expect(await beat.renew()).toBe(true);
    // the holder's last transaction releases the lease (as after its Nova calls); a renewal in flight then matches nothing
    await db.dataSource.transaction((m) => fencedUpdate(m, order.action_id, claim.token, `status = 'BUILDING'`, [], 'action_id'));
    await beat.renew();
    expect(beat.lost).toBe(false);
    expect(lines).toEqual([]);

    await db.dataSource.query(`UPDATE work_orders SET lease_token = $2, lease_owner = 'worker-b' WHERE action_id = $1`, [order.action_id, randomUUID()]);
    expect(await beat.renew()).toBe(false);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['work order taken over by another worker; this one will write nothing']);
  });

  it('a holder whose order was taken over writes nothing after its Nova calls', async () => {
    const actionId = randomUUID();
    const node = await insertNode(db, { action_id: actionId });
    const order = workOrder(actionId, { create_servers: [serverFor(node)] });
    nova.delayMs = 1_000;
    const late = worker('worker-a', 60).execute(order);
    await new Promise((r) => setTimeout(r, 200));
    // worker-a stalls past its lease (a long GC pause, a partition): worker-b takes over and finishes
    await db.dataSource.query(`UPDATE work_orders SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE action_id = $1`, [actionId]);
    nova.delayMs = 0;
    const takeoversBefore = await metricValue(leaseTakeovers, { lease: 'work_order' });
    const takeover = await worker('worker-b', 60).execute(order, { redelivered: true });
    expect(await metricValue(leaseTakeovers, { lease: 'work_order' })).toBe(takeoversBefore + 1);
    const stored = await workerOn(db, nova).node(node.id);

    const result = await late;

    expect(takeover).toMatchObject({ applied: true, created: 1 });
    expect(result.applied).toBe(false);
    // the node keeps the server of the worker that holds the order; the late one changed nothing
    expect(await workerOn(db, nova).node(node.id)).toEqual(stored);
    expect((await workerOn(db, nova).order(actionId)).status).toBe('BUILDING');
  });

  it('a Nova outage keeps the order with a growing pause instead of failing it; the order poller applies it once due', async () => {
    const actionId = randomUUID();
    const node = await insertNode(db, { action_id: actionId });
    const order = workOrder(actionId, { create_servers: [serverFor(node)] });
    const apply = storingActions(db, new ApplyWorkOrderUseCase(db.dataSource, fakeAccess(db, nova).access, silentLogger, {
      concurrency: 4,
      leaseSeconds: 30,
      retry: { baseMs: 10_000, maxMs: 60_000, giveUpAfterSeconds: 3_600 },
    }));
    const poller = new OrderPoller(db.dataSource, apply, silentLogger, { intervalMs: 1_000, batchSize: 10 });
    const w = workerOn(db, nova);
    nova.down = true;
    const takeoversBefore = await metricValue(leaseTakeovers, { lease: 'work_order' });

    const tried = await apply.execute(order);

    expect(tried.retryInMs).toBeGreaterThanOrEqual(5_000);
    expect(await w.order(actionId)).toMatchObject({ status: 'APPLYING', attempts: 1, lease_token: null, last_error: expect.stringContaining('ECONNREFUSED') });
    expect(await poller.pollOnce()).toBe(0); // not due yet
    await db.dataSource.query(`UPDATE work_orders SET next_attempt_at = clock_timestamp() WHERE action_id = $1`, [actionId]);
    expect(await poller.pollOnce()).toBe(0); // due, Nova still down: the second pause is longer
    expect((await w.order(actionId)).attempts).toBe(2);

    nova.down = false;
    await db.dataSource.query(`UPDATE work_orders SET next_attempt_at = clock_timestamp() WHERE action_id = $1`, [actionId]);
    expect(await poller.pollOnce()).toBe(1);
    expect(nova.created).toHaveLength(1);
    expect((await w.order(actionId)).status).toBe('BUILDING');
    expect(await w.results(actionId)).toEqual([]);
    // a retry after a pause takes an order nobody held: no lease was taken over
    expect(await metricValue(leaseTakeovers, { lease: 'work_order' })).toBe(takeoversBefore);
  });

  it("the order poller drops a waiting step's order once the action the step is part of has ended (a repair timed out)", async () => {
    const actionId = randomUUID();
    const stepId = randomUUID();
    await insertActionOf(db, workOrder(actionId, { action: 'CLUSTER_REPAIR' }));
    await db.dataSource.query(
      `INSERT INTO action_steps (id, action_id, seq, kind, status, detail, created_at) VALUES ($1, $2, 1, 'replace', 'RUNNING', '{}', now())`,
      [stepId, actionId],
    );
    const node = await insertNode(db, { action_id: actionId });
    const order = workOrder(stepId, { action: 'CLUSTER_REPAIR', create_servers: [serverFor(node)] });
    const apply = storingActions(db, new ApplyWorkOrderUseCase(db.dataSource, fakeAccess(db, nova).access, silentLogger, {
      concurrency: 4,
      leaseSeconds: 30,
      retry: { baseMs: 10_000, maxMs: 60_000, giveUpAfterSeconds: 3_600 },
    }));
    const poller = new OrderPoller(db.dataSource, apply, silentLogger, { intervalMs: 1_000, batchSize: 10 });
    nova.down = true;
    expect((await apply.execute(order)).retryInMs).toBeGreaterThan(0);

    await db.dataSource.query(`UPDATE actions SET status = 'FAILED' WHERE id = $1`, [actionId]);
    await db.dataSource.query(`UPDATE work_orders SET next_attempt_at = clock_timestamp() WHERE action_id = $1`, [stepId]);
    nova.down = false;
    expect(await poller.pollOnce()).toBe(0);

    expect(nova.created).toEqual([]);
    expect(await workerOn(db, nova).order(stepId)).toMatchObject({ status: 'DONE', last_error: expect.stringContaining('the action ended before Nova could be reached') });
  });

  it('the order poller resumes an order left APPLYING by a worker that died (its lease ran out)', async () => {
    const actionId = randomUUID();
    const node = await insertNode(db, { action_id: actionId });
    const order = workOrder(actionId, { create_servers: [serverFor(node)] });
    await insertOrderLeftApplying(db, order);
    const poller = new OrderPoller(db.dataSource, worker('worker-b', 30), silentLogger, { intervalMs: 1_000, batchSize: 10 });

    expect(await poller.pollOnce()).toBe(0);
    await db.dataSource.query(`UPDATE work_orders SET lease_expires_at = clock_timestamp() WHERE action_id = $1`, [actionId]);
    expect(await poller.pollOnce()).toBe(1);
    expect(await workerOn(db, nova).node(node.id)).toMatchObject({ status: 'CREATING' });
  });

  it('after trying for longer than the schedule allows, fails the nodes with the last error and reports FAILED', async () => {
    const actionId = randomUUID();
    const node = await insertNode(db, { action_id: actionId });
    const apply = storingActions(db, new ApplyWorkOrderUseCase(db.dataSource, fakeAccess(db, nova).access, silentLogger, {
      concurrency: 4,
      leaseSeconds: 30,
      retry: { baseMs: 1_000, maxMs: 1_000, giveUpAfterSeconds: 0 },
    }));
    nova.down = true;

    await apply.execute(workOrder(actionId, { create_servers: [serverFor(node)] }));

    const w = workerOn(db, nova);
    expect((await w.node(node.id))!.status_reason).toMatch(/^Nova could not be reached for \d+ s \(1 attempts\): .*ECONNREFUSED/);
    const [report] = await w.results(actionId);
    expect(report).toMatchObject({ outcome: 'FAILED' });
  });

  it('a permanent refusal of the order (a 403 on its server group) fails its nodes at once with the cloud\'s message', async () => {
    const actionId = randomUUID();
    const node = await insertNode(db, { action_id: actionId });
    nova.createServerGroup = async () => {
      throw new NovaError({ service: 'compute', status: 403, method: 'POST', path: '/os-server-groups', serviceMessage: 'Quota exceeded, too many server groups.' });
    };

    const result = await worker('worker-a', 30).execute(
      workOrder(actionId, { create_groups: [{ ref: 'ref:g', name: 'g', policy: 'anti-affinity' }], create_servers: [serverFor(node, { zone: 'az1', servergroup: 'ref:g' })] }),
    );

    expect(result).toMatchObject({ applied: true, failed: 1 });
    const w = workerOn(db, nova);
    expect((await w.node(node.id))!.status_reason).toContain('Quota exceeded, too many server groups.');
    expect((await w.results(actionId))[0]).toMatchObject({ outcome: 'FAILED' });
  });

  it("an order whose action retention forgot (a replay of one applied long ago) is neither applied nor recorded", async () => {
    const actionId = randomUUID();
    const node = await insertNode(db, { action_id: actionId, status: 'ACTIVE', physical_id: randomUUID() });
    const order = workOrder(actionId, { create_servers: [serverFor(node)] });
    const lines: string[] = [];
    const apply = new ApplyWorkOrderUseCase(db.dataSource, fakeAccess(db, nova).access, createLogger('nova-worker', 'warn', {}, (l) => lines.push(l)), {
      concurrency: 4,
      leaseSeconds: 60,
    });

    expect(await claimOrder(db.dataSource, order, { owner: 'worker-a', leaseSeconds: 60 })).toEqual({ state: 'gone' });
    const result = await apply.execute(order, { redelivered: true });

    expect(result).toMatchObject({ applied: false, created: 0 });
    expect(nova.created).toEqual([]);
    expect(await db.dataSource.query('SELECT 1 FROM work_orders WHERE action_id = $1', [actionId])).toEqual([]);
    expect(await workerOn(db, nova).node(node.id)).toMatchObject({ status: 'ACTIVE', physical_id: node.physical_id });
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['work order of an action that no longer exists; not applied']);

    // a record an earlier release kept after its action went is no reason to apply it either
    await insertOrderLeftApplying(db, order);
    await db.dataSource.query(`UPDATE work_orders SET status = 'DONE', lease_token = NULL, lease_owner = NULL WHERE action_id = $1`, [actionId]);
    await db.dataSource.query('DELETE FROM actions WHERE id = $1', [actionId]);
    expect(await claimOrder(db.dataSource, order, { owner: 'worker-a', leaseSeconds: 60 })).toEqual({ state: 'gone' });
    expect(await workerOn(db, nova).results(actionId)).toEqual([]);
  });

  it("a step's order (its action_id the step's, not an action's) is claimed: the step is known", async () => {
    const actionId = randomUUID();
    const stepId = randomUUID();
    await insertActionOf(db, workOrder(actionId));
    await db.dataSource.query(
      `INSERT INTO action_steps (id, action_id, seq, kind, status, detail, created_at, finished_at) VALUES ($1, $2, 1, 'survey', 'RUNNING', '{}', now(), NULL)`,
      [stepId, actionId],
    );

    const claim = await claimOrder(db.dataSource, workOrder(stepId, { kind: 'cloud' }), { owner: 'worker-a', leaseSeconds: 60 });

    expect(claim).toMatchObject({ state: 'first' });
    expect((await workerOn(db, nova).order(stepId)).lease_owner).toBe('worker-a');
  });

  it('backs off exponentially with jitter, capped', () => {
    const schedule = { baseMs: 5_000, maxMs: 300_000, giveUpAfterSeconds: 3_600 };
    const low = [1, 2, 3, 4, 10].map((n) => retryDelayMs(n, schedule, () => 0));
    const high = [1, 2, 3, 4, 10].map((n) => retryDelayMs(n, schedule, () => 1));
    expect(low).toEqual([2_500, 5_000, 10_000, 20_000, 150_000]);
    expect(high).toEqual([5_000, 10_000, 20_000, 40_000, 300_000]);
  });
});
