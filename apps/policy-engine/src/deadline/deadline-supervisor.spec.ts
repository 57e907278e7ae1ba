import { randomUUID } from 'node:crypto';
import { silentLogger } from '@trellis/common';
import { SCHEMA_VERSION, type WorkResultMessage } from '@trellis/contracts';
import type { Evaluator } from '@trellis/decisions';
import { ActionEntity, ClusterEntity, NodeEntity, row, type Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import { ApplyWorkResultUseCase } from '../results/apply-work-result.usecase';
import { DeadlineSupervisor, unsentReason } from './deadline-supervisor';

describe('DeadlineSupervisor: every action ends', () => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db.close());

  /** a cluster with one node being built by a RUNNING scale-out that started `startedAgo` s ago */
  async function runningScaleOut(timeout: number, startedAgo: number) {
    const clusterId = randomUUID();
    const actionId = randomUUID();
    const nodeId = randomUUID();
    const now = new Date();
    await db.dataSource.getRepository(ClusterEntity).insert(
      row<ClusterEntity>({
        id: clusterId, name: `c-${clusterId.slice(0, 8)}`, profile_id: randomUUID(), project: 'p', user: 'u', domain: null,
        init_at: now, created_at: now, updated_at: now, min_size: 0, max_size: -1, desired_capacity: 1, timeout,
        status: 'RESIZING', status_reason: 'CLUSTER_SCALE_OUT in progress', metadata: {}, data: {}, config: {}, next_index: 2,
      }),
    );
    await db.dataSource.getRepository(ActionEntity).insert(
      row<ActionEntity>({
        id: actionId, name: 'scale', cluster_id: clusterId, target: clusterId, action: 'CLUSTER_SCALE_OUT', cause: 'RPC Request',
        owner: null, interval: -1, start_time: now.getTime() / 1000 - startedAgo, end_time: null, timeout, status: 'RUNNING',
        status_reason: '', inputs: {}, outputs: {}, data: {}, depends_on: [], depended_by: [], project: 'p', user: 'u', domain: null,
        created_at: now, updated_at: now, lease_owner: 'engine', lease_expires_at: new Date(now.getTime() + 60_000), attempts: 1,
      }),
    );
    await db.dataSource.getRepository(NodeEntity).insert(
      row<NodeEntity>({
        id: nodeId, name: 'n1', cluster_id: clusterId, profile_id: randomUUID(), project: 'p', user: 'u', domain: null, physical_id: null,
        index: 1, role: null, status: 'CREATING', status_reason: 'Creation in progress', data: {}, metadata: {}, tainted: false,
        init_at: now, created_at: null, updated_at: now, action_id: actionId, lease_owner: null, lease_expires_at: null, build_deadline: null,
      }),
    );
    return { clusterId, actionId, nodeId };
  }

  const action = (id: string) => db.dataSource.getRepository(ActionEntity).findOneByOrFail({ id });

  it('fails an overdue action with "timed out after N s", fails its pending node, releases the cluster; leaves one within its timeout', async () => {
    const overdue = await runningScaleOut(5, 6);
    const young = await runningScaleOut(600, 6);
    const supervisor = new DeadlineSupervisor(db.dataSource, silentLogger, { intervalSeconds: 1 });

    const failed = await supervisor.failOverdue();

    expect(failed).toContain(overdue.actionId);
    expect(failed).not.toContain(young.actionId);
    expect(await action(overdue.actionId)).toMatchObject({ status: 'FAILED', status_reason: 'CLUSTER_SCALE_OUT timed out after 5 s.', lease_owner: null });
    expect(await db.dataSource.getRepository(NodeEntity).findOneBy({ id: overdue.nodeId })).toMatchObject({
      status: 'ERROR',
      status_reason: 'CLUSTER_SCALE_OUT timed out after 5 s.',
    });
    // below min_size/desired: the cluster is in ERROR/WARNING like after any failed scale-out, no longer RESIZING
    expect((await db.dataSource.getRepository(ClusterEntity).findOneByOrFail({ id: overdue.clusterId })).status).not.toBe('RESIZING');
    expect((await action(young.actionId)).status).toBe('RUNNING');
    const [finished]: Array<{ payload: { status: string } }> = await db.dataSource.query(
      `SELECT payload FROM outbox WHERE type = 'action.finished' AND payload->>'action_id' = $1`,
      [overdue.actionId],
    );
    expect(finished.payload.status).toBe('FAILED');
  });

  it('fails at once a RUNNING action whose work order the outbox relay set aside, with the reason; not one whose order waits or was sent', async () => {
    const unsent = await runningScaleOut(600, 1);
    const waiting = await runningScaleOut(600, 1);
    const sent = await runningScaleOut(600, 1);
    const tooLarge = 'message 8c9e1e1c-0000-4000-8000-000000000001 is 49,153,024 bytes (46.9 MiB), larger than the 16,777,216 bytes (16 MiB) the message broker takes (TRELLIS_MAX_MESSAGE_BYTES)';
    const order = async (actionId: string, version: number, state: 'set aside' | 'pending' | 'published') =>
      db.dataSource.query(
        `INSERT INTO outbox (exchange, routing_key, message_id, type, payload, created_at, attempts, last_error, failed_at, published_at)
         VALUES ('trellis.work', 'work.order', $1, 'work.order', $2, now(), $3, $4, $5, $6)`,
        [
          randomUUID(),
          { action_id: actionId, schema_version: version },
          state === 'set aside' ? 1 : 0,
          state === 'set aside' ? tooLarge : null,
          state === 'set aside' ? new Date() : null,
          state === 'published' ? new Date() : null,
        ],
      );
    await order(unsent.actionId, 1, 'set aside');
    // a resend of the same order, set aside too: the action fails once
    await order(unsent.actionId, 1, 'set aside');
    await order(waiting.actionId, 2, 'pending');
    // a set-aside order whose action_id is no uuid (not Trellis's) fails nothing and not the round
    await order('not-a-uuid', 2, 'set aside');
    await order(sent.actionId, 2, 'published');
    const supervisor = new DeadlineSupervisor(db.dataSource, silentLogger, { intervalSeconds: 1 });

    const failed = await supervisor.failOverdue();

    expect(failed).toEqual([unsent.actionId]);
    const reason =
      `CLUSTER_SCALE_OUT failed: its work order could not be sent to a nova-worker: ${tooLarge}. It was written in schema_version 1 for a nova-worker ` +
      'of an older release, which repeats the profile on every server; once every nova-worker is upgraded, orders carry the profile once.';
    expect(await action(unsent.actionId)).toMatchObject({ status: 'FAILED', status_reason: reason, lease_owner: null });
    expect(await db.dataSource.getRepository(NodeEntity).findOneBy({ id: unsent.nodeId })).toMatchObject({ status: 'ERROR', status_reason: reason });
    expect((await db.dataSource.getRepository(ClusterEntity).findOneByOrFail({ id: unsent.clusterId })).status).not.toBe('RESIZING');
    expect((await action(waiting.actionId)).status).toBe('RUNNING');
    expect((await action(sent.actionId)).status).toBe('RUNNING');
    // the next round finds nothing more: the set-aside rows stay for a look, their action has ended
    expect(await supervisor.failOverdue()).toEqual([]);
  });

  it('says only the relay\'s reason for an order written in the current schema_version', () => {
    expect(unsentReason('message m is too big', '2')).toEqual({ reason: 'its work order could not be sent to a nova-worker: message m is too big.' });
    expect(unsentReason(null, null)).toEqual({ reason: 'its work order could not be sent to a nova-worker: the message broker refused it.' });
  });

  it('fails the node an overdue update left UPDATING', async () => {
    const overdue = await runningScaleOut(5, 6);
    await db.dataSource.query(`UPDATE actions SET action = 'CLUSTER_UPDATE' WHERE id = $1`, [overdue.actionId]);
    await db.dataSource.query(`UPDATE nodes SET status = 'UPDATING', status_reason = 'Update in progress' WHERE id = $1`, [overdue.nodeId]);

    await new DeadlineSupervisor(db.dataSource, silentLogger, { intervalSeconds: 1 }).failOverdue();

    expect(await db.dataSource.getRepository(NodeEntity).findOneBy({ id: overdue.nodeId })).toMatchObject({
      status: 'ERROR',
      status_reason: 'CLUSTER_UPDATE timed out after 5 s.',
    });
  });

  it('records a result that arrives after the action timed out, and does not apply it', async () => {
    const { actionId, clusterId, nodeId } = await runningScaleOut(5, 6);
    await new DeadlineSupervisor(db.dataSource, silentLogger, { intervalSeconds: 1 }).failOverdue();
    const before = await action(actionId);
    const late: WorkResultMessage = {
      message_id: randomUUID(), schema_version: SCHEMA_VERSION, action_id: actionId, correlation_id: 'c', sent_at: new Date().toISOString(),
      cluster_id: clusterId, outcome: 'SUCCEEDED', reason: 'All servers reached their final state.', groups: {},
      nodes: [{ node_id: nodeId, status: 'ACTIVE', physical_id: randomUUID(), zone: 'az1', host: 'h1', reason: null }],
    };

    const handled = await new ApplyWorkResultUseCase(db.dataSource, {} as Evaluator, silentLogger).execute(late);

    expect(handled).toBe('already-final');
    expect(await action(actionId)).toEqual(before);
    const events: Array<{ status: string; status_reason: string }> = await db.dataSource.query(
      `SELECT status, status_reason FROM events WHERE meta_data->>'action_id' = $1 AND status = 'late_result'`,
      [actionId],
    );
    expect(events).toHaveLength(1);
    expect(events[0].status_reason).toMatch(/^A SUCCEEDED work result arrived after the action ended FAILED; it was recorded, not applied/);
  });

  /** a READY action created `createdAgo` s ago on `target` */
  async function readyAction(kind: 'NODE_CHECK' | 'CLUSTER_SCALE_OUT', target: string, timeout: number, createdAgo: number) {
    const id = randomUUID();
    const created = new Date(Date.now() - createdAgo * 1000);
    await db.dataSource.getRepository(ActionEntity).insert(
      row<ActionEntity>({
        id, name: 'ready', cluster_id: kind === 'NODE_CHECK' ? null : target, target, action: kind, cause: 'RPC Request',
        owner: null, interval: -1, start_time: null, end_time: null, timeout, status: 'READY',
        status_reason: '', inputs: {}, outputs: {}, data: {}, depends_on: [], depended_by: [], project: 'p', user: 'u', domain: null,
        created_at: created, updated_at: created, lease_owner: null, lease_expires_at: null, attempts: 0,
      }),
    );
    return id;
  }

  it('ends READY actions the engine never took up: a vanished node at once, an existing cluster after its timeout', async () => {
    const { clusterId } = await runningScaleOut(600, 0);
    const vanishedNode = randomUUID();
    const orphanCheck = await readyAction('NODE_CHECK', vanishedNode, 600, 0);
    const stale = await readyAction('CLUSTER_SCALE_OUT', clusterId, 5, 6);
    const fresh = await readyAction('CLUSTER_SCALE_OUT', clusterId, 600, 6);

    const failed = await new DeadlineSupervisor(db.dataSource, silentLogger, { intervalSeconds: 1 }).failOverdue();

    expect(failed).toEqual(expect.arrayContaining([orphanCheck, stale]));
    expect(failed).not.toContain(fresh);
    expect(await action(orphanCheck)).toMatchObject({ status: 'FAILED', status_reason: `The node '${vanishedNode}' could not be found.` });
    expect(await action(stale)).toMatchObject({ status: 'FAILED', status_reason: 'CLUSTER_SCALE_OUT timed out after 5 s.' });
    expect((await action(fresh)).status).toBe('READY');
  });
});
