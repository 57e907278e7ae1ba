import { randomUUID } from 'node:crypto';
import { openTestDatabase } from '@trellis/testing/database';
import type { DataSource } from 'typeorm';
import type { Database } from '../database';
import { ServiceHeartbeat } from '../service-registry';
import { pruneOlderThan, withoutOrdersInFlight } from './retention';
import { silentLogger } from '@trellis/common';

const NOW = new Date('2026-11-25T12:00:00Z');
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000);
const THIRTY_DAYS = 30 * 86_400;

/** Rows as the services write them, aged by hand; only the columns retention looks at vary. */
class Rows {
  constructor(private readonly ds: DataSource) {}

  async cluster(): Promise<string> {
    const id = randomUUID();
    await this.ds.query(
      `INSERT INTO clusters (id, name, profile_id, project, "user", min_size, max_size, desired_capacity, timeout, status, created_at)
       VALUES ($1, 'c', $2, 'p', 'u', 0, -1, 0, 3600, 'ACTIVE', $3)`,
      [id, randomUUID(), daysAgo(90)],
    );
    return id;
  }

  async action(clusterId: string | null, status: string, ageDays: number, opts: { decided?: boolean } = {}): Promise<string> {
    const id = randomUUID();
    const finished = ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(status);
    await this.ds.query(
      `INSERT INTO actions (id, name, cluster_id, target, action, cause, timeout, status, project, "user", created_at, updated_at)
       VALUES ($1, 'a', $2, $3, 'CLUSTER_SCALE_OUT', 'RPC Request', 3600, $4, 'p', 'u', $5, $6)`,
      [id, clusterId, clusterId ?? randomUUID(), status, daysAgo(ageDays + 0.01), finished ? daysAgo(ageDays) : null],
    );
    if (opts.decided) await this.decision(id, ageDays);
    return id;
  }

  async decision(actionId: string, ageDays: number): Promise<void> {
    await this.ds.query(
      `INSERT INTO decisions (action_id, hook, input, output, plan, created_at) VALUES ($1, 'pre_op', '{}', '{}', '{}', $2)`,
      [actionId, daysAgo(ageDays)],
    );
  }

  /** a worker's record of an order; `ageDays`: when it last changed */
  async workOrder(actionId: string, status: string, ageDays = 0): Promise<void> {
    await this.ds.query(`INSERT INTO work_orders (action_id, payload, status, created_at, updated_at) VALUES ($1, '{}', $2, $3, $3)`, [
      actionId,
      status,
      daysAgo(ageDays),
    ]);
  }

  /** a node operation's recorded outcome (work_order_ops), written now */
  async opOutcome(actionId: string): Promise<void> {
    await this.ds.query(`INSERT INTO work_order_ops (action_id, node_id, outcome, done_at) VALUES ($1, $2, '{"ok": true}', now())`, [actionId, randomUUID()]);
  }

  async step(actionId: string): Promise<string> {
    const id = randomUUID();
    await this.ds.query(`INSERT INTO action_steps (id, action_id, seq, kind, status, created_at) VALUES ($1, $2, 1, 'survey', 'DONE', $3)`, [id, actionId, NOW]);
    return id;
  }

  async node(actionId: string, status: string): Promise<void> {
    await this.ds.query(
      `INSERT INTO nodes (id, name, profile_id, project, "user", status, action_id) VALUES ($1, 'n', $2, 'p', 'u', $3, $4)`,
      [randomUUID(), randomUUID(), status, actionId],
    );
  }

  async event(ageDays: number): Promise<void> {
    await this.ds.query(`INSERT INTO events (id, "timestamp", otype, level, "user", project) VALUES ($1, $2, 'CLUSTER', 20, 'u', 'p')`, [
      randomUUID(),
      daysAgo(ageDays),
    ]);
  }

  async processed(ageDays: number): Promise<void> {
    await this.ds.query(`INSERT INTO processed_messages (consumer, message_id, processed_at) VALUES ('engine', $1, $2)`, [randomUUID(), daysAgo(ageDays)]);
  }

  async ids(table: string, column = 'id'): Promise<string[]> {
    return ((await this.ds.query(`SELECT ${column} AS id FROM ${table}`)) as Array<{ id: string }>).map((r) => r.id).sort();
  }

  /** a registration last renewed `ageSeconds` ago by the database's clock (a dead process's, unless recent) */
  async service(ageSeconds: number): Promise<string> {
    const id = randomUUID();
    await this.ds.query(
      `INSERT INTO services (id, "binary", host, topic, disabled, created_at, updated_at)
       VALUES ($1, 'trellis-nova-worker', 'h', 't', false, clock_timestamp() - make_interval(secs => $2 + 60), clock_timestamp() - make_interval(secs => $2))`,
      [id, ageSeconds],
    );
    return id;
  }

  count = async (table: string): Promise<number> => ((await this.ds.query(`SELECT count(*)::int AS n FROM ${table}`)) as Array<{ n: number }>)[0].n;
}

describe('retention (PGlite)', () => {
  let db: Database;
  let rows: Rows;

  beforeEach(async () => {
    db = await openTestDatabase();
    rows = new Rows(db.dataSource);
  });
  afterEach(() => db.close());

  const stepOrderOf = async (actionId: string): Promise<string> =>
    ((await db.dataSource.query('SELECT id FROM action_steps WHERE action_id = $1', [actionId])) as Array<{ id: string }>)[0].id;

  /** a cluster with actions of every kind retention must tell apart, plus a deleted cluster's and a standalone node's */
  async function history() {
    const cluster = await rows.cluster();
    const old = await rows.action(cluster, 'SUCCEEDED', 60, { decided: true });
    const oldStep = await rows.step(old);
    await rows.workOrder(old, 'DONE');
    await rows.workOrder(oldStep, 'DONE');
    const stillApplying = await rows.action(cluster, 'FAILED', 50);
    await rows.workOrder(stillApplying, 'APPLYING');
    const stepStillApplying = await rows.action(cluster, 'FAILED', 48);
    await rows.workOrder(await rows.step(stepStillApplying), 'APPLYING');
    const nodeBuilding = await rows.action(cluster, 'SUCCEEDED', 45);
    await rows.node(nodeBuilding, 'CREATING');
    const running = await rows.action(cluster, 'RUNNING', 40, { decided: true });
    const latestDecided = await rows.action(cluster, 'SUCCEEDED', 35, { decided: true });
    const latest = await rows.action(cluster, 'CANCELLED', 33);
    const recent = await rows.action(await rows.cluster(), 'SUCCEEDED', 5, { decided: true });
    const ofDeletedCluster = await rows.action(randomUUID(), 'SUCCEEDED', 40, { decided: true });
    const standalone = await rows.action(null, 'FAILED', 40, { decided: true });
    // records of orders whose action an earlier release purged without them: old and DONE, recent, in flight
    const orphans = { old: randomUUID(), recent: randomUUID(), applying: randomUUID() };
    await rows.workOrder(orphans.old, 'DONE', 40);
    await rows.workOrder(orphans.recent, 'DONE', 5);
    await rows.workOrder(orphans.applying, 'APPLYING', 40);
    // node operations' outcomes: left beside a DONE order (a holder that lost the order wrote it late)
    // or an order already gone go, whatever their age; an order in flight keeps its own
    await rows.opOutcome(old);
    await rows.opOutcome(orphans.recent);
    await rows.opOutcome(randomUUID());
    await rows.opOutcome(stillApplying);
    return { old, oldStep, stillApplying, stepStillApplying, nodeBuilding, running, latestDecided, latest, recent, ofDeletedCluster, standalone, orphans };
  }

  it('prunes finished actions with their steps and decision, and keeps recent, unfinished, in-flight and cluster-latest ones', async () => {
    const a = await history();

    const counts = await pruneOlderThan(db.dataSource, 'actions', { olderThanSeconds: THIRTY_DAYS, now: NOW, batchSize: 2 });

    expect(counts).toEqual({ actions: 3, action_steps: 1, decisions: 3, work_orders: 3, work_order_ops: 3 });
    expect(await rows.ids('actions')).toEqual(
      [a.stillApplying, a.stepStillApplying, a.nodeBuilding, a.running, a.latestDecided, a.latest, a.recent].sort(),
    );
    expect(await rows.ids('decisions', 'action_id')).toEqual([a.running, a.latestDecided, a.recent].sort());
    expect(await rows.ids('action_steps')).not.toContain(a.oldStep);
    // the worker's records of the pruned action's order and its step's went with them (a replay of
    // either finds the action gone and is not applied), and the old orphan; orders in flight stay
    expect(await rows.ids('work_orders', 'action_id')).toEqual(
      [await stepOrderOf(a.stepStillApplying), a.stillApplying, a.orphans.recent, a.orphans.applying].sort(),
    );
    expect(await rows.ids('work_order_ops', 'action_id')).toEqual([a.stillApplying]);
  });

  it("drops from a batch an action whose order (or a step's) a worker claimed after the batch was chosen", async () => {
    const cluster = await rows.cluster();
    const [quiet, claimed, stepClaimed] = [await rows.action(cluster, 'SUCCEEDED', 60), await rows.action(cluster, 'SUCCEEDED', 59), await rows.action(cluster, 'SUCCEEDED', 58)];
    // as the claims a worker commits between PRUNABLE_ACTIONS' snapshot and the batch's locks leave them
    await rows.workOrder(claimed, 'APPLYING');
    await rows.workOrder(await rows.step(stepClaimed), 'APPLYING');
    await rows.workOrder(quiet, 'DONE', 60);

    const kept = await db.dataSource.transaction((m) => withoutOrdersInFlight(m, [quiet, claimed, stepClaimed]));

    expect(kept).toEqual([quiet]);
  });

  it('prunes decisions of finished or vanished actions, never the running ones nor a cluster’s latest decision', async () => {
    const a = await history();
    await rows.decision(randomUUID(), 40); // its action was deleted long ago

    const counts = await pruneOlderThan(db.dataSource, 'decisions', { olderThanSeconds: THIRTY_DAYS, now: NOW });

    expect(counts).toEqual({ decisions: 4 });
    expect(await rows.ids('decisions', 'action_id')).toEqual([a.running, a.latestDecided, a.recent].sort());
    expect(await rows.count('actions')).toBe(10);
  });

  it('prunes events and processed-message ids older than the age in batches, and keeps the recent ones', async () => {
    for (const age of [40, 35, 31, 31, 31, 29, 1]) await rows.event(age);
    for (const age of [10, 8, 8, 8, 8, 6, 1]) await rows.processed(age);

    expect(await pruneOlderThan(db.dataSource, 'events', { olderThanSeconds: THIRTY_DAYS, now: NOW, batchSize: 2 })).toEqual({ events: 5 });
    expect(await rows.count('events')).toBe(2);
    expect(await pruneOlderThan(db.dataSource, 'processed_messages', { olderThanSeconds: 7 * 86_400, now: NOW, batchSize: 2 })).toEqual({
      processed_messages: 5,
    });
    expect(await rows.count('processed_messages')).toBe(2);
  });

  it('counts what would go in a dry run and deletes nothing', async () => {
    await history();
    await rows.event(40);

    expect(await pruneOlderThan(db.dataSource, 'actions', { olderThanSeconds: THIRTY_DAYS, now: NOW, dryRun: true })).toEqual({
      actions: 3,
      action_steps: 1,
      decisions: 3,
      work_orders: 3,
      work_order_ops: 3,
    });
    expect(await pruneOlderThan(db.dataSource, 'events', { olderThanSeconds: THIRTY_DAYS, now: NOW, dryRun: true })).toEqual({ events: 1 });
    expect(await rows.count('actions')).toBe(10);
    expect(await rows.count('events')).toBe(1);
  });

  it("forgets the registrations of services down for longer than the age, never a running one's, whatever the age", async () => {
    const running = await ServiceHeartbeat.start(db.dataSource, { binary: 'trellis-policy-engine', topic: 'q' }, silentLogger, 60_000);
    const justStalled = await rows.service(20); // within the 30 s after which a service is shown down
    const downAnHour = await rows.service(3_600);
    await rows.service(2 * 86_400);
    await rows.service(3 * 86_400);
    const now = new Date();

    expect(await pruneOlderThan(db.dataSource, 'services', { olderThanSeconds: 86_400, now, dryRun: true })).toEqual({ services: 2 });
    expect(await pruneOlderThan(db.dataSource, 'services', { olderThanSeconds: 86_400, now, batchSize: 1 })).toEqual({ services: 2 });
    expect(await rows.ids('services')).toEqual([running.id, justStalled, downAnHour].sort());

    // an age of 0 takes every dead one, and still no row renewed within the down time
    expect(await pruneOlderThan(db.dataSource, 'services', { olderThanSeconds: 0, now: new Date() })).toEqual({ services: 1 });
    expect(await rows.ids('services')).toEqual([running.id, justStalled].sort());
    await running.stop();
  });

  it('a running service whose registration was deleted registers again at its next renewal, as it was', async () => {
    const beat = await ServiceHeartbeat.start(db.dataSource, { binary: 'trellis-nova-worker', topic: 'trellis.nova-worker.orders', accepts: { 'work.order': [1, 2] } }, silentLogger, 60_000);
    const columns = `id, "binary", host, topic, disabled, disabled_reason, accepts, created_at`;
    const [before] = await db.dataSource.query(`SELECT ${columns} FROM services`);
    await db.dataSource.query('DELETE FROM services');

    await beat.renew();

    expect(await db.dataSource.query(`SELECT ${columns} FROM services`)).toEqual([before]);
    expect(before.accepts).toEqual({ 'work.order': [1, 2] });
    // a clean stop removes it, and a renewal after the stop does not bring it back
    await beat.stop();
    await beat.renew();
    expect(await rows.count('services')).toBe(0);
  });
});
