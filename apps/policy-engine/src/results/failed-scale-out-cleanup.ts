import type { WorkResultMessage } from '@trellis/contracts';
import { ActionEntity, ActionStepEntity, ClusterEntity, DecisionEntity, NodeEntity } from '@trellis/persistence';
import { In, type EntityManager } from 'typeorm';
import { SCALE_OUT_ACTIONS, chooseFailedScaleOutCleanup, loadBindings, type EnginePlan } from '@trellis/decisions';
import { nextSeq } from '../repair/repair-runner';
import { emitStep } from '../repair/step-orders';
import { finishAction } from './finish-action';
import { writeActionState } from '../actions/action-rows';
import type { WorkOrderVersionSource } from '../actions/work-order-versions';

export interface FailedScaleOutCleanupOptions {
  buildTimeoutSeconds: number;
  leaseSeconds: number;
  /** the schema_version the nova-workers that are up take (default: this release's) */
  workOrderVersions?: WorkOrderVersionSource;
}

/** What the cleanup step keeps for the moment its result comes back. */
interface CleanupDetail {
  /** Nova's reason the scale-out failed: the start of the action's final reason */
  failure: string;
  /** why the cleanup was asked for */
  because: string;
  /** the ERROR nodes removed: those with a server go through the step, the others are gone already */
  node_ids: string[];
  /** the decision raised desired_capacity for the nodes it created; removed nodes take it back */
  lowers_desired: boolean;
}

/**
 * A scale-out that failed in Nova removes the ERROR nodes it created when the cluster asks for it
 * (see `chooseFailedScaleOutCleanup`): a node without a server goes at once, the others are deleted
 * by the nova-worker in one more step of the action, which finishes FAILED when that step reports
 * back. desired_capacity is lowered by the nodes that really went, so it counts what exists.
 */
export class FailedScaleOutCleanup {
  constructor(private readonly options: FailedScaleOutCleanupOptions) {}

  /**
   * Called with the work result that ends a RUNNING action. 'kept': the action ends as before (with
   * `note` added to its reason when the cluster's config could not be read); 'cleaning': a step was
   * sent and the action stays RUNNING; 'finished': the action ended here.
   */
  async begin(
    m: EntityManager,
    action: ActionEntity,
    plan: EnginePlan,
    result: WorkResultMessage,
    outputs: Record<string, unknown>,
    now: Date,
  ): Promise<{ kind: 'kept'; note?: string } | { kind: 'cleaning' | 'finished' }> {
    if (result.outcome !== 'FAILED' || !SCALE_OUT_ACTIONS.has(action.action) || !action.cluster_id || !plan.create_nodes.length) {
      return { kind: 'kept' };
    }
    const cluster = await m.getRepository(ClusterEntity).findOneBy({ id: action.cluster_id });
    if (!cluster) return { kind: 'kept' };
    const choice = chooseFailedScaleOutCleanup(cluster.config, await loadBindings(m, cluster.id));
    if (!choice.cleanup) return { kind: 'kept', note: choice.error };

    const nodes = m.getRepository(NodeEntity);
    const failed = await nodes.find({
      where: { id: In(plan.create_nodes.map((n) => n.node_id)), cluster_id: cluster.id, status: 'ERROR' },
      order: { index: 'ASC' },
    });
    if (!failed.length) return { kind: 'kept' };

    const detail: CleanupDetail = {
      failure: result.reason,
      because: choice.because,
      node_ids: failed.map((n) => n.id),
      lowers_desired: typeof plan.cluster_update?.desired_capacity === 'number',
    };
    action.outputs = { ...(action.outputs ?? {}), ...outputs };
    const withServer = failed.filter((n) => n.physical_id);
    const withoutServer = failed.filter((n) => !n.physical_id);
    // Nova never made a server for these: there is nothing to wait for
    if (withoutServer.length) await nodes.delete({ id: In(withoutServer.map((n) => n.id)) });
    if (!withServer.length) {
      await this.end(m, action, plan, detail, null, now);
      return { kind: 'finished' };
    }

    const step = await emitStep(
      m,
      action,
      { kind: 'cleanup', seq: await nextSeq(m, action.id), detail: { ...detail } },
      {
        kind: 'delete',
        create_groups: [],
        create_servers: [],
        delete_servers: withServer.map((n) => ({ node_id: n.id, physical_id: n.physical_id, destroy: true })),
        delete_groups: [],
      },
      { correlationId: result.correlation_id, buildTimeoutSeconds: this.options.buildTimeoutSeconds, now, version: this.options.workOrderVersions?.current },
    );
    // the nova-worker matches the nodes it deletes to the order by their action_id
    await nodes.update({ id: In(withServer.map((n) => n.id)) }, { action_id: step.id, updated_at: now });
    action.status_reason = `${result.reason} Deleting the ${failed.length} node(s) that failed, as ${choice.because}.`;
    action.lease_expires_at = new Date(now.getTime() + (this.options.buildTimeoutSeconds + this.options.leaseSeconds) * 1000);
    action.updated_at = now;
    await writeActionState(m, action);
    return { kind: 'cleaning' };
  }

  /** The cleanup step's work result: the action ends FAILED, saying what was removed and what not. */
  async onResult(m: EntityManager, action: ActionEntity, step: ActionStepEntity, result: WorkResultMessage, now: Date): Promise<void> {
    const decision = await m.getRepository(DecisionEntity).findOneByOrFail({ action_id: action.id });
    const detail = step.detail as unknown as CleanupDetail;
    await this.end(m, action, decision.plan as unknown as EnginePlan, detail, result.outcome === 'SUCCEEDED' ? null : result.reason, now);
  }

  private async end(m: EntityManager, action: ActionEntity, plan: EnginePlan, detail: CleanupDetail, stepFailure: string | null, now: Date) {
    const nodes = m.getRepository(NodeEntity);
    const left = await nodes.find({ where: { id: In(detail.node_ids) }, select: { id: true } });
    const kept = new Set(left.map((n) => n.id));
    const deleted = detail.node_ids.filter((id) => !kept.has(id));
    if (detail.lowers_desired && deleted.length && action.cluster_id) {
      const cluster = await m.getRepository(ClusterEntity).findOneBy({ id: action.cluster_id });
      if (cluster) {
        await m.getRepository(ClusterEntity).update(
          { id: cluster.id },
          { desired_capacity: Math.max(0, cluster.desired_capacity - deleted.length), updated_at: now },
        );
      }
    }
    let note = `(the ${deleted.length} node(s) that failed were deleted, as ${detail.because})`;
    if (kept.size) {
      note =
        `(the ${deleted.length} of ${detail.node_ids.length} node(s) that failed were deleted, as ${detail.because}; ` +
        `deleting the other ${kept.size} failed: ${stepFailure ?? 'their servers are still there'})`;
    }
    await finishAction(m, action, {
      status: 'FAILED',
      reason: `${detail.failure} ${note}`,
      plan,
      now,
      outputs: { failed_nodes_deleted: deleted, ...(kept.size ? { failed_nodes_kept: [...kept] } : {}) },
    });
  }
}
