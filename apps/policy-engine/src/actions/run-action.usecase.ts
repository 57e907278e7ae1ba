import { randomUUID } from 'node:crypto';
import {
  type ActionRequestedMessage,
  Exchanges,
  RoutingKeys,
  WORK_ORDER_SCHEMA_VERSION,
  workOrderAs,
  type WorkOrderMessage,
} from '@trellis/contracts';
import type { Logger } from '@trellis/common';
import {
  ActionEntity,
  ClusterEntity,
  DecisionEntity,
  NodeEntity,
  ProfileEntity,
  addToOutbox,
  hotQuery,
  inTransaction,
  markProcessedAndLockAction,
  row,
  type SqlStatement,
} from '@trellis/persistence';
import type { DataSource, EntityManager } from 'typeorm';
import { decideAction, defaultIds, type Evaluator, type IdSource } from '@trellis/decisions';
import { emptyPlan, needsNova, type EnginePlan } from '@trellis/decisions';
import { loadSnapshot, loadingFor, usingEveryNodeIfNeeded, type LoadOptions, type Snapshot } from '@trellis/decisions';
import { IncompleteSnapshotError } from '@trellis/policies';
import { finishAction } from '../results/finish-action';
import type { DriftCoordinator } from '../drift/drift-coordinator';
import type { RunActionResult } from './run-action-result';
import { decisionStatement } from './store-decision';
import { actionStateStatement, writeActionState } from './action-rows';
import { applyNodeUpdates, tagUpdatedNodes } from './node-updates';
import type { WorkOrderVersionSource } from './work-order-versions';

export type { RunActionResult } from './run-action-result';

export const ENGINE_ACTIONS_CONSUMER = 'policy-engine.actions';

export interface RunActionOptions {
  instanceId: string;
  leaseSeconds: number;
  buildTimeoutSeconds: number;
  /** drift checks before scaling, `check` and `repair` (issue 6); without it actions run as before */
  drift?: DriftCoordinator;
  /** the schema_version the nova-workers that are up take (default: this release's) */
  workOrderVersions?: WorkOrderVersionSource;
}

/**
 * Runs the policy chain for one action and commits, in ONE transaction, everything that follows
 * from it: the decision, the new node rows, the action's new status, and either the work order for
 * the nova-worker or (when Nova has nothing to do) the action's end. The message is acked only
 * after that commit, so a crash at any point leaves the action to be redelivered or resumed.
 */
export class RunActionUseCase {
  constructor(
    private readonly dataSource: DataSource,
    private readonly evaluator: Evaluator,
    private readonly logger: Logger,
    private readonly options: RunActionOptions,
    private readonly ids: IdSource = defaultIds,
  ) {
    options.drift?.bindProceed((m, action, correlationId, loaded) => this.decide(m, action, { correlation_id: correlationId } as ActionRequestedMessage, loaded));
    this.loading = loadingFor(evaluator);
  }

  /** how this engine's snapshots are read: its policy types' lists (hypervisors, summaries) */
  private readonly loading: LoadOptions;

  async execute(message: ActionRequestedMessage): Promise<RunActionResult> {
    const log = this.logger.child({ action_id: message.action_id, correlation_id: message.correlation_id });
    const result = await inTransaction(this.dataSource, async (m) => {
      const { fresh, row: action } = await markProcessedAndLockAction(m, ENGINE_ACTIONS_CONSUMER, message.message_id, message.action_id);
      if (!fresh) return { kind: 'duplicate' } as const;
      if (!action) throw new ActionGone(message.action_id);
      if (message.cause === 'cancel') return this.cancel(m, action);
      if (action.status === 'RUNNING') return this.reorder(m, action, message);
      if (action.status !== 'READY') return { kind: 'not-runnable', status: action.status } as const;
      // one read of everything the decision looks at; the drift check before it needs the bindings
      const now = new Date();
      const snapshot = await loadSnapshot(m, action, 'pre_op', now, this.loading);
      const surveying = await this.options.drift?.beforeDecide(m, action, message.correlation_id, now, snapshot.policies);
      if (surveying) return surveying;
      return this.decide(m, action, message, { snapshot, now });
    });
    log.info('action handled', { ...result });
    return result;
  }

  private async decide(
    m: EntityManager,
    action: ActionEntity,
    message: ActionRequestedMessage,
    loaded?: { snapshot: Snapshot; now: Date },
  ): Promise<RunActionResult> {
    const now = loaded?.now ?? new Date();
    const first = loaded?.snapshot ?? (await loadSnapshot(m, action, 'pre_op', now, this.loading));
    // a summarised snapshot that lists too few nodes for this decision is read again whole
    const { snapshot, result: decision } = await usingEveryNodeIfNeeded(
      m,
      action,
      first,
      now,
      (s) => decideSafely(action, s, this.evaluator, this.ids),
      this.loading,
    );
    // Writes nothing in this transaction reads go in the work order's outbox statement (one round
    // trip each fewer); on the paths that end the action here they run at once.
    const writes: SqlStatement[] = [decisionStatement(action, decision, now)];
    const runWrites = async () => {
      for (const w of writes.splice(0)) await hotQuery(m, w.text, w.params);
    };
    await this.options.drift?.observe(m, action, snapshot, now);

    action.status = 'RUNNING';
    // an action that surveyed the cloud first started then
    action.start_time = action.start_time ?? now.getTime() / 1000;
    action.owner = this.options.instanceId;
    action.lease_owner = this.options.instanceId;
    action.lease_expires_at = new Date(now.getTime() + this.options.leaseSeconds * 1000);
    action.attempts += 1;
    action.data = (decision.output.data as Record<string, unknown>) ?? action.data;
    action.updated_at = now;

    if (decision.failure) {
      await runWrites();
      await writeActionState(m, action);
      await finishAction(m, action, { status: 'FAILED', reason: decision.failure, plan: decision.plan, now });
      return { kind: 'finished', status: 'FAILED', reason: decision.failure };
    }
    const cluster = action.cluster_id ? await this.applyClusterUpdate(m, action, decision.plan, now) : null;
    const nodes = await this.insertNodes(m, action, decision.plan, now, cluster);
    if (nodes) writes.push(nodes);
    if (decision.plan.membership) await applyMembership(m, action, decision.plan.membership, now);
    await this.markVictims(m, action, decision.plan, now);
    await tagUpdatedNodes(m, action, decision.plan, now);

    if (!needsNova(decision.plan)) {
      await runWrites();
      await writeActionState(m, action);
      await applyNodeUpdates(m, decision.plan, 'all', now);
      await finishAction(m, action, { status: 'SUCCEEDED', reason: decision.plan.success_reason, plan: decision.plan, now });
      return { kind: 'finished', status: 'SUCCEEDED', reason: decision.plan.success_reason };
    }
    // a cluster's new servers boot from the cluster's profile, which the snapshot holds already
    const profile = snapshot.cluster && !action.action.startsWith('NODE_') ? profileProperties(snapshot.cluster.profile.spec) : undefined;
    // the action's new state goes in the work order's outbox statement
    await this.order(m, action, decision.plan, message.correlation_id, now, profile, [...writes, actionStateStatement(action)]);
    return { kind: 'ordered', creates: decision.plan.create_nodes.length, deletes: decision.plan.delete_nodes.length };
  }

  /**
   * A cancel request (PATCH /v1/actions/{id}) for a RUNNING action: it ends CANCELLED now. Its
   * nodes whose server was not asked for yet fail with the reason; nodes whose server Nova accepted
   * keep it (the build poller records how they end); the worker asks Nova for nothing more once it
   * sees the action ended. The cluster is released as at any end of an action.
   */
  private async cancel(m: EntityManager, action: ActionEntity): Promise<RunActionResult> {
    if (action.status !== 'RUNNING' && action.status !== 'READY') return { kind: 'not-runnable', status: action.status };
    const now = new Date();
    const reason = 'Action execution cancelled';
    await m.query(
      `UPDATE nodes SET status = 'ERROR', status_reason = $2, updated_at = $3 WHERE action_id = $1 AND status = 'INIT' AND physical_id IS NULL`,
      [action.id, reason, now],
    );
    const decided = await m.getRepository(DecisionEntity).findOneBy({ action_id: action.id });
    const plan = (decided?.plan as unknown as EnginePlan | undefined) ?? emptyPlan();
    await finishAction(m, action, { status: 'CANCELLED', reason, plan, now });
    return { kind: 'finished', status: 'CANCELLED', reason };
  }

  /**
   * A RUNNING action seen again (replay or resume): its decision stands; send the work order once
   * more. The worker recognises an order it already applied, so this never doubles anything.
   */
  private async reorder(m: EntityManager, action: ActionEntity, message: ActionRequestedMessage): Promise<RunActionResult> {
    const stepped = await this.options.drift?.resume(m, action, new Date());
    if (stepped) return stepped;
    const decision = await m.getRepository(DecisionEntity).findOneBy({ action_id: action.id });
    if (!decision) {
      // Claimed but never decided cannot happen with one transaction per decision; treat as READY.
      action.status = 'READY';
      const surveying = await this.options.drift?.beforeDecide(m, action, message.correlation_id, new Date());
      if (surveying) return surveying;
      return this.decide(m, action, message);
    }
    const plan = decision.plan as unknown as EnginePlan;
    if (!needsNova(plan)) return { kind: 'not-runnable', status: action.status };
    await this.order(m, action, plan, message.correlation_id, new Date());
    return { kind: 'reordered' };
  }

  /**
   * The cluster's new sizes and busy status, and for new nodes their indexes: one UPDATE that
   * takes the row lock (concurrent index reservations wait for each other) and returns the first
   * index reserved and the profile.
   */
  private async applyClusterUpdate(m: EntityManager, action: ActionEntity, plan: EnginePlan, now: Date): Promise<ReservedIndexes> {
    const busy: Record<string, string> = {
      CLUSTER_CREATE: 'CREATING',
      CLUSTER_DELETE: 'DELETING',
      CLUSTER_SCALE_OUT: 'RESIZING',
      CLUSTER_SCALE_IN: 'RESIZING',
      CLUSTER_RESIZE: 'RESIZING',
      CLUSTER_DEL_NODES: 'RESIZING',
      CLUSTER_RECOVER: 'RECOVERING',
      CLUSTER_UPDATE: 'UPDATING',
      CLUSTER_OPERATION: 'OPERATING',
    };
    const set: Partial<ClusterEntity> = { ...(plan.cluster_update ?? {}), updated_at: now };
    if (busy[action.action]) {
      set.status = busy[action.action];
      // Senlin's cluster.do_operation: "Operation reboot in progress"
      set.status_reason = action.action === 'CLUSTER_OPERATION' ? `Operation ${String(action.inputs.operation)} in progress` : `${action.action} in progress`;
    }
    const reserve = action.action === 'NODE_CREATE' ? 0 : plan.create_nodes.length;
    // Plain SQL with the columns in a fixed order: a few distinct texts (one per set of columns a
    // plan changes), each a prepared statement, instead of the query builder on every action.
    const meta = m.connection.getMetadata(ClusterEntity);
    const driver = m.connection.driver;
    const params: unknown[] = [action.cluster_id];
    const assignments: string[] = [];
    for (const key of Object.keys(set).sort() as Array<keyof ClusterEntity>) {
      if (set[key] === undefined) continue;
      const column = meta.findColumnWithPropertyName(key);
      if (!column) throw new Error(`a plan updates cluster column '${key}', which does not exist`);
      params.push(driver.preparePersistentValue(set[key], column));
      assignments.push(`${driver.escape(column.databaseName)} = $${params.length}`);
    }
    if (reserve > 0) {
      params.push(reserve);
      assignments.push(`next_index = next_index + $${params.length}`);
    }
    const [rows] = await hotQuery<[Array<{ id: string; next_index: number; profile_id: string }>, number]>(
      m,
      `UPDATE clusters SET ${assignments.join(', ')} WHERE id = $1 RETURNING id, next_index, profile_id`,
      params,
    );
    const updated = rows[0];
    if (!updated) throw new Error(`cluster ${action.cluster_id} of action ${action.id} does not exist`);
    return { id: updated.id, first: updated.next_index - reserve, profile_id: updated.profile_id };
  }

  /**
   * The plan's new nodes, their indexes set: the INSERT of a cluster's new nodes is returned for the
   * caller to send (null when there is nothing to insert; a NODE_CREATE's node is updated at once).
   */
  private async insertNodes(m: EntityManager, action: ActionEntity, plan: EnginePlan, now: Date, cluster: ReservedIndexes | null): Promise<SqlStatement | null> {
    if (!plan.create_nodes.length) return null;
    if (action.action === 'NODE_CREATE') {
      const n = plan.create_nodes[0];
      await m.getRepository(NodeEntity).update(
        { id: n.node_id },
        row<NodeEntity>({ action_id: action.id, data: { placement: n.placement }, status: 'INIT', updated_at: now }),
      );
      return null;
    }
    if (!cluster) throw new Error(`action ${action.id} creates nodes but names no cluster`);
    const first = cluster.first;
    plan.create_nodes.forEach((n, i) => (n.index = first + i));
    // One statement of fixed text for any number of nodes (a prepared statement): the per-node
    // values as arrays, the rest shared by the action's nodes.
    return {
      text: `INSERT INTO nodes (id, name, cluster_id, profile_id, project, "user", domain, physical_id, index, role, status,
                          status_reason, data, metadata, tainted, init_at, created_at, updated_at, action_id)
       SELECT n.id, n.name, $4::uuid, $5::uuid, $6::varchar, $7::varchar, $8::varchar, NULL::varchar, n.idx, NULL::varchar,
              'INIT', 'Initializing', n.data, '{}'::jsonb, false, $9::timestamptz, NULL::timestamptz, $9::timestamptz, $10::uuid
         FROM unnest($1::uuid[], $2::varchar[], $3::int[], $11::jsonb[]) AS n(id, name, idx, data)`,
      params: [
        plan.create_nodes.map((n) => n.node_id),
        plan.create_nodes.map((n) => n.name),
        plan.create_nodes.map((n) => n.index),
        cluster.id,
        cluster.profile_id,
        action.project,
        action.user,
        action.domain,
        now,
        action.id,
        plan.create_nodes.map((n) => JSON.stringify({ placement: n.placement })),
      ],
    };
  }

  private async markVictims(m: EntityManager, action: ActionEntity, plan: EnginePlan, now: Date): Promise<void> {
    if (!plan.delete_nodes.length) return;
    await m
      .getRepository(NodeEntity)
      .createQueryBuilder()
      .update()
      .set({ action_id: action.id, status_reason: 'Chosen for deletion', updated_at: now })
      .whereInIds(plan.delete_nodes.map((d) => d.node_id))
      .execute();
  }

  private async order(
    m: EntityManager,
    action: ActionEntity,
    plan: EnginePlan,
    correlationId: string,
    now: Date,
    profile?: Record<string, unknown>,
    writes: SqlStatement[] = [],
  ) {
    const profiles = plan.create_nodes.length ? (profile ?? (await this.profilesOf(m, action))) : undefined;
    const messageId = randomUUID();
    const order: WorkOrderMessage = {
      message_id: messageId,
      schema_version: WORK_ORDER_SCHEMA_VERSION,
      action_id: action.id,
      correlation_id: correlationId,
      sent_at: now.toISOString(),
      cluster_id: action.cluster_id,
      project: action.project,
      user: action.user,
      action: action.action,
      kind: plan.create_nodes.length && plan.delete_nodes.length ? 'mixed' : plan.create_nodes.length ? 'create' : plan.delete_nodes.length ? 'delete' : plan.server_ops?.length ? 'ops' : 'cloud',
      create_groups: plan.create_groups,
      create_servers: plan.create_nodes.map((n) => ({
        node_id: n.node_id,
        name: n.name,
        index: n.index,
        placement: n.placement,
      })),
      // once for every server, not on each (WORK_ORDER_SCHEMA_VERSION)
      ...(plan.create_nodes.length ? { profile: profiles } : {}),
      delete_servers: plan.delete_nodes,
      delete_groups: plan.delete_groups,
      ...(plan.server_ops?.length ? { server_ops: plan.server_ops } : {}),
      build_timeout: this.options.buildTimeoutSeconds,
    };
    await addToOutbox(m, {
      exchange: Exchanges.work,
      routingKey: RoutingKeys.workOrder,
      type: RoutingKeys.workOrder,
      messageId,
      correlationId,
      body: workOrderAs(order, this.options.workOrderVersions?.current ?? WORK_ORDER_SCHEMA_VERSION),
    }, { with: writes });
  }

  /** the profile properties new servers are booted from */
  private async profilesOf(m: EntityManager, action: ActionEntity): Promise<Record<string, unknown>> {
    const profileId = action.action.startsWith('NODE_') || !action.cluster_id
      ? (await m.getRepository(NodeEntity).findOneByOrFail({ id: action.target })).profile_id
      : (await m.getRepository(ClusterEntity).findOneByOrFail({ id: action.cluster_id })).profile_id;
    const profile = await m.getRepository(ProfileEntity).findOneByOrFail({ id: profileId });
    return profileProperties(profile.spec);
  }
}

/** The first node index an action reserved on its cluster (next_index before it), and the profile. */
interface ReservedIndexes {
  id: string;
  first: number;
  profile_id: string;
}

const profileProperties = (spec: Record<string, unknown>): Record<string, unknown> =>
  (spec.properties as Record<string, unknown>) ?? {};

/**
 * A decision is a pure function of its snapshot: one that throws would throw on every delivery, so
 * the action fails with the error instead of its message cycling through retries and the dead-letter
 * queue.
 */
function decideSafely(action: ActionEntity, snapshot: Snapshot, evaluator: Evaluator, ids: IdSource) {
  try {
    return decideAction(action, snapshot, evaluator, ids);
  } catch (e) {
    // not a verdict: the caller reads every node and decides again
    if (e instanceof IncompleteSnapshotError) throw e;
    const plan = emptyPlan();
    const reason = `The policy engine could not decide ${action.action}: ${e instanceof Error ? e.message : String(e)}`;
    return { hook: 'none' as const, input: snapshot, output: {}, trace: [], plan, failure: reason };
  }
}

/**
 * Nodes join or leave the action's cluster (Senlin's NODE_JOIN / NODE_LEAVE): joiners get the next
 * indexes, leavers become orphans with index -1; their servers are not touched.
 */
async function applyMembership(m: EntityManager, action: ActionEntity, membership: { join: string[]; leave: string[] }, now: Date) {
  if (membership.leave.length) {
    await m.query(
      `UPDATE nodes SET cluster_id = NULL, index = -1, status_reason = 'Node left cluster', updated_at = $3
        WHERE id = ANY($1) AND cluster_id = $2`,
      [membership.leave, action.cluster_id, now],
    );
  }
  for (const id of membership.join) {
    await m.query(
      `WITH c AS (UPDATE clusters SET next_index = next_index + 1 WHERE id = $2 RETURNING next_index - 1 AS idx)
       UPDATE nodes SET cluster_id = $2, index = (SELECT idx FROM c), status_reason = 'Node joined cluster', updated_at = $3
        WHERE id = $1 AND cluster_id IS NULL`,
      [id, action.cluster_id, now],
    );
  }
}

/** The action a message points at does not exist: nothing to retry, the message is dead-lettered. */
export class ActionGone extends Error {
  constructor(readonly actionId: string) {
    super(`action ${actionId} does not exist`);
    this.name = 'ActionGone';
  }
}
