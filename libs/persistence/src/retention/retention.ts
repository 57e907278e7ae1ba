import type { DataSource, EntityManager } from 'typeorm';
import { changedCount } from '../sql';
import { inTransaction } from '../transaction';
import { SERVICE_DOWN_AFTER_MS } from '../service-registry';

/**
 * Retention: what Trellis forgets, and what it never forgets early.
 *
 * - `processed_messages`: the ids consumers recorded to skip redeliveries, by `processed_at`.
 * - `events`: by `timestamp` (Senlin's `event-purge`).
 * - `actions`: SUCCEEDED, FAILED or CANCELLED ones, by when they last changed (their end), with their
 *   steps, their decision and the nova-worker's records of their work orders and their steps'
 *   (Senlin's `action-purge`). A record is what stops the worker from applying a replayed order a
 *   second time; once the action (or step) is gone too, the worker applies no order of it at all
 *   (order-lease.ts, `gone`), so the two go together. Also the records that releases before this
 *   rule kept after their action went (DONE, not changed since the cutoff). Never an action
 *   that has not finished, one whose work order (or a step's) the nova-worker is still applying or
 *   whose nodes are still being built or deleted, nor the latest action of an existing cluster or
 *   the action of its latest decision (`GET /v1/actions/{id}/decision` shows what placed the
 *   cluster as it is).
 * - `decisions`: of finished (or vanished) actions, by `created_at`, except the latest decision of an
 *   existing cluster. The engine reads the plan of an action it has not finished; those stay.
 * - `services`: the registrations of components that stopped renewing them (shown `down` by
 *   `GET /v1/services`: a process that was killed, or lost its host, never removed its row), by
 *   `updated_at`, as Senlin's services cleaned up the rows of dead ones. Never a row renewed within
 *   the time after which it is shown `down` (by the database's clock, whatever the age asked): a
 *   running component keeps its row, and one that finds its row gone registers it again.
 *
 * Rows go in batches, each its own short transaction, taken `FOR UPDATE SKIP LOCKED`: a purge never
 * holds locks for long and never waits for an engine (or another purge) working on the same rows.
 */
export type RetentionKind = 'processed_messages' | 'events' | 'actions' | 'decisions' | 'services';
export const RETENTION_KINDS: readonly RetentionKind[] = ['processed_messages', 'events', 'actions', 'decisions', 'services'];

export interface PruneOptions {
  /** rows older than this many seconds go */
  olderThanSeconds: number;
  /** rows per transaction */
  batchSize?: number;
  /** count what would go, delete nothing */
  dryRun?: boolean;
  now?: Date;
  /** asked between batches: true ends the round early (the service is stopping) */
  shouldStop?: () => boolean;
}

/** rows deleted (or that would be, in a dry run) per table */
export type PruneCounts = Record<string, number>;

const FINISHED = `('SUCCEEDED', 'FAILED', 'CANCELLED')`;

/** true for the action `a` when it is its existing cluster's latest action or the one of its latest decision */
const LATEST_OF_CLUSTER = `(a.cluster_id IS NOT NULL AND EXISTS (SELECT 1 FROM clusters c WHERE c.id = a.cluster_id) AND (
      NOT EXISTS (SELECT 1 FROM actions b WHERE b.cluster_id = a.cluster_id AND b.created_at > a.created_at)
      OR (EXISTS (SELECT 1 FROM decisions d0 WHERE d0.action_id = a.id)
          AND NOT EXISTS (SELECT 1 FROM actions b JOIN decisions db ON db.action_id = b.id
                           WHERE b.cluster_id = a.cluster_id AND b.created_at > a.created_at))))`;

/** true while the nova-worker has not finished the work order of the action `id` or of one of its steps */
const orderInFlight = (id: string) => `EXISTS (SELECT 1 FROM work_orders w
                      WHERE w.status <> 'DONE'
                        AND (w.action_id = ${id} OR w.action_id IN (SELECT s.id FROM action_steps s WHERE s.action_id = ${id})))`;

/** the actions that may go: finished before $1, nothing of theirs still in flight, not a cluster's latest */
const PRUNABLE_ACTIONS = `
  SELECT a.id FROM actions a
   WHERE a.status IN ${FINISHED}
     AND COALESCE(a.updated_at, a.created_at) < $1
     AND NOT ${orderInFlight('a.id')}
     AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.action_id = a.id AND n.status IN ('INIT', 'CREATING', 'DELETING'))
     AND NOT ${LATEST_OF_CLUSTER}`;

/** the decisions that may go: made before $1, their action finished or gone, not a cluster's latest */
const PRUNABLE_DECISIONS = `
  SELECT d.action_id FROM decisions d LEFT JOIN actions a ON a.id = d.action_id
   WHERE d.created_at < $1
     AND (a.id IS NULL OR a.status IN ${FINISHED})
     AND NOT (a.id IS NOT NULL AND a.cluster_id IS NOT NULL AND EXISTS (SELECT 1 FROM clusters c WHERE c.id = a.cluster_id)
              AND NOT EXISTS (SELECT 1 FROM actions b JOIN decisions db ON db.action_id = b.id
                               WHERE b.cluster_id = a.cluster_id AND b.created_at > a.created_at))`;

/** the records of finished orders whose action and step are gone (kept by earlier releases), changed before $1 */
const ORPHAN_ORDERS = `
  SELECT w.action_id FROM work_orders w
   WHERE w.status = 'DONE' AND COALESCE(w.updated_at, w.created_at) < $1
     AND NOT EXISTS (SELECT 1 FROM actions a WHERE a.id = w.action_id)
     AND NOT EXISTS (SELECT 1 FROM action_steps s WHERE s.id = w.action_id)`;

/**
 * The recorded outcomes of node operations (work_order_ops) whose order is finished or gone: the
 * order's final transaction deletes its own, these are what a holder that lost its order wrote after
 * it, or what an order that failed otherwise left. Any age: nothing reads them once the order is DONE.
 */
const LEFT_OP_OUTCOMES = `
  SELECT o.action_id, o.node_id FROM work_order_ops o
   WHERE NOT EXISTS (SELECT 1 FROM work_orders w WHERE w.action_id = o.action_id AND w.status <> 'DONE')`;

/** the registrations that may go: renewed before $1, and not within the time after which a component is down */
const DOWN_SERVICES = `updated_at < $1 AND updated_at < clock_timestamp() - interval '${Math.ceil(SERVICE_DOWN_AFTER_MS / 1000)} seconds'`;

interface KindSql {
  /** the tables it deletes from, the kind's own first */
  tables: string[];
  /** tables of which a full batch means more may be left (default: the kind's own) */
  drivers?: string[];
  /** counts per table of what would go (dry run); $1 is the cutoff */
  count: string;
  /** deletes one batch ($1 cutoff, $2 batch size) in the given transaction; counts per table */
  deleteBatch(m: EntityManager, cutoff: Date, batchSize: number): Promise<PruneCounts>;
}

const simpleDelete = (table: string, sql: string): KindSql['deleteBatch'] => async (m, cutoff, batchSize) => ({
  [table]: changedCount(await m.query(sql, [cutoff, batchSize])),
});

/**
 * Of `ids` (actions this transaction holds FOR UPDATE), those still without an order in flight, and
 * their steps locked too. A nova-worker's claim of an order takes a key-share lock on its action or
 * step (order-lease.ts): one that comes now waits for this transaction and then finds them gone
 * (the order is not applied); one that committed between PRUNABLE_ACTIONS' snapshot and these locks
 * is seen by this statement's newer one, and its action stays.
 */
export async function withoutOrdersInFlight(m: EntityManager, ids: string[]): Promise<string[]> {
  if (!ids.length) return ids;
  await m.query(`SELECT id FROM action_steps WHERE action_id = ANY($1::uuid[]) FOR UPDATE`, [ids]);
  const rows: Array<{ id: string }> = await m.query(
    `SELECT t.id FROM unnest($1::uuid[]) AS t(id)
      WHERE NOT ${orderInFlight('t.id')}`,
    [ids],
  );
  return rows.map((r) => r.id);
}

const KINDS: Record<RetentionKind, KindSql> = {
  processed_messages: {
    tables: ['processed_messages'],
    count: `SELECT count(*)::int AS processed_messages FROM processed_messages WHERE processed_at < $1`,
    deleteBatch: simpleDelete(
      'processed_messages',
      `WITH doomed AS (SELECT consumer, message_id FROM processed_messages WHERE processed_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
       DELETE FROM processed_messages p USING doomed WHERE p.consumer = doomed.consumer AND p.message_id = doomed.message_id`,
    ),
  },
  events: {
    tables: ['events'],
    count: `SELECT count(*)::int AS events FROM events WHERE "timestamp" < $1`,
    deleteBatch: simpleDelete(
      'events',
      `WITH doomed AS (SELECT id FROM events WHERE "timestamp" < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
       DELETE FROM events e USING doomed WHERE e.id = doomed.id`,
    ),
  },
  decisions: {
    tables: ['decisions'],
    count: `SELECT count(*)::int AS decisions FROM (${PRUNABLE_DECISIONS}) doomed`,
    deleteBatch: simpleDelete(
      'decisions',
      `WITH doomed AS (${PRUNABLE_DECISIONS} LIMIT $2 FOR UPDATE OF d SKIP LOCKED)
       DELETE FROM decisions x USING doomed WHERE x.action_id = doomed.action_id`,
    ),
  },
  services: {
    tables: ['services'],
    count: `SELECT count(*)::int AS services FROM services WHERE ${DOWN_SERVICES}`,
    deleteBatch: simpleDelete(
      'services',
      `WITH doomed AS (SELECT id FROM services WHERE ${DOWN_SERVICES} LIMIT $2 FOR UPDATE SKIP LOCKED)
       DELETE FROM services s USING doomed WHERE s.id = doomed.id`,
    ),
  },
  actions: {
    tables: ['actions', 'action_steps', 'decisions', 'work_orders', 'work_order_ops'],
    drivers: ['actions', 'work_orders', 'work_order_ops'],
    count: `WITH doomed AS (${PRUNABLE_ACTIONS}),
                 steps AS (SELECT id FROM action_steps WHERE action_id IN (SELECT id FROM doomed))
            SELECT (SELECT count(*) FROM doomed)::int AS actions,
                   (SELECT count(*) FROM steps)::int AS action_steps,
                   (SELECT count(*) FROM decisions WHERE action_id IN (SELECT id FROM doomed))::int AS decisions,
                   ((SELECT count(*) FROM work_orders WHERE action_id IN (SELECT id FROM doomed UNION ALL SELECT id FROM steps))
                    + (SELECT count(*) FROM (${ORPHAN_ORDERS}) orphans))::int AS work_orders,
                   (SELECT count(*) FROM (${LEFT_OP_OUTCOMES}) left_outcomes)::int AS work_order_ops`,
    deleteBatch: async (m, cutoff, batchSize): Promise<PruneCounts> => {
      const locked = ((await m.query(`${PRUNABLE_ACTIONS} ORDER BY a.created_at LIMIT $2 FOR UPDATE OF a SKIP LOCKED`, [cutoff, batchSize])) as Array<{ id: string }>).map((r) => r.id);
      const ids = await withoutOrdersInFlight(m, locked);
      const del = async (sql: string, param: unknown[]) => changedCount(await m.query(sql, param));
      const orphans = await del(`WITH doomed AS (${ORPHAN_ORDERS} LIMIT $2 FOR UPDATE OF w SKIP LOCKED)
                                 DELETE FROM work_orders x USING doomed WHERE x.action_id = doomed.action_id`, [cutoff, batchSize]);
      const leftOutcomes = await del(`WITH doomed AS (${LEFT_OP_OUTCOMES} LIMIT $1)
                                       DELETE FROM work_order_ops x USING doomed WHERE x.action_id = doomed.action_id AND x.node_id = doomed.node_id`, [batchSize]);
      if (!ids.length) return { actions: 0, work_orders: orphans, work_order_ops: leftOutcomes };
      return {
        work_order_ops: leftOutcomes,
        // the orders' records first, while the steps that name them are there; every one is DONE (PRUNABLE_ACTIONS)
        work_orders: orphans + await del(
          `DELETE FROM work_orders WHERE status = 'DONE'
              AND (action_id = ANY($1::uuid[]) OR action_id IN (SELECT id FROM action_steps WHERE action_id = ANY($1::uuid[])))`, [ids]),
        action_steps: await del(`DELETE FROM action_steps WHERE action_id = ANY($1::uuid[])`, [ids]),
        decisions: await del(`DELETE FROM decisions WHERE action_id = ANY($1::uuid[])`, [ids]),
        actions: await del(`DELETE FROM actions WHERE id = ANY($1::uuid[])`, [ids]),
      };
    },
  },
};

/** Forgets the rows of one kind older than `olderThanSeconds` (module comment: which rows never go). */
export async function pruneOlderThan(dataSource: DataSource, kind: RetentionKind, options: PruneOptions): Promise<PruneCounts> {
  if (!Number.isFinite(options.olderThanSeconds) || options.olderThanSeconds < 0) {
    throw new Error(`olderThanSeconds must be a number of at least 0, got ${options.olderThanSeconds}`);
  }
  const sql = KINDS[kind];
  const cutoff = new Date((options.now ?? new Date()).getTime() - options.olderThanSeconds * 1000);
  if (options.dryRun) return ((await dataSource.query(sql.count, [cutoff])) as PruneCounts[])[0];
  const batchSize = options.batchSize ?? 500;
  const total: PruneCounts = Object.fromEntries(sql.tables.map((t) => [t, 0]));
  for (;;) {
    const batch = await inTransaction(dataSource, (m) => sql.deleteBatch(m, cutoff, batchSize));
    for (const [table, n] of Object.entries(batch)) total[table] += n;
    // a short batch: nothing older is left (or the rest is locked by someone working on it)
    const full = (sql.drivers ?? [kind]).some((table) => (batch[table] ?? 0) >= batchSize);
    if (!full || options.shouldStop?.()) return total;
  }
}
