import { randomUUID } from 'node:crypto';
import type { WorkOrderMessage } from '@trellis/contracts';
import { errorMessage, type Logger } from '@trellis/common';
import { leaseTakeovers } from '@trellis/observability';
import { hotQuery } from '@trellis/persistence';
import { changedCount, changedRows } from '@trellis/persistence/sql';
import type { DataSource, EntityManager } from 'typeorm';

/**
 * What a delivery of a work order found. `first`/`taken-over`: this worker holds the order (with
 * `token`); `held`: another worker's lease on it is alive; `waiting`: it met a transient cloud error
 * and waits for its next attempt; `gone`: neither its action nor its step exists (retention forgot
 * them: a replay of an order applied long ago); anything else is the order's status (BUILDING, DONE).
 */
export type HeldOrder = {
  state: 'first' | 'taken-over';
  token: string;
  /**
   * the status of the order's action when the order was claimed, read by the claiming statement: for
   * a step's order (a drift survey, a repair's replacement), the status of the action the step is
   * part of (null: neither found)
   */
  actionStatus: string | null;
};
export type OrderClaim = HeldOrder | { state: 'held' | 'waiting' | 'gone' | string; token?: undefined };

export interface OrderLeaseOptions {
  /** the worker instance, e.g. `nova-worker@host:pid` */
  owner: string;
  leaseSeconds: number;
}

/** Lease times are the database's clock at the statement (`clock_timestamp()`), not the transaction's start. */
const leaseUntil = (param: string) => `clock_timestamp() + make_interval(secs => ${param})`;

/**
 * The status of the action an order belongs to, by the order's action_id ($1): the action's own, or
 * for a step's order the status of the action the step is part of (a cancel or a timeout ends that
 * one), and whether the action or step exists. The key-share locks (on the action, or on the step)
 * order a claim with retention's purge of them.
 */
const OWNER = `
    SELECT COALESCE(x.action_status, st.parent_status) AS action_status, (x.action_status IS NOT NULL OR st.id IS NOT NULL) AS known
      FROM (SELECT (SELECT a.status FROM actions a WHERE a.id = $1::uuid FOR KEY SHARE) AS action_status) x
      LEFT JOIN LATERAL (
        SELECT s.id, (SELECT p.status FROM actions p WHERE p.id = s.action_id) AS parent_status
          FROM action_steps s WHERE x.action_status IS NULL AND s.id = $1::uuid FOR KEY SHARE
      ) st ON true`;

/**
 * The first claim of an order, when its action or step exists ($1 the order's action_id): inserts
 * the row APPLYING under a lease. Answers the action's status (OWNER), whether the action or step is
 * known, and whether the row was inserted (false: there was one already). The key-share lock on the
 * action (or step) orders the claim with retention's purge of it, which holds the row FOR UPDATE: a
 * claim that comes during the purge waits and finds it gone (retention.ts, withoutOrdersInFlight).
 * It does not wait for the engine's updates of the action.
 */
const CLAIM_FIRST = `
  WITH owner AS (${OWNER}
  ), inserted AS (
    INSERT INTO work_orders (action_id, cluster_id, payload, status, groups, created_at, updated_at, lease_owner, lease_token, lease_expires_at)
    SELECT $1::uuid, $2::uuid, $3::jsonb, 'APPLYING', '{}'::jsonb, $4::timestamptz, $4::timestamptz, $5::varchar, $6::uuid, ${leaseUntil('$7::float8')}
      FROM owner WHERE owner.known
    ON CONFLICT (action_id) DO NOTHING RETURNING 1
  )
  SELECT owner.action_status, owner.known, EXISTS (SELECT 1 FROM inserted) AS inserted FROM owner`;

/**
 * The status of the action an order belongs to (`id` an SQL expression of the order's action_id):
 * the action's own, or the status of the action a step's order is part of; no row when neither
 * exists. Without locks: the safe points of a cancel read it while the order is applied
 * (apply-work-order.usecase.ts), the order poller before it tries a waiting order again.
 */
export const actionStatusOf = (id: string) => `
  SELECT a.status AS action_status FROM actions a WHERE a.id = ${id}
  UNION ALL
  SELECT p.status FROM action_steps s JOIN actions p ON p.id = s.action_id WHERE s.id = ${id}`;

/** actionStatusOf the order whose action_id is $1 */
export const ACTION_STATUS = actionStatusOf('$1::uuid');

/**
 * Takes the order before touching Nova, so that one worker at a time applies it. A first delivery
 * inserts the row with a lease; later ones take it over only when the holder's lease has run out
 * (the holder died: its heartbeat stopped) and no retry is pending. A redelivery of the message
 * alone proves nothing: the broker redelivers when a channel or connection drops, while the first
 * worker may still be calling Nova. Each claim draws a new token; the holder's writes name it.
 */
export async function claimOrder(dataSource: DataSource, order: WorkOrderMessage, options: OrderLeaseOptions): Promise<OrderClaim> {
  const token = randomUUID();
  // A first delivery, the usual case, is this one statement; it needs no transaction around it. It
  // also reads the action's status, the first safe point of a cancel (no read of its own before the
  // first server request), and whether the order's action (or step) still exists: an order whose
  // action retention has forgotten is a replay of one applied long ago (its record went with it) and
  // is never applied again, nor recorded.
  const [claimed]: Array<{ action_status: string | null; known: boolean; inserted: boolean }> = await hotQuery(dataSource.manager, CLAIM_FIRST, [
    order.action_id, order.cluster_id, JSON.stringify(order), new Date(), options.owner, token, options.leaseSeconds,
  ]);
  if (claimed.inserted) return { state: 'first', token, actionStatus: claimed.action_status };
  if (!claimed.known) return { state: 'gone' };
  // One UPDATE: of two concurrent claimers the second re-reads the row after the first committed
  // (READ COMMITTED) and finds the lease alive, so exactly one takes the order over. The subquery
  // reads the row as it was before this statement: an owner there is a holder whose lease ran out
  // (an order waiting for its next attempt has none).
  const taken: unknown = await hotQuery(dataSource.manager,
    `UPDATE work_orders SET lease_owner = $2, lease_token = $3, lease_expires_at = ${leaseUntil('$4')}, updated_at = $5
      WHERE action_id = $1 AND status = 'APPLYING'
        AND (lease_expires_at IS NULL OR lease_expires_at <= clock_timestamp())
        AND (next_attempt_at IS NULL OR next_attempt_at <= clock_timestamp())
      RETURNING action_id, (SELECT o.lease_owner FROM work_orders o WHERE o.action_id = $1) AS previous_owner,
        (SELECT action_status FROM (${ACTION_STATUS}) st LIMIT 1) AS action_status`,
    [order.action_id, options.owner, token, options.leaseSeconds, new Date()],
  );
  const [takenRow] = changedRows<{ previous_owner: string | null; action_status: string | null }>(taken);
  if (takenRow) {
    if (takenRow.previous_owner !== null) leaseTakeovers.inc({ lease: 'work_order' });
    return { state: 'taken-over', token, actionStatus: takenRow.action_status };
  }
  const [row]: Array<{ status: string; alive: boolean }> = await hotQuery(dataSource.manager,
    `SELECT status, COALESCE(lease_expires_at > clock_timestamp(), false) AS alive FROM work_orders WHERE action_id = $1`,
    [order.action_id],
  );
  if (!row) return { state: 'held' }; // deleted meanwhile: nothing for this delivery to do
  if (row.status !== 'APPLYING') return { state: row.status };
  return { state: row.alive ? 'held' : 'waiting' };
}

/**
 * Keeps a claimed order's lease alive while its Nova calls are in flight (renewed every third of
 * the lease). `lost` turns true when a renewal finds another worker's token on the order: it was
 * taken over. A renewal that finds no token at all met the holder's own release (the fence of its
 * last transaction committed while the renewal waited for the row): nothing is wrong then.
 */
export class OrderHeartbeat {
  private timer: NodeJS.Timeout | null = null;
  lost = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly actionId: string,
    private readonly token: string,
    private readonly options: OrderLeaseOptions,
    private readonly logger: Logger,
  ) {}

  start(): this {
    this.timer = setInterval(() => void this.renew(), Math.max(50, (this.options.leaseSeconds * 1000) / 3));
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async renew(): Promise<boolean> {
    try {
      const result: unknown = await hotQuery(this.dataSource.manager,
        `UPDATE work_orders SET lease_expires_at = ${leaseUntil('$3')} WHERE action_id = $1 AND lease_token = $2`,
        [this.actionId, this.token, this.options.leaseSeconds],
      );
      if (changedCount(result) === 0 && !this.lost && (await this.heldByAnother())) {
        this.lost = true;
        this.logger.warn('work order taken over by another worker; this one will write nothing', { action_id: this.actionId });
      }
    } catch (e) {
      // the next beat tries again; the lease is long enough for a few misses
      this.logger.warn('work order lease not renewed', { action_id: this.actionId, error: errorMessage(e) });
    }
    return !this.lost;
  }

  /**
   * Whether another claim's token is on the order now. Under load a renewal can wait on the row
   * while the holder's fence releases the lease (token NULL) and then match nothing; seen by the
   * replica test as a false "taken over" warning from a worker that had just finished the order.
   */
  private async heldByAnother(): Promise<boolean> {
    const [row]: Array<{ lease_token: string | null }> = await this.dataSource.query('SELECT lease_token FROM work_orders WHERE action_id = $1', [this.actionId]);
    return !!row?.lease_token && row.lease_token !== this.token;
  }
}

/**
 * The fence: in the holder's final transaction, moves the order on from APPLYING and releases its
 * lease, but only while `token` is still the order's. Returns the locked row's state, or null when
 * the order was taken over (or finished by another worker): then the caller writes nothing.
 */
export async function fencedUpdate<T>(
  m: EntityManager,
  actionId: string,
  token: string,
  set: string,
  params: unknown[],
  returning: string,
): Promise<T | null> {
  const base = 2 + params.length;
  const [row] = changedRows<T>(
    await hotQuery(m,
      `UPDATE work_orders SET ${set}, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, next_attempt_at = NULL
        WHERE action_id = $1 AND lease_token = $${base} AND status = 'APPLYING' RETURNING ${returning}`,
      [actionId, ...params, token],
    ),
  );
  return row ?? null;
}
