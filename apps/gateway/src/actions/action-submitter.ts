import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { conflict } from '@trellis/common';
import {
  Exchanges,
  Headers,
  RoutingKeys,
  SCHEMA_VERSION,
  type ActionMessageCause,
  type ActionRequestedMessage,
  type ClusterActionName,
} from '@trellis/contracts';
import { actionsAccepted } from '@trellis/observability';
import { ActionEntity } from '@trellis/persistence/entities';
import type { EntityManager } from 'typeorm';
import type { ApiRequest, RequestVia } from '../core/request.decorators';
import { afterCommit, hotQuery, insertRow, insertRowStatement, type SqlStatement } from '../infra/persistence.adapter';
import type { Tx } from '../infra/unit-of-work';
import { ActionLimits, UNFINISHED_STATUSES_SQL, type UnfinishedCounts } from '../limits/action-limits';
import { TrustBroker, type SeenTrust, type TrustCheck } from '../trusts/trust-broker';
import { BYPASS_CONFLICT_CHECKS, actionName } from './action-names';

export interface NewAction {
  action: ClusterActionName;
  /** the action's name when Senlin's is not `<prefix>_<target id>` (actionName) */
  name?: string;
  /** the cluster or node the action works on */
  target: string;
  clusterId: string | null;
  inputs: Record<string, unknown>;
  timeout: number;
  /** the caller locked the target's row (FOR UPDATE) in this transaction already */
  targetLocked?: boolean;
  /** the caller's trust as a statement of this transaction read it (trustCheck's column) */
  trust?: SeenTrust;
}

/** What the conflict checks read, in one statement (prefixed: another statement may carry them). */
interface ConflictRow {
  /** RUNNING actions of the cluster, oldest first */
  conflict_running: string[] | null;
  /** active actions on the target, oldest first */
  conflict_active: string[] | null;
  /** enabled scaling policies of the cluster, for a scaling action only */
  conflict_scaling: Array<{ policy_id: string; last_op: string | null; spec: Record<string, unknown> | null }> | null;
  /** the limits' count (ActionLimits.countSql), when the statement carries it */
  conflict_counted: UnfinishedCounts | null;
}

/** Whose limits on unfinished actions a request counts against. */
interface Limited {
  project: string;
  via: RequestVia;
}

/** Checks as columns another statement can carry: its select list and parameters, and what refuses on the row read. */
export interface EarlyChecks {
  select: string;
  params: unknown[];
  /** throws the refusal the row read shows, if any */
  judge(row: Record<string, unknown>): void;
}

const SCALING_ACTIONS: readonly string[] = ['CLUSTER_SCALE_OUT', 'CLUSTER_SCALE_IN'];
const SCALING_POLICY_PREFIX = 'senlin.policy.scaling-';

/**
 * Stores a READY action and its `action.requested` outbox row in the caller's transaction, after
 * Senlin's request-time checks (senlin-api §1.4): cluster locked, conflicting active action on the
 * same target, scaling cooldown; and Trellis's limits on unfinished actions (429). The target row
 * is locked first so two requests cannot both pass.
 */
@Injectable()
export class ActionSubmitter {
  constructor(
    private readonly trusts: TrustBroker,
    private readonly limits: ActionLimits,
  ) {}

  /** conflictChecks' select lists, by parameter offset, scaling or not, and whose limits they count */
  private readonly conflictSql = new Map<string, { select: string; counting: boolean }>();

  /**
   * The refusals `submit` would make (limits on unfinished actions, then the conflict checks, in
   * that order), read from committed rows without a lock or a transaction. A storm of alarms sends
   * each cluster the same scale-out many times; all but the first are refused, and refusing them
   * here costs two statements instead of a transaction that queues on the cluster's row lock
   * behind the accepted one. A refusal here is the answer the request would have had at the
   * moment of the read; a request that passes goes through `submit`, which checks again under the
   * locks (pass `prechecked` so it does not repeat the unlocked limit count).
   */
  async refuseEarly(manager: EntityManager, req: ApiRequest, a: Pick<NewAction, 'action' | 'target' | 'clusterId'>): Promise<void> {
    const via = req.via ?? 'rest';
    if (BYPASS_CONFLICT_CHECKS.includes(a.action)) return this.limits.check(manager, req.caller.projectId, { lock: false, via });
    // the limits' count rides in the conflict checks' statement: one round trip for a storm's refusals
    await this.refuseConflicts(manager, a, { project: req.caller.projectId, via }, 'before');
  }

  /**
   * refuseEarly's checks (for an action with conflict checks) as columns of another
   * statement, with parameters from `$first`: the cluster's lookup carries them, so a storm's
   * refusal is one round trip.
   */
  earlyChecks(req: ApiRequest, a: Pick<NewAction, 'action' | 'target' | 'clusterId'>, first: number): EarlyChecks {
    if (BYPASS_CONFLICT_CHECKS.includes(a.action)) throw new Error(`earlyChecks: ${a.action} has no conflict checks`);
    return this.conflictChecks(a, { project: req.caller.projectId, via: req.via ?? 'rest' }, first, 'before');
  }

  /**
   * The read of the caller's trust that `submit` starts with, as a column another statement of its
   * transaction can carry (the target's lookup: one round trip fewer); null when there is none to
   * carry. What it read goes to `submit` as `trust`.
   */
  trustCheck(req: ApiRequest, first: number): TrustCheck | null {
    return this.trusts.storedCheck(req.caller, first);
  }

  async submit(tx: Tx, req: ApiRequest, a: NewAction & { prechecked?: boolean }): Promise<ActionEntity> {
    const { manager } = tx;
    const limitsOf = { project: req.caller.projectId, via: req.via ?? 'rest' };
    // over a limit on unfinished actions: refused before a trust is made
    if (!a.prechecked) await this.limits.check(manager, limitsOf.project, { lock: false, via: limitsOf.via });
    // the worker acts in Nova as this user, with a trust made now if there is none yet
    await this.trusts.ensure(manager, req.caller, a.trust);
    // The limits' locks come after every row lock this transaction takes, and are held until it
    // commits; their count is read by a statement after them, the conflict checks' where there are
    // some (judged after the conflicts, as two statements would).
    if (BYPASS_CONFLICT_CHECKS.includes(a.action)) await this.limits.check(manager, limitsOf.project, { lock: true, via: limitsOf.via });
    else await this.checkConflicts(tx, a, limitsOf);
    const now = new Date();
    const row = manager.getRepository(ActionEntity).create({
      id: randomUUID(),
      name: a.name ?? actionName(a.action, a.target),
      cluster_id: a.clusterId,
      target: a.target,
      action: a.action,
      cause: 'RPC Request',
      owner: null,
      interval: -1,
      start_time: null,
      end_time: null,
      timeout: a.timeout,
      status: 'READY',
      status_reason: '',
      inputs: a.inputs,
      outputs: {},
      data: {},
      depends_on: [],
      depended_by: [],
      project: req.caller.projectId,
      user: req.caller.userId,
      domain: req.caller.domainId,
      created_at: now,
      updated_at: null,
      lease_owner: null,
      lease_expires_at: null,
      attempts: 0,
    });
    // the action's row goes in the statement of its outbox row (one round trip)
    const insert = insertRowStatement(manager, ActionEntity, row);
    if (insert === null) await insertRow(manager, ActionEntity, row);
    await this.announce(tx, row, req.requestId, 'submitted', insert ? [insert] : []);
    afterCommit(manager, () => actionsAccepted.inc({ action: a.action }));
    return row;
  }

  /** Writes the `action.requested` outbox row for a stored action. */
  async announce(tx: Tx, action: ActionEntity, correlationId: string, cause: ActionMessageCause, writes: readonly SqlStatement[] = []): Promise<string> {
    const message: ActionRequestedMessage = {
      message_id: randomUUID(),
      schema_version: SCHEMA_VERSION,
      action_id: action.id,
      correlation_id: correlationId,
      sent_at: new Date().toISOString(),
      cluster_id: action.cluster_id,
      action: action.action,
      project: action.project,
      cause,
    };
    await tx.addToOutbox({
      exchange: Exchanges.actions,
      routingKey: RoutingKeys.actionRequested,
      messageId: message.message_id,
      type: 'action.requested',
      correlationId,
      body: message,
      headers: { [Headers.schemaVersion]: SCHEMA_VERSION },
    }, writes);
    return message.message_id;
  }

  /** The conflict checks under the target's row lock, then the limits under theirs, from one statement after both locks. */
  private async checkConflicts(tx: Tx, a: NewAction, limitsOf: Limited): Promise<void> {
    const { manager } = tx;
    if (!a.targetLocked) {
      const lockTable = a.target === a.clusterId ? 'clusters' : 'nodes';
      await manager.query(`SELECT id FROM ${lockTable} WHERE id = $1 FOR UPDATE`, [a.target]);
    }
    await this.limits.lock(manager, limitsOf.project, limitsOf.via);
    // A statement of its own after the locks: its snapshot then holds every action committed by
    // the transactions that had them before (a subquery of a locking statement would not).
    await this.refuseConflicts(manager, a, limitsOf, 'after');
  }

  /**
   * Senlin's request-time conflict checks on what is committed: a running action on the cluster,
   * an active one on the target, a cooldown; and the limits on unfinished actions of `limitsOf`,
   * from the same statement, judged `limits` the conflicts.
   */
  private async refuseConflicts(manager: EntityManager, a: Pick<NewAction, 'action' | 'target' | 'clusterId'>, limitsOf: Limited, limits: 'before' | 'after'): Promise<void> {
    const checks = this.conflictChecks(a, limitsOf, 1, limits);
    const [found]: Array<Record<string, unknown>> = await hotQuery(manager, `SELECT ${checks.select}`, checks.params);
    checks.judge(found);
  }

  /**
   * refuseConflicts' checks as columns of a statement (its select list, with its parameters
   * numbered from `$first`), and the judgement of the row that statement read: so another statement
   * (the cluster's lookup) can carry them.
   */
  private conflictChecks(a: Pick<NewAction, 'action' | 'target' | 'clusterId'>, limitsOf: Limited, first: number, limits: 'before' | 'after'): EarlyChecks {
    const scaling = a.clusterId !== null && SCALING_ACTIONS.includes(a.action);
    const params: unknown[] = [a.clusterId, a.target];
    // the text depends on these only: built once for each (a storm builds it for every request)
    const shape = `${first}:${scaling}:${limitsOf.via}`;
    let built = this.conflictSql.get(shape);
    if (built === undefined) {
      const counting = this.limits.countSql(limitsOf.via, first + params.length);
      built = { select: this.conflictSelect(first, scaling, counting), counting: counting !== null };
      this.conflictSql.set(shape, built);
    }
    if (built.counting) params.push(limitsOf.project);
    const select = built.select;
    const judge = (row: Record<string, unknown>) => {
      const found = row as unknown as ConflictRow;
      const judgeLimits = () => {
        if (found.conflict_counted) this.limits.judge(limitsOf.project, found.conflict_counted, limitsOf.via);
      };
      if (limits === 'before') judgeLimits();
      if (found.conflict_running?.length) {
        throw conflict(
          `${a.action} for cluster '${a.clusterId}' cannot be completed because it is already locked.`,
          'ResourceIsLocked',
        );
      }
      if (found.conflict_active?.length) {
        throw conflict(`The ${a.action} action for target ${a.target} conflicts with the following action(s): ${found.conflict_active.join(',')}`);
      }
      if (found.conflict_scaling && a.clusterId) checkCooldown(a.action, a.clusterId, found.conflict_scaling);
      if (limits === 'after') judgeLimits();
    };
    return { select, params, judge };
  }

  /**
   * conflictChecks' select list: parameters from `$first` (cluster, target), `counting` the limits'
   * count. The statuses and the scaling type prefix are written in, not parameters: the prepared
   * statement's one plan is then as good as a plan for the values (see UNFINISHED_STATUSES_SQL).
   */
  private conflictSelect(first: number, scaling: boolean, counting: string | null): string {
    const $ = (n: number) => `$${first + n - 1}`;
    return `(SELECT json_agg(id ORDER BY created_at) FROM actions WHERE cluster_id = ${$(1)} AND status = 'RUNNING') AS conflict_running,
         (SELECT json_agg(id ORDER BY created_at) FROM actions WHERE target = ${$(2)} AND status IN (${UNFINISHED_STATUSES_SQL})) AS conflict_active,
         ${scaling ? scalingBindings($(1)) : 'NULL'} AS conflict_scaling,
         ${counting ?? 'NULL'} AS conflict_counted`;
  }
}

/** The cluster's (`cluster`) enabled scaling policies, in chain order, as a JSON array. */
const scalingBindings = (cluster: string) => `(SELECT json_agg(json_build_object('policy_id', b.policy_id, 'last_op', b.last_op, 'spec', p.spec)
    ORDER BY b.priority, b.attached_at)
  FROM cluster_policies b INNER JOIN policies p ON p.id = b.policy_id
  WHERE b.cluster_id = ${cluster} AND b.enabled = true AND p.type LIKE '${SCALING_POLICY_PREFIX}%')`;

/** An enabled scaling policy for this event whose last operation is younger than its cooldown. */
function checkCooldown(action: string, clusterId: string, bindings: NonNullable<ConflictRow['conflict_scaling']>): void {
  const now = Date.now();
  for (const b of bindings) {
    const props = (b.spec?.properties ?? {}) as Record<string, unknown>;
    if (props.event !== action || b.last_op === null) continue;
    const cooldown = Number((props.adjustment as Record<string, unknown> | undefined)?.cooldown ?? 0);
    if (!Number.isFinite(cooldown) || cooldown <= 0) continue;
    if (new Date(b.last_op).getTime() + cooldown * 1000 > now) {
      throw conflict(
        `The ${action} action for cluster ${clusterId} cannot be processed due to Policy ${b.policy_id} cooldown still in progress`,
        'ActionCooldown',
      );
    }
  }
}
