import { FailureStreak, errorMessage, withLogContext, withoutLogContext, type Logger } from '@trellis/common';
import type { NovaPort, Server } from '@trellis/nova';
import { buildPollListed, buildPollLookups, duplicateServersDeleted, leaseTakeovers } from '@trellis/observability';
import { hotQuery, inTransaction, type JsonObject, type NodeEntity } from '@trellis/persistence';
import type { DataSource, EntityManager } from 'typeorm';
import { mapLimit } from '../map-limit';
import { NODE_STATE, ORDER_STATE, resultIfDone, writeWorkResults, type NodeState, type OrderResult, type OrderState } from './complete-order';
import { UNCERTAIN_CREATE_KEY, isUncertainCreate, sweepDuplicates } from './duplicate-sweep';
import { isPermanent, type NovaAccess } from '../identity/nova-access';
import { changedSince, newestUpdate } from '../nova-changes';

/** Turns what Nova shows the owner of a server into the host it runs on (FactsRefresher.hostOf). */
export type HostResolver = (projectId: string, server: Pick<Server, 'host' | 'hostId'>) => string | null;

export interface BuildPollerOptions {
  workerId: string;
  pollIntervalMs: number;
  /** how long a claimed node stays with this worker before another may take it over */
  leaseSeconds: number;
  concurrency: number;
  batchSize: number;
}

/** What the poller reads of a node it claimed. */
type PolledNode = Pick<NodeEntity, 'id' | 'name' | 'status' | 'physical_id' | 'data' | 'action_id' | 'build_deadline' | 'project'> & {
  /** the user whose trust the node's work order was applied with */
  owner_user: string;
  /** the request that started the node's action (its work order's), for the logs and Nova's request id */
  correlation_id: string | null;
  /** the worker whose lease on the node ran out, when it did not hand the node back itself (it died) */
  previous_owner: string | null;
  /** when this worker's order for the node was stored (null: no order here) */
  ordered_at: Date | null;
};

/**
 * From how many nodes of one owner in a round the poller lists the owner's servers changed since
 * their orders (one `GET /servers/detail?changes-since=…` a page of up to 1,000) instead of asking
 * for each server (a `GET /servers/{id}` each): a 1,000-node scale-out was 1,000 requests to Nova
 * every poll interval while it built.
 */
export const LIST_FROM = 8;
/** how far before the earliest order the list reaches: Trellis's and Nova's clocks may differ */
export const CLOCK_SLACK_MS = 10 * 60_000;
/**
 * Between two whole lists (every FULL_LIST_EVERY_MS), an owner's servers are listed by what changed
 * since the previous list, on Nova's clock, less CHANGES_SLACK_MS (nova-changes.ts: Nova's hosts write `updated_at` on
 * their own clocks): a server the changes leave out is as the last list showed it.
 */
export const FULL_LIST_EVERY_MS = 30_000;

/** An owner's servers as the lists showed them. */
interface Listing {
  /** when its last list was asked for (this worker's clock) */
  at: number;
  /** the changes-since of its last whole list: it holds every server changed from then on */
  since: number;
  /** when that whole list was asked for (this worker's clock) */
  fullAt: number;
  /**
   * Nova's clock less this worker's, or less: the largest `updated` a list showed less this worker's
   * time when that list had answered (NaN while no list showed one). Nova's time at a moment of this
   * worker's is then at least that moment plus `offset`, whatever the two clocks say.
   */
  offset: number;
  servers: Map<string, Server>;
}

/** A final state: ACTIVE or ERROR, with what comes with it. */
interface Final {
  status: string;
  status_reason: string;
  data?: JsonObject;
  created_at?: Date;
}

/** not final yet: the node goes back, due again at `dueAt` */
interface Again {
  dueAt: Date;
}

type Change = Final | Again | 'gone';

interface Observation {
  node: PolledNode;
  change: Change;
}

const isFinal = (c: Change): c is Final | 'gone' => c === 'gone' || 'status' in c;

/**
 * Waits for Nova without holding any message: nodes in CREATING or DELETING are claimed from the
 * database with a lease (FOR UPDATE SKIP LOCKED), their servers are looked at, and final states
 * are written back. A worker that dies loses nothing: its leases expire and any worker resumes.
 */
export class BuildPoller {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** the latest server list of each owner (project, user), for the rounds right after it (listed()) */
  private readonly listings = new Map<string, Listing>();
  private stopped = true;
  private again = false;
  /** rounds failed in a row (the database away): one line for the streak, and a longer wait between rounds */
  private readonly failures: FailureStreak;

  constructor(
    private readonly dataSource: DataSource,
    private readonly access: NovaAccess,
    private readonly logger: Logger,
    private readonly options: BuildPollerOptions,
    private readonly hostOf: HostResolver = (_, s) => s.host ?? s.hostId ?? null,
  ) {
    this.failures = new FailureStreak(logger, 'build poll failed; will try again', 'build polls succeed again', { level: 'error' });
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** look again soon (new builds were just recorded) */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    // kick() is called while a work order is handled: the loop must not carry that order's log context on
    this.timer = withoutLogContext(() => setTimeout(() => {
      this.timer = null;
      this.running = this.tick()
        .then((examined) => {
          // a full round: more nodes may be due now, look at them at once rather than a poll interval later
          if (examined >= this.options.batchSize) this.again = true;
        })
        .then(
          () => this.failures.succeeded(),
          (e) => this.failures.failed(errorMessage(e)),
        )
        .finally(() => {
          this.running = null;
          const more = this.again;
          this.again = false;
          this.schedule(more ? 0 : this.delayAfterRound());
        });
    }, delay));
  }

  /** the poll interval, doubled per round failed in a row up to 2 s (or the interval, if longer) */
  private delayAfterRound(): number {
    const interval = this.options.pollIntervalMs;
    const failed = this.failures.failures;
    return failed === 0 ? interval : Math.min(Math.max(interval, 2_000), interval * 2 ** Math.min(20, failed));
  }

  /** one round: claim due nodes, look at their servers, record what changed. Returns nodes examined. */
  async tick(now = new Date()): Promise<number> {
    const claimed = await this.claim(now);
    if (!claimed.length) return 0;
    const takenOver = claimed.filter((n) => n.previous_owner !== null && n.previous_owner !== this.options.workerId).length;
    if (takenOver) leaseTakeovers.inc({ lease: 'node' }, takenOver);
    const listed = await this.listed(claimed);
    const observations = await mapLimit(claimed, this.options.concurrency, (node) =>
      withLogContext({ correlation_id: node.correlation_id ?? undefined, action_id: node.action_id ?? undefined }, () =>
        this.observe(node, new Date(), node.physical_id ? listed.get(node.physical_id) : undefined),
      ),
    );
    const finished = new Set<string>();
    for (const o of observations) {
      if (o.node.action_id && isFinal(o.change)) finished.add(o.node.action_id);
    }
    // One statement for every node of the round, one for the rows of the orders that may be done,
    // one for the results of those that are: BEGIN + 3 + COMMIT, instead of three per node.
    await inTransaction(this.dataSource, async (m) => {
      const { written, gone } = await this.recordAll(m, observations, now);
      if (finished.size === 0) return;
      // the orders' rows locked first (two workers finishing the last nodes of one order see each
      // other's writes), then read whole only for orders none of whose nodes is still being built or
      // deleted: a 10,000-node order was read (1.8 MB) with every node of it on each of its 50 rounds
      const open = await lockOpenOrders(m, [...finished]);
      if (open.length === 0) return;
      const pending = await stillPending(m, open);
      const done = new Set(open.filter((id) => !pending.has(id)));
      if (done.size === 0) return;
      const orders = await readOrders(m, [...done]);
      const results: OrderResult[] = [];
      for (const actionId of finished) {
        if (!done.has(actionId)) continue;
        const result = await resultIfDone(m, actionId, { order: orders.get(actionId) ?? null, written, gone });
        if (result) results.push(result);
      }
      await writeWorkResults(m, results, now);
    });
    return claimed.length;
  }

  /**
   * One statement, no transaction: the subquery's row locks (SKIP LOCKED) keep concurrent pollers
   * off each other's nodes until the lease is written, and the lease keeps them off afterwards.
   * `previous_owner` reads the row as it was before this statement: a poller hands a node back
   * without an owner, so an owner there is one whose lease ran out. What the nodes need of their
   * orders is read once per order (MATERIALIZED): read per node, each read took the whole payload
   * out of TOAST, 24 ms for 200 nodes of one order with 45 KB of user_data, and a minute per round
   * when a work order repeated the profile on every server (BENCHMARKS.md, scale-out).
   */
  private async claim(now: Date): Promise<PolledNode[]> {
    const until = new Date(now.getTime() + this.options.leaseSeconds * 1000);
    return hotQuery<PolledNode[]>(this.dataSource.manager,
      `WITH claimed AS (
         UPDATE nodes SET lease_owner = $1, lease_expires_at = $2
         WHERE id IN (
           SELECT id FROM nodes
           WHERE status IN ('CREATING', 'DELETING') AND (lease_expires_at IS NULL OR lease_expires_at < $3)
           ORDER BY updated_at ASC LIMIT $4
           FOR UPDATE SKIP LOCKED)
         RETURNING id, name, status, physical_id, data, action_id, build_deadline, project, "user",
           (SELECT n.lease_owner FROM nodes n WHERE n.id = nodes.id) AS previous_owner
       ), orders AS MATERIALIZED (
         SELECT o.action_id, o.payload->>'user' AS owner_user, o.payload->>'correlation_id' AS correlation_id, o.created_at
         FROM work_orders o WHERE o.action_id IN (SELECT action_id FROM claimed)
       )
       SELECT c.id, c.name, c.status, c.physical_id, c.data, c.action_id, c.build_deadline, c.project,
         COALESCE(o.owner_user, c."user") AS owner_user, o.correlation_id, c.previous_owner, o.created_at AS ordered_at
       FROM claimed c LEFT JOIN orders o ON o.action_id = c.action_id`,
      [this.options.workerId, until, now, this.options.batchSize],
    );
  }

  /**
   * The servers of the round's nodes, listed once per owner with LIST_FROM nodes or more: by
   * `changes-since` the earliest of their orders (less CLOCK_SLACK_MS), so the list holds the servers
   * changed while they were built or deleted, not all of the project's. The rounds that follow at
   * once (a round takes at most batchSize nodes) use the same list while it is younger than half a
   * poll interval: a node it shows still building is looked at again one interval later anyway.
   * After that, for FULL_LIST_EVERY_MS, the owner's list is brought up to date with what changed
   * since the previous list was asked for, on Nova's clock (see Listing.offset), less
   * CHANGES_SLACK_MS: during a 1,000-node build each look returns the servers that moved since the
   * last, not all 1,000; then a whole list again, which also bounds what a change written by a host
   * whose clock lags more than the slack could hide. A server the list
   * leaves out, one in ERROR without its fault (real Nova leaves `fault` out of `servers/detail`),
   * and every server when the list fails, are looked at one by one as before; a DELETED one is gone.
   */
  private async listed(claimed: readonly PolledNode[]): Promise<Map<string, Server | null>> {
    const byOwner = new Map<string, PolledNode[]>();
    for (const node of claimed) {
      if (!node.physical_id || !node.ordered_at) continue;
      const key = JSON.stringify([node.project, node.owner_user]);
      const nodes = byOwner.get(key);
      if (nodes) nodes.push(node);
      else byOwner.set(key, [node]);
    }
    const now = Date.now();
    const fresh = now - this.options.pollIntervalMs / 2;
    // a listing not brought up to date for this long would be listed whole anyway
    for (const [key, listing] of this.listings) if (listing.at < now - FULL_LIST_EVERY_MS) this.listings.delete(key);
    const found = new Map<string, Server | null>();
    for (const [key, nodes] of byOwner) {
      if (nodes.length < LIST_FROM) continue;
      const { project, owner_user: user } = nodes[0];
      const since = Math.min(...nodes.map((n) => n.ordered_at!.getTime())) - CLOCK_SLACK_MS;
      let listing = this.listings.get(key);
      if (!listing || listing.since > since || listing.at < fresh) {
        try {
          listing = await this.list(project, user, since, listing && listing.since <= since ? listing : undefined);
          this.listings.set(key, listing);
        } catch (e) {
          this.listings.delete(key);
          this.logger.warn('could not list the servers of a round; looking at each', { project, nodes: nodes.length, error: errorMessage(e) });
          continue;
        }
      }
      for (const node of nodes) {
        const server = listing.servers.get(node.physical_id!);
        if (!server || (server.status === 'ERROR' && !server.fault)) continue;
        found.set(server.id, server.status === 'DELETED' ? null : server);
      }
    }
    return found;
  }

  /**
   * The owner's servers: `kept` brought up to date with what changed since its last list was asked
   * for (Nova's time then, less CHANGES_SLACK_MS) while its whole list is younger than
   * FULL_LIST_EVERY_MS and Nova's clock is known, otherwise a whole list by changes-since `since`.
   */
  private async list(project: string, user: string, since: number, kept?: Listing): Promise<Listing> {
    const at = Date.now();
    const nova = await this.access.asOwner({ project, user });
    if (kept && at - kept.fullAt < FULL_LIST_EVERY_MS && Number.isFinite(kept.offset)) {
      const changed = await nova.listServers({ changesSince: new Date(Math.max(kept.since, changedSince(kept.at, kept.offset))) });
      const offset = newestUpdate(changed) - Date.now();
      buildPollListed.inc({ list: 'changes' }, changed.length);
      // the listing is this worker's alone, and rounds do not overlap: brought up to date in place
      for (const s of changed) kept.servers.set(s.id, s);
      return { ...kept, at, offset: Number.isFinite(offset) ? Math.max(kept.offset, offset) : kept.offset };
    }
    const listed = await nova.listServers({ changesSince: new Date(since) });
    const seen = newestUpdate(listed) - Date.now();
    const offset = Number.isFinite(seen) ? Math.max(seen, kept?.offset ?? -Infinity) : (kept?.offset ?? NaN);
    buildPollListed.inc({ list: 'whole' }, listed.length);
    return { at, since, fullAt: at, offset, servers: new Map(listed.map((s) => [s.id, s])) };
  }

  /** `listed`: the node's server as the round's list showed it (null: deleted), undefined: not listed */
  private async observe(node: PolledNode, now: Date, listed?: Server | null): Promise<Observation> {
    try {
      // as the node's owner, like every call about a project's servers
      const nova = node.physical_id ? await this.access.asOwner({ project: node.project, user: node.owner_user }) : null;
      if (nova && node.physical_id) buildPollLookups.inc({ way: listed === undefined ? 'get' : 'list' });
      const server = nova && node.physical_id ? (listed !== undefined ? listed : await nova.getServer(node.physical_id)) : null;
      const change = node.status === 'CREATING' ? this.buildChange(node, server, now) : this.deleteChange(node, server, now);
      if (nova && change && change !== 'gone' && change.status === 'ACTIVE' && isUncertainCreate(node.data)) {
        // a failure here is looked at again like any other: the node stays CREATING until the sweep is
        // done, or until its build deadline, after which it is recorded ACTIVE with the doubt logged
        await this.sweep(nova, node).catch((e) => {
          if (!node.build_deadline || node.build_deadline.getTime() >= now.getTime()) throw e;
          this.logger.warn('could not look for duplicate servers of a node before its build deadline; recording it ACTIVE', {
            node_id: node.id,
            server_id: node.physical_id,
            error: errorMessage(e),
          });
        });
      }
      return { node, change: change ?? this.lookAgain(now) };
    } catch (e) {
      if (isPermanent(e)) {
        // the trust is gone: nothing this worker may do about the server, and no retry will help
        const verb = node.status === 'CREATING' ? 'built' : 'deleted';
        return { node, change: { status: 'ERROR', status_reason: `Server ${node.physical_id} of node ${node.name} could not be followed while it was ${verb}: ${errorMessage(e)}` } };
      }
      this.logger.warn('could not look at a server; will look again', {
        node_id: node.id,
        server_id: node.physical_id,
        error: errorMessage(e),
      });
      return { node, change: this.lookAgain(now) };
    }
  }

  private async sweep(nova: NovaPort, node: PolledNode): Promise<void> {
    if (!node.action_id || !node.physical_id) return;
    const deleted = await sweepDuplicates(nova, { id: node.id, action_id: node.action_id, physical_id: node.physical_id });
    if (deleted.length) {
      duplicateServersDeleted.inc(deleted.length);
      this.logger.warn('deleted servers Nova made twice for one node (a create whose answer was lost had made them)', {
        node_id: node.id,
        server_id: node.physical_id,
        deleted,
      });
    }
  }

  /** not final yet: hand the node back, due again after one poll interval */
  private lookAgain(now: Date): Again {
    return { dueAt: new Date(now.getTime() + this.options.pollIntervalMs) };
  }

  private buildChange(node: PolledNode, server: Server | null, now: Date): Final | null {
    const placement = { ...((node.data.placement as Record<string, unknown>) ?? {}) };
    if (!server) {
      return {
        status: 'ERROR',
        status_reason: `Server ${node.physical_id} of node ${node.name} disappeared from Nova while it was being built.`,
      };
    }
    if (server.status === 'ACTIVE') {
      // Senlin fills placement.zone only if the policy did not set one; Trellis records the zone
      // the server really got, so the next zone plan counts it where it is (decision 1).
      if (server.availabilityZone) placement.zone = server.availabilityZone;
      placement.host = this.hostOf(node.project, server);
      const { [UNCERTAIN_CREATE_KEY]: _swept, ...data } = node.data;
      return { status: 'ACTIVE', status_reason: 'Creation succeeded', data: { ...data, placement }, created_at: now };
    }
    if (server.status === 'ERROR') {
      const fault = server.fault?.message ?? 'the server went to ERROR without a fault message';
      return { status: 'ERROR', status_reason: `Failed in creating server ${server.id} for node ${node.name}: ${fault}` };
    }
    if (node.build_deadline && node.build_deadline.getTime() < now.getTime()) {
      return {
        status: 'ERROR',
        status_reason: `Server ${server.id} of node ${node.name} did not become ACTIVE before the build timeout (still ${server.status}).`,
      };
    }
    return null;
  }

  /**
   * A server being deleted is followed until Nova no longer has it. Its status says little on the
   * way: a server that failed to build keeps ERROR and its old fault while Nova deletes it (seen on
   * the real Nova), so only the deadline turns a delete that never completes into a failure.
   */
  private deleteChange(node: PolledNode, server: Server | null, now: Date): Final | 'gone' | null {
    if (!server || server.status === 'DELETED') return 'gone';
    if (node.build_deadline && node.build_deadline.getTime() < now.getTime()) {
      const fault = server.fault ? `: ${server.fault.message}` : '';
      return {
        status: 'ERROR',
        status_reason: `Server ${server.id} of node ${node.name} was not deleted before the timeout (still ${server.status}${fault}).`,
      };
    }
    return null;
  }

  /**
   * Writes every observation of the round with one statement (RECORD_OBSERVATIONS): a server gone
   * deletes its node, one still on its way hands the node back due again, a final state is written
   * and its row comes back for completeOrderIfDone (a node deleted meanwhile comes back as nothing),
   * with the ids of the nodes deleted. Only rows still as claimed are written: this worker's lease
   * and the status it looked at. A node that a delete order took while its server was looked at
   * (DELETING, no lease) keeps what that order wrote; written over, it was recorded ACTIVE with its
   * server deleted, and the scale-in waited for it until its timeout (the fault suite, session 14).
   */
  private async recordAll(m: EntityManager, observations: readonly Observation[], now: Date): Promise<{ written: NodeState[]; gone: Set<string> }> {
    const kinds: string[] = [];
    const statuses: Array<string | null> = [];
    const reasons: Array<string | null> = [];
    const data: Array<string | null> = [];
    const createdAt: Array<Date | null> = [];
    const dueAt: Array<Date | null> = [];
    for (const { change } of observations) {
      const final = change !== 'gone' && isFinal(change) ? change : null;
      kinds.push(change === 'gone' ? 'gone' : final ? 'final' : 'again');
      statuses.push(final?.status ?? null);
      reasons.push(final?.status_reason ?? null);
      data.push(final?.data ? JSON.stringify(final.data) : null);
      createdAt.push(final?.created_at ?? null);
      dueAt.push(change !== 'gone' && !isFinal(change) ? change.dueAt : null);
    }
    const rows = await hotQuery<Array<NodeState & { gone: boolean }>>(m, RECORD_OBSERVATIONS, [
      observations.map((o) => o.node.id),
      kinds,
      statuses,
      reasons,
      data,
      createdAt,
      dueAt,
      now,
      this.options.workerId,
      observations.map((o) => o.node.status),
    ]);
    const written: NodeState[] = [];
    const gone = new Set<string>();
    for (const { gone: deleted, ...node } of rows) {
      if (deleted) gone.add(node.id);
      else written.push(node);
    }
    return { written, gone };
  }
}

/**
 * Locks the rows of the orders whose nodes reached a final state in this round (in action id order,
 * so two workers' rounds take them in the same order) without reading their payload, and returns
 * the action ids of those not DONE yet; an order that is not there is left out.
 */
async function lockOpenOrders(m: EntityManager, actionIds: readonly string[]): Promise<string[]> {
  const rows: Array<{ action_id: string; status: string }> = await hotQuery(m,
    `SELECT action_id, status FROM work_orders WHERE action_id = ANY($1::uuid[]) ORDER BY action_id FOR UPDATE`,
    [actionIds],
  );
  return rows.filter((r) => r.status !== 'DONE').map((r) => r.action_id);
}

/**
 * The actions among `actionIds` with a node still being built or deleted for them. A node is
 * CREATING or DELETING for an action only while that action's order builds or deletes it, so an
 * action left out has every node of its order in a final state; resultIfDone checks them one by one.
 */
async function stillPending(m: EntityManager, actionIds: readonly string[]): Promise<Set<string>> {
  const rows: Array<{ id: string }> = await hotQuery(m,
    `SELECT a.id FROM unnest($1::uuid[]) AS a(id)
      WHERE EXISTS (SELECT 1 FROM nodes n WHERE n.action_id = a.id AND n.status IN ('CREATING', 'DELETING'))`,
    [actionIds],
  );
  return new Set(rows.map((r) => r.id));
}

/** What completeOrderIfDone reads of the orders (their rows locked by lockOpenOrders); a missing one is absent. */
async function readOrders(m: EntityManager, actionIds: readonly string[]): Promise<Map<string, OrderState>> {
  const rows: Array<OrderState & { action_id: string }> = await hotQuery(m,
    `SELECT action_id, ${ORDER_STATE} FROM work_orders WHERE action_id = ANY($1::uuid[])`,
    [actionIds],
  );
  return new Map(rows.map(({ action_id, ...order }) => [action_id, order]));
}

/**
 * The observations of one round ($1 node ids, $2 kinds: gone, again or final), each written only
 * if the node is still held by this worker ($9) in the status it was claimed in ($10). `gone`: the
 * node is deleted, and comes back as its id with `gone`. `again`: handed back (no owner) due again
 * at $7. `final`: status $3, reason $4, data $5 (JSON, kept when null), created_at $6 (kept when
 * null), updated at $8, handed back; its row comes back. Each node of the round is in one of the
 * three, so each row is written once.
 */
const RECORD_OBSERVATIONS = `WITH i AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], $10::text[])
      AS t(id, kind, status, status_reason, data, created_at, due_at, claimed_status)
  ), gone AS (
    DELETE FROM nodes n USING i WHERE n.id = i.id AND i.kind = 'gone' AND n.lease_owner = $9 AND n.status = i.claimed_status
    RETURNING n.id
  ), again AS (
    UPDATE nodes n SET lease_owner = NULL, lease_expires_at = i.due_at FROM i
     WHERE n.id = i.id AND i.kind = 'again' AND n.lease_owner = $9 AND n.status = i.claimed_status
  ), final AS (
    UPDATE nodes n SET status = i.status, status_reason = i.status_reason, data = COALESCE(i.data::jsonb, n.data),
      created_at = COALESCE(i.created_at, n.created_at), updated_at = $8, lease_owner = NULL, lease_expires_at = NULL
      FROM i WHERE n.id = i.id AND i.kind = 'final' AND n.lease_owner = $9 AND n.status = i.claimed_status
    RETURNING ${NODE_STATE.split(', ').map((c) => `n.${c}`).join(', ')}
  )
  SELECT false AS gone, ${NODE_STATE} FROM final
  UNION ALL SELECT true, id, NULL::uuid, NULL, NULL, NULL, NULL::jsonb FROM gone`;
