import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { conflict } from '@trellis/common';
import {
  ActiveActionStatuses,
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
import type { ApiRequest } from '../core/request.decorators';
import { afterCommit, insertRow } from '../infra/persistence.adapter';
import type { Tx } from '../infra/unit-of-work';
import { ActionLimits } from '../limits/action-limits';
import { TrustBroker } from '../trusts/trust-broker';
import { BYPASS_CONFLICT_CHECKS, actionName } from './action-names';

export interface NewAction {
  action: ClusterActionName;
  /** the cluster or node the action works on */
  target: string;
  clusterId: string | null;
  inputs: Record<string, unknown>;
  timeout: number;
  /** the caller locked the target's row (FOR UPDATE) in this transaction already */
  targetLocked?: boolean;
}

/** What the conflict checks read, in one statement. */
interface ConflictRow {
  /** RUNNING actions of the cluster, oldest first */
  running: string[] | null;
  /** active actions on the target, oldest first */
  active: string[] | null;
  /** enabled scaling policies of the cluster, for a scaling action only */
  scaling: Array<{ policy_id: string; last_op: string | null; spec: Record<string, unknown> | null }> | null;
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

  async submit(tx: Tx, req: ApiRequest, a: NewAction): Promise<ActionEntity> {
    const { manager } = tx;
    // over a limit on unfinished actions: refused before a trust is made
    await this.limits.check(manager, req.caller.projectId, { lock: false });
    // the worker acts in Nova as this user, with a trust made now if there is none yet
    await this.trusts.ensure(manager, req.caller);
    if (!BYPASS_CONFLICT_CHECKS.includes(a.action)) await this.checkConflicts(tx, a);
    // last, after every row lock this transaction takes: the limits' locks are held until it commits
    await this.limits.check(manager, req.caller.projectId, { lock: true });
    const now = new Date();
    const row = manager.getRepository(ActionEntity).create({
      id: randomUUID(),
      name: actionName(a.action, a.target),
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
    await insertRow(manager, ActionEntity, row);
    await this.announce(tx, row, req.requestId, 'submitted');
    afterCommit(manager, () => actionsAccepted.inc({ action: a.action }));
    return row;
  }

  /** Writes the `action.requested` outbox row for a stored action. */
  async announce(tx: Tx, action: ActionEntity, correlationId: string, cause: ActionMessageCause): Promise<string> {
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
    });
    return message.message_id;
  }

  private async checkConflicts(tx: Tx, a: NewAction): Promise<void> {
    const { manager } = tx;
    if (!a.targetLocked) {
      const lockTable = a.target === a.clusterId ? 'clusters' : 'nodes';
      await manager.query(`SELECT id FROM ${lockTable} WHERE id = $1 FOR UPDATE`, [a.target]);
    }
    // A statement of its own after the lock: its snapshot then holds every action committed by
    // the transaction that had the lock before (a subquery of the locking statement would not).
    const scaling = a.clusterId !== null && SCALING_ACTIONS.includes(a.action);
    const [found]: ConflictRow[] = await manager.query(
      `SELECT
         (SELECT json_agg(id ORDER BY created_at) FROM actions WHERE cluster_id = $1 AND status = 'RUNNING') AS running,
         (SELECT json_agg(id ORDER BY created_at) FROM actions WHERE target = $2 AND status = ANY($3)) AS active,
         ${scaling ? SCALING_BINDINGS : 'NULL'} AS scaling`,
      [a.clusterId, a.target, ActiveActionStatuses, ...(scaling ? [`${SCALING_POLICY_PREFIX}%`] : [])],
    );
    if (found.running?.length) {
      throw conflict(
        `${a.action} for cluster '${a.clusterId}' cannot be completed because it is already locked.`,
        'ResourceIsLocked',
      );
    }
    if (found.active?.length) {
      throw conflict(`The ${a.action} action for target ${a.target} conflicts with the following action(s): ${found.active.join(',')}`);
    }
    if (found.scaling && a.clusterId) checkCooldown(a.action, a.clusterId, found.scaling);
  }
}

/** The cluster's ($1) enabled scaling policies ($4: the type prefix), in chain order, as a JSON array. */
const SCALING_BINDINGS = `(SELECT json_agg(json_build_object('policy_id', b.policy_id, 'last_op', b.last_op, 'spec', p.spec)
    ORDER BY b.priority, b.attached_at)
  FROM cluster_policies b INNER JOIN policies p ON p.id = b.policy_id
  WHERE b.cluster_id = $1 AND b.enabled = true AND p.type LIKE $4)`;

/** An enabled scaling policy for this event whose last operation is younger than its cooldown. */
function checkCooldown(action: string, clusterId: string, bindings: NonNullable<ConflictRow['scaling']>): void {
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
