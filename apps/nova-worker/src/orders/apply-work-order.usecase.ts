import { serverProfile, type WorkOrderMessage, type ServerCreateDto } from '@trellis/contracts';
import { errorMessage, type Logger } from '@trellis/common';
import { TRELLIS_ACTION_KEY, TRELLIS_NODE_KEY, type NovaPort, type Server } from '@trellis/nova';
import { hotQuery, inTransaction } from '@trellis/persistence';
import { changedRows } from '@trellis/persistence/sql';
import type { DataSource, EntityManager } from 'typeorm';
import { bootWaves, waitUntilPlaced } from './affinity-seeds';
import { buildServerRequest } from './server-request';
import { NODE_STATE, ORDER_STATE, completeOrderIfDone, writeWorkResult, type NodeState, type OrderState } from '../builds/complete-order';
import { UNCERTAIN_CREATE } from '../builds/duplicate-sweep';
import { UPDATE_ACTIONS, runServerOp, type OpOutcome } from '../ops/server-ops';
import { mapLimit } from '../map-limit';
import { isPermanent, type NovaAccess } from '../identity/nova-access';
import { ACTION_STATUS, OrderHeartbeat, claimOrder, fencedUpdate, type HeldOrder, type OrderClaim } from './order-lease';
import { OpsRecorder, forgetOpsDone, opsDone, type OpRecord } from './ops-record';
import { DEFAULT_RETRY_SCHEDULE, deferOrder, failOrderNodes, type RetrySchedule } from './retry-schedule';

export interface ApplyResult {
  /** false when the order had been applied before (a redelivery): nothing was done again */
  applied: boolean;
  created: number;
  reused: number;
  failed: number;
  deleting: number;
  /** not applied now: a transient cloud error; the order poller tries it again in this many ms */
  retryInMs?: number;
}

/**
 * Applies one work order to Nova: server groups first, then servers, then deletions. Every step is
 * idempotent, so a redelivered order (the worker died before acking) finds what it made last time
 * instead of making it again: groups by name (in the order's project only), servers by the node tag
 * in their metadata.
 *
 * Every call is made as the project that asked, with the Keystone trust of the order's user
 * (NovaAccess.asOwner): Nova's own rules and quotas apply. A trust that is missing or refused fails
 * the whole order at once, as does any other permanent refusal before a server is asked for.
 *
 * The message is acked as soon as Nova accepted the requests and the nodes are recorded as
 * CREATING/DELETING; waiting for ACTIVE is the build poller's job, driven by the database.
 */
export class ApplyWorkOrderUseCase {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: NovaAccess,
    private readonly logger: Logger,
    private readonly options: {
      concurrency: number;
      leaseSeconds: number;
      /** how often to look whether the first server of a new affinity group has its host (default 500) */
      pollIntervalMs?: number;
      /** the lease owner written on claimed orders (default `nova-worker@<pid>`) */
      workerId?: string;
      /** backoff of orders that meet transient cloud errors (retry-schedule.ts) */
      retry?: RetrySchedule;
    },
  ) {}

  private get lease() {
    return { owner: this.options.workerId ?? `nova-worker@${process.pid}`, leaseSeconds: this.options.leaseSeconds };
  }

  async execute(order: WorkOrderMessage, delivery: { redelivered: boolean } = { redelivered: false }): Promise<ApplyResult> {
    const log = this.logger.child({ action_id: order.action_id, correlation_id: order.correlation_id });
    const claim = await this.claim(order, delivery.redelivered);
    if (claim.token === undefined) {
      if (claim.state === 'gone') {
        // retention forgot the action and, with it, this worker's record of the order: a replay
        // (a dead-lettered order sent again, say) of an order applied long ago. Nothing to apply.
        log.warn('work order of an action that no longer exists; not applied', { redelivered: delivery.redelivered });
        return { applied: false, created: 0, reused: 0, failed: 0, deleting: 0 };
      }
      if (claim.state === 'DONE') {
        // The engine asks again for an order this worker finished: its result never arrived.
        await inTransaction(this.dataSource, (m) => completeOrderIfDone(m, order.action_id, new Date(), { again: true }));
      }
      // `held`: the live holder finishes it, and should it die, its lease runs out and the order
      // poller resumes the order; `waiting`: the poller tries it at its next attempt. Either way this
      // message is acked: requeueing it would only cycle it until the delivery limit dead-letters it.
      log.info('work order already taken; acknowledging the duplicate', { state: claim.state, redelivered: delivery.redelivered });
      return { applied: false, created: 0, reused: 0, failed: 0, deleting: 0 };
    }
    const heartbeat = new OrderHeartbeat(this.dataSource, order.action_id, claim.token, this.lease, log).start();
    try {
      return await this.applyClaimed(order, claim, log);
    } catch (e) {
      return await this.afterFailure(order, claim.token, e, log);
    } finally {
      heartbeat.stop();
    }
  }

  /**
   * Nova calls for an order this worker holds (`claim.token`), then one fenced transaction (one
   * fenced statement when every server was accepted and nothing is deleted: recordAllCreating). Nova is
   * called as the order's owner, with a trust Keystone confirms now; a missing or refused trust is
   * permanent and fails the order (afterFailure).
   */
  private async applyClaimed(order: WorkOrderMessage, claim: HeldOrder, log: Logger): Promise<ApplyResult> {
    const nova = await this.access.asOwner({ project: order.project, user: order.user }, { verify: true });
    if (order.server_ops?.length) return this.applyOps(order, claim, nova, log);
    const groups = await this.ensureGroups(nova, order, log);
    const resolveGroup = (ref: string) => groups[ref] ?? ref;

    // Nova cannot filter servers by metadata, so looking for this order's servers lists every server
    // of the project: only a delivery that takes an order over can find any (BENCHMARKS.md, pipeline).
    const known = claim.state === 'taken-over' ? await this.serversOf(nova, order.action_id) : new Map<string, Server>();
    const endedStatus = this.safePoints(order.action_id, claim);
    let created = 0;
    let reused = 0;
    const createOne = async (create: ServerCreateDto) => {
      const found = known.get(create.node_id);
      if (found) {
        reused++;
        // the worker that made it may have made another for the node whose answer it lost: sweep (build-poller.ts)
        return { create, serverId: found.id, error: null as string | null, uncertain: true };
      }
      // the safe point of a cancel (or a timeout): no new server for an action that has ended
      const ended = await endedStatus();
      if (ended) return { create, serverId: null, error: `The action ended ${ended} before the server of node ${create.name} was requested.`, uncertain: false };
      try {
        const request = buildServerRequest(create, serverProfile(order, create), { clusterId: order.cluster_id, actionId: order.action_id }, resolveGroup);
        const { id, uncertain = false } = await nova.createServer(request);
        created++;
        return { create, serverId: id, error: null, uncertain };
      } catch (e) {
        if (isTransient(e)) throw e;
        return { create, serverId: null, error: `Nova refused to create the server for node ${create.name}: ${errorMessage(e)}`, uncertain: false };
      }
    };
    // servers of a hard (anti-)affinity group that would race in Nova's scheduler go in waves (affinity-seeds.ts),
    // all waiting bounded by the order's build timeout: the heartbeat keeps the claim meanwhile
    const waves = await bootWaves(order.create_servers, resolveGroup, nova);
    const waitUntil = Date.now() + order.build_timeout * 1000;
    const pollMs = this.options.pollIntervalMs ?? 500;
    const outcomes: Array<Awaited<ReturnType<typeof createOne>>> = [];
    for (const [i, wave] of waves.entries()) {
      const booted = await mapLimit(wave, this.options.concurrency, createOne);
      outcomes.push(...booted);
      if (i === waves.length - 1) continue;
      await Promise.all(
        booted.map(async (o) => {
          if (!o.serverId || !o.create.placement.servergroup) return;
          const timeoutMs = Math.max(0, waitUntil - Date.now());
          if (!(await waitUntilPlaced(nova, o.serverId, { pollMs, timeoutMs }))) {
            log.warn('a server of a server group got no host in time; booting the next ones anyway', { server_id: o.serverId });
          }
        }),
      );
    }

    // the servers to delete go side by side, `concurrency` requests at a time, as Senlin ran a
    // NODE_DELETE action per node: a scale-in or cluster delete of 1,000 nodes is not 1,000 round trips in a row
    const refused = new Map<string, string>();
    const destroyed = order.delete_servers.filter((del): del is typeof del & { physical_id: string } => del.destroy && !!del.physical_id);
    await mapLimit(destroyed, this.options.concurrency, async (del) => {
      try {
        await nova.deleteServer(del.physical_id);
      } catch (e) {
        if (!isPermanent(e) && isTransient(e)) throw e;
        refused.set(del.node_id, `Nova refused to delete server ${del.physical_id}: ${errorMessage(e)}`);
      }
    });
    // a group is deleted only by the id its binding recorded, in the order's own project
    for (const g of order.delete_groups) {
      try {
        await nova.deleteServerGroup(g.id);
      } catch (e) {
        if (!isPermanent(e) && isTransient(e)) throw e;
        log.warn('server group not deleted', { group_id: g.id, error: errorMessage(e) });
      }
    }

    const now = new Date();
    const deadline = new Date(now.getTime() + order.build_timeout * 1000);
    // the common case, every server accepted and nothing to delete, is one statement; anything it
    // cannot prove goes through the transaction below
    const recorded = isAllAccepted(order, outcomes) ? await this.recordAllCreating(order, claim.token, groups, outcomes, resolveGroup, deadline, now) : 'unproven';
    const fenced = recorded !== 'unproven' ? recorded === 'fenced' : await inTransaction(this.dataSource, async (m) => {
      // the UPDATE locks the order's row, as completeOrderIfDone needs, and returns what it reads;
      // it is the fence: when another worker took the order over, it matches nothing and nothing is written
      const locked = await fencedUpdate<OrderState>(m, order.action_id, claim.token, `status = 'BUILDING', groups = $2, updated_at = $3`, [
        JSON.stringify(groups),
        now,
      ], ORDER_STATE);
      if (!locked) return true;
      const written: NodeState[] = [];
      for (const o of outcomes) written.push(await this.recordCreate(m, o, resolveGroup, deadline, now));
      written.push(...(await this.recordDeletes(m, order, now, deadline, refused)));
      // with the rows just written, the usual answer (servers still building) costs no statement
      await completeOrderIfDone(m, order.action_id, now, { order: locked, written });
      return false;
    });
    if (fenced) {
      log.warn('work order was taken over while this worker applied it; its outcome is the new holder\'s to record');
      return { applied: false, created, reused, failed: 0, deleting: 0 };
    }
    const failed = outcomes.filter((o) => o.error).length;
    log.info('work order applied', { created, reused, failed, deleting: order.delete_servers.length });
    return { applied: true, created, reused, failed, deleting: order.delete_servers.length };
  }

  /**
   * Node check, recover and operations (kind `ops`): each server operation with the action user's
   * trust, waiting (up to the order's build timeout; the heartbeat keeps the claim) for the server to settle, then the nodes'
   * new statuses and the work result in one fenced transaction.
   */
  private async applyOps(order: WorkOrderMessage, claim: HeldOrder, nova: NovaPort, log: Logger): Promise<ApplyResult> {
    const ops = order.server_ops ?? [];
    const rows: Array<{ id: string; status: string; status_reason: string }> = await hotQuery(this.dataSource.manager,
      'SELECT id, status, status_reason FROM nodes WHERE id = ANY($1)',
      [ops.map((o) => o.node_id)],
    );
    const nodes = new Map(rows.map((r) => [r.id, r]));
    // Nova takes the time it takes (a resize and its confirm on a busy cloud: tens of seconds), up to
    // the build timeout, as Senlin waits up to its default_nova_timeout; the heartbeat keeps the claim
    // meanwhile, and a cancel is looked for while waiting (server-ops.ts, settle)
    const waitMs = order.build_timeout * 1000;
    const endedStatus = this.safePoints(order.action_id, claim);
    // what an earlier try completed (before a transient error put the order off, or before its worker
    // died) is not asked again; what this one completes is written as it completes (ops-record.ts)
    const done = claim.state === 'taken-over' ? await opsDone(this.dataSource, order.action_id) : new Map<string, OpRecord>();
    const record = new OpsRecorder(this.dataSource, order.action_id, log);
    let stopped: { error: unknown } | null = null;
    // the nodes' operations go side by side, `concurrency` at a time, each waiting for its own
    // server (Senlin ran a child action per node): a cluster check or reboot of 100 nodes waits
    // about as long as its slowest servers, not for each in turn; outcomes keep the order's order
    const tried = await mapLimit(ops, this.options.concurrency, async (op): Promise<{ op: (typeof ops)[number]; outcome: OpOutcome | null }> => {
      const before = done.get(op.node_id);
      if (before && 'outcome' in before) return { op, outcome: before.outcome };
      // after an error no operation starts; those in flight finish, and are kept for the next try
      if (stopped) return { op, outcome: null };
      try {
        const node = nodes.get(op.node_id);
        // the safe point of a cancel (or a timeout), before each node: no Nova call for an action that has ended
        const ended = await endedStatus();
        if (ended || !node) {
          const detail = ended ? `the action ended ${ended} before Nova was asked` : `The node '${op.node_id}' could not be found.`;
          return { op, outcome: { ok: false, detail, node: null } };
        }
        if (UPDATE_ACTIONS.includes(order.action) && op.physical_id) await this.markUpdating(op.node_id);
        const run = {
          nova, order, op, waitMs, pollMs: this.options.pollIntervalMs ?? 500, nodeStatus: node.status, nodeReason: node.status_reason, ended: endedStatus,
          // accepted by Nova in an earlier try: waited for, not asked for again
          requested: before !== undefined,
          onRequested: () => record.requested(op.node_id),
        };
        const outcome = await runServerOp(run);
        record.add(op.node_id, outcome);
        return { op, outcome };
      } catch (e) {
        stopped ??= { error: e };
        return { op, outcome: null };
      }
    });
    await record.settled();
    if (stopped) throw (stopped as { error: unknown }).error;
    const outcomes = tried as Array<{ op: (typeof ops)[number]; outcome: OpOutcome }>;
    const now = new Date();
    const fenced = await inTransaction(this.dataSource, async (m) => {
      const locked = await fencedUpdate<OrderState>(m, order.action_id, claim.token, `status = 'BUILDING', updated_at = $2`, [now], ORDER_STATE);
      if (!locked) return true;
      await forgetOpsDone(m, order.action_id);
      for (const { op, outcome } of outcomes) {
        if (!outcome.node) continue;
        await hotQuery(m,
          `UPDATE nodes SET status = $2, status_reason = $3, updated_at = $4,
             physical_id = CASE WHEN $5 THEN NULL ELSE physical_id END
           WHERE id = $1`,
          [op.node_id, outcome.node.status, outcome.node.reason, now, outcome.node.clearPhysicalId === true],
        );
      }
      const failed = outcomes.filter((o) => !o.outcome.ok);
      await writeWorkResult(m, order.action_id, order, now, {
        outcome: failed.length ? 'FAILED' : 'SUCCEEDED',
        reason: failed.length ? `${opFailure(order, failed[0].op.op)}: ${failed[0].outcome.detail}` : 'The server operations completed.',
        // a node is reported ACTIVE only when its operation succeeded (the engine stores a node's update then)
        nodes: outcomes.map(({ op, outcome }) => ({
          node_id: op.node_id,
          status: outcome.ok && outcome.node?.status !== 'ERROR' ? 'ACTIVE' : 'ERROR',
          physical_id: outcome.node?.clearPhysicalId ? null : op.physical_id,
          reason: outcome.node?.status === 'ERROR' ? outcome.node.reason : outcome.ok ? null : outcome.detail,
        })),
        groups: {},
      });
      return false;
    });
    if (fenced) {
      log.warn('work order was taken over while this worker applied it; its outcome is the new holder\'s to record');
      return { applied: false, created: 0, reused: 0, failed: 0, deleting: 0 };
    }
    const failures = outcomes.filter((o) => !o.outcome.ok);
    const failed = failures.length;
    log[failed ? 'warn' : 'info']('server operations applied', {
      ops: ops.map((o) => o.op),
      failed,
      ...(failed ? { failures: failures.map(({ op, outcome }) => ({ node_id: op.node_id, op: op.op, reason: outcome.detail })) } : {}),
    });
    return { applied: true, created: 0, reused: 0, failed, deleting: 0 };
  }

  /**
   * Takes the order before touching Nova, so that one worker at a time applies it (order-lease.ts):
   * a redelivery takes it over only when its holder's lease ran out; the lookups by name and by
   * node tag below make applying it again safe.
   */
  private async claim(order: WorkOrderMessage, _redelivered: boolean): Promise<OrderClaim> {
    return claimOrder(this.dataSource, order, this.lease);
  }

  /**
   * A try that failed: a transient cloud error keeps the order for a later attempt (backoff, the
   * message is acked); anything else (Nova's refusal, a missing or refused trust) fails the order's
   * nodes with that message at once.
   */
  private async afterFailure(order: WorkOrderMessage, token: string, e: unknown, log: Logger): Promise<ApplyResult> {
    const none = { applied: false, created: 0, reused: 0, failed: 0, deleting: 0 };
    if (isTransient(e)) {
      const deferral = await deferOrder(this.dataSource, order, token, e, this.options.retry ?? DEFAULT_RETRY_SCHEDULE);
      log.warn('work order not applied; Nova will be tried again', { ...deferral, error: errorMessage(e) });
      if (deferral.kind === 'deferred') return { ...none, retryInMs: deferral.retryInMs };
      return { ...none, applied: deferral.kind === 'gave-up', failed: deferral.kind === 'gave-up' ? order.create_servers.length : 0 };
    }
    const failed = await inTransaction(this.dataSource, async (m) => {
      const held = await hotQuery<unknown[]>(m, `SELECT 1 FROM work_orders WHERE action_id = $1 AND lease_token = $2 FOR UPDATE`, [order.action_id, token]);
      if (!held.length) return false;
      // a refused trust names itself (user, project, Keystone's answer); anything else is Nova's refusal
      await failOrderNodes(m, order, isPermanent(e) ? errorMessage(e) : `Nova refused the work order: ${errorMessage(e)}`);
      return true;
    });
    log.error(isPermanent(e) ? 'work order cannot be applied (trust); its nodes failed' : 'work order refused by Nova; its nodes failed', {
      error: errorMessage(e),
      recorded: failed,
    });
    return { ...none, applied: failed, failed: failed ? order.create_servers.length : 0 };
  }

  /** Senlin's node.do_update: the node is UPDATING while its server is updated. */
  private async markUpdating(nodeId: string): Promise<void> {
    await hotQuery(this.dataSource.manager,
      `UPDATE nodes SET status = 'UPDATING', status_reason = 'Update in progress', updated_at = $2 WHERE id = $1`,
      [nodeId, new Date()],
    );
  }

  /**
   * The safe points of a cancel (or a timeout) of an order: each call answers the action's status
   * when it has ended (SUCCEEDED, FAILED, CANCELLED), else null. The first answers what the claim's
   * statement read a moment ago (one round trip and one commit fewer per order); each later one
   * reads the status again.
   */
  private safePoints(actionId: string, claim: HeldOrder): () => Promise<string | null> {
    let first = true;
    return async () => {
      if (first) {
        first = false;
        return endedOf(claim.actionStatus);
      }
      // a step's order (a repair's replacement) reads the status of the action the step is part of
      const rows: Array<{ action_status: string }> = await hotQuery(this.dataSource.manager, ACTION_STATUS, [actionId]);
      return endedOf(rows[0]?.action_status);
    };
  }

  private async ensureGroups(nova: NovaPort, order: WorkOrderMessage, log: Logger): Promise<Record<string, string>> {
    const ids: Record<string, string> = {};
    for (const g of order.create_groups) {
      // by name inside the order's project only: the trust's token sees no other project's groups
      const found = await nova.findServerGroup(g.name);
      if (found && found.policy === g.policy) {
        ids[g.ref] = found.id;
        continue;
      }
      const made = await nova.createServerGroup(g.name, g.policy as never, g.rules);
      log.info('server group created', { name: g.name, id: made.id, policy: g.policy });
      ids[g.ref] = made.id;
    }
    return ids;
  }

  private async serversOf(nova: NovaPort, actionId: string): Promise<Map<string, Server>> {
    // one listing for the whole order instead of a lookup per node
    const servers = await nova.listServers({ metadata: { [TRELLIS_ACTION_KEY]: actionId } });
    const byNode = new Map<string, Server>();
    for (const s of servers) {
      const node = s.metadata[TRELLIS_NODE_KEY];
      if (node && s.status !== 'DELETED') byNode.set(node, s);
    }
    return byNode;
  }

  /**
   * The transaction below (fenced order UPDATE, one node UPDATE per server, completeOrderIfDone) as
   * one statement, without BEGIN/COMMIT, for an order whose every server Nova accepted and that
   * deletes nothing. It writes the same rows, and writes anything only when:
   *
   * - the fence holds: the order is APPLYING under this claim's token (`held`, locked first, as the
   *   transaction's fenced UPDATE locks it first); else nothing is written: 'fenced';
   * - every node of the order is in the database and its row (locked, its newest version) names
   *   this order's action (`mine`), and the order's stored payload creates no node but these and
   *   deletes none. Each node is then CREATING for this action once written, so completeOrderIfDone
   *   would find every node of the order pending (isPendingFor) and write nothing: there is nothing
   *   to complete. Otherwise nothing is written and the answer is 'unproven': the caller runs the
   *   transaction, which handles a missing node or a node of another action as it always has.
   */
  private async recordAllCreating(
    order: WorkOrderMessage,
    token: string,
    groups: Record<string, string>,
    outcomes: ReadonlyArray<{ create: ServerCreateDto; serverId: string | null; uncertain: boolean }>,
    resolveGroup: (ref: string) => string,
    deadline: Date,
    now: Date,
  ): Promise<'recorded' | 'fenced' | 'unproven'> {
    const [row]: Array<{ held: number; fenced: number }> = await hotQuery(this.dataSource.manager, RECORD_ALL_CREATING, [
      order.action_id,
      token,
      JSON.stringify(groups),
      now,
      outcomes.map((o) => o.create.node_id),
      outcomes.map((o) => o.serverId),
      outcomes.map((o) => placementOf(o.create, resolveGroup)),
      outcomes.map((o) => o.uncertain),
      deadline,
      UNCERTAIN_CREATE,
    ]);
    // the node rows were locked before the fence was written: each of them took its UPDATE
    return row.held === 0 ? 'fenced' : row.fenced === 0 ? 'unproven' : 'recorded';
  }

  /** The node's outcome: CREATING with its server, or ERROR with Nova's refusal. */
  private async recordCreate(
    m: EntityManager,
    { create, serverId, error, uncertain }: { create: ServerCreateDto; serverId: string | null; error: string | null; uncertain: boolean },
    resolveGroup: (ref: string) => string,
    deadline: Date,
    now: Date,
  ): Promise<NodeState> {
    const placement = placementOf(create, resolveGroup);
    const data = withPlacement('data', '$3');
    // a node the deadline supervisor or a cancel failed already keeps the reason it failed with first
    const result: unknown = error
      ? await hotQuery(m,
          `UPDATE nodes SET status = 'ERROR', status_reason = CASE WHEN status = 'ERROR' THEN status_reason ELSE $4 END, updated_at = $2,
             data = ${data}
           WHERE id = $1 RETURNING ${NODE_STATE}`,
          [create.node_id, now, placement, error],
        )
      : await hotQuery(m,
          `UPDATE nodes SET status = 'CREATING', status_reason = 'Creation in progress', physical_id = $4, build_deadline = $5,
             lease_owner = NULL, lease_expires_at = NULL, updated_at = $2, data = ${data} || $6::jsonb
           WHERE id = $1 RETURNING ${NODE_STATE}`,
          [create.node_id, now, placement, serverId, deadline, uncertain ? UNCERTAIN_CREATE : '{}'],
        );
    const [node] = changedRows<NodeState>(result);
    if (!node) throw new Error(`node ${create.node_id} of the work order is not in the database`);
    return node;
  }

  private async recordDeletes(
    m: EntityManager,
    order: WorkOrderMessage,
    now: Date,
    deadline: Date,
    refused: ReadonlyMap<string, string>,
  ): Promise<NodeState[]> {
    const destroyed = order.delete_servers.filter((d) => d.destroy && d.physical_id && !refused.has(d.node_id)).map((d) => d.node_id);
    const kept = order.delete_servers.filter((d) => !(d.destroy && d.physical_id)).map((d) => d.node_id);
    const written: NodeState[] = [];
    for (const [nodeId, reason] of refused) {
      const result: unknown = await hotQuery(m,
        `UPDATE nodes SET status = 'ERROR', status_reason = $2, updated_at = $3 WHERE id = $1 RETURNING ${NODE_STATE}`,
        [nodeId, reason, now],
      );
      written.push(...changedRows<NodeState>(result));
    }
    if (destroyed.length) {
      const result: unknown = await hotQuery(m,
        `UPDATE nodes SET status = 'DELETING', status_reason = 'Deletion in progress', lease_owner = NULL, lease_expires_at = NULL,
           build_deadline = $2, updated_at = $3
         WHERE id = ANY($1) RETURNING ${NODE_STATE}`,
        [destroyed, deadline, now],
      );
      written.push(...changedRows<NodeState>(result));
    }
    if (kept.length) {
      // destroy_after_deletion false (or a node that never got a server): the node leaves the
      // cluster; its server, if any, keeps running as an orphan node (Senlin's NODE_LEAVE).
      const result: unknown = await hotQuery(m,
        `UPDATE nodes SET cluster_id = NULL, index = -1, status_reason = 'Node left cluster', updated_at = $2 WHERE id = ANY($1) RETURNING ${NODE_STATE}`,
        [kept, now],
      );
      written.push(...changedRows<NodeState>(result));
    }
    return written;
  }
}

/** data.placement gets the server group's Nova id when the order placed the node in one (JSON). */
const placementOf = (create: ServerCreateDto, resolveGroup: (ref: string) => string): string =>
  JSON.stringify(create.placement.servergroup ? { servergroup: resolveGroup(create.placement.servergroup) } : {});

/** SQL: the node document `data` with `placement` (JSON text of placementOf) merged into its placement. */
const withPlacement = (data: string, placement: string): string =>
  `${data} || jsonb_build_object('placement', COALESCE(NULLIF(${data}->'placement', 'null'::jsonb), '{}'::jsonb) || ${placement}::jsonb)`;

/** Every server of the order was accepted (made or found) and the order deletes nothing: recordAllCreating may apply. */
const isAllAccepted = (order: WorkOrderMessage, outcomes: ReadonlyArray<{ serverId: string | null; error: string | null }>): boolean =>
  outcomes.length > 0 && order.delete_servers.length === 0 && outcomes.every((o) => o.serverId !== null && o.error === null);

/**
 * recordAllCreating's statement. Lock order as in the transaction: the order's row (`held`), then
 * the node rows (`mine`, FOR UPDATE: the newest version of each, a node deleted meanwhile is not
 * there); then the fence, written only when every node is there for this action and the stored
 * payload creates these nodes only and deletes none; then the nodes, only when the fence was
 * written. Node rows exactly as recordCreate writes a created server's.
 */
const RECORD_ALL_CREATING = `WITH held AS MATERIALIZED (
    SELECT action_id FROM work_orders WHERE action_id = $1 AND lease_token = $2 AND status = 'APPLYING' FOR UPDATE
  ), mine AS MATERIALIZED (
    SELECT n.id FROM nodes n WHERE n.id = ANY($5::text[]::uuid[]) AND n.action_id = $1 AND EXISTS (SELECT 1 FROM held) FOR UPDATE
  ), fence AS (
    UPDATE work_orders SET status = 'BUILDING', groups = $3, updated_at = $4,
      lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, next_attempt_at = NULL
     WHERE action_id = $1 AND lease_token = $2 AND status = 'APPLYING'
       AND (SELECT count(*) FROM mine) = cardinality($5::text[])
       AND jsonb_array_length(payload->'delete_servers') = 0
       AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(payload->'create_servers') c WHERE NOT (c->>'node_id' = ANY($5::text[])))
     RETURNING action_id
  ), written AS (
    UPDATE nodes n SET status = 'CREATING', status_reason = 'Creation in progress', physical_id = i.physical_id, build_deadline = $9,
      lease_owner = NULL, lease_expires_at = NULL, updated_at = $4,
      data = ${withPlacement('n.data', 'i.placement')}
        || CASE WHEN i.uncertain THEN $10::jsonb ELSE '{}'::jsonb END
      FROM unnest($5::text[], $6::text[], $7::text[], $8::boolean[]) AS i(id, physical_id, placement, uncertain)
     WHERE n.id = i.id::uuid AND EXISTS (SELECT 1 FROM fence)
  )
  SELECT (SELECT count(*) FROM held)::int AS held, (SELECT count(*) FROM fence)::int AS fenced`;

const endedOf = (status: string | null | undefined): string | null =>
  status === 'SUCCEEDED' || status === 'FAILED' || status === 'CANCELLED' ? status : null;

/** Senlin's failure text of a node action (node_action.py). */
function opFailure(order: WorkOrderMessage, op: string): string {
  if (order.action === 'NODE_CHECK') return 'Node check failed';
  if (order.action === 'NODE_RECOVER') return 'Node recover failed';
  if (order.action === 'NODE_UPDATE') return 'Node update failed';
  if (order.action === 'CLUSTER_UPDATE') return 'Failed in updating nodes';
  return `Node operation '${op}' failed`;
}

/** Errors worth a redelivery: Nova or Keystone unreachable or failing after the client's own retries. */
export function isTransient(e: unknown): boolean {
  if (isPermanent(e)) return false;
  const status = (e as { status?: number })?.status;
  if (typeof status === 'number') return status >= 500 || status === 429 || status === 409;
  return true;
}
